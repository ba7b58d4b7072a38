package stream_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pires/go-proxyproto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/internal/testtool"
	"github.com/relaykit/relaykit/stream"
)

// seen is a frame and what its connection's handler saw of the
// connection.
type seen struct {
	frame, remote, local, source, via string
}

// serveSeen runs a listener whose handler reports each frame with the
// addresses of its connection.
func serveSeen(t *testing.T, cfg stream.Config) (*stream.Listener, chan seen) {
	t.Helper()
	out := make(chan seen, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ln, err := stream.New(loopback(cfg, func(c *stream.Conn) {
		f := stream.NewFramer(c, stream.FramerConfig{})
		via := ""
		if v := c.Via(); v != nil {
			via = v.String()
		}
		for {
			b, _, err := f.Next()
			if err != nil {
				return
			}
			out <- seen{string(b), c.RemoteAddr().String(), c.LocalAddr().String(), c.Source().String(), via}
		}
	}))
	require.NoError(t, err)
	go func() { done <- ln.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return ln, out
}

func tcpAddr(s string) *net.TCPAddr {
	return net.TCPAddrFromAddrPort(netip.MustParseAddrPort(s))
}

// header returns a PROXY header of version v from src to dst, written by
// go-proxyproto.
func header(t testing.TB, v byte, src, dst string) []byte {
	t.Helper()
	b, err := proxyproto.HeaderProxyFromAddrs(v, tcpAddr(src), tcpAddr(dst)).Format()
	require.NoError(t, err)
	return b
}

func localHeader(t testing.TB) []byte {
	t.Helper()
	b, err := (&proxyproto.Header{Version: 2, Command: proxyproto.LOCAL, TransportProtocol: proxyproto.UNSPEC}).Format()
	require.NoError(t, err)
	return b
}

func allowed(ss ...string) []netip.Prefix {
	ps, err := stream.ParseProxyAllowed(ss)
	if err != nil {
		panic(err)
	}
	return ps
}

func recv(t *testing.T, ch chan seen) seen {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no frame")
		return seen{}
	}
}

// PROXY headers of both versions, written by go-proxyproto (and v1
// UNKNOWN by hand), are parsed and applied: the source they name is the
// connection's Source and RemoteAddr, the destination its LocalAddr, and
// Via the balancer; LOCAL and UNKNOWN keep the connection's own address.
// The header comes with the first frame in one write, or alone before
// it.
func TestListenerProxyHeaders(t *testing.T) {
	ln, frames := serveSeen(t, stream.Config{ProxyProtocol: stream.ProxyRequired, ProxyAllowed: allowed("127.0.0.2")})
	for _, tc := range []struct {
		name          string
		hdr           []byte
		remote, local string // "" for the connection's own
	}{
		{"v1/TCP4", header(t, 1, "203.0.113.7:40001", "198.51.100.1:514"), "203.0.113.7:40001", "198.51.100.1:514"},
		{"v1/TCP6", header(t, 1, "[2001:db8::7]:40002", "[2001:db8::1]:514"), "[2001:db8::7]:40002", "[2001:db8::1]:514"},
		{"v1/UNKNOWN", []byte("PROXY UNKNOWN\r\n"), "", ""},
		{"v1/UNKNOWN-addresses", []byte("PROXY UNKNOWN 203.0.113.7 198.51.100.1 40003 514\r\n"), "", ""},
		{"v2/TCP4", header(t, 2, "203.0.113.8:40004", "198.51.100.1:514"), "203.0.113.8:40004", "198.51.100.1:514"},
		{"v2/TCP6", header(t, 2, "[2001:db8::8]:40005", "[2001:db8::1]:514"), "[2001:db8::8]:40005", "[2001:db8::1]:514"},
		{"v2/LOCAL", localHeader(t), "", ""},
	} {
		for _, split := range []bool{false, true} {
			name := tc.name + "/one-write"
			if split {
				name = tc.name + "/header-alone"
			}
			t.Run(name, func(t *testing.T) {
				c := testtool.Dial(t, "127.0.0.2", ln.Addr())
				msg := "<13>" + name + "\n"
				if split {
					_, err := c.Write(tc.hdr)
					require.NoError(t, err)
					_, err = io.WriteString(c, msg)
					require.NoError(t, err)
				} else {
					_, err := c.Write(append(append([]byte(nil), tc.hdr...), msg...))
					require.NoError(t, err)
				}
				got := recv(t, frames)
				assert.Equal(t, "<13>"+name, got.frame)
				if tc.remote == "" {
					assert.Equal(t, c.LocalAddr().String(), got.remote)
					assert.Equal(t, c.RemoteAddr().String(), got.local)
					assert.Equal(t, "127.0.0.2", got.source)
					assert.Empty(t, got.via)
					return
				}
				assert.Equal(t, tc.remote, got.remote)
				assert.Equal(t, tc.local, got.local)
				assert.Equal(t, netip.MustParseAddrPort(tc.remote).Addr().String(), got.source)
				assert.Equal(t, c.LocalAddr().String(), got.via, "Via: the balancer")
			})
		}
	}
	st := ln.Stats()
	assert.Equal(t, int64(8), st.ProxyHeaders)
	assert.Equal(t, int64(6), st.ProxyLocal)
	assert.Zero(t, st.ProxyNotAllowed+st.ProxyMalformed+st.ProxyMissing+st.ProxyTimeout)
}

// Only the addresses in ProxyAllowed may send a header. With
// ProxyRequired a connection from another address is closed at accept;
// with ProxyOptional it is served as a direct sender unless it sends a
// header, and an allowed address may send none.
func TestListenerProxyAllowed(t *testing.T) {
	hdr := header(t, 1, "203.0.113.7:40001", "198.51.100.1:514")
	t.Run("required", func(t *testing.T) {
		ln, frames := serveSeen(t, stream.Config{ProxyProtocol: stream.ProxyRequired, ProxyAllowed: allowed("127.0.0.2/32")})
		spoof := testtool.Dial(t, "127.0.0.3", ln.Addr())
		_, _ = spoof.Write(append(hdr, "<13>spoofed\n"...))
		refused(t, spoof)
		good := testtool.Dial(t, "127.0.0.2", ln.Addr())
		_, err := good.Write(append(hdr, "<13>good\n"...))
		require.NoError(t, err)
		assert.Equal(t, seen{"<13>good", "203.0.113.7:40001", "198.51.100.1:514", "203.0.113.7", good.LocalAddr().String()}, recv(t, frames))
		st := ln.Stats()
		assert.Equal(t, int64(1), st.ProxyNotAllowed)
		assert.Equal(t, int64(1), st.Accepted, "the refused connection was never admitted")
	})
	t.Run("optional", func(t *testing.T) {
		// A minute: a connection held until its deadline fails recv.
		ln, frames := serveSeen(t, stream.Config{ProxyProtocol: stream.ProxyOptional, ProxyAllowed: allowed("127.0.0.2"), HandshakeTimeout: time.Minute})
		spoof := testtool.Dial(t, "127.0.0.3", ln.Addr())
		_, _ = spoof.Write(append(hdr, "<13>spoofed\n"...))
		refused(t, spoof)

		// A first line that begins as a header would, shorter than a
		// signature: served at once, not held until the deadline.
		direct := testtool.Dial(t, "127.0.0.3", ln.Addr())
		_, err := io.WriteString(direct, "PING\n")
		require.NoError(t, err)
		got := recv(t, frames)
		assert.Equal(t, seen{"PING", direct.LocalAddr().String(), direct.RemoteAddr().String(), "127.0.0.3", ""}, got)

		balancerDirect := testtool.Dial(t, "127.0.0.2", ln.Addr())
		_, err = io.WriteString(balancerDirect, "<13>no header\n")
		require.NoError(t, err)
		got = recv(t, frames)
		assert.Equal(t, seen{"<13>no header", balancerDirect.LocalAddr().String(), balancerDirect.RemoteAddr().String(), "127.0.0.2", ""}, got)

		proxied := testtool.Dial(t, "127.0.0.2", ln.Addr())
		_, err = proxied.Write(append(hdr, "<13>proxied\n"...))
		require.NoError(t, err)
		assert.Equal(t, "203.0.113.7", recv(t, frames).source)

		st := ln.Stats()
		assert.Equal(t, int64(1), st.ProxyNotAllowed)
		assert.Equal(t, int64(1), st.ProxyHeaders)
		assert.Equal(t, int64(4), st.Accepted)
	})
}

// A malformed header, a missing one, and a header too slow for the
// handshake deadline (or none at all from a silent connection) each cost
// their connection alone: they are closed and counted by reason, each
// reason logged once, while a good connection is served meanwhile.
func TestListenerProxyRefusals(t *testing.T) {
	const handshake = 2 * time.Second // a margin for the connections served meanwhile on a loaded machine
	logs := &recordHandler{}
	ln, frames := serveSeen(t, stream.Config{
		ProxyProtocol: stream.ProxyRequired, ProxyAllowed: allowed("127.0.0.0/8"),
		HandshakeTimeout: handshake, Logger: slog.New(logs),
	})
	v2 := header(t, 2, "203.0.113.7:40001", "198.51.100.1:514")

	// The clock starts before the dials: the listener may accept, and
	// start the deadline, before Dial returns.
	start := time.Now()
	silent := testtool.Dial(t, "127.0.0.2", ln.Addr())
	halfV2 := testtool.Dial(t, "127.0.0.3", ln.Addr())
	_, err := halfV2.Write(v2[:len(v2)/2])
	require.NoError(t, err)
	halfSig := testtool.Dial(t, "127.0.0.4", ln.Addr())
	_, err = io.WriteString(halfSig, "PRO")
	require.NoError(t, err)

	for _, bad := range []string{
		"PROXY TCP4 203.0.113.7 nonsense 1 2\r\n<13>x\n",       // bad address
		"PROXY TCP4 203.0.113.7 198.51.100.1 40001\r\n",        // a token short
		"PROXY TCP4 203.0.113.7 198.51.100.1 40001 514\n",      // LF without CR
		string(v2[:12]) + "\x31\x11\x00\x0c" + string(v2[16:]), // version 3
	} {
		c := testtool.Dial(t, "127.0.0.5", ln.Addr())
		_, _ = io.WriteString(c, bad)
		refused(t, c)
	}
	missing := testtool.Dial(t, "127.0.0.6", ln.Addr())
	_, _ = io.WriteString(missing, "<13>no header\n")
	refused(t, missing)

	// Served while the slow ones wait for their deadline.
	good := testtool.Dial(t, "127.0.0.7", ln.Addr())
	_, err = good.Write(append(v2, "<13>good\n"...))
	require.NoError(t, err)
	assert.Equal(t, "<13>good", recv(t, frames).frame)
	st := ln.Stats()
	assert.Zero(t, st.ProxyTimeout, "the slow ones are still within their deadline")
	assert.Equal(t, int64(4), st.ProxyMalformed)
	assert.Equal(t, int64(1), st.ProxyMissing)

	for _, c := range []net.Conn{silent, halfV2, halfSig} {
		refused(t, c)
	}
	assert.GreaterOrEqual(t, time.Since(start), handshake)
	require.Eventually(t, func() bool { return ln.Stats().ProxyTimeout == 3 }, 5*time.Second, time.Millisecond)
	st = ln.Stats()
	assert.Equal(t, int64(1), st.ProxyHeaders)
	assert.Zero(t, st.CutHandshakeTimeout, "counted as PROXY timeouts")
	assert.ElementsMatch(t, []string{"malformed", "missing", "timeout"}, logs.reasonsLogged(), "each reason logged once")
	require.Eventually(t, func() bool { return ln.Stats().Open == 1 }, 5*time.Second, time.Millisecond, "only the good connection holds a slot")
}

// MaxConnsPerSource counts the sources the headers name, not the
// balancer that all connections come from.
func TestListenerProxyPerSource(t *testing.T) {
	ln, frames := serveSeen(t, stream.Config{ProxyProtocol: stream.ProxyRequired, ProxyAllowed: allowed("127.0.0.2"), MaxConnsPerSource: 2})
	send := func(src, msg string) net.Conn {
		c := testtool.Dial(t, "127.0.0.2", ln.Addr())
		_, err := c.Write(append(header(t, 2, src, "198.51.100.1:514"), msg+"\n"...))
		require.NoError(t, err)
		return c
	}
	for i, src := range []string{"203.0.113.1:1", "203.0.113.1:2", "203.0.113.2:1"} {
		send(src, "<13>"+src)
		got := recv(t, frames)
		assert.Equal(t, src, got.remote, "connection %d", i)
	}
	third := send("203.0.113.1:3", "<13>third")
	refused(t, third)
	st := ln.Stats()
	assert.Equal(t, int64(1), st.RefusedPerSource)
	assert.Equal(t, int64(3), st.Open, "three from the balancer's one address")
}

// The header comes before the TLS handshake; both are bounded by
// HandshakeTimeout.
func TestListenerProxyTLS(t *testing.T) {
	cert := testtool.SelfSigned(t)
	ln, frames := serveSeen(t, stream.Config{
		ProxyProtocol: stream.ProxyRequired, ProxyAllowed: allowed("127.0.0.2"),
		TLS: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	})
	raw := testtool.Dial(t, "127.0.0.2", ln.Addr())
	_, err := raw.Write(header(t, 1, "203.0.113.9:40009", "198.51.100.1:6514"))
	require.NoError(t, err)
	tc := tls.Client(raw, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // self-signed test certificate
	_, err = io.WriteString(tc, "<13>over tls\n")
	require.NoError(t, err)
	got := recv(t, frames)
	assert.Equal(t, seen{"<13>over tls", "203.0.113.9:40009", "198.51.100.1:6514", "203.0.113.9", raw.LocalAddr().String()}, got)
}

// Closing the listener ends the connections waiting for their header;
// none is counted as refused.
func TestListenerProxyShutdown(t *testing.T) {
	done := make(chan error, 1)
	ln, err := stream.New(loopback(stream.Config{ProxyProtocol: stream.ProxyRequired, ProxyAllowed: allowed("127.0.0.0/8")}, func(*stream.Conn) { t.Error("handler ran") }))
	require.NoError(t, err)
	go func() { done <- ln.Serve(t.Context()) }()
	c := testtool.Dial(t, "127.0.0.2", ln.Addr())
	_, err = io.WriteString(c, "PROX") // a signature not complete: read until the deadline
	require.NoError(t, err)
	require.Eventually(t, func() bool { return ln.Stats().Open == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, ln.Close())
	require.NoError(t, <-done)
	refused(t, c)
	st := ln.Stats()
	assert.Zero(t, st.ProxyMalformed+st.ProxyTimeout+st.ProxyMissing)
	assert.Zero(t, st.Open)
}

func TestProxyConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  stream.Config
	}{
		{"no allowed", stream.Config{ProxyProtocol: stream.ProxyOptional}},
		{"bad mode", stream.Config{ProxyProtocol: 7, ProxyAllowed: allowed("10.0.0.0/8")}},
		{"invalid prefix", stream.Config{ProxyProtocol: stream.ProxyRequired, ProxyAllowed: []netip.Prefix{{}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := stream.New(loopback(tc.cfg, nil))
			assert.ErrorIs(t, err, stream.ErrInvalidConfig)
		})
	}
	for s, want := range map[string]stream.ProxyMode{"": stream.ProxyOff, "off": stream.ProxyOff, "Optional": stream.ProxyOptional, "required": stream.ProxyRequired} {
		var m stream.ProxyMode
		require.NoError(t, m.UnmarshalText([]byte(s)))
		assert.Equal(t, want, m, s)
	}
	_, err := stream.ParseProxyMode("on")
	assert.ErrorIs(t, err, stream.ErrInvalidConfig)
	b, err := stream.ProxyRequired.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, "required", string(b))

	ps, err := stream.ParseProxyAllowed([]string{"10.0.0.5", "2001:db8::/32", "::ffff:192.0.2.1"})
	require.NoError(t, err)
	assert.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.0.0.5/32"), netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("192.0.2.1/32")}, ps)
	_, err = stream.ParseProxyAllowed([]string{"10.0.0.300"})
	assert.ErrorIs(t, err, stream.ErrInvalidConfig)

	// A mapped prefix matches the unmapped sources.
	ln, frames := serveSeen(t, stream.Config{ProxyProtocol: stream.ProxyRequired, ProxyAllowed: []netip.Prefix{netip.MustParsePrefix("::ffff:127.0.0.0/104")}})
	c := testtool.Dial(t, "127.0.0.2", ln.Addr())
	_, err = c.Write(append(header(t, 1, "203.0.113.7:1", "198.51.100.1:514"), "<13>x\n"...))
	require.NoError(t, err)
	assert.Equal(t, "203.0.113.7", recv(t, frames).source)
}

// refused waits until the listener closes c, which may have sent what
// the listener never read: EOF, or a reset.
func refused(t *testing.T, c net.Conn) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err := c.Read(make([]byte, 1))
	require.Error(t, err)
	var ne net.Error
	assert.False(t, errors.As(err, &ne) && ne.Timeout(), "closed by the listener: %v", err)
}

