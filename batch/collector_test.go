package batch_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/batch"
	"github.com/relaykit/relaykit/clock"
)

// flushed is one call of the flush function, as a recorder saw it.
type flushed struct {
	items []int
	at    time.Time // when the flush function was called
}

// recorder is a flush function that copies every batch it receives.
// gate, when set, is received from before each flush returns (a stuck or
// slow flusher); delay, when set, is slept first.
type recorder struct {
	mu      sync.Mutex
	batches []flushed
	delay   time.Duration
	gate    chan struct{}
	err     error
}

func (r *recorder) flush(ctx context.Context, items []int) error {
	r.mu.Lock()
	r.batches = append(r.batches, flushed{items: append([]int(nil), items...), at: time.Now()})
	delay, gate, err := r.delay, r.gate, r.err
	r.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return err
}

func (r *recorder) get() []flushed {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]flushed(nil), r.batches...)
}

// sizes returns the items of every batch so far.
func (r *recorder) items() [][]int {
	var out [][]int
	for _, b := range r.get() {
		out = append(out, b.items)
	}
	return out
}

// newCollector builds a collector for a test, with a clock of its own:
// made inside a synctest bubble, it reads the bubble's time.
func newCollector(t *testing.T, cfg batch.Config[int], flush func(context.Context, []int) error) *batch.Collector[int] {
	t.Helper()
	if cfg.Clock == nil {
		cfg.Clock = clock.New(time.Millisecond)
	}
	c, err := batch.NewCollector(cfg, flush)
	require.NoError(t, err)
	return c
}

// run starts c.Run(ctx) and returns a function that waits for its result.
func run(ctx context.Context, c *batch.Collector[int]) (wait func() error) {
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	return func() error { return <-done }
}

// addAll adds items in order and fails the test on the first error.
func addAll(t *testing.T, c *batch.Collector[int], items ...int) {
	t.Helper()
	for _, v := range items {
		require.NoError(t, c.Add(t.Context(), v))
	}
}

func seq(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

func noFlush(context.Context, []int) error { return nil }

// assertLedger checks that every item added is accounted for exactly once.
func assertLedger(t *testing.T, s batch.Stats) bool {
	t.Helper()
	return assert.Equal(t, s.Items,
		s.FlushedItems+s.FailedItems+s.DroppedItems+uint64(s.PendingItems)+uint64(s.OpenItems),
		"ledger does not balance: %+v", s)
}

func TestNewCollectorConfig(t *testing.T) {
	size := func(int) int { return 1 }
	tests := []struct {
		name    string
		cfg     batch.Config[int]
		wantErr bool
	}{
		{name: "zero", cfg: batch.Config[int]{}},
		{name: "size without MaxBytes", cfg: batch.Config[int]{Size: size}},
		{name: "all set", cfg: batch.Config[int]{MaxEvents: 5, MaxBytes: 10, Size: size, MaxWait: time.Second, MaxInFlight: 3, DrainTimeout: time.Second}},
		{name: "no time limit", cfg: batch.Config[int]{MaxWait: -1}},
		{name: "negative MaxEvents", cfg: batch.Config[int]{MaxEvents: -1}, wantErr: true},
		{name: "negative MaxBytes", cfg: batch.Config[int]{MaxBytes: -1, Size: size}, wantErr: true},
		{name: "MaxBytes without Size", cfg: batch.Config[int]{MaxBytes: 10}, wantErr: true},
		{name: "negative MaxInFlight", cfg: batch.Config[int]{MaxInFlight: -2}, wantErr: true},
		{name: "negative DrainTimeout", cfg: batch.Config[int]{DrainTimeout: -time.Second}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := batch.NewCollector(tt.cfg, noFlush)
			if tt.wantErr {
				require.ErrorIs(t, err, batch.ErrInvalidConfig)
				assert.Nil(t, c)
				return
			}
			require.NoError(t, err)
			assert.NotNil(t, c)
		})
	}
	assert.Panics(t, func() { _, _ = batch.NewCollector[int](batch.Config[int]{}, nil) })
}

