package stream

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/pires/go-proxyproto"

	"github.com/relaykit/relaykit/internal/cfgerr"
)

// ProxyMode says whether the connections of a listener begin with a PROXY
// protocol header (version 1 or 2) naming the sender a load balancer or
// proxy forwards; see the package documentation, "PROXY protocol". Its
// text form ([ProxyMode.MarshalText], [ParseProxyMode]) is "off",
// "optional" or "required".
type ProxyMode uint8

const (
	// ProxyOff reads no header: the connection's peer is its source. A
	// PROXY header sent anyway is data.
	ProxyOff ProxyMode = iota
	// ProxyOptional reads a header when a connection from an address in
	// [Config].ProxyAllowed sends one, and serves a connection that sends
	// none as a direct sender. A header from any other address closes
	// its connection.
	ProxyOptional
	// ProxyRequired closes a connection from an address not in
	// [Config].ProxyAllowed at accept, and one from an allowed address
	// that does not begin with a header.
	ProxyRequired
)

var proxyModeNames = [...]string{ProxyOff: "off", ProxyOptional: "optional", ProxyRequired: "required"}

// String returns "off", "optional" or "required".
func (m ProxyMode) String() string {
	if int(m) < len(proxyModeNames) {
		return proxyModeNames[m]
	}
	return fmt.Sprintf("ProxyMode(%d)", m)
}

// MarshalText returns the mode's name (see [ProxyMode.String]).
func (m ProxyMode) MarshalText() ([]byte, error) {
	if int(m) >= len(proxyModeNames) {
		return nil, fmt.Errorf("%w: PROXY protocol mode %d", ErrInvalidConfig, m)
	}
	return []byte(proxyModeNames[m]), nil
}

