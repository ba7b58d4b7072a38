package batch_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/batch"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/ringbuffer"
)

// The ring is the queue Pump was written for.
var _ batch.Queue[int] = (*ringbuffer.MPSC[int])(nil)

// item is one pushed value: its producer and its sequence number there.
type item struct{ producer, seq int }

// itemLog is a flush function that records what it was given.
type itemLog struct {
	mu  sync.Mutex
	got []item
}

func (r *itemLog) flush(_ context.Context, b []item) error {
	r.mu.Lock()
	r.got = append(r.got, b...)
	r.mu.Unlock()
	return nil
}

func (r *itemLog) items() []item {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]item(nil), r.got...)
}

// checkOrder asserts that got holds, for each producer, exactly the
// sequence numbers 0..accepted[p]-1 in order.
func checkOrder(t *testing.T, got []item, accepted []int) {
	t.Helper()
	next := make([]int, len(accepted))
	for _, it := range got {
		require.Equal(t, next[it.producer], it.seq, "producer %d out of order", it.producer)
		next[it.producer]++
	}
	assert.Equal(t, accepted, next)
}

// TestPumpShutdownLosesNothing runs producers into a ring pumped into a
// collector and begins the shutdown in both ways (ctx ends, the ring's
// owner closes it) while the producers are still pushing: every value the
// ring accepted is flushed, in per-producer order, and the producers see
// ErrClosed.
func TestPumpShutdownLosesNothing(t *testing.T) {
	for _, how := range []string{"cancel", "close_queue"} {
		t.Run(how, func(t *testing.T) {
			ring, err := ringbuffer.NewMPSC[item](64)
			require.NoError(t, err)
			var rec itemLog
			c, err := batch.NewCollector(batch.Config[item]{MaxEvents: 50, MaxWait: time.Millisecond}, rec.flush)
			require.NoError(t, err)

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			pumped := make(chan error, 1)
			go func() { pumped <- c.Pump(ctx, ring) }()

			const producers = 4
			accepted := make([]int, producers)
			var pushed atomic.Int64
			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					for i := 0; ; i++ {
						if err := ring.Push(t.Context(), item{p, i}); err != nil {
							assert.ErrorIs(t, err, ringbuffer.ErrClosed)
							accepted[p] = i
							return
						}
						pushed.Add(1)
					}
				})
			}
			require.Eventually(t, func() bool { return pushed.Load() > 5000 }, 10*time.Second, time.Millisecond)
			if how == "cancel" {
				cancel()
			} else {
				require.NoError(t, ring.Close())
			}
			wg.Wait()
			require.NoError(t, <-pumped)
			assert.True(t, ring.Closed())

			checkOrder(t, rec.items(), accepted)
			s := c.Stats()
			assert.Equal(t, uint64(pushed.Load()), s.Items)
			assert.Equal(t, s.Items, s.FlushedItems)
			assert.ErrorIs(t, c.Add(t.Context(), item{}), batch.ErrClosed)
		})
	}
}

// TestPumpDrainTimeout: a destination stuck past the drain budget. Every
// accepted item is flushed, failed or dropped with a hook call, the
// collector's ledger balances, and the DrainError counts what was not
// flushed.
func TestPumpDrainTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ring, err := ringbuffer.NewMPSC[item](1024)
		require.NoError(t, err)
		var dropped, failed atomic.Int64
		var reasons sync.Map
		c, err := batch.NewCollector(batch.Config[item]{
			MaxEvents:    100,
			DrainTimeout: 5 * time.Second,
			Clock:        clock.New(0), // the bubble's own: it reads the bubble's time
			Hooks: batch.Hooks[item]{
				OnDrop: func(b []item, reason string) {
					dropped.Add(int64(len(b)))
					reasons.Store(reason, true)
				},
				OnFlushError: func(b []item, _ error) { failed.Add(int64(len(b))) },
			},
		}, func(ctx context.Context, _ []item) error {
			<-ctx.Done() // stuck until the drain deadline cancels it
			return ctx.Err()
		})
		require.NoError(t, err)

		ctx, cancel := context.WithCancel(t.Context())
		pumped := make(chan error, 1)
		go func() { pumped <- c.Pump(ctx, ring) }()
		const n = 1000
		for i := range n {
			require.NoError(t, ring.Push(t.Context(), item{0, i}))
		}
		synctest.Wait() // the pump waits for a flusher; the ring holds the rest
		cancel()
		start := time.Now()
		err = <-pumped
		assert.Equal(t, 5*time.Second, time.Since(start), "drain budget")
		var de *batch.DrainError
		require.ErrorAs(t, err, &de)
		assert.ErrorIs(t, err, batch.ErrDrainTimeout)

		s := c.Stats()
		assert.Equal(t, uint64(n), s.Items)
		assert.Zero(t, s.FlushedItems)
		assert.Equal(t, s.Items, s.FailedItems+s.DroppedItems)
		assert.Equal(t, int64(s.FailedItems), failed.Load())
		assert.Equal(t, int64(s.DroppedItems), dropped.Load())
		assert.Equal(t, n, de.Unflushed)
		_, ok := reasons.Load(batch.DropDrainTimeout)
		assert.True(t, ok)
		assert.Zero(t, ring.Len())
	})
}