func TestReasonString(t *testing.T) {
	want := map[batch.Reason]string{
		batch.ReasonSize: "size", batch.ReasonBytes: "bytes", batch.ReasonTime: "time",
		batch.ReasonManual: "manual", batch.ReasonClose: "close", batch.Reason(42): "Reason(42)",
	}
	for r, s := range want {
		assert.Equal(t, s, r.String())
	}
}

// The default MaxEvents (1000) cuts a batch at the 1000th item.
func TestDefaultMaxEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		c := newCollector(t, batch.Config[int]{MaxWait: -1}, rec.flush)
		wait := run(t.Context(), c)
		addAll(t, c, seq(0, 1001)...)
		synctest.Wait()
		got := rec.items()
		require.Len(t, got, 1)
		assert.Equal(t, seq(0, 1000), got[0])
		assert.Equal(t, 1, c.Stats().OpenItems)
		require.NoError(t, c.Close(t.Context()))
		require.NoError(t, wait())
		assert.Equal(t, [][]int{seq(0, 1000), {1000}}, rec.items())
	})
}

// MaxWait counts from the first item of the batch, not from Run's start or
// from the previous flush, and an idle collector never flushes.
func TestMaxWaitStartsAtFirstItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const wait = 100 * time.Millisecond
		rec := &recorder{}
		var reasons []batch.Reason
		c := newCollector(t, batch.Config[int]{MaxWait: wait, Hooks: batch.Hooks[int]{
			OnFlush: func(r batch.Reason, _, _ int, _ time.Duration) { reasons = append(reasons, r) },
		}}, rec.flush)
		start := time.Now()
		stop := run(t.Context(), c)

		// Idle for ten MaxWaits: nothing is flushed.
		time.Sleep(10 * wait)
		synctest.Wait()
		assert.Empty(t, rec.get(), "flush of an empty batch")

		// First item at +1030 ms; a second one later does not move the deadline.
		time.Sleep(30 * time.Millisecond)
		first := time.Now()
		addAll(t, c, 1)
		time.Sleep(wait / 2)
		addAll(t, c, 2)
		time.Sleep(wait/2 - time.Nanosecond)
		synctest.Wait()
		assert.Empty(t, rec.get(), "flushed before MaxWait")
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		got := rec.get()
		require.Len(t, got, 1)
		assert.Equal(t, []int{1, 2}, got[0].items)
		assert.Equal(t, first.Add(wait), got[0].at, "flushed at %v after start", got[0].at.Sub(start))

		// Idle again: no further flush, not even an empty one.
		time.Sleep(10 * wait)
		synctest.Wait()
		assert.Len(t, rec.get(), 1)

		// The next batch gets its own full MaxWait.
		addAll(t, c, 3)
		second := time.Now()
		time.Sleep(2 * wait)
		synctest.Wait()
		got = rec.get()
		require.Len(t, got, 2)
		assert.Equal(t, second.Add(wait), got[1].at)

		// Flush of an empty collector calls nothing.
		require.NoError(t, c.Flush(t.Context()))
		require.NoError(t, c.Close(t.Context()))
		require.NoError(t, stop())
		assert.Len(t, rec.get(), 2)
		assert.Equal(t, []batch.Reason{batch.ReasonTime, batch.ReasonTime}, reasons)
		s := c.Stats()
		assert.Equal(t, batch.BatchCounts{Time: 2}, s.Batches)
	})
}