// UnmarshalText sets m from "off", "optional" or "required" (as
// [ParseProxyMode] reads them), so that configuration decoders that use
// encoding.TextUnmarshaler take the mode's name.
func (m *ProxyMode) UnmarshalText(b []byte) error {
	v, err := ParseProxyMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// ParseProxyMode returns the mode named s: "off" (or ""), "optional" or
// "required", in any case. Any other name is an error wrapping
// [ErrInvalidConfig].
func ParseProxyMode(s string) (ProxyMode, error) {
	switch strings.ToLower(s) {
	case "", "off":
		return ProxyOff, nil
	case "optional":
		return ProxyOptional, nil
	case "required":
		return ProxyRequired, nil
	}
	return ProxyOff, fmt.Errorf("%w: PROXY protocol mode %q, want off, optional or required", ErrInvalidConfig, s)
}

// ParseProxyAllowed reads the addresses allowed to send a PROXY header
// ([Config].ProxyAllowed) from their text: IP addresses ("10.0.0.5",
// "2001:db8::1") and CIDR prefixes ("10.0.0.0/8"). A bad one is an error
// wrapping [ErrInvalidConfig] that names it.
func ParseProxyAllowed(ss []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(ss))
	for _, s := range ss {
		if strings.Contains(s, "/") {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, fmt.Errorf("%w: PROXY allowed address %q: %w", ErrInvalidConfig, s, err)
			}
			out = append(out, p)
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%w: PROXY allowed address %q: %w", ErrInvalidConfig, s, err)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// normalizeAllowed checks the prefixes of Config.ProxyAllowed and returns
// them masked, IPv4-mapped IPv6 prefixes as IPv4 ones (the sources they
// are compared with are unmapped).
func normalizeAllowed(ps []netip.Prefix) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(ps))
	for _, p := range ps {
		if !p.IsValid() {
			return nil, cfgerr.New(ErrInvalidConfig, "ProxyAllowed", "prefix %v is not valid", p)
		}
		if a := p.Addr(); a.Is4In6() {
			if p.Bits() < 96 {
				return nil, cfgerr.New(ErrInvalidConfig, "ProxyAllowed", "prefix %v: an IPv4-mapped prefix needs at least 96 bits", p)
			}
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// What a connection does about a PROXY header before its handler runs.
const (
	proxyNone = iota // ProxyOff: nothing
	proxyRead        // from an allowed address: a header is read (and, with ProxyRequired, must be there)
	proxyPeek        // ProxyOptional, from another address: a header closes the connection
)

// Why a PROXY stage refused a connection; the index of its counter.
type proxyReason int

const (
	proxyNotAllowed proxyReason = iota
	proxyMalformed
	proxyMissing
	proxyTimeout
	proxyReasons
)

var proxyReasonNames = [proxyReasons]string{"not_allowed", "malformed", "missing", "timeout"}

// proxyQuiet is how long refusals of one reason must stop for the next to
// start a new episode (and a new log record).
const proxyQuiet = time.Minute

// proxyBufSize is the size of the buffered reader a header is read
// through: one read of the socket takes in a whole header (go-proxyproto
// refuses a version 1 header that did not arrive in one read), and what
// came after the header is handed to the connection's reader first.
const proxyBufSize = 512

var proxyReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, proxyBufSize) }}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// allowedProxy reports whether a may send a PROXY header.
func (l *Listener) allowedProxy(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	for _, p := range l.proxyAllowed {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// proxied is what a PROXY stage found: the bytes read past the header
// (to be read first), and the addresses of the sender and of what it
// connected to when a header named them.
type proxied struct {
	pre           []byte
	remote, local net.Addr
	via           net.Addr // the connection's own peer, when remote replaces it
}

// readProxy runs the PROXY stage of c (accepted with proxyRead or
// proxyPeek) in the connection's goroutine, under the deadline its caller
// set from accept (HandshakeTimeout). It reads the header, if any, charges
// the connection to its source's MaxConnsPerSource when the header names
// it, and reports false when the connection is to be closed: refused
// (counted, logged once per episode), gone, or ended by the listener.
func (l *Listener) readProxy(c *Conn) (proxied, bool) {
	cr := countReader{r: c.raw}
	br := proxyReaders.Get().(*bufio.Reader)
	br.Reset(&cr)
	defer func() {
		br.Reset(nil)
		proxyReaders.Put(br)
	}()
	h, err := readHeader(br)
	if err != nil && c.ended() != nil {
		return proxied{}, false // evicted, or the listener closed
	}
	peer := c.raw.RemoteAddr()
	src := c.src
	var p proxied
	switch {
	case err == nil:
		if c.proxy == proxyPeek {
			l.refuseProxy(proxyNotAllowed, peer, errors.New("a PROXY header from an address not allowed to send one"))
			return p, false
		}
		if a, ok := headerSource(h); ok {
			src = a.Addr()
			p.remote, p.via = net.TCPAddrFromAddrPort(a), peer
			if d, ok := headerDest(h); ok {
				p.local = net.TCPAddrFromAddrPort(d)
			}
			l.proxyHeaders.Add(1)
		} else {
			l.proxyLocal.Add(1) // LOCAL, UNKNOWN (or a socket address): the connection's own
		}
	case errors.Is(err, proxyproto.ErrNoProxyProtocol):
		if cr.n == 0 {
			return p, false // closed without a word
		}
		if c.proxy == proxyRead && l.proxy == ProxyRequired {
			l.refuseProxy(proxyMissing, peer, errors.New("the connection did not begin with a PROXY header"))
			return p, false
		}
	case isTimeout(err):
		if cr.n == 0 && l.proxy == ProxyOptional {
			// A direct sender that has not spoken yet: it is served
			// as one. (A TLS handshake, under the same deadline, now
			// fails on it.)
			break
		}
		l.refuseProxy(proxyTimeout, peer, fmt.Errorf("no complete PROXY header within the handshake timeout %s", l.handshake))
		return p, false
	case cr.n == 0:
		return p, false // reset before a word
	default:
		l.refuseProxy(proxyMalformed, peer, err)
		return p, false
	}
	if c.proxy == proxyRead && !l.chargeSource(c, src) {
		return p, false
	}
	if n := br.Buffered(); n > 0 {
		p.pre = make([]byte, n)
		_, _ = io.ReadFull(br, p.pre)
	}
	return p, true
}

// readHeader reads a PROXY header from br, or returns
// proxyproto.ErrNoProxyProtocol when br does not start with one. It waits
// for no more bytes than it needs to tell: go-proxyproto's Read waits for
// 12 bytes after a first 'P' or CR, which holds up a direct sender whose
// first line is shorter ("PING\n") until the deadline.
func readHeader(br *bufio.Reader) (*proxyproto.Header, error) {
	for n := 1; ; n++ {
		b, err := br.Peek(n)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, proxyproto.ErrNoProxyProtocol
			}
			return nil, err
		}
		v1 := n <= len(proxyproto.SIGV1) && string(b) == string(proxyproto.SIGV1[:n])
		v2 := n <= len(proxyproto.SIGV2) && string(b) == string(proxyproto.SIGV2[:n])
		switch {
		case !v1 && !v2:
			return nil, proxyproto.ErrNoProxyProtocol
		case v1 && n == len(proxyproto.SIGV1), v2 && n == len(proxyproto.SIGV2):
			return proxyproto.Read(br)
		}
	}
}