// Over a NetListener the server sees the source a PROXY header named from
// the start: in its ConnContext hook (which runs in its accept loop), as
// Request.RemoteAddr, and the destination as the LocalAddrContextKey.
// A connection whose header is slow to come does not hold up the accept
// loop, and one the PROXY stage refuses never reaches the server.
func TestNetListenerProxy(t *testing.T) {
	for _, withTLS := range []bool{false, true} {
		name := "plain"
		if withTLS {
			name = "tls"
		}
		t.Run(name, func(t *testing.T) {
			cfg := stream.Config{ProxyProtocol: stream.ProxyRequired, ProxyAllowed: allowed("127.0.0.2", "127.0.0.3"), HandshakeTimeout: 5 * time.Second}
			var clientTLS *tls.Config
			if withTLS {
				cert := testtool.SelfSigned(t)
				cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
				clientTLS = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // self-signed test certificate
			}
			type ctxKey struct{}
			var newConns atomic.Int32
			s := serveHTTP(t, cfg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
				fmt.Fprintf(w, "%s %s %s", r.RemoteAddr, r.Context().Value(ctxKey{}), local)
			}), func(srv *http.Server) {
				srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
					return context.WithValue(ctx, ctxKey{}, c.RemoteAddr().String())
				}
				hook := srv.ConnState
				srv.ConnState = func(c net.Conn, st http.ConnState) {
					if st == http.StateNew {
						newConns.Add(1)
					}
					hook(c, st)
				}
			})

			slow := testtool.Dial(t, "127.0.0.2", s.nl.Addr())
			_, err := io.WriteString(slow, "PRO")
			require.NoError(t, err)
			refusedConn := testtool.Dial(t, "127.0.0.3", s.nl.Addr())
			_, _ = io.WriteString(refusedConn, "GET / HTTP/1.1\r\nHost: relay\r\n\r\n")
			refused(t, refusedConn)

			get := func(src string) string {
				var c net.Conn = testtool.Dial(t, "127.0.0.2", s.nl.Addr())
				_, err := c.Write(header(t, 2, src, "198.51.100.1:443"))
				require.NoError(t, err)
				if withTLS {
					c = tls.Client(c, clientTLS)
				}
				_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: relay\r\n\r\n")
				require.NoError(t, err)
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				require.NoError(t, err)
				b, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				resp.Body.Close()
				return string(b)
			}
			assert.Equal(t, "203.0.113.7:40001 203.0.113.7:40001 198.51.100.1:443", get("203.0.113.7:40001"))
			assert.Equal(t, "[2001:db8::7]:40002 [2001:db8::7]:40002 198.51.100.1:443", get("[2001:db8::7]:40002"))
			st := s.ln.Stats()
			assert.Equal(t, int64(2), st.ProxyHeaders)
			assert.Equal(t, int64(1), st.ProxyMissing)
			assert.Zero(t, st.ProxyTimeout, "the slow header is still within its deadline")
			assert.Equal(t, int32(2), newConns.Load(), "the server saw the two good connections only")
		})
	}
}

