package stream_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pires/go-proxyproto"

	"github.com/relaykit/relaykit/stream"
)

// loopReader serves data over and over, in reads of at most chunk bytes
// (a socket hands over what arrived, rarely a whole buffer).
type loopReader struct {
	data  []byte
	off   int
	chunk int
}

func (r *loopReader) Read(p []byte) (int, error) {
	n := copy(p[:min(len(p), r.chunk)], r.data[r.off:])
	r.off = (r.off + n) % len(r.data)
	return n, nil
}

// BenchmarkFramer measures one frame per op (ns/op reads as ns/frame) of a
// 200-byte RFC 5424 message, LF-terminated and octet-counted, read in 16 KiB
// chunks; bufio.Scanner splitting the same LF stream is the reference.
func BenchmarkFramer(b *testing.B) {
	msg := "<13>1 2026-11-22T10:00:00.000Z host.example.com app 1234 ID47 - " + string(bytes.Repeat([]byte("x"), 200-66))
	lf := []byte(msg + "\n")
	octet := fmt.Appendf(nil, "%d %s", len(msg), msg)
	streamOf := func(frame []byte) []byte { return bytes.Repeat(frame, 1000) }
	for _, tt := range []struct {
		name  string
		frame []byte
	}{{"framing=lf", lf}, {"framing=octet", octet}} {
		b.Run(tt.name+"/impl=framer", func(b *testing.B) {
			f := stream.NewFramer(&loopReader{data: streamOf(tt.frame), chunk: 16 << 10}, stream.FramerConfig{})
			b.SetBytes(int64(len(tt.frame)))
			b.ReportAllocs()
			for b.Loop() {
				got, _, err := f.Next()
				if err != nil || len(got) != len(msg) {
					b.Fatalf("frame of %d bytes, %v", len(got), err)
				}
			}
		})
	}
	b.Run("framing=lf/impl=bufio.Scanner", func(b *testing.B) {
		sc := bufio.NewScanner(&loopReader{data: streamOf(lf), chunk: 16 << 10})
		sc.Buffer(make([]byte, 64<<10), 64<<10)
		b.SetBytes(int64(len(lf)))
		b.ReportAllocs()
		for b.Loop() {
			if !sc.Scan() || len(sc.Bytes()) != len(msg) {
				b.Fatalf("scan: %v", sc.Err())
			}
		}
	})
}

var _ io.Reader = (*loopReader)(nil)