// A flush that takes longer than MaxWait makes the next batch neither late
// nor early: its deadline counts from its own first item.
func TestSlowFlushDoesNotShiftDeadline(t *testing.T) {
	const wait = 100 * time.Millisecond
	for _, inFlight := range []int{1, 2} {
		t.Run(fmt.Sprintf("inflight=%d", inFlight), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &recorder{delay: 3 * wait}
				c := newCollector(t, batch.Config[int]{MaxWait: wait, MaxInFlight: inFlight}, rec.flush)
				stop := run(t.Context(), c)
				start := time.Now()

				addAll(t, c, 1)                    // batch A cut at +100, flushing until +400
				time.Sleep(wait + wait/2)          // +150
				addAll(t, c, 2)                    // batch B: deadline +250
				time.Sleep(wait - time.Nanosecond) // just before B's deadline
				synctest.Wait()
				assert.Equal(t, batch.BatchCounts{Time: 1}, c.Stats().Batches, "B cut early")
				time.Sleep(time.Nanosecond) // +250: B is cut
				synctest.Wait()
				assert.Equal(t, batch.BatchCounts{Time: 2}, c.Stats().Batches, "B cut late")
				time.Sleep(time.Millisecond)
				addAll(t, c, 3) // after B's deadline: a new batch C, deadline +351
				time.Sleep(time.Second)
				synctest.Wait()

				got := rec.get()
				require.Len(t, got, 3)
				assert.Equal(t, [][]int{{1}, {2}, {3}}, rec.items())
				assert.Equal(t, start.Add(wait), got[0].at)
				if inFlight == 1 {
					// One flusher: B waits for A (until +400), C for B (+700).
					assert.Equal(t, start.Add(4*wait), got[1].at)
					assert.Equal(t, start.Add(7*wait), got[2].at)
				} else {
					// Two flushers: B starts at its deadline; C (cut at
					// +351) waits for A to finish at +400.
					assert.Equal(t, start.Add(2*wait+wait/2), got[1].at)
					assert.Equal(t, start.Add(4*wait), got[2].at)
				}
				require.NoError(t, c.Close(t.Context()))
				require.NoError(t, stop())
			})
		})
	}
}

// The byte limit is exact at the boundary: a batch may reach MaxBytes but
// never pass it, and an item larger than MaxBytes is flushed alone.
func TestMaxBytesBoundary(t *testing.T) {
	tests := []struct {
		name    string
		sizes   []int // item i has size sizes[i]; items are their sizes
		want    [][]int
		reasons batch.BatchCounts
	}{
		{name: "exactly at limit", sizes: []int{4, 6}, want: [][]int{{4, 6}}, reasons: batch.BatchCounts{Bytes: 1}},
		{name: "one byte past", sizes: []int{4, 6, 1}, want: [][]int{{4, 6}, {1}}, reasons: batch.BatchCounts{Bytes: 1, Manual: 1}},
		{name: "next would pass", sizes: []int{4, 5, 2}, want: [][]int{{4, 5}, {2}}, reasons: batch.BatchCounts{Bytes: 1, Manual: 1}},
		{name: "one byte short", sizes: []int{4, 5}, want: [][]int{{4, 5}}, reasons: batch.BatchCounts{Manual: 1}},
		{name: "oversized alone", sizes: []int{11}, want: [][]int{{11}}, reasons: batch.BatchCounts{Bytes: 1}},
		{name: "oversized between", sizes: []int{3, 11, 3}, want: [][]int{{3}, {11}, {3}}, reasons: batch.BatchCounts{Bytes: 2, Manual: 1}},
		{name: "zero sizes fill by count", sizes: []int{0, 0, 0, 0, 0, 0}, want: [][]int{{0, 0, 0, 0, 0}, {0}}, reasons: batch.BatchCounts{Size: 1, Manual: 1}},
		{name: "negative counts as zero", sizes: []int{10, -5}, want: [][]int{{10}, {-5}}, reasons: batch.BatchCounts{Bytes: 1, Manual: 1}},
	}
	for _, tt := range tests {
		for _, mode := range []string{"Add", "AddBatch"} {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				testMaxBytes(t, mode, tt.sizes, tt.want, tt.reasons)
			})
		}
	}
}

func testMaxBytes(t *testing.T, mode string, sizes []int, want [][]int, reasons batch.BatchCounts) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		var bytes []int
		c := newCollector(t, batch.Config[int]{
			MaxEvents: 5,
			MaxBytes:  10,
			Size:      func(v int) int { return v },
			MaxWait:   -1,
			Hooks: batch.Hooks[int]{
				OnFlush: func(_ batch.Reason, _, b int, _ time.Duration) { bytes = append(bytes, b) },
			},
		}, rec.flush)
		stop := run(t.Context(), c)
		if mode == "AddBatch" {
			n, err := c.AddBatch(t.Context(), sizes)
			require.NoError(t, err)
			assert.Equal(t, len(sizes), n)
		} else {
			addAll(t, c, sizes...)
		}
		require.NoError(t, c.Flush(t.Context()))
		assert.Equal(t, want, rec.items())
		assert.Equal(t, reasons, c.Stats().Batches)
		for i, b := range want {
			sum := 0
			for _, v := range b {
				sum += max(v, 0)
			}
			assert.Equal(t, sum, bytes[i], "bytes of batch %d", i)
		}
		require.NoError(t, c.Close(t.Context()))
		require.NoError(t, stop())
	})
}