// Closing a NetListener closes the connections whose header was not read
// yet (no server has them) and waits for its goroutines.
func TestNetListenerProxyClose(t *testing.T) {
	ln, err := stream.New(loopback(stream.Config{ProxyProtocol: stream.ProxyOptional, ProxyAllowed: allowed("127.0.0.2")}, nil))
	require.NoError(t, err)
	nl := ln.NetListener()
	accepted := make(chan net.Conn, 1)
	acceptErr := make(chan error, 1)
	go func() {
		for {
			c, err := nl.Accept()
			if err != nil {
				acceptErr <- err
				return
			}
			accepted <- c
		}
	}()
	pending := testtool.Dial(t, "127.0.0.2", nl.Addr())
	_, err = io.WriteString(pending, "PRO")
	require.NoError(t, err)
	direct := testtool.Dial(t, "127.0.0.3", nl.Addr())
	_, err = io.WriteString(direct, "hello")
	require.NoError(t, err)
	c := <-accepted
	assert.Equal(t, direct.LocalAddr().String(), c.RemoteAddr().String())
	b := make([]byte, 5)
	_, err = io.ReadFull(c, b)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(b))

	require.NoError(t, nl.Close())
	assert.ErrorIs(t, <-acceptErr, net.ErrClosed)
	refused(t, pending)
	require.NoError(t, c.Close())
	assert.Zero(t, ln.Stats().Open)
	_, err = nl.Accept()
	assert.ErrorIs(t, err, net.ErrClosed)
	require.NoError(t, ln.Close())
}
