package relp_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/relp"
)

// benchMsg is a 200-byte RFC 5424 message, as in BenchmarkFramer.
var benchMsg = func() []byte {
	m := []byte("<13>1 2026-11-22T10:00:00.000Z host.example.com app 1234 ID47 - ")
	for len(m) < 200 {
		m = append(m, 'x')
	}
	return m
}()

func cpuNanos() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkRELPvsTCP measures events per second over loopback TCP through
// a Listener, one op per 200-byte message: a RELP session (window 128,
// every frame answered after the handler accepted its batch) against plain
// TCP syslog (LF framing) read by a Framer on the same load. Client and
// server run in this process; cpu-ns/op is the process's CPU time per
// event, both sides.
func BenchmarkRELPvsTCP(b *testing.B) {
	b.Run("impl=relp/window=128", func(b *testing.B) {
		var got atomic.Int64
		srv, err := relp.New(relp.Config{Handler: func(_ context.Context, _ *stream.Conn, batch []relp.Message) error {
			got.Add(int64(len(batch)))
			return nil
		}})
		if err != nil {
			b.Fatal(err)
		}
		addr := benchServe(b, srv.ServeConn)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		w, r := bufio.NewWriterSize(c, 64<<10), bufio.NewReaderSize(c, 64<<10)
		fmt.Fprint(w, "1 open 30 relp_version=0\ncommands=syslog\n")
		_ = w.Flush()
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				b.Fatal(err)
			}
			if len(line) > 9 && line[:9] == "commands=" {
				break
			}
		}
		sem := make(chan struct{}, 128)
		acked := make(chan error, 1)
		b.SetBytes(int64(len(benchMsg)))
		b.ReportAllocs()
		cpu0 := cpuNanos()
		b.ResetTimer()
		go func() {
			for i := 0; i < b.N; i++ {
				line, err := r.ReadSlice('\n')
				if err != nil || len(line) < 10 || string(line[len(line)-7:]) != "200 OK\n" {
					acked <- fmt.Errorf("answer %q: %v", line, err)
					return
				}
				<-sem
			}
			acked <- nil
		}()
		prefixLen := " syslog " + strconv.Itoa(len(benchMsg)) + " "
		var hdr []byte
		for i := 0; i < b.N; i++ {
			select {
			case sem <- struct{}{}:
			default:
				_ = w.Flush() // the window is full: let the answers come
				sem <- struct{}{}
			}
			hdr = strconv.AppendInt(hdr[:0], int64(i+2), 10)
			_, _ = w.Write(hdr)
			_, _ = w.WriteString(prefixLen)
			_, _ = w.Write(benchMsg)
			_ = w.WriteByte('\n')
		}
		_ = w.Flush()
		if err := <-acked; err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N), "cpu-ns/op")
		if got.Load() != int64(b.N) {
			b.Fatalf("%d accepted, %d sent", got.Load(), b.N)
		}
	})
	b.Run("impl=tcp-framer", func(b *testing.B) {
		var got atomic.Int64
		done := make(chan struct{})
		n := int64(b.N)
		addr := benchServe(b, func(c *stream.Conn) {
			f := stream.NewFramer(c, stream.FramerConfig{})
			for {
				if _, _, err := f.Next(); err != nil {
					return
				}
				if got.Add(1) == n {
					close(done)
				}
			}
		})
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		w := bufio.NewWriterSize(c, 64<<10)
		b.SetBytes(int64(len(benchMsg)))
		b.ReportAllocs()
		cpu0 := cpuNanos()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			_, _ = w.Write(benchMsg)
			_ = w.WriteByte('\n')
		}
		_ = w.Flush()
		<-done
		b.StopTimer()
		b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N), "cpu-ns/op")
	})
}

// benchServe serves h on a loopback listener until the benchmark ends.
func benchServe(b *testing.B, h stream.Handler) string {
	ln, err := stream.New(stream.Config{Address: "127.0.0.1:0", Handler: h})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ln.Serve(ctx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
	return ln.Addr().String()
}