// headerSource returns the source a PROXY header names, false for one
// that names none (LOCAL, UNKNOWN, or a socket address).
func headerSource(h *proxyproto.Header) (netip.AddrPort, bool) {
	if !h.Command.IsProxy() {
		return netip.AddrPort{}, false
	}
	return addrPortOf(h.SourceAddr)
}

func headerDest(h *proxyproto.Header) (netip.AddrPort, bool) { return addrPortOf(h.DestinationAddr) }

func addrPortOf(a net.Addr) (netip.AddrPort, bool) {
	var ip net.IP
	var port int
	switch a := a.(type) {
	case *net.TCPAddr:
		ip, port = a.IP, a.Port
	case *net.UDPAddr:
		ip, port = a.IP, a.Port
	default:
		return netip.AddrPort{}, false
	}
	addr, ok := netip.AddrFromSlice(ip)
	if !ok {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), true
}

// refuseProxy counts a connection the PROXY stage refused and logs the
// first refusal of an episode: refusals of one reason less than
// proxyQuiet apart. (An episode that ended when a connection passed would
// log once per bad connection when one of two balancers is misconfigured
// and the other is not.)
func (l *Listener) refuseProxy(r proxyReason, peer net.Addr, err error) {
	l.proxyRefused[r].Add(1)
	now := time.Now().UnixNano()
	if last := l.proxyLast[r].Swap(now); last == 0 || now-last > int64(proxyQuiet) {
		l.log.Warn("PROXY protocol: connection refused; more refusals for this reason are counted, not logged, until none for a minute",
			"input", l.name, "reason", proxyReasonNames[r], "peer", peer, "error", err)
	}
}

// chargeSource counts c, admitted from an address allowed to send a PROXY
// header and not charged to any source yet, against the
// MaxConnsPerSource of src, the source its header named (or its own
// address). It reports false, counted in RefusedPerSource, when src is at
// the limit, and when the listener ended c meanwhile.
func (l *Listener) chargeSource(c *Conn, src netip.Addr) bool {
	l.mu.Lock()
	if !c.registered {
		l.mu.Unlock()
		return false
	}
	s := l.sources[src]
	if s != nil && s.n >= l.perSource {
		warn := !s.warned
		s.warned = true
		l.mu.Unlock()
		l.refusedSource.Add(1)
		if warn {
			l.log.Warn("connections per source at the limit, refusing new ones from it", "input", l.name, "source", src, "max_per_source", l.perSource)
		}
		return false
	}
	if s == nil {
		s = &source{}
		l.sources[src] = s
	}
	s.n++
	c.src, c.charged = src, true
	l.mu.Unlock()
	return true
}

// proxiedConn is an accepted connection seen through its PROXY header:
// the bytes read past the header come first, and its addresses are the
// ones the header named.
type proxiedConn struct {
	net.Conn
	p proxied
}

func (c *proxiedConn) Read(b []byte) (int, error) {
	if len(c.p.pre) > 0 {
		n := copy(b, c.p.pre)
		c.p.pre = c.p.pre[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

func (c *proxiedConn) RemoteAddr() net.Addr {
	if c.p.remote != nil {
		return c.p.remote
	}
	return c.Conn.RemoteAddr()
}

func (c *proxiedConn) LocalAddr() net.Addr {
	if c.p.local != nil {
		return c.p.local
	}
	return c.Conn.LocalAddr()
}
