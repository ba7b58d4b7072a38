package batch_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/batch"
	"github.com/relaykit/relaykit/ringbuffer"
)

// With InlineFlush the adder that cuts a batch has flushed it when Add
// returns: no Run, no flushing goroutine.
func TestInlineFlushOnAdder(t *testing.T) {
	rec := &recorder{}
	c := newCollector(t, batch.Config[int]{MaxEvents: 3, InlineFlush: true}, rec.flush)
	addAll(t, c, 1, 2)
	assert.Empty(t, rec.items())
	addAll(t, c, 3)
	assert.Equal(t, [][]int{{1, 2, 3}}, rec.items(), "the third Add flushed before it returned")
	n, err := c.AddBatch(t.Context(), seq(4, 7)) // cuts two batches, one item left open
	require.NoError(t, err)
	assert.Equal(t, 7, n)
	assert.Equal(t, [][]int{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, rec.items())

	require.NoError(t, c.Flush(t.Context()), "Flush flushes on its caller, Run not running")
	assert.Equal(t, [][]int{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10}}, rec.items())
	s := c.Stats()
	assert.Equal(t, uint64(10), s.FlushedItems)
	assert.Equal(t, batch.BatchCounts{Size: 3, Manual: 1}, s.Batches)
	assertLedger(t, s)
	require.NoError(t, c.Close(t.Context()))
}

// The MaxWait timer's cuts are flushed on Run's goroutine.
func TestInlineFlushTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		c := newCollector(t, batch.Config[int]{MaxEvents: 10, MaxWait: time.Second, InlineFlush: true}, rec.flush)
		ctx, cancel := context.WithCancel(t.Context())
		stop := run(ctx, c)
		start := time.Now()
		addAll(t, c, 1, 2)
		time.Sleep(time.Second)
		synctest.Wait()
		got := rec.get()
		require.Len(t, got, 1)
		assert.Equal(t, []int{1, 2}, got[0].items)
		assert.Equal(t, time.Second, got[0].at.Sub(start))

		addAll(t, c, 3) // open when Run's context ends: flushed by the drain
		cancel()
		require.NoError(t, stop())
		assert.Equal(t, [][]int{{1, 2}, {3}}, rec.items())
		assert.Equal(t, batch.BatchCounts{Time: 1, Close: 1}, c.Stats().Batches)
	})
}

// Many adders: flushes never overlap, come in cut order (each adder's
// items stay in its order) and lose nothing.
func TestInlineFlushConcurrentAdders(t *testing.T) {
	const adders, per = 4, 5000
	var running, overlaps atomic.Int32
	var mu sync.Mutex
	var got []int
	c := newCollector(t, batch.Config[int]{MaxEvents: 64, InlineFlush: true}, func(_ context.Context, b []int) error {
		if running.Add(1) != 1 {
			overlaps.Add(1)
		}
		mu.Lock()
		got = append(got, b...)
		mu.Unlock()
		running.Add(-1)
		return nil
	})
	stop := run(t.Context(), c)
	var wg sync.WaitGroup
	for a := range adders {
		wg.Go(func() {
			items := seq(a*per, per)
			for len(items) > 0 {
				k := min(len(items), 1+len(items)%37)
				_, err := c.AddBatch(t.Context(), items[:k])
				assert.NoError(t, err)
				items = items[k:]
			}
		})
	}
	wg.Wait()
	require.NoError(t, c.Close(t.Context()))
	require.NoError(t, stop())
	assert.Zero(t, overlaps.Load(), "two flushes ran at once")
	require.Len(t, got, adders*per)
	last := make([]int, adders)
	for i := range last {
		last[i] = -1
	}
	for _, v := range got {
		a := v / per
		assert.Greater(t, v, last[a], "adder %d's items out of order", a)
		last[a] = v
	}
	assertLedger(t, c.Stats())
}

// An adder that finds every buffer taken waits for the flush in progress
// on another goroutine, then flushes what was cut meanwhile; Close at its
// deadline cancels the flush in progress and drops what still waits.
func TestInlineFlushStuck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{gate: make(chan struct{})} // never opened
		var dropped []int
		c := newCollector(t, batch.Config[int]{
			MaxEvents: 2, InlineFlush: true,
			Hooks: batch.Hooks[int]{OnDrop: func(b []int, _ string) { dropped = append(dropped, b...) }},
		}, rec.flush)
		stop := run(t.Context(), c)
		first := make(chan error, 1)
		go func() { _, err := c.AddBatch(t.Context(), []int{1, 2}); first <- err }() // flushes, stuck
		synctest.Wait()
		second := make(chan error, 1)
		go func() { _, err := c.AddBatch(t.Context(), []int{3, 4, 5}); second <- err }()
		synctest.Wait()
		assert.Len(t, rec.get(), 1, "one flush at a time")
		select {
		case <-second:
			t.Fatal("an adder with no free buffer returned")
		default:
		}

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		err := c.Close(ctx)
		require.ErrorIs(t, err, batch.ErrDrainTimeout)
		assert.ErrorIs(t, <-first, nil)
		assert.Error(t, <-second, "added after Close")
		require.NoError(t, stop())
		s := c.Stats()
		assertLedger(t, s)
		assert.Equal(t, uint64(2), s.FailedItems, "the stuck flush saw its context canceled")
		assert.Equal(t, s.DroppedItems, uint64(len(dropped)))
	})
}

func TestInlineFlushConfig(t *testing.T) {
	_, err := batch.NewCollector(batch.Config[int]{InlineFlush: true, MaxInFlight: 2}, noFlush)
	require.ErrorIs(t, err, batch.ErrInvalidConfig)
	_, err = batch.NewCollector(batch.Config[int]{InlineFlush: true, MaxInFlight: 1}, noFlush)
	require.NoError(t, err)
}

// Pump with InlineFlush: the pump's AddBatch flushes, and shutdown loses
// nothing.
func TestInlineFlushPump(t *testing.T) {
	q, err := ringbuffer.NewMPSC[int](64)
	require.NoError(t, err)
	rec := &recorder{}
	c := newCollector(t, batch.Config[int]{MaxEvents: 10, InlineFlush: true}, rec.flush)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Pump(ctx, q) }()
	for v := range 25 {
		require.True(t, q.TryPush(v))
	}
	cancel()
	require.NoError(t, <-done)
	var all []int
	for _, b := range rec.items() {
		all = append(all, b...)
	}
	assert.Equal(t, seq(0, 25), all)
}
