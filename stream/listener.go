package stream

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit/internal/cfgerr"
)

var (
	// ErrInvalidConfig is wrapped by the errors [New] and
	// [Config.Validate] return for a bad [Config]: each is a
	// *relaykit.FieldError naming the field.
	ErrInvalidConfig = errors.New("stream: invalid config")
	// ErrClosed is returned by [Conn.Read] once the listener shuts down:
	// the frames already read are still handed over, no more are read.
	ErrClosed = errors.New("stream: listener closed")
	// ErrEvicted is returned by [Conn.Read] when the connection was closed
	// to make room for a new one (see [Config].MaxConns).
	ErrEvicted = errors.New("stream: connection evicted")
	// ErrIdleTimeout is returned by [Conn.Read] when nothing arrived for
	// [Config].IdleTimeout between frames.
	ErrIdleTimeout = errors.New("stream: idle timeout")
	// ErrFrameTimeout is returned by [Conn.Read] when a frame that had
	// started was not complete within [Config].FrameTimeout.
	ErrFrameTimeout = errors.New("stream: frame timeout")
)

// Config configures a [Listener]. The zero value is usable: every field's
// zero value means the documented default.
type Config struct {
	// Name identifies the listener in log records and errors.
	Name string
	// Network is Address's network: "tcp" (the zero value), "tcp4" or
	// "tcp6".
	Network string
	// Address is the local address [New] listens on, "host:port"; port 0
	// picks a free port ([Listener.Addr] tells which). Ignored when
	// Listener is set.
	Address string
	// Listener, when not nil, is a listening socket to accept from instead
	// of one opened on Address (one a service manager passed, or a test's).
	// The [Listener] owns it from New on: Close and the end of Serve close
	// it. New does not close it when it fails.
	Listener net.Listener
	// Handler serves each connection, in the connection's own goroutine
	// (see [Handler]). [Listener.Serve] requires it; a listener whose
	// connections a server accepts through [Listener.NetListener] has
	// none.
	Handler Handler
	// MaxConns is the most connections open at once. When it is reached, a
	// new connection evicts the longest-idle open one, unless
	// RefuseWhenFull is set. Idle means waiting in [Conn.Read] for data:
	// the connection whose handler has been waiting longest is evicted. A
	// connection whose handler is busy elsewhere (parsing, or blocked by
	// backpressure) is not idle, and is never evicted, since closing it
	// would throw away what its sender has in flight; when every
	// connection is busy, the newcomer is refused (Stats.RefusedFull).
	// Zero means 1024.
	MaxConns int
	// MaxConnsPerSource is the most connections open at once from one
	// source IP address; more are refused. It keeps one host from holding
	// every slot (and so from evicting everyone else). Zero means 64;
	// it is capped at MaxConns.
	MaxConnsPerSource int
	// RefuseWhenFull refuses new connections at MaxConns instead of
	// evicting the longest-idle one.
	RefuseWhenFull bool
	// IdleTimeout closes a connection when nothing arrived for this long
	// between frames (measured from the last read). Zero means 10 minutes;
	// negative means never.
	IdleTimeout time.Duration
	// FrameTimeout closes a connection when a frame that has started (its
	// first byte arrived) is not complete this long after; a sender that
	// trickles a frame byte by byte cannot hold a connection. It is
	// measured when the reader asks for the rest of the frame, so time the
	// reader spends elsewhere (backpressure) is not held against the
	// sender. It applies to readers that use a [Framer]. Zero means
	// 30 seconds; negative means never.
	FrameTimeout time.Duration
	// HandshakeTimeout bounds the PROXY header (with ProxyProtocol) and
	// the TLS handshake (with TLS) together, from accept. Zero means 10
	// seconds.
	HandshakeTimeout time.Duration
	// TLS, when not nil, makes the listener speak TLS (RFC 5425 for
	// syslog); the handshake runs in the connection's goroutine under
	// HandshakeTimeout. The listener uses a clone, with session tickets
	// off unless SessionTickets is set.
	TLS *tls.Config
	// SessionTickets lets a TLS listener issue session tickets (resumed
	// handshakes). It is off by default because a TLS 1.3 server sends
	// its tickets after the handshake, and a sender that never reads
	// (syslog over TLS is one-way, and most senders never read) closes
	// its socket with them unread: its kernel then resets the connection
	// instead of closing it, and discards what it still held to send (all
	// the listener had not taken in yet, when the listener reads slower
	// than the sender writes), events the sender counted as sent. Turn it
	// on for protocols whose clients read (HTTP on a [NetListener]).
	SessionTickets bool
	// ProxyProtocol says whether connections begin with a PROXY protocol
	// header (version 1 or 2) naming the sender that a load balancer or
	// proxy forwards: off (the zero value), optional or required. The
	// header is read in the connection's goroutine, before any TLS
	// handshake and under HandshakeTimeout; the source it names is the
	// connection's [Conn.Source] and RemoteAddr, and what
	// MaxConnsPerSource counts. See the package documentation, "PROXY
	// protocol".
	ProxyProtocol ProxyMode
	// ProxyAllowed are the addresses allowed to send a PROXY header: the
	// load balancers' (a single address is a /32 or /128 prefix; see
	// [ParseProxyAllowed]). A header from any other address closes its
	// connection. It must not be empty when ProxyProtocol is not
	// ProxyOff: 0.0.0.0/0 and ::/0 allow every address, which lets any
	// sender name any source.
	ProxyAllowed []netip.Prefix
	// Logger receives one record when an episode of refusals, evictions or
	// accept errors starts (not one per connection or per error), and one
	// when accepting works again after accept errors. Nil means no logging.
	Logger *slog.Logger
}

