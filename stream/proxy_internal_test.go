package stream

import (
	"bytes"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/pires/go-proxyproto"
)

// memConn is a net.Conn that reads from a buffer: the header stage
// without a socket.
type memConn struct {
	net.Conn
	r    bytes.Reader
	peer net.Addr
}

func (c *memConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *memConn) RemoteAddr() net.Addr        { return c.peer }
func (c *memConn) LocalAddr() net.Addr         { return c.peer }
func (c *memConn) SetDeadline(time.Time) error { return nil }
func (c *memConn) Close() error                { return nil }

// BenchmarkProxyStage measures the PROXY stage of one connection alone
// (ns/op is ns per connection): reading a header of each version, with
// the first frame behind it, from memory, applying it and charging its
// source, against a connection without one in optional mode. It is what
// ProxyProtocol adds to a connection's accept-to-first-frame path, which
// BenchmarkListenerProxyConn measures whole.
func BenchmarkProxyStage(b *testing.B) {
	const frame = "<13>1 2026-11-22T10:00:00.000Z host app 1234 ID47 - first event\n"
	peer := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 50000}
	for _, tc := range []struct {
		name    string
		version byte
	}{{"header=none", 0}, {"header=v1", 1}, {"header=v2", 2}} {
		b.Run(tc.name, func(b *testing.B) {
			data := []byte(frame)
			if tc.version != 0 {
				h, err := proxyproto.HeaderProxyFromAddrs(tc.version, &net.TCPAddr{IP: net.IPv4(203, 0, 113, 7), Port: 40001}, &net.TCPAddr{IP: net.IPv4(198, 51, 100, 1), Port: 514}).Format()
				if err != nil {
					b.Fatal(err)
				}
				data = append(h, frame...)
			}
			cfg := Config{Address: "127.0.0.1:0", ProxyProtocol: ProxyOptional, ProxyAllowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
			if err := cfg.fill(); err != nil {
				b.Fatal(err)
			}
			l := newListener(nil, cfg)
			mc := &memConn{peer: peer}
			b.ReportAllocs()
			for b.Loop() {
				mc.r.Reset(data)
				c := &Conn{Conn: mc, raw: mc, l: l, src: sourceOf(peer), proxy: proxyRead, registered: true}
				p, ok := l.readProxy(c)
				if !ok || len(p.pre) != len(frame) {
					b.Fatalf("stage: %v, %d bytes after it", ok, len(p.pre))
				}
				l.mu.Lock()
				l.removeLocked(c)
				l.mu.Unlock()
			}
		})
	}
}
