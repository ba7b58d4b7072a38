package input_test

import (
	"bytes"
	"context"
	"hash/maphash"
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/input"
	"github.com/relaykit/relaykit/sources"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/udp"
	"github.com/relaykit/relaykit/syslog"
)

// The benchmarks compare the input with the glue the relay example holds
// today for the same work (examples/relay input_tcp.go syslogStream and
// input_udp.go udpInput.Run, copied below as they are, less the relay's
// config types): impl=input and impl=relay-glue, on the same engine and
// the same messages. One op is one event.

// benchFrame is a 200-byte RFC 5424 message with structured data.
var benchFrame = func() []byte {
	m := []byte(`<13>1 2026-11-28T10:00:00.000Z web-1.example.com app 1234 ID47 [origin ip="10.0.0.1"] `)
	for len(m) < 200 {
		m = append(m, 'x')
	}
	return m
}()

type nopSink struct{}

func (nopSink) Send(context.Context, []relaykit.Event) error { return nil }

func cpuNanos() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func benchEngine(b *testing.B) (*engine.Engine, func()) {
	e, err := engine.New(engine.Config{Sink: nopSink{}, Workers: 2, BatchMaxWait: 10 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.Run(context.Background()) }()
	return e, func() { _ = e.Shutdown(context.Background()); <-done }
}

// BenchmarkSyslogStream: one loopback TCP connection sends b.N
// LF-terminated 200-byte messages; the op ends when the engine has routed
// them all. Framing and the socket cost the same in both; cpu-ns/op is the
// process's CPU time per event (client included).
func BenchmarkSyslogStream(b *testing.B) {
	for _, impl := range []string{"input", "relay-glue"} {
		b.Run("impl="+impl, func(b *testing.B) {
			e, stop := benchEngine(b)
			defer stop()
			in := e.NewInput("syslog")
			tr, err := sources.New(sources.Config{})
			if err != nil {
				b.Fatal(err)
			}
			var h stream.Handler
			if impl == "input" {
				s, err := input.NewSyslog(input.SyslogConfig{Input: in, Parser: syslog.Config{RequireText: true, CEF: true}, Sources: tr.Input("syslog")})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				h = s.ServeConn
			} else {
				h = relayStream(in, tr.Input("syslog"))
			}
			ln, err := stream.New(stream.Config{Address: "127.0.0.1:0", Handler: h})
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- ln.Serve(ctx) }()
			defer func() { cancel(); <-served }()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			chunk := bytes.Repeat(append(append([]byte(nil), benchFrame...), '\n'), 1000)
			b.SetBytes(int64(len(benchFrame) + 1))
			b.ReportAllocs()
			cpu0 := cpuNanos()
			b.ResetTimer()
			sent := 0
			for sent < b.N {
				k := min(b.N-sent, 1000)
				if _, err := c.Write(chunk[:k*(len(benchFrame)+1)]); err != nil {
					b.Fatal(err)
				}
				sent += k
			}
			for in.Stats().Received < int64(b.N) {
				time.Sleep(100 * time.Microsecond) // the benchmark's own wait, not a test's synchronisation
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkSyslogDatagrams: the handler of a UDP listener called with
// reads of 64 datagrams from 16 senders (no socket): parsing, sharding by
// sender, source tracking and the hand-over without waiting.
func BenchmarkSyslogDatagrams(b *testing.B) {
	batch := make([]udp.Datagram, 64)
	for i := range batch {
		batch[i] = udp.Datagram{Data: []byte(`<134>Nov 28 11:59:01 fw-1 sshd[7]: Failed password for root from 203.0.113.9 port 22 ssh2`),
			Addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(i / 4)}), 514)}
	}
	for _, impl := range []string{"input", "relay-glue"} {
		b.Run("impl="+impl+"/batch=64", func(b *testing.B) {
			e, stop := benchEngine(b)
			defer stop()
			in := e.NewInput("syslog")
			tr, err := sources.New(sources.Config{})
			if err != nil {
				b.Fatal(err)
			}
			var h udp.Handler
			if impl == "input" {
				s, err := input.NewSyslog(input.SyslogConfig{Input: in, Parser: syslog.Config{RequireText: true, CEF: true}, Sources: tr.Input("syslog")})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				h = s.ServeDatagrams
			} else {
				h = relayUDP(in, tr.Input("syslog"), e.Workers())
			}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if n%len(batch) == 0 {
					h(0, batch)
					// The worker goroutines route; what they cannot take
					// is dropped (queue_full), as from a socket.
					if err := e.Flush(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
				n++
			}
		})
	}
}

// relayStream is the relay's syslogStream (examples/relay/input_tcp.go)
// with its stats in local atomics: the glue an importer wrote before this
// package.
func relayStream(in *engine.Input, src sources.Input) stream.Handler {
	var stats struct {
		framing                       stream.Counters
		bytes, truncated, parseErrors atomic.Int64
	}
	var shard atomic.Uint64
	return func(c *stream.Conn) {
		peer := c.Source().String()
		if !c.Source().IsValid() {
			peer = c.RemoteAddr().String()
		}
		ctx := context.Background()
		b := in.NewProducer(shard.Add(1))
		defer b.Release()
		cs := src.Conn(c.Source(), sources.ConnConfig{})
		defer cs.Close()
		fr := stream.NewFramer(c, stream.FramerConfig{
			MaxFrame: 64 << 10, Counters: &stats.framing,
			BeforeRead: func() error {
				if err := b.Flush(ctx); err != nil {
					return err
				}
				return cs.BeforeRead(c.Context())
			},
		})
		defer fr.Release()
		sp := newRelayParser()
		for {
			frame, fl, err := fr.Next()
			if err != nil {
				_ = b.Push(ctx)
				return
			}
			stats.bytes.Add(int64(len(frame)))
			if b.Err() != nil {
				in.Drop(relaykit.ReasonShutdownUnqueued, 1)
				continue
			}
			ev := b.Event()
			sp.Parse(ev, frame, peer)
			if fl&stream.Truncated != 0 {
				ev.Flags |= relaykit.FlagTruncated
				stats.truncated.Add(1)
			}
			if ev.Flags&relaykit.FlagParseError != 0 {
				stats.parseErrors.Add(1)
			}
			if !cs.Event(ev.Host, len(frame)) {
				b.Unget()
				in.Drop(relaykit.ReasonRateLimit, 1)
				continue
			}
			if b.Full() {
				_ = b.Push(ctx)
			}
		}
	}
}

// relayParser is the relay's syslogparse.go.
type relayParser struct{ p *syslog.Parser }

func newRelayParser() *relayParser {
	return &relayParser{p: syslog.NewParser(syslog.Config{Location: time.Local, Clock: clock.Default(), RequireText: true, CEF: true})}
}

func (sp *relayParser) Parse(ev *relaykit.Event, frame []byte, peer string) {
	ev.Reset()
	ev.ReceiveTime = clock.Default().Nano()
	sp.p.Parse(ev, frame)
	if len(ev.Host) == 0 {
		ev.Host = append(ev.Host, peer...)
	}
}

var relaySeed = maphash.MakeSeed()

// relayUDP is the relay's udpInput.Run handler (examples/relay/input_udp.go).
func relayUDP(in *engine.Input, src sources.Input, workers int) udp.Handler {
	type reader struct {
		sp        *relayParser
		producers []*engine.Producer
		lastAddr  netip.AddrPort
		peer      string
		p         *engine.Producer
	}
	var bytes, truncated, parseErrors atomic.Int64
	r := &reader{sp: newRelayParser(), producers: make([]*engine.Producer, workers)}
	for w := range r.producers {
		r.producers[w] = in.NewProducer(uint64(w))
	}
	return func(_ int, batch []udp.Datagram) {
		for i := range batch {
			d := &batch[i]
			if d.Addr != r.lastAddr || r.p == nil {
				r.lastAddr, r.peer = d.Addr, d.Addr.Addr().String()
				r.p = r.producers[maphash.Comparable(relaySeed, d.Addr)%uint64(len(r.producers))]
			}
			bytes.Add(int64(len(d.Data)))
			if src.AllowAddr(d.Addr.Addr(), 1, len(d.Data)) == 0 {
				in.Drop(relaykit.ReasonRateLimit, 1)
				continue
			}
			ev := r.p.Event()
			r.sp.Parse(ev, d.Data, r.peer)
			if d.Truncated {
				ev.Flags |= relaykit.FlagTruncated
				truncated.Add(1)
			}
			if ev.Flags&relaykit.FlagParseError != 0 {
				parseErrors.Add(1)
			}
			if r.p.Full() {
				r.p.TryPush()
			}
		}
		for _, p := range r.producers {
			p.TryPush()
		}
	}
}