// Stats is a snapshot of a listener's counters.
type Stats struct {
	Open      int64 // connections admitted and not yet ended (closing, evicted or cut ones leave at once)
	Accepted  int64 // connections admitted (before any TLS handshake)
	BytesRead int64 // bytes read by handlers through [Conn.Read] (after TLS decryption), in bytes
	// RefusedPerSource counts connections closed at accept because their
	// source had MaxConnsPerSource open.
	RefusedPerSource int64
	// RefusedFull counts connections closed at accept at MaxConns: with
	// RefuseWhenFull, or when no open connection was idle.
	RefusedFull int64
	// Evicted counts open connections closed to make room at MaxConns.
	Evicted int64
	// CutIdle, CutFrameTimeout and CutHandshakeTimeout count connections
	// closed by IdleTimeout, FrameTimeout and HandshakeTimeout.
	CutIdle             int64
	CutFrameTimeout     int64
	CutHandshakeTimeout int64
	// HandshakeErrors counts TLS handshakes that failed for another reason
	// than the timeout (bad client certificate, not TLS, reset).
	HandshakeErrors int64
	// AcceptErrors counts failed accepts (EMFILE or ENFILE when the process
	// or the system is out of file descriptors, ENOBUFS, ...): the listener
	// waits (5 ms, doubling up to 1 s) and accepts again; the connections
	// meanwhile wait in the kernel's backlog.
	AcceptErrors int64
	// AcceptFailing reports that the last accept failed: an episode of
	// accept errors is under way.
	AcceptFailing bool

	// ProxyHeaders counts PROXY headers that named the connection's
	// source (PROXY TCP4 or TCP6 in version 1, PROXY over IPv4 or IPv6 in
	// version 2), which then replaced the connection's own address.
	ProxyHeaders int64
	// ProxyLocal counts PROXY headers that named no source: version 2
	// LOCAL (a balancer's own connection, such as a health check) and
	// version 1 UNKNOWN. The connection keeps its own address.
	ProxyLocal int64
	// ProxyNotAllowed, ProxyMalformed, ProxyMissing and ProxyTimeout count
	// connections closed by the PROXY stage, before their handler (or
	// server) saw them, by reason: a header from an address not in
	// ProxyAllowed (with ProxyRequired, any connection from one, closed
	// at accept); a header that could not be read (bad syntax, an
	// unsupported version, command or address family, a version 1 header
	// that did not arrive in one piece, the connection closed midway); no
	// header from an allowed address with ProxyRequired; and a header not
	// complete within HandshakeTimeout (with ProxyOptional, only once part
	// of one has arrived).
	ProxyNotAllowed int64
	ProxyMalformed  int64
	ProxyMissing    int64
	ProxyTimeout    int64
}

