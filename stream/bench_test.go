package stream_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

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
// idle marks). Client and server share the machine.
func BenchmarkNetListenerHTTP(b *testing.B) {
	const req = "POST / HTTP/1.1\r\nHost: relay\r\nContent-Length: 16\r\n\r\n{\"event\":\"x123\"}"
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{"text":"Success","code":0}`)
	})
	for _, impl := range []string{"net", "stream"} {
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
				sl, err := stream.Listen("tcp", "127.0.0.1:0", stream.Config{})
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