// A stuck flusher makes Add block once MaxInFlight+1 batches are full, and
// the collector holds no more items than that, however long producers try.
func TestStuckFlusherBlocksAdd(t *testing.T) {
	for _, inFlight := range []int{1, 3} {
		t.Run(fmt.Sprintf("inflight=%d", inFlight), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const maxEvents = 10
				rec := &recorder{gate: make(chan struct{})}
				c := newCollector(t, batch.Config[int]{MaxEvents: maxEvents, MaxInFlight: inFlight}, rec.flush)
				stop := run(t.Context(), c)
				capacity := (inFlight + 1) * maxEvents
				addAll(t, c, seq(0, capacity)...)
				synctest.Wait()
				held := c.Stats()
				assert.Equal(t, uint64(capacity), held.Items)
				assert.Equal(t, capacity, held.PendingItems)
				assert.Equal(t, inFlight+1, held.PendingBatches)
				assert.Equal(t, inFlight, held.InFlight)
				assert.Zero(t, held.OpenItems)
				assertLedger(t, held)

				// Producers keep trying for a long time: each Add waits for
				// its deadline and adds nothing.
				var wg sync.WaitGroup
				for p := range 4 {
					wg.Go(func() {
						for i := range 5 {
							ctx, cancel := context.WithTimeout(t.Context(), time.Second)
							err := c.Add(ctx, 1000+10*p+i)
							cancel()
							assert.ErrorIs(t, err, context.DeadlineExceeded)
						}
					})
				}
				wg.Wait()
				assert.Equal(t, held, c.Stats(), "counters grew while the flusher was stuck")

				// An Add blocked when the flusher comes back proceeds.
				added := make(chan error, 1)
				go func() { added <- c.Add(t.Context(), capacity) }()
				synctest.Wait()
				select {
				case err := <-added:
					t.Fatalf("Add returned %v while every buffer was busy", err)
				default:
				}
				close(rec.gate)
				require.NoError(t, <-added)
				require.NoError(t, c.Close(t.Context()))
				require.NoError(t, stop())
				s := c.Stats()
				assert.Equal(t, uint64(capacity+1), s.Items)
				assert.Equal(t, uint64(capacity+1), s.FlushedItems)
				var all []int
				for _, b := range rec.items() {
					all = append(all, b...)
				}
				assert.ElementsMatch(t, seq(0, capacity+1), all)
			})
		})
	}
}

// Close with a deadline and a stuck flusher returns the number of items not
// flushed; the waiting batch goes to OnDrop and the stuck flush sees its
// context canceled.
func TestCloseDeadlineStuckFlusher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{gate: make(chan struct{})} // never opened
		var mu sync.Mutex                           // hooks run on both flushers
		var dropped, failed []int
		c := newCollector(t, batch.Config[int]{
			MaxEvents:   10,
			MaxInFlight: 2,
			Hooks: batch.Hooks[int]{
				OnDrop: func(b []int, reason string) {
					assert.Equal(t, batch.DropDrainTimeout, reason)
					mu.Lock()
					dropped = append(dropped, b...)
					mu.Unlock()
				},
				OnFlushError: func(b []int, err error) {
					assert.ErrorIs(t, err, context.Canceled)
					mu.Lock()
					failed = append(failed, b...)
					mu.Unlock()
				},
			},
		}, rec.flush)
		stop := run(t.Context(), c)
		addAll(t, c, seq(0, 25)...) // two stuck flushes of 10, 5 open
		synctest.Wait()

		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		start := time.Now()
		err := c.Close(ctx)
		assert.Equal(t, 2*time.Second, time.Since(start), "Close returned before its deadline")
		require.ErrorIs(t, err, batch.ErrDrainTimeout)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		var de *batch.DrainError
		require.ErrorAs(t, err, &de)
		assert.Equal(t, 25, de.Unflushed)
		assert.Contains(t, err.Error(), "25 items not flushed")

		require.NoError(t, stop())
		s := c.Stats()
		assert.Equal(t, uint64(25), s.Items)
		assert.Equal(t, uint64(20), s.FailedItems)
		assert.Equal(t, uint64(2), s.FlushErrors)
		assert.Equal(t, uint64(5), s.DroppedItems)
		assert.Zero(t, s.FlushedItems)
		assert.Zero(t, s.PendingItems)
		assert.Equal(t, batch.BatchCounts{Size: 2, Close: 1}, s.Batches)
		assertLedger(t, s)
		assert.ElementsMatch(t, seq(0, 20), failed)
		assert.Equal(t, seq(20, 5), dropped)

		assert.NoError(t, c.Close(t.Context()), "second Close")
		assert.ErrorIs(t, c.Add(t.Context(), 1), batch.ErrClosed)
		assert.ErrorIs(t, c.Flush(t.Context()), batch.ErrClosed)
		assert.NoError(t, c.Run(t.Context()), "Run after Close")
	})
}