// Handler serves one connection. It runs in the connection's own goroutine
// and owns c until it returns; the listener closes c afterwards. A handler
// reads until [Conn.Read] (or the [Framer] on top of it) returns an error:
// the listener ends every read on shutdown, eviction and timeouts.
type Handler func(c *Conn)

// Listener accepts stream connections and enforces the limits and
// deadlines of its [Config]. Its methods are safe for concurrent use.
type Listener struct {
	ln         net.Listener
	name       string
	handler    Handler
	maxConns   int
	perSource  int
	refuseFull bool
	idle       time.Duration
	frame      time.Duration
	handshake  time.Duration
	tls        *tls.Config
	log        *slog.Logger

	proxy        ProxyMode
	proxyAllowed []netip.Prefix

	mu       sync.Mutex
	serveCtx context.Context // Serve's: the parent of its connections' Context
	conns    map[*Conn]struct{}
	sources  map[netip.Addr]*source
	closing  bool
	fullWarn bool          // an episode of evictions or refusals at MaxConns is under way
	done     chan struct{} // closed by shutdown: ends an accept backoff
	wg       sync.WaitGroup

	open, accepted, bytesRead, refusedSource, refusedFull, evicted atomic.Int64
	cutIdle, cutFrame, cutHandshake, handshakeErrors, acceptErrors atomic.Int64
	acceptFailing                                                  atomic.Bool

	proxyHeaders, proxyLocal atomic.Int64
	proxyRefused             [proxyReasons]atomic.Int64
	proxyLast                [proxyReasons]atomic.Int64 // when the latest refusal of each reason happened (ns since epoch)
}

// Accept backoff after an error, as net/http's Server.Serve does for
// temporary errors.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

type source struct {
	n      int
	warned bool
}

// New returns a listener on cfg.Address (or cfg.Listener), or an error: a
// *relaykit.FieldError wrapping [ErrInvalidConfig] for a bad Config, or
// the error of opening the socket. It starts no goroutine; connections
// wait in the kernel's backlog until [Listener.Serve] (or a server on its
// [Listener.NetListener]) accepts them.
func New(cfg Config) (*Listener, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	ln := cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen(cfg.Network, cfg.Address); err != nil {
			return nil, fmt.Errorf("stream: %s: %w", cfg.Name, err)
		}
	}
	return newListener(ln, cfg), nil
}

// Validate reports whether [New] would accept cfg, without opening
// anything: nil, or a *relaykit.FieldError wrapping [ErrInvalidConfig].
func (cfg Config) Validate() error { return cfg.fill() }

func (cfg *Config) fill() error {
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(ErrInvalidConfig, field, format, args...)
	}
	switch cfg.Network {
	case "":
		cfg.Network = "tcp"
	case "tcp", "tcp4", "tcp6":
	default:
		return bad("Network", "%q is not tcp, tcp4 or tcp6", cfg.Network)
	}
	if cfg.Listener == nil && cfg.Address == "" {
		return bad("Address", "required (or Listener)")
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = 1024
	}
	if cfg.MaxConnsPerSource == 0 {
		cfg.MaxConnsPerSource = 64
	}
	if cfg.MaxConns < 0 {
		return bad("MaxConns", "%d must not be negative", cfg.MaxConns)
	}
	if cfg.MaxConnsPerSource < 0 {
		return bad("MaxConnsPerSource", "%d must not be negative", cfg.MaxConnsPerSource)
	}
	cfg.MaxConnsPerSource = min(cfg.MaxConnsPerSource, cfg.MaxConns)
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = 10 * time.Minute
	}
	if cfg.FrameTimeout == 0 {
		cfg.FrameTimeout = 30 * time.Second
	}
	if cfg.HandshakeTimeout == 0 {
		cfg.HandshakeTimeout = 10 * time.Second
	}
	if cfg.HandshakeTimeout < 0 {
		return bad("HandshakeTimeout", "%s must not be negative", cfg.HandshakeTimeout)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ProxyProtocol > ProxyRequired {
		return bad("ProxyProtocol", "%d is not a mode", cfg.ProxyProtocol)
	}
	if cfg.ProxyProtocol != ProxyOff {
		if len(cfg.ProxyAllowed) == 0 {
			return bad("ProxyAllowed", "ProxyProtocol %s needs the addresses allowed to send a PROXY header (0.0.0.0/0 and ::/0 allow any)", cfg.ProxyProtocol)
		}
		allowed, err := normalizeAllowed(cfg.ProxyAllowed)
		if err != nil {
			return err
		}
		cfg.ProxyAllowed = allowed
	}
	if cfg.TLS != nil && !cfg.SessionTickets && !cfg.TLS.SessionTicketsDisabled {
		cfg.TLS = cfg.TLS.Clone()
		cfg.TLS.SessionTicketsDisabled = true
	}
	return nil
}

