//go:build !race

package input

import (
	"context"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/sources"
	"github.com/relaykit/relaykit/storage/deadletter"
	"github.com/relaykit/relaykit/stream/udp"
	"github.com/relaykit/relaykit/syslog"
)

// nop is a Sink that does nothing.
type nop struct{}

func (nop) Send(context.Context, []relaykit.Event) error { return nil }

// allocEngine runs an engine that routes inline, with batches of 1000,
// until the test ends.
func allocEngine(t *testing.T) *engine.Engine {
	t.Helper()
	e, err := engine.New(engine.Config{Sink: nop{}, Workers: 2, BatchMaxWait: time.Hour})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- e.Run(context.Background()) }()
	t.Cleanup(func() {
		require.NoError(t, e.Shutdown(context.Background()))
		require.NoError(t, <-done)
	})
	return e
}

// warm runs read until the engine's pools hold what a batch's round trip
// needs, after a collection has emptied them of earlier tests' garbage.
// It runs on one processor, as testing.AllocsPerRun does: a change of
// GOMAXPROCS empties every sync.Pool, the engine's recycled events among
// them. The caller restores GOMAXPROCS with the function it returns.
func warm(read func()) (restore func()) {
	prev := runtime.GOMAXPROCS(1)
	runtime.GC()
	runtime.GC()
	for range 500 {
		read()
	}
	return func() { runtime.GOMAXPROCS(prev) }
}

// Once warm, a syslog event read from a stream connection costs no
// allocation: parsing, the sender's address as host, source tracking, the
// hand-over to the engine. A run is one read of 100 frames and the flush
// before the next read; sync.Pool's recycling makes it an average over
// 200,000 events.
func TestSyslogStreamAllocs(t *testing.T) {
	e := allocEngine(t)
	tr, err := sources.New(sources.Config{})
	require.NoError(t, err)
	in := e.NewInput("syslog")
	s, err := NewSyslog(SyslogConfig{Input: in, Parser: syslog.Config{RequireText: true, CEF: true}, Sources: tr.Input("syslog")})
	require.NoError(t, err)
	cs := &connState{k: &s.core, pace: t.Context(), p: in.NewProducer(1), peer: []byte("192.0.2.1"), dec: s.newParser(),
		sc: tr.Input("syslog").Conn(netip.MustParseAddr("192.0.2.1"), s.connCfg)}
	defer cs.p.Release()
	// One shape of message: events of mixed shapes grow their recycled
	// buffers to the largest shape they meet, which costs the engine's
	// recycling an allocation now and then (about one per 100 events),
	// not the input.
	frame := []byte(`<13>1 2026-11-28T11:59:00.123Z web-1 app 42 ID7 [origin ip="10.0.0.1"] user login ok`)
	read := func() {
		for range 100 {
			cs.l.frames++
			cs.l.bytes += int64(len(frame))
			s.dec.frame(cs, frame, 0)
		}
		if err := cs.beforeRead(); err != nil {
			panic(err)
		}
	}
	defer warm(read)()
	assert.Zero(t, testing.AllocsPerRun(2000, read))
	assert.Positive(t, s.Stats().Frames)
}

// The same for UDP reads of 64 datagrams from a few senders. The events
// are handed over without waiting (TryPush), and the engine's worker
// goroutine routes them; AllocsPerRun runs on one processor, where that
// goroutine would wait for the test's, so each run ends with the engine's
// Flush (eight reads: 512 events), as a worker keeping up would route
// them.
func TestSyslogDatagramAllocs(t *testing.T) {
	e := allocEngine(t)
	tr, err := sources.New(sources.Config{})
	require.NoError(t, err)
	s, err := NewSyslog(SyslogConfig{Input: e.NewInput("syslog"), Parser: syslog.Config{RequireText: true, CEF: true}, Sources: tr.Input("syslog")})
	require.NoError(t, err)
	batch := make([]udp.Datagram, 64)
	for i := range batch {
		batch[i] = udp.Datagram{
			Data: []byte(`<134>Nov 28 11:59:01 sshd[7]: Failed password for root from 203.0.113.9`),
			Addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(i / 16)}), 514),
		}
	}
	read := func() {
		for range 8 {
			s.ServeDatagrams(0, batch)
		}
		if err := e.Flush(t.Context()); err != nil {
			panic(err)
		}
	}
	defer warm(read)()
	assert.Zero(t, testing.AllocsPerRun(2000, read))
}

// The same for JSON lines, valid and refused (dead-lettered).
func TestJSONLinesAllocs(t *testing.T) {
	e := allocEngine(t)
	in := e.NewInput("json")
	dl, err := deadletter.NewWriter(deadletter.Config{Writer: discard{}})
	require.NoError(t, err)
	j, err := NewJSONLines(JSONLinesConfig{Input: in, DeadLetters: dl})
	require.NoError(t, err)
	cs := &connState{k: &j.core, pace: t.Context(), p: in.NewProducer(1), peer: []byte("192.0.2.1")}
	defer cs.p.Release()
	line := []byte(`{"level":"info","host":"web-1","msg":"GET /index.html 200","bytes":5120,"tags":["a","b"]}`)
	read := func() {
		for range 100 {
			j.dec.frame(cs, line, 0)
		}
		if err := cs.beforeRead(); err != nil {
			panic(err)
		}
	}
	defer warm(read)()
	assert.Zero(t, testing.AllocsPerRun(2000, read))
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