// When Run's context ends, Run closes the collector, flushes the open batch
// and waits up to DrainTimeout; with a stuck flusher it reports the count.
func TestRunContextEnd(t *testing.T) {
	t.Run("drained", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := &recorder{delay: time.Second} // slow but finishes
			c := newCollector(t, batch.Config[int]{MaxEvents: 3, DrainTimeout: 5 * time.Second}, rec.flush)
			ctx, cancel := context.WithCancel(t.Context())
			stop := run(ctx, c)
			addAll(t, c, 1, 2, 3, 4)
			cancel()
			start := time.Now()
			require.NoError(t, stop())
			assert.Equal(t, 2*time.Second, time.Since(start), "waited for both flushes")
			assert.Equal(t, [][]int{{1, 2, 3}, {4}}, rec.items())
			assert.Equal(t, batch.BatchCounts{Size: 1, Close: 1}, c.Stats().Batches)
			assert.ErrorIs(t, c.Add(t.Context(), 5), batch.ErrClosed)
			assert.NoError(t, c.Close(t.Context()))
		})
	})
	t.Run("deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := &recorder{gate: make(chan struct{})}
			c := newCollector(t, batch.Config[int]{MaxEvents: 3, DrainTimeout: 5 * time.Second}, rec.flush)
			ctx, cancel := context.WithCancel(t.Context())
			stop := run(ctx, c)
			addAll(t, c, 1, 2, 3, 4)
			cancel()
			start := time.Now()
			err := stop()
			assert.Equal(t, 5*time.Second, time.Since(start))
			require.ErrorIs(t, err, batch.ErrDrainTimeout)
			var de *batch.DrainError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, 4, de.Unflushed)
			s := c.Stats()
			assert.Equal(t, uint64(3), s.FailedItems)
			assert.Equal(t, uint64(1), s.DroppedItems)
		})
	})
}

// With MaxInFlight = 1, batches reach the flush function in Add order, even
// when the flusher is slower than the producer.
func TestOrderWithOneFlusher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{delay: 10 * time.Millisecond}
		c := newCollector(t, batch.Config[int]{MaxEvents: 7, MaxWait: 5 * time.Millisecond}, rec.flush)
		stop := run(t.Context(), c)
		const n = 500
		for i := range n {
			addAll(t, c, i)
			if i%13 == 0 {
				time.Sleep(6 * time.Millisecond) // some batches are cut by time
			}
		}
		require.NoError(t, c.Close(t.Context()))
		require.NoError(t, stop())
		var all []int
		for _, b := range rec.items() {
			assert.LessOrEqual(t, len(b), 7)
			all = append(all, b...)
		}
		assert.Equal(t, seq(0, n), all)
		s := c.Stats()
		assert.Positive(t, s.Batches.Time)
		assert.Positive(t, s.Batches.Size)
	})
}

// Flush cuts the open batch and returns once it and every earlier batch
// have been flushed.
func TestFlushWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{delay: time.Second}
		c := newCollector(t, batch.Config[int]{MaxEvents: 2, MaxInFlight: 2}, rec.flush)
		stop := run(t.Context(), c)
		addAll(t, c, 1, 2, 3)
		start := time.Now()
		require.NoError(t, c.Flush(t.Context()))
		assert.Equal(t, time.Second, time.Since(start))
		assert.ElementsMatch(t, [][]int{{1, 2}, {3}}, rec.items()) // two flushers: any order
		assert.Equal(t, batch.BatchCounts{Size: 1, Manual: 1}, c.Stats().Batches)

		// A Flush whose context ends first returns its error.
		addAll(t, c, 4)
		ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
		defer cancel()
		assert.ErrorIs(t, c.Flush(ctx), context.DeadlineExceeded)
		require.NoError(t, c.Close(t.Context()))
		require.NoError(t, stop())
		assert.Equal(t, uint64(4), c.Stats().FlushedItems)
	})
}