// newListener returns a listener on ln for a filled cfg.
func newListener(ln net.Listener, cfg Config) *Listener {
	return &Listener{
		ln: ln, name: cfg.Name, handler: cfg.Handler, maxConns: cfg.MaxConns, perSource: cfg.MaxConnsPerSource,
		refuseFull: cfg.RefuseWhenFull, idle: cfg.IdleTimeout, frame: cfg.FrameTimeout,
		handshake: cfg.HandshakeTimeout, tls: cfg.TLS, log: cfg.Logger,
		proxy: cfg.ProxyProtocol, proxyAllowed: cfg.ProxyAllowed,
		conns: map[*Conn]struct{}{}, sources: map[netip.Addr]*source{}, done: make(chan struct{}),
	}
}

// Addr is the listener's network address.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// Stats returns a snapshot of the counters.
func (l *Listener) Stats() Stats {
	return Stats{
		Open: l.open.Load(), Accepted: l.accepted.Load(), BytesRead: l.bytesRead.Load(),
		RefusedPerSource: l.refusedSource.Load(), RefusedFull: l.refusedFull.Load(),
		Evicted: l.evicted.Load(), CutIdle: l.cutIdle.Load(), CutFrameTimeout: l.cutFrame.Load(),
		CutHandshakeTimeout: l.cutHandshake.Load(), HandshakeErrors: l.handshakeErrors.Load(),
		AcceptErrors: l.acceptErrors.Load(), AcceptFailing: l.acceptFailing.Load(),
		ProxyHeaders: l.proxyHeaders.Load(), ProxyLocal: l.proxyLocal.Load(),
		ProxyNotAllowed: l.proxyRefused[proxyNotAllowed].Load(), ProxyMalformed: l.proxyRefused[proxyMalformed].Load(),
		ProxyMissing: l.proxyRefused[proxyMissing].Load(), ProxyTimeout: l.proxyRefused[proxyTimeout].Load(),
	}
}

// Close stops accepting and ends every connection's reads, as the end of
// Serve's context does; Serve then returns once every handler has. Close
// is idempotent and returns nil.
func (l *Listener) Close() error {
	l.shutdown()
	return nil
}

// Serve accepts connections until ctx ends or Close is called, running
// [Config].Handler for each in its own goroutine. Then it stops accepting, ends every
// connection's reads (their next Read returns [ErrClosed]; frames already
// read are still handed over) and waits for every handler before it
// returns nil.
//
// A failed accept does not end Serve: running out of file descriptors
// (EMFILE, ENFILE), memory or buffers passes, and the connections wait in
// the kernel's backlog meanwhile. Serve counts the error
// ([Stats].AcceptErrors), waits 5 ms, doubling after each further error up
// to 1 s (what net/http's Server.Serve does for temporary errors), and
// accepts again; the [Config].Logger hears of it once when an episode
// starts and once when an accept succeeds again. Only a listener closed
// from outside (an error wrapping [net.ErrClosed]) ends Serve the same way
// as Close, and that error is returned. Without a Config.Handler, Serve
// returns a *relaykit.FieldError wrapping [ErrInvalidConfig] at once.
func (l *Listener) Serve(ctx context.Context) error {
	h := l.handler
	if h == nil {
		return cfgerr.New(ErrInvalidConfig, "Handler", "required by Serve")
	}
	l.mu.Lock()
	l.serveCtx = ctx
	l.mu.Unlock()
	stop := context.AfterFunc(ctx, l.shutdown)
	defer stop()
	var err error
	var b acceptBackoff
	for {
		raw, aerr := l.acceptRetry(&b, nil)
		if aerr != nil {
			l.mu.Lock()
			closing := l.closing
			l.mu.Unlock()
			if !closing {
				err = fmt.Errorf("stream: %s: accept: %w", l.name, aerr)
				l.shutdown()
			}
			break
		}
		if c := l.admit(raw); c != nil {
			go l.serveConn(ctx, c, h)
		}
	}
	l.wg.Wait()
	return err
}