// TestPumpCollectorClosed: Close on the collector while Pump waits on an
// idle queue ends Pump with ErrClosed; Pump on a closed collector and a
// second Pump fail at once.
func TestPumpCollectorClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ring, err := ringbuffer.NewMPSC[item](8)
		require.NoError(t, err)
		var rec itemLog
		c, err := batch.NewCollector(batch.Config[item]{Clock: clock.New(0)}, rec.flush)
		require.NoError(t, err)
		pumped := make(chan error, 1)
		go func() { pumped <- c.Pump(t.Context(), ring) }()
		require.NoError(t, ring.Push(t.Context(), item{0, 0}))
		synctest.Wait()
		assert.Error(t, c.Pump(t.Context(), ring), "second Pump")
		require.NoError(t, c.Close(t.Context()))
		assert.ErrorIs(t, <-pumped, batch.ErrClosed)
		assert.Equal(t, []item{{0, 0}}, rec.items())
		assert.ErrorIs(t, c.Pump(t.Context(), ring), batch.ErrClosed)
	})
}

// TestPumpAllocs: moving items from a ring through a collector to the flush
// function allocates nothing once warm, for plain values and for
// relaykit.Event values (whose popped slots the ring clears).
func TestPumpAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	t.Run("item=struct", func(t *testing.T) { pumpAllocs(t, func(i int) item { return item{0, i} }) })
	raw := []byte("<34>1 2026-01-02T03:04:05Z web-1 sshd 42 - - Failed password for root")
	t.Run("item=event", func(t *testing.T) {
		pumpAllocs(t, func(i int) relaykit.Event { return relaykit.Event{Raw: raw, Time: int64(i)} })
	})
}

func pumpAllocs[T any](t *testing.T, mk func(i int) T) {
	const perRun = 1024
	ring, err := ringbuffer.NewMPSC[T](4096)
	require.NoError(t, err)
	var flushed atomic.Int64
	reached := make(chan struct{}, 1)
	var target atomic.Int64
	c, err := batch.NewCollector(batch.Config[T]{MaxEvents: 256, MaxWait: time.Millisecond}, func(_ context.Context, b []T) error {
		if flushed.Add(int64(len(b))) >= target.Load() {
			select {
			case reached <- struct{}{}:
			default:
			}
		}
		return nil
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	pumped := make(chan error, 1)
	go func() { pumped <- c.Pump(ctx, ring) }()
	seq := 0
	run := func() {
		target.Add(perRun)
		for range perRun {
			if err := ring.Push(ctx, mk(seq)); err != nil {
				panic(err)
			}
			seq++
		}
		for flushed.Load() < target.Load() {
			<-reached
		}
	}
	run() // warm up: buffers allocated once
	allocs := testing.AllocsPerRun(50, run)
	cancel()
	require.NoError(t, <-pumped)
	assert.Zero(t, allocs, "allocations per %d items", perRun)
	assert.Equal(t, int64(seq), flushed.Load())
}

// TestPumpClosedQueueBeforeStart: a queue closed before Pump starts is
// drained and flushed, and Pump returns nil.
func TestPumpClosedQueueBeforeStart(t *testing.T) {
	ring, err := ringbuffer.NewMPSC[item](8)
	require.NoError(t, err)
	for i := range 5 {
		require.True(t, ring.TryPush(item{0, i}))
	}
	require.NoError(t, ring.Close())
	var rec itemLog
	c, err := batch.NewCollector(batch.Config[item]{}, rec.flush)
	require.NoError(t, err)
	require.NoError(t, c.Pump(t.Context(), ring))
	checkOrder(t, rec.items(), []int{5})
	assert.NoError(t, c.Close(t.Context()), "Close after Pump is a no-op")
	assert.True(t, errors.Is(c.Add(t.Context(), item{}), batch.ErrClosed))
}