// A flush error reaches OnFlushError with the batch, then OnFlush, and is
// counted; the collector goes on.
func TestFlushError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("destination down")
		rec := &recorder{err: boom}
		var got [][]int
		var calls []string
		c := newCollector(t, batch.Config[int]{
			MaxEvents: 2,
			Hooks: batch.Hooks[int]{
				OnFlushError: func(b []int, err error) {
					assert.ErrorIs(t, err, boom)
					got = append(got, append([]int(nil), b...))
					calls = append(calls, "error")
				},
				OnFlush: func(r batch.Reason, n, _ int, _ time.Duration) {
					calls = append(calls, fmt.Sprintf("flush %s %d", r, n))
				},
			},
		}, rec.flush)
		stop := run(t.Context(), c)
		addAll(t, c, 1, 2, 3)
		require.NoError(t, c.Close(t.Context()))
		require.NoError(t, stop())
		assert.Equal(t, [][]int{{1, 2}, {3}}, got)
		assert.Equal(t, []string{"error", "flush size 2", "error", "flush close 1"}, calls)
		s := c.Stats()
		assert.Equal(t, uint64(2), s.FlushErrors)
		assert.Equal(t, uint64(3), s.FailedItems)
		assert.Zero(t, s.FlushedItems)
	})
}

// OnFlush reports how long the flush function ran.
func TestOnFlushTook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var took []time.Duration
		c := newCollector(t, batch.Config[int]{Hooks: batch.Hooks[int]{
			OnFlush: func(_ batch.Reason, _, _ int, d time.Duration) { took = append(took, d) },
		}}, (&recorder{delay: 42 * time.Millisecond}).flush)
		stop := run(t.Context(), c)
		addAll(t, c, 1)
		require.NoError(t, c.Flush(t.Context()))
		require.NoError(t, c.Close(t.Context()))
		require.NoError(t, stop())
		assert.Equal(t, []time.Duration{42 * time.Millisecond}, took)
	})
}

// Close without Run flushes on the calling goroutine, within ctx.
func TestCloseWithoutRun(t *testing.T) {
	t.Run("flushed", func(t *testing.T) {
		rec := &recorder{}
		c := newCollector(t, batch.Config[int]{MaxEvents: 2, MaxInFlight: 2}, rec.flush)
		addAll(t, c, 1, 2, 3, 4, 5)
		require.NoError(t, c.Close(t.Context()))
		assert.Equal(t, [][]int{{1, 2}, {3, 4}, {5}}, rec.items())
		assert.Equal(t, uint64(5), c.Stats().FlushedItems)
	})
	t.Run("deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := &recorder{gate: make(chan struct{})}
			var dropped []int
			c := newCollector(t, batch.Config[int]{MaxEvents: 2, MaxInFlight: 2, Hooks: batch.Hooks[int]{
				OnDrop: func(b []int, _ string) { dropped = append(dropped, b...) },
			}}, rec.flush)
			addAll(t, c, 1, 2, 3, 4, 5)
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			err := c.Close(ctx)
			var de *batch.DrainError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, 5, de.Unflushed)
			assert.Equal(t, []int{3, 4, 5}, dropped)
			s := c.Stats()
			assert.Equal(t, uint64(2), s.FailedItems)
			assert.Equal(t, uint64(3), s.DroppedItems)
		})
	})
}

// An Add blocked on a full collector returns ErrClosed when it closes.
func TestCloseReleasesBlockedAdd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{gate: make(chan struct{})}
		c := newCollector(t, batch.Config[int]{MaxEvents: 1}, rec.flush)
		stop := run(t.Context(), c)
		addAll(t, c, 1, 2)
		added := make(chan error, 1)
		go func() { added <- c.Add(t.Context(), 3) }()
		synctest.Wait()
		closed := make(chan error, 1)
		go func() { closed <- c.Close(t.Context()) }()
		assert.ErrorIs(t, <-added, batch.ErrClosed)
		close(rec.gate)
		require.NoError(t, <-closed)
		require.NoError(t, stop())
		assert.Equal(t, [][]int{{1}, {2}}, rec.items())
	})
}

func TestRunTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCollector(t, batch.Config[int]{}, noFlush)
		stop := run(t.Context(), c)
		synctest.Wait()
		assert.Error(t, c.Run(t.Context()))
		require.NoError(t, c.Close(t.Context()))
		require.NoError(t, stop())
	})
}

// Many producers: every item added is flushed exactly once, per-producer
// order is kept with one flusher, and the counters balance.
func TestManyProducers(t *testing.T) {
	producers, perProducer := 8, 20000
	if testing.Short() {
		perProducer = 2000
	}
	for _, inFlight := range []int{1, 3} {
		t.Run(fmt.Sprintf("inflight=%d", inFlight), func(t *testing.T) {
			var mu sync.Mutex
			seen := make([]int, producers*perProducer)
			last := make([]int, producers)
			for i := range last {
				last[i] = -1
			}
			outOfOrder := 0
			c, err := batch.NewCollector(batch.Config[int]{
				MaxEvents:   64,
				MaxBytes:    500,
				Size:        func(v int) int { return v % 17 },
				MaxWait:     time.Millisecond,
				MaxInFlight: inFlight,
			}, func(_ context.Context, items []int) error {
				mu.Lock()
				defer mu.Unlock()
				for _, v := range items {
					seen[v]++
					p, i := v/perProducer, v%perProducer
					if i <= last[p] {
						outOfOrder++
					}
					last[p] = i
				}
				return nil
			})
			require.NoError(t, err)
			stop := run(t.Context(), c)
			// Snapshots taken while producers run balance too.
			sampled := make(chan struct{})
			sampling := make(chan struct{})
			go func() {
				defer close(sampled)
				for {
					select {
					case <-sampling:
						return
					default:
						if !assertLedger(t, c.Stats()) {
							return
						}
					}
				}
			}()
			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					if p%2 == 1 { // half the producers hand over chunks
						chunk := make([]int, 0, 37)
						for i := range perProducer {
							chunk = append(chunk, p*perProducer+i)
							if len(chunk) == cap(chunk) || i == perProducer-1 {
								if n, err := c.AddBatch(t.Context(), chunk); err != nil || n != len(chunk) {
									t.Error(n, err)
									return
								}
								chunk = chunk[:0]
							}
						}
						return
					}
					for i := range perProducer {
						if err := c.Add(t.Context(), p*perProducer+i); err != nil {
							t.Error(err)
							return
						}
						if i%4096 == 0 {
							_ = c.Flush(t.Context())
						}
					}
				})
			}
			wg.Wait()
			close(sampling)
			<-sampled
			require.NoError(t, c.Close(t.Context()))
			require.NoError(t, stop())

			for v, n := range seen {
				if n != 1 {
					t.Fatalf("item %d flushed %d times", v, n)
				}
			}
			if inFlight == 1 {
				assert.Zero(t, outOfOrder, "items out of per-producer order")
			}
			s := c.Stats()
			assertLedger(t, s)
			total := uint64(producers * perProducer)
			assert.Equal(t, total, s.Items)
			assert.Equal(t, total, s.FlushedItems)
			assert.Zero(t, s.PendingItems)
			assert.Zero(t, s.OpenItems)
			assert.Zero(t, s.InFlight)
			assert.GreaterOrEqual(t, s.Batches.Total(), total/64)
		})
	}
}

