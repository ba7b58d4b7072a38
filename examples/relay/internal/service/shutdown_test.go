package service

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/input"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"
	"github.com/relaykit/relaykit/tap"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/internal/testtool"
)

// TestStreamShutdownCountsWhatWasRead: a stream input is blocked pushing
// into a full ring (nobody drains it: the destinations are stuck) when
// the shutdown deadline comes. Every frame the connection had read is in
// the ledger: the events the ring took as received, the others (the rest
// of the push, and the frames still buffered behind it) as received and
// dropped{shutdown_unqueued}; the bytes of a frame broken off by the
// shutdown as incomplete. Before, the handler returned and those frames
// were gone without a count. Syslog and JSON lines, with the shipped
// defaults of their inputs.
func TestStreamShutdownCountsWhatWasRead(t *testing.T) {
	const frames, ringSize = 2000, 16
	for _, tt := range []struct {
		name, kind string
		line       func(i int) string // all of one length
	}{
		{"syslog", "syslog", func(i int) string { return fmt.Sprintf("<13>1 - host app - - - message %06d\n", i) }},
		// More frames in the first read than a slab holds: the push that
		// fails is the one of a full slab, with frames still buffered.
		{"syslog short frames", "syslog", func(i int) string { return fmt.Sprintf("<13>%06d\n", i) }},
		{"json", "json", func(i int) string { return fmt.Sprintf("{\"n\":\"%06d\",\"msg\":\"message\"}\n", i) }},
	} {
		kind, line := tt.kind, tt.line
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.LoadConfig("")
			require.NoError(t, err)
			// The destinations are stuck until the shutdown deadline: the
			// first batch's flush holds the handler.
			entered := make(chan struct{})
			var once sync.Once
			stuck := sinkFunc(func(ctx context.Context, _ []relaykit.Event) error {
				once.Do(func() { close(entered) })
				<-ctx.Done()
				return ctx.Err()
			})
			eng, err := engine.New(engine.Config{Sink: stuck, Workers: 1, RingSize: ringSize, BatchMaxEvents: ringSize})
			require.NoError(t, err)
			l := ledger.New()
			l.Engine = eng

			// The shipped defaults of the input (a JSON input has none in
			// the default config: add one and let Validate fill it), built
			// by its kind's constructor, as the relay builds it.
			cfg.Inputs.JSONTCP = []config.JSONInputConfig{{Name: "json", Listen: "127.0.0.1:0"}}
			require.NoError(t, cfg.Validate())
			var sec config.InputSection = &cfg.Inputs.JSONTCP[0]
			if kind == "syslog" {
				tc := &cfg.Inputs.SyslogTCP[0]
				tc.Name, tc.Listen = kind, "127.0.0.1:0"
				sec = tc
			}
			k, ok := input.KindOf(sec.Key())
			require.True(t, ok)
			built, err := k.Build(sec, input.Env{Ledger: l, Taps: &tap.Registry{}, DeadLetter: ledger.NewDeadLetter(discard{}),
				Loc: time.UTC, Workers: 1, Log: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			in := built.(*input.StreamInput)
			st := l.Inputs()[0]
			size := len(line(0))
			inCtx, stopInputs := context.WithCancel(context.Background())
			work, deadline := context.WithCancel(context.Background())
			defer stopInputs()
			defer deadline()
			ran, engRan := make(chan error, 1), make(chan error, 1)
			go func() { ran <- in.Run(inCtx, work) }()
			go func() { engRan <- eng.Run(work) }()

			c, err := net.Dial("tcp", in.Listener.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			var b strings.Builder
			for i := range frames {
				b.WriteString(line(i))
			}
			b.WriteString(line(frames)[:10]) // a frame the shutdown breaks off
			sent := make(chan error, 1)
			go func() { _, err := c.Write([]byte(b.String())); sent <- err }()

			// The handler waits in a push (the flush of the first batch)
			// with frames of its read still buffered.
			<-entered
			relaytest.WaitFor(t, 10*time.Second, func() bool { return st.In.Stats().Handing > 0 }, "handler handing over")
			stopInputs() // the relay stops: reads end
			deadline()   // and the shutdown deadline passes
			require.NoError(t, <-ran)
			require.NoError(t, <-engRan)
			c.Close()
			<-sent

			read := in.Listener.Stats().BytesRead
			incomplete := st.Counts().Framing.IncompleteBytes
			require.Zero(t, (read-incomplete)%int64(size), "whole frames read: %d bytes, %d incomplete", read, incomplete)
			whole := (read - incomplete) / int64(size)
			es := eng.Stats()
			assert.Greater(t, whole, es.Routed, "the handler had read more than the engine took")
			assert.Equal(t, whole, st.In.Stats().Received, "every frame read is received")
			assert.Zero(t, st.Counts().Invalid)
			assert.Equal(t, whole-es.Routed, es.Dropped[ledger.DropUnqueued], "and all but the engine's are dropped{shutdown_unqueued}")
			assert.Equal(t, es.Routed, es.FailedEvents, "what the engine took was refused by the stuck destination")
			assert.Equal(t, whole*int64(size-1), st.Counts().Bytes, "message bytes of every frame read")
			assert.Zero(t, es.Queued, "nothing left in the engine")
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestShutdownWithArchiveDiskFull: the relay with the shipped defaults
// archives to a 1 MiB file system, which fills within a second of load from
// three TCP senders. Whoever flushes a worker's batch (a connection's
// goroutine or the worker) holds the batch it cannot write (retrying), and
// the connections wait: for that flush, or for room in their worker's full
// ring (backpressure; with three connections on two workers, one worker
// has two, and one of them fills the ring). The relay is stopped and waits out its shutdown
// deadline. Then every frame
// the relay read is in the ledger: each input byte is in a received event,
// a trailer, or a frame the shutdown broke off; what the rings held is
// dropped{shutdown} at the archive, what the inputs held
// dropped{shutdown_unqueued}; and the ledger balances stage by stage.
func TestShutdownWithArchiveDiskFull(t *testing.T) {
	t.Parallel() // mostly waits out the shutdown deadline: overlaps with the other waiting tests
	cfg := relaytest.TestConfig(t)
	dir := testtool.Tmpfs(t, "1m")
	relaytest.ArchiveOf(cfg).Dir = filepath.Join(dir, "archive")
	cfg.Workers.Count = 2
	tr := startRelay(t, cfg)

	const line = "<13>1 - host app - - - a message of the flood that fills the disk\n"
	var senders sync.WaitGroup
	for range 3 {
		c := dialFrom(t, "127.0.0.1", tr.addr("tcp"))
		senders.Go(func() {
			buf := []byte(strings.Repeat(line, 256))
			for {
				// The relay closes the connection when it stops.
				_ = c.SetWriteDeadline(time.Now().Add(time.Minute))
				if _, err := c.Write(buf); err != nil {
					return
				}
			}
		})
	}
	// The archive fails and an input waits for room in a full ring, with
	// events of its read in hand. (The goroutine that drained the ring
	// last may have taken a few hundred events before it blocked: a parked
	// producer is woken only when a quarter of the ring is free, so it
	// stays parked with the ring a little short of full.) On a timeout the
	// workers' state is in the log.
	in := tr.ledger.Inputs()[slices.IndexFunc(tr.ledger.Inputs(), func(in *ledger.InputStats) bool { return in.Name == "tcp" })]
	held := func() bool {
		for _, w := range tr.eng.Stats().Workers {
			if w.Ring.ProducersWaiting > 0 {
				return !tr.Ledger().Dest["archive"].Healthy
			}
		}
		return false
	}
	for deadline := time.Now().Add(30 * time.Second); !held(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			for i, w := range tr.eng.Stats().Workers {
				t.Logf("worker %d: %+v", i, w)
			}
			t.Fatalf("timed out after 30s waiting for the archive to fail and an input to wait on a full ring (%d connections handing over)", in.In.Stats().Handing)
		}
	}
	assert.GreaterOrEqual(t, metricValue(t, tr, "relay_input_connections_handing_over", "input", "tcp"), 1.0, "the waiting input shows as handing over")
	s := tr.stop(t)
	senders.Wait()

	checkBalanced(t, s)
	read := inputsOf[*input.StreamInput](tr.Relay)[0].Listener.Stats().BytesRead
	frames := in.In.Stats().Received
	assert.Equal(t, read, in.Counts().Bytes+frames+in.Counts().Framing.IncompleteBytes,
		"every byte read is in a received event, its LF, or an incomplete frame")
	assert.Equal(t, frames, s.Received)
	assert.Positive(t, s.Dropped[ledger.DropUnqueued], "the inputs held events at the deadline: %s", s)
	assert.Positive(t, s.Dropped[ledger.DropShutdown], "the rings and the worker held events at the deadline: %s", s)
	assert.Equal(t, s.Received, s.Archived+s.DroppedTotal(), "received = archived + dropped: %s", s)
	t.Logf("ledger: %s", s)
}