// BenchmarkNetListenerHTTP measures one HTTP request per op on a kept-alive
// connection to an http.Server, accepting from a plain net.Listener or
// from a stream listener's NetListener with the ConnState hook: the
// difference is what the limits cost per request (deadline bookkeeping,
// idle marks). impl=stream-proxy is the NetListener with ProxyProtocol,
// the client's connection starting with a version 2 header: once it is
// read, a request costs what it does without. Client and server share
// the machine.
func BenchmarkNetListenerHTTP(b *testing.B) {
	const req = "POST / HTTP/1.1\r\nHost: relay\r\nContent-Length: 16\r\n\r\n{\"event\":\"x123\"}"
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{"text":"Success","code":0}`)
	})
	for _, impl := range []string{"net", "stream", "stream-proxy"} {
		b.Run("impl="+impl, func(b *testing.B) {
			srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
			var ln net.Listener
			if impl == "net" {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				ln = l
			} else {
				var version byte
				if impl == "stream-proxy" {
					version = 2
				}
				sl, err := stream.New(loopback(proxyConfig(version), nil))
				if err != nil {
					b.Fatal(err)
				}
				nl := sl.NetListener()
				srv.ConnState = func(c net.Conn, s http.ConnState) {
					switch s {
					case http.StateIdle:
						nl.SetIdle(c, true)
					case http.StateActive:
						nl.SetIdle(c, false)
					}
				}
				ln = nl
			}
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ln) }()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			if impl == "stream-proxy" {
				if _, err := c.Write(proxyHeader(b, 2, c)); err != nil {
					b.Fatal(err)
				}
			}
			br := bufio.NewReader(c)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := io.WriteString(c, req); err != nil {
					b.Fatal(err)
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("response %v: %v", resp, err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			b.StopTimer()
			c.Close()
			_ = srv.Shutdown(context.Background())
			<-done
		})
	}
}

// proxyModes are the PROXY protocol modes the listener benchmarks compare:
// off, and required with a version 1 or version 2 header.
var proxyModes = []struct {
	name    string
	version byte // 0: no header, ProxyProtocol off
}{{"proxy=off", 0}, {"proxy=v1", 1}, {"proxy=v2", 2}}

func proxyConfig(version byte) stream.Config {
	if version == 0 {
		return stream.Config{}
	}
	return stream.Config{ProxyProtocol: stream.ProxyRequired, ProxyAllowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
}

func proxyHeader(b *testing.B, version byte, c net.Conn) []byte {
	if version == 0 {
		return nil
	}
	h, err := proxyproto.HeaderProxyFromAddrs(version, &net.TCPAddr{IP: net.IPv4(203, 0, 113, 7), Port: 40001}, c.RemoteAddr()).Format()
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// cpuTime returns the process's user and system CPU time, in ns: the
// listener benchmarks report it per op (cpu-ns/op, client included),
// which waiting on a loaded machine does not inflate.
func cpuTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkListenerProxyConn measures one connection per op, from the
// dial to the first frame in the handler: a client dials, writes its
// PROXY header (if any) and a frame in one write, and resets the
// connection once the handler has the frame (no TIME_WAIT). The
// difference between the modes is what reading and applying the header
// costs per connection. Client and server share the machine.
func BenchmarkListenerProxyConn(b *testing.B) {
	const frame = "<13>1 2026-11-22T10:00:00.000Z host app 1234 ID47 - first event\n"
	for _, m := range proxyModes {
		b.Run(m.name, func(b *testing.B) {
			got := make(chan string, 1)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			ln, err := stream.New(loopback(proxyConfig(m.version), func(c *stream.Conn) {
				f := stream.NewFramer(c, stream.FramerConfig{})
				defer f.Release()
				if _, _, err := f.Next(); err == nil {
					got <- c.Source().String()
				}
			}))
			if err != nil {
				b.Fatal(err)
			}
			go func() { done <- ln.Serve(ctx) }()
			want := "127.0.0.1"
			if m.version != 0 {
				want = "203.0.113.7"
			}
			var msg []byte
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				c, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				if msg == nil {
					msg = append(proxyHeader(b, m.version, c), frame...)
				}
				if _, err := c.Write(msg); err != nil {
					b.Fatal(err)
				}
				if src := <-got; src != want {
					b.Fatalf("source %s, want %s", src, want)
				}
				_ = c.(*net.TCPConn).SetLinger(0)
				c.Close()
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			cancel()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			if st := ln.Stats(); m.version != 0 && st.ProxyHeaders != st.Accepted {
				b.Fatalf("%d headers for %d connections", st.ProxyHeaders, st.Accepted)
			}
		})
	}
}

// BenchmarkListenerProxyEvent measures one frame per op (ns/op reads as
// ns/event) of 200-byte RFC 5424 messages read by a Framer from one
// connection of the listener, which a client fills as fast as it can: with
// a PROXY header at its start, or none. Once the header is read, reads go
// to the socket as without one, so no difference is expected.
func BenchmarkListenerProxyEvent(b *testing.B) {
	msg := "<13>1 2026-11-22T10:00:00.000Z host.example.com app 1234 ID47 - " + strings.Repeat("x", 200-66)
	data := bytes.Repeat([]byte(msg+"\n"), 5000)
	for _, m := range proxyModes {
		b.Run(m.name, func(b *testing.B) {
			conns := make(chan *stream.Conn, 1)
			release := make(chan struct{})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			ln, err := stream.New(loopback(proxyConfig(m.version), func(c *stream.Conn) {
				conns <- c
				<-release // the benchmark reads c meanwhile
			}))
			if err != nil {
				b.Fatal(err)
			}
			go func() { done <- ln.Serve(ctx) }()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			writing := make(chan struct{})
			go func() {
				defer close(writing)
				if _, err := c.Write(proxyHeader(b, m.version, c)); err != nil {
					return
				}
				for {
					if _, err := c.Write(data); err != nil {
						return // closed at the end
					}
				}
			}()
			sc := <-conns
			f := stream.NewFramer(sc, stream.FramerConfig{})
			b.SetBytes(int64(len(msg) + 1))
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				got, _, err := f.Next()
				if err != nil || len(got) != len(msg) {
					b.Fatalf("frame of %d bytes, %v", len(got), err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			f.Release()
			c.Close()
			close(release)
			<-writing
			cancel()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}