// Add allocates nothing once every buffer has been used.
func TestAddAllocs(t *testing.T) {
	var n int
	c, err := batch.NewCollector(batch.Config[int]{MaxEvents: 100, Size: func(int) int { return 8 }},
		func(_ context.Context, items []int) error { n += len(items); return nil })
	require.NoError(t, err)
	stop := run(t.Context(), c)
	ctx := t.Context()
	for i := range 1000 { // warm every buffer
		require.NoError(t, c.Add(ctx, i))
	}
	allocs := testing.AllocsPerRun(10000, func() {
		if err := c.Add(ctx, 1); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
	require.NoError(t, c.Close(ctx))
	require.NoError(t, stop())
	assert.Equal(t, int(c.Stats().Items), n)
}

// When Run learns of a batch late (the stamp of its first item is older than
// the clock's resolution), the delay is taken off MaxWait: the deadline stays
// tied to the first item.
func TestLateArmKeepsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const wait, lag = 100 * time.Millisecond, 30 * time.Millisecond
		rec := &recorder{}
		c := newCollector(t, batch.Config[int]{MaxWait: wait}, rec.flush)
		var calls atomic.Int64
		batch.SetNow(c, func() int64 {
			if calls.Add(1) == 1 { // the first-item stamp, taken "lag" ago
				return time.Now().Add(-lag).UnixNano()
			}
			return time.Now().UnixNano() // when Run arms the timer
		})
		stop := run(t.Context(), c)
		synctest.Wait()
		start := time.Now()
		addAll(t, c, 1)
		time.Sleep(time.Second)
		got := rec.get()
		require.Len(t, got, 1)
		assert.Equal(t, start.Add(wait-lag+batch.Slack(c)), got[0].at)
		require.NoError(t, c.Close(t.Context()))
		require.NoError(t, stop())
	})
}

// AddBatch adds in order, cuts at the limits like Add, stops at the first
// error and reports how many items it added.
func TestAddBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{gate: make(chan struct{})}
		c := newCollector(t, batch.Config[int]{MaxEvents: 4}, rec.flush)
		stop := run(t.Context(), c)

		n, err := c.AddBatch(t.Context(), nil)
		require.NoError(t, err)
		assert.Zero(t, n)

		// Two buffers of 4: the flusher is stuck, so 8 fit and the 9th waits.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		n, err = c.AddBatch(ctx, seq(0, 10))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 8, n)
		assert.Equal(t, uint64(8), c.Stats().Items)

		close(rec.gate)
		n, err = c.AddBatch(t.Context(), seq(8, 3))
		require.NoError(t, err)
		assert.Equal(t, 3, n)
		require.NoError(t, c.Close(t.Context()))
		require.NoError(t, stop())
		assert.Equal(t, [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10}}, rec.items())

		n, err = c.AddBatch(t.Context(), seq(0, 3))
		assert.ErrorIs(t, err, batch.ErrClosed)
		assert.Zero(t, n)
	})
}

// AddBatch allocates nothing once every buffer has been used, whether
// Run's goroutines flush or the adder does (InlineFlush).
func TestAddBatchAllocs(t *testing.T) {
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprintf("inline=%v", inline), func(t *testing.T) {
			c, err := batch.NewCollector(batch.Config[int]{MaxEvents: 100, InlineFlush: inline}, noFlush)
			require.NoError(t, err)
			stop := run(t.Context(), c)
			ctx := t.Context()
			items := seq(0, 64)
			for range 20 {
				_, err := c.AddBatch(ctx, items)
				require.NoError(t, err)
			}
			allocs := testing.AllocsPerRun(1000, func() {
				if _, err := c.AddBatch(ctx, items); err != nil {
					t.Fatal(err)
				}
			})
			assert.Zero(t, allocs)
			require.NoError(t, c.Close(ctx))
			require.NoError(t, stop())
		})
	}
}

// With the real default clock, a batch is never cut before MaxWait has
// passed since the clock's time of its first item (which lags real time
// by the clock's staleness, so it is read before Add).
func TestMaxWaitRealClock(t *testing.T) {
	const wait = 20 * time.Millisecond
	flushedAt := make(chan time.Time, 1)
	c, err := batch.NewCollector(batch.Config[int]{MaxWait: wait}, func(context.Context, []int) error {
		flushedAt <- time.Now()
		return nil
	})
	require.NoError(t, err)
	stop := run(t.Context(), c)
	for range 5 {
		start := clock.Default().Now()
		require.NoError(t, c.Add(t.Context(), 1))
		at := <-flushedAt
		assert.GreaterOrEqual(t, at.Sub(start), wait, "cut before MaxWait")
	}
	require.NoError(t, c.Close(t.Context()))
	require.NoError(t, stop())
	assert.Equal(t, uint64(5), c.Stats().Batches.Time)
}