// acceptBackoff is the state of an accept loop's episode of errors.
type acceptBackoff struct {
	delay   time.Duration
	episode int64 // accept errors in the current episode
}

// acceptRetry accepts the next connection. A failed accept is counted,
// logged once per episode, and retried after a wait (5 ms, doubling up to
// 1 s), which the listener's shutdown or the closing of stop ends. It
// returns an error only when the socket is closed (or the listener shut
// down, or stop closed): an error wrapping net.ErrClosed.
func (l *Listener) acceptRetry(b *acceptBackoff, stop <-chan struct{}) (net.Conn, error) {
	for {
		raw, err := l.ln.Accept()
		if err == nil {
			if b.delay != 0 {
				l.acceptFailing.Store(false)
				l.log.Info("accepting again", "input", l.name, "accept_errors", b.episode)
				b.delay, b.episode = 0, 0
			}
			return raw, nil
		}
		l.mu.Lock()
		closing := l.closing
		l.mu.Unlock()
		if closing || errors.Is(err, net.ErrClosed) {
			return nil, err
		}
		if isTimeout(err) {
			continue
		}
		l.acceptErrors.Add(1)
		b.episode++
		b.delay = min(max(2*b.delay, acceptBackoffMin), acceptBackoffMax)
		if !l.acceptFailing.Swap(true) {
			l.log.Warn("accept failing, retrying with backoff; new connections wait in the backlog", "input", l.name, "error", err, "max_backoff", acceptBackoffMax)
		}
		t := time.NewTimer(b.delay)
		select {
		case <-t.C:
		case <-l.done:
			t.Stop()
		case <-stop:
			t.Stop()
			return nil, fmt.Errorf("%w (after %w)", net.ErrClosed, err)
		}
	}
}

// admit registers a new connection, or refuses it; at MaxConns it evicts
// the longest-idle connection. Finding it is a scan of the open
// connections, done only when the listener is full.
//
// With ProxyProtocol, a connection from an address allowed to send a
// PROXY header is not charged to any source here: its header names the
// source, which [Listener.chargeSource] charges once it is read. With
// ProxyRequired, one from another address is refused.
func (l *Listener) admit(raw net.Conn) *Conn {
	src := sourceOf(raw.RemoteAddr())
	now := time.Now()
	c := &Conn{Conn: raw, raw: raw, l: l, src: src, start: now}
	c.waiting.Store(now.UnixNano()) // idle until its handler reads
	if l.proxy != ProxyOff {
		switch {
		case l.allowedProxy(src):
			c.proxy = proxyRead
		case l.proxy == ProxyRequired:
			raw.Close()
			l.refuseProxy(proxyNotAllowed, raw.RemoteAddr(), errors.New("a connection from an address not allowed to send a PROXY header, which this input requires"))
			return nil
		default:
			c.proxy = proxyPeek
		}
	}
	var victim *Conn
	var warnSource, warnFull bool
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		raw.Close()
		return nil
	}
	s := l.sources[src]
	if c.proxy != proxyRead && s != nil && s.n >= l.perSource {
		warnSource = !s.warned
		s.warned = true
		l.mu.Unlock()
		l.refusedSource.Add(1)
		raw.Close()
		if warnSource {
			l.log.Warn("connections per source at the limit, refusing new ones from it", "input", l.name, "source", src, "max_per_source", l.perSource)
		}
		return nil
	}
	if len(l.conns) >= l.maxConns {
		warnFull = !l.fullWarn
		l.fullWarn = true
		if !l.refuseFull {
			var oldest int64
			for o := range l.conns {
				if t := o.waiting.Load(); t != 0 && (victim == nil || t < oldest) {
					victim, oldest = o, t
				}
			}
		}
		if victim == nil {
			l.mu.Unlock()
			l.refusedFull.Add(1)
			raw.Close()
			if warnFull {
				l.log.Warn("max connections reached, refusing new ones", "input", l.name, "max", l.maxConns)
			}
			return nil
		}
		l.removeLocked(victim)
		l.evicted.Add(1)
	}
	if c.proxy != proxyRead {
		if s == nil {
			s = &source{}
			l.sources[src] = s
		}
		s.n++
		c.charged = true
	}
	c.registered = true
	if l.serveCtx != nil { // a NetListener's connections have none
		c.ctx, c.cancel = context.WithCancel(l.serveCtx)
	}
	l.conns[c] = struct{}{}
	l.wg.Add(1)
	l.accepted.Add(1)
	l.open.Add(1)
	l.mu.Unlock()
	if victim != nil {
		victim.end(ErrEvicted)
		victim.raw.Close()
		if warnFull {
			l.log.Warn("max connections reached, evicting the longest-idle connection for each new one", "input", l.name, "max", l.maxConns)
		}
	}
	return c
}

// removeLocked unregisters c (once) and ends the episodes that its
// departure ends. l.mu is held.
func (l *Listener) removeLocked(c *Conn) {
	if !c.registered {
		return
	}
	c.registered = false
	delete(l.conns, c)
	l.open.Add(-1)
	if s := l.sources[c.src]; c.charged && s != nil {
		c.charged = false
		s.n--
		if s.n == 0 {
			delete(l.sources, c.src)
		} else if s.n <= l.perSource*7/8 {
			s.warned = false
		}
	}
	if len(l.conns) <= l.maxConns*7/8 {
		l.fullWarn = false
	}
}

func (l *Listener) serveConn(ctx context.Context, c *Conn, h Handler) {
	defer l.wg.Done()
	defer func() {
		l.mu.Lock()
		l.removeLocked(c)
		l.mu.Unlock()
		c.raw.Close()
		if c.cancel != nil {
			c.cancel()
		}
	}()
	if c.proxy != proxyNone || l.tls != nil {
		_ = c.raw.SetDeadline(c.start.Add(l.handshake))
		if c.ended() != nil {
			return // shut down before the deadline was set, which would undo its own
		}
	}
	if c.proxy != proxyNone {
		p, ok := l.readProxy(c)
		if !ok {
			return
		}
		if p.pre != nil || p.remote != nil {
			c.Conn = &proxiedConn{Conn: c.raw, p: p}
			c.via = p.via
		}
		if l.tls == nil {
			_ = c.raw.SetDeadline(time.Time{})
		}
	}
	if l.tls != nil {
		tc := tls.Server(c.Conn, l.tls)
		err := tc.HandshakeContext(ctx)
		if err != nil {
			var ne net.Error
			switch {
			case c.ended() != nil:
			case errors.As(err, &ne) && ne.Timeout():
				l.cutHandshake.Add(1)
			default:
				l.handshakeErrors.Add(1)
			}
			return
		}
		_ = c.raw.SetDeadline(time.Time{})
		c.Conn = tc
	}
	c.waiting.Store(0) // busy until the handler reads
	h(c)
}

func (l *Listener) shutdown() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing {
		return
	}
	l.closing = true
	close(l.done)
	l.ln.Close()
	for c := range l.conns {
		c.end(ErrClosed)
		_ = c.raw.SetReadDeadline(time.Now())
	}
}

func sourceOf(a net.Addr) netip.Addr {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// FrameState is implemented by a protocol reader of a [Conn] that knows
// whether a frame is in progress: a [Framer], or a session of package
// stream/relp. The Conn asks it before each read, to apply
// [Config].FrameTimeout to a frame begun and not finished.
type FrameState interface {
	// InFrame reports whether part of a frame has been read and the rest
	// has not.
	InFrame() bool
}

// TrackFrames makes c ask f, before each read, whether a frame is in
// progress, so that [Config].FrameTimeout cuts a sender that begins a
// frame and never finishes it. Nil stops it. A [Framer] reading c calls it
// itself; a protocol that reads c its own way calls it once per session.
// It must be called from the handler's goroutine.
func (c *Conn) TrackFrames(f FrameState) { c.fr = f }

// Conn is one accepted connection (after the TLS handshake, for a TLS
// listener). Its Read enforces the idle and frame deadlines and reports why
// the listener ended the connection. A Conn is used by its handler's
// goroutine; the listener ends it from others.
type Conn struct {
	net.Conn // the TLS connection for a TLS listener

	raw        net.Conn // the accepted connection: deadlines and closing
	l          *Listener
	src        netip.Addr // guarded by l.mu until the handler runs
	via        net.Addr   // the peer that sent a PROXY header naming src
	start      time.Time  // accepted
	proxy      uint8      // proxyNone, proxyRead or proxyPeek
	fr         FrameState // the Framer or protocol session reading c, for FrameTimeout
	registered bool       // in l.conns; guarded by l.mu
	charged    bool       // counted in l.sources[src]; guarded by l.mu

	waiting    atomic.Int64 // since when the handler waits in Read (ns since epoch); 0 while it is busy
	frameStart int64
	why        atomic.Pointer[error]

	ctx    context.Context // Context's; set before the Conn is registered, nil for a NetListener's
	cancel context.CancelFunc
}

// Source is the connection's source IP address: what
// [Config].MaxConnsPerSource counts. IPv4-mapped IPv6 addresses are
// unmapped. With [Config].ProxyProtocol it is the source the connection's
// PROXY header named, as RemoteAddr is (and LocalAddr the destination it
// named), or the connection's own peer when it sent none, or a LOCAL or
// UNKNOWN one.
func (c *Conn) Source() netip.Addr { return c.src }

// Via returns the connection's own peer (a load balancer) when a PROXY
// header replaced it with the source it named, and nil otherwise.
func (c *Conn) Via() net.Addr { return c.via }

func (c *Conn) end(err error) {
	c.why.CompareAndSwap(nil, &err)
	if c.cancel != nil {
		c.cancel()
	}
}

// Context returns a context that ends when the listener ends the
// connection's reads: its shutdown (the end of Serve's context, or
// Close), an eviction, a deadline, or the handler's return. A handler
// waits on it for what must not outlast the connection's reading, such
// as the pacing of a source over its rate limit; pushing what it read
// onward must not wait on it (the reads end first, and what they read is
// still handed over).
func (c *Conn) Context() context.Context {
	if c.ctx == nil {
		return context.Background()
	}
	return c.ctx
}

func (c *Conn) ended() error {
	if p := c.why.Load(); p != nil {
		return *p
	}
	return nil
}

// Read reads data into p, first setting the read deadline: the idle
// deadline, or the deadline of the frame in progress when that comes
// first. Its errors wrap [ErrClosed], [ErrEvicted], [ErrIdleTimeout] or
// [ErrFrameTimeout] when the listener ended the connection, or are the
// connection's own (io.EOF, a reset).
func (c *Conn) Read(p []byte) (int, error) {
	if err := c.ended(); err != nil {
		return 0, err
	}
	now := time.Now()
	c.waiting.Store(now.UnixNano())
	defer c.waiting.Store(0)
	var dl time.Time
	frameDL := false
	if c.l.idle > 0 {
		dl = now.Add(c.l.idle)
	}
	if c.fr != nil && c.l.frame > 0 && c.fr.InFrame() {
		if c.frameStart == 0 {
			c.frameStart = now.UnixNano()
		}
		if fd := time.Unix(0, c.frameStart).Add(c.l.frame); dl.IsZero() || fd.Before(dl) {
			dl, frameDL = fd, true
		}
	} else {
		c.frameStart = 0
	}
	_ = c.raw.SetReadDeadline(dl)
	if err := c.ended(); err != nil {
		// Shutdown set its deadline between our check and ours.
		_ = c.raw.SetReadDeadline(now)
		return 0, err
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.l.bytesRead.Add(int64(n))
	}
	if err != nil && !errors.Is(err, io.EOF) {
		if why := c.ended(); why != nil {
			return n, why
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			if frameDL {
				c.end(ErrFrameTimeout)
				c.l.cutFrame.Add(1)
				return n, ErrFrameTimeout
			}
			c.end(ErrIdleTimeout)
			c.l.cutIdle.Add(1)
			return n, ErrIdleTimeout
		}
	}
	return n, err
}
