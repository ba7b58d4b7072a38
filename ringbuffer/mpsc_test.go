package ringbuffer_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/ringbuffer"
)

func TestNewMPSC(t *testing.T) {
	tests := []struct {
		capacity int
		wantErr  bool
	}{
		{-1, true}, {0, true}, {1, false}, {2, false}, {3, true}, {6, true},
		{64, false}, {100, true}, {1024, false}, {ringbuffer.MaxCapacity * 2, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.capacity), func(t *testing.T) {
			q, err := ringbuffer.NewMPSC[int](tt.capacity)
			if tt.wantErr {
				assert.ErrorIs(t, err, ringbuffer.ErrInvalidCapacity)
				assert.Nil(t, q)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.capacity, q.Cap())
			assert.Equal(t, 0, q.Len())
		})
	}
}

func TestSingleGoroutine(t *testing.T) {
	q, err := ringbuffer.NewMPSC[int](4)
	require.NoError(t, err)
	_, ok := q.TryPop()
	assert.False(t, ok, "empty ring")

	for i := range 4 {
		assert.True(t, q.TryPush(i))
	}
	assert.False(t, q.TryPush(99), "full")
	assert.ErrorIs(t, q.Offer(99), ringbuffer.ErrFull)
	n, err := q.TryPushBatch([]int{7, 8})
	assert.Equal(t, 0, n)
	assert.ErrorIs(t, err, ringbuffer.ErrFull)
	assert.Equal(t, 4, q.Len())

	for i := range 4 {
		v, ok := q.TryPop()
		require.True(t, ok)
		assert.Equal(t, i, v)
	}
	n, err = q.TryPushBatch([]int{10, 11, 12, 13, 14, 15})
	assert.Equal(t, 4, n, "partial batch takes the free slots")
	assert.ErrorIs(t, err, ringbuffer.ErrFull)
	assert.Equal(t, []int{10, 11}, q.Drain(nil, 2))
	assert.Equal(t, []int{12, 13}, q.Drain(nil, 0))
	assert.Empty(t, q.Drain(nil, 0))

	assert.Equal(t, ringbuffer.Stats{Pushed: 8, Popped: 8, RefusedFull: 1 + 1 + 2 + 2, Len: 0, Cap: 4}, q.Stats(),
		"nothing parked in one goroutine")
}

// TestRunsAcrossWrap publishes batches that wrap around the end of the
// slot array and drains them with limits that split runs.
func TestRunsAcrossWrap(t *testing.T) {
	q, err := ringbuffer.NewMPSC[int](8)
	require.NoError(t, err)
	next, want := 0, 0
	var buf []int
	for round := range 200 {
		size := 1 + round%7
		vs := make([]int, size)
		for i := range vs {
			vs[i] = next + i
		}
		n, _ := q.TryPushBatch(vs)
		next += n
		buf = q.Drain(buf[:0], 1+round%5)
		for _, v := range buf {
			require.Equal(t, want, v)
			want++
		}
	}
	for _, v := range q.Drain(buf[:0], 0) {
		require.Equal(t, want, v)
		want++
	}
	assert.Equal(t, next, want)
	assert.Greater(t, want, 400)
}

// TestBoreasLiteScenario is the failure of agilira/argus v1.1.0 BoreasLite:
// there a write refused on a full ring still took a sequence number, the
// consumer stalled at that hole, and every later accepted write was lost
// (63 of 63 in a 64-slot ring). Here a refused push must change nothing.
func TestBoreasLiteScenario(t *testing.T) {
	const capacity = 64
	q, err := ringbuffer.NewMPSC[int](capacity)
	require.NoError(t, err)
	accepted := 0
	for i := range capacity {
		require.True(t, q.TryPush(i))
		accepted++
	}
	// Refuse in every way a producer can be refused.
	for range 10 {
		assert.False(t, q.TryPush(-1))
		assert.ErrorIs(t, q.Offer(-1), ringbuffer.ErrFull)
		n, err := q.TryPushBatch([]int{-1, -1})
		assert.Zero(t, n)
		assert.ErrorIs(t, err, ringbuffer.ErrFull)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, q.Push(ctx, -1), context.Canceled)
	n, err := q.PushBatch(ctx, []int{-1})
	assert.Zero(t, n)
	assert.ErrorIs(t, err, context.Canceled)

	var got []int
	got = q.Drain(got, 0)
	// Push more after the refusals: all must be delivered.
	for i := capacity; i < 2*capacity-1; i++ {
		require.True(t, q.TryPush(i))
		accepted++
	}
	got = q.Drain(got, 0)
	require.NoError(t, q.Close())
	_, err = q.Pop(t.Context())
	assert.ErrorIs(t, err, ringbuffer.ErrClosed)

	require.Len(t, got, accepted)
	for i, v := range got {
		assert.Equal(t, i, v)
	}
	st := q.Stats()
	assert.Equal(t, uint64(accepted), st.Pushed)
	assert.Equal(t, uint64(accepted), st.Popped)
	assert.Equal(t, uint64(10*4), st.RefusedFull)
}

type item struct {
	producer int
	seq      int
}

// TestExactlyOncePerProducerFIFO runs P producers of N items each through a
// tiny ring, so it is full most of the time, with every push and pop
// flavour mixed, and checks that each (producer, seq) arrives exactly once
// and in per-producer order.
func TestExactlyOncePerProducerFIFO(t *testing.T) {
	producers, perProducer := 8, 20000
	if testing.Short() {
		perProducer = 2000
	}
	for _, capacity := range []int{1, 4, 64} {
		t.Run(fmt.Sprintf("cap=%d", capacity), func(t *testing.T) {
			q, err := ringbuffer.NewMPSC[item](capacity)
			require.NoError(t, err)
			ctx := t.Context()

			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() { produceMixed(t, ctx, q, p, perProducer) })
			}
			go func() { wg.Wait(); _ = q.Close() }()

			next := make([]int, producers)
			total := 0
			check := func(it item) {
				if it.seq != next[it.producer] {
					t.Fatalf("producer %d: got seq %d, want %d", it.producer, it.seq, next[it.producer])
				}
				next[it.producer]++
				total++
			}
			buf := make([]item, 5)
			var dbuf []item
			for round := 0; ; round++ {
				var err error
				switch round % 4 {
				case 0:
					var it item
					it, err = q.Pop(ctx)
					if err == nil {
						check(it)
					}
				case 1:
					if it, ok := q.TryPop(); ok {
						check(it)
					}
				case 2:
					var n int
					n, err = q.PopBatch(ctx, buf)
					for _, it := range buf[:n] {
						check(it)
					}
				case 3:
					dbuf = q.Drain(dbuf[:0], 3)
					for _, it := range dbuf {
						check(it)
					}
				}
				if errors.Is(err, ringbuffer.ErrClosed) {
					break
				}
				require.NoError(t, err)
			}
			for p := range producers {
				assert.Equal(t, perProducer, next[p], "producer %d", p)
			}
			assert.Equal(t, producers*perProducer, total)
			st := q.Stats()
			assert.Equal(t, uint64(total), st.Pushed)
			assert.Equal(t, uint64(total), st.Popped)
			assert.Zero(t, st.Len)
		})
	}
}

// produceMixed pushes items 0..n-1 of producer p using every push flavour.
func produceMixed(t *testing.T, ctx context.Context, q *ringbuffer.MPSC[item], p, n int) {
	batch := make([]item, 0, 7)
	for seq := 0; seq < n; {
		switch seq % 5 {
		case 0: // TryPush, retried
			for !q.TryPush(item{p, seq}) {
				runtime.Gosched()
			}
			seq++
		case 1:
			if err := q.Push(ctx, item{p, seq}); err != nil {
				t.Errorf("Push: %v", err)
				return
			}
			seq++
		case 2: // blocking batch
			batch = batch[:0]
			for i := 0; i < 7 && seq+i < n; i++ {
				batch = append(batch, item{p, seq + i})
			}
			got, err := q.PushBatch(ctx, batch)
			if err != nil || got != len(batch) {
				t.Errorf("PushBatch: %d of %d, %v", got, len(batch), err)
				return
			}
			seq += got
		case 3: // non-blocking batch, partial acceptance continues from there
			batch = batch[:0]
			for i := 0; i < 3 && seq+i < n; i++ {
				batch = append(batch, item{p, seq + i})
			}
			got, err := q.TryPushBatch(batch)
			if err != nil && !errors.Is(err, ringbuffer.ErrFull) {
				t.Errorf("TryPushBatch: %v", err)
				return
			}
			seq += got
			if got == 0 {
				runtime.Gosched()
			}
		case 4: // Offer, retried
			for {
				err := q.Offer(item{p, seq})
				if err == nil {
					break
				}
				if !errors.Is(err, ringbuffer.ErrFull) {
					t.Errorf("Offer: %v", err)
					return
				}
				runtime.Gosched()
			}
			seq++
		}
	}
}

// TestCloseWithBlockedProducers closes a full ring while producers are
// parked in Push and PushBatch: they return ErrClosed, everything accepted
// before Close is delivered, then the consumer sees ErrClosed.
func TestCloseWithBlockedProducers(t *testing.T) {
	const capacity, blocked = 4, 6
	q, err := ringbuffer.NewMPSC[int](capacity)
	require.NoError(t, err)
	for i := range capacity {
		require.True(t, q.TryPush(i))
	}
	errs := make(chan error, blocked)
	var wg sync.WaitGroup
	for i := range blocked {
		wg.Go(func() {
			if i%2 == 0 {
				errs <- q.Push(t.Context(), 100+i)
				return
			}
			n, err := q.PushBatch(t.Context(), []int{100 + i, 200 + i})
			if n != 0 {
				err = fmt.Errorf("accepted %d values on a full ring", n)
			}
			errs <- err
		})
	}
	for q.Waiters() < blocked { // wait until all are parked
		runtime.Gosched()
	}
	assert.Equal(t, blocked, q.Stats().ProducersWaiting)
	require.NoError(t, q.Close())
	require.NoError(t, q.Close(), "Close is idempotent")
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.ErrorIs(t, err, ringbuffer.ErrClosed)
	}
	assert.ErrorIs(t, q.Push(t.Context(), 1), ringbuffer.ErrClosed)
	assert.ErrorIs(t, q.Offer(1), ringbuffer.ErrClosed)
	assert.False(t, q.TryPush(1))

	buf := make([]int, 16)
	n, err := q.PopBatch(t.Context(), buf)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 3}, buf[:n])
	_, err = q.PopBatch(t.Context(), buf)
	assert.ErrorIs(t, err, ringbuffer.ErrClosed)
	assert.ErrorIs(t, q.Wait(t.Context()), ringbuffer.ErrClosed)
	st := q.Stats()
	assert.Equal(t, uint64(4), st.Pushed)
	assert.Equal(t, uint64(4), st.Popped)
	assert.Zero(t, st.Len)
	assert.LessOrEqual(t, st.ProducerParks, uint64(blocked))
	assert.Zero(t, st.ProducersWaiting, "Close woke them all")
}

// TestCloseRace closes the ring while producers push as fast as they can
// and the consumer drains: the consumer receives exactly the values whose
// push returned success.
func TestCloseRace(t *testing.T) {
	for round := range 20 {
		q, err := ringbuffer.NewMPSC[item](8)
		require.NoError(t, err)
		const producers = 4
		accepted := make([]int, producers)
		var wg sync.WaitGroup
		for p := range producers {
			wg.Go(func() {
				for seq := 0; ; seq++ {
					var err error
					if p%2 == 0 {
						err = q.Push(t.Context(), item{p, seq})
					} else {
						_, err = q.PushBatch(t.Context(), []item{{p, seq}})
					}
					if err != nil {
						assert.ErrorIs(t, err, ringbuffer.ErrClosed)
						return
					}
					accepted[p]++
				}
			})
		}
		next := make([]int, producers)
		buf := make([]item, 3)
		for popped := 0; ; {
			n, err := q.PopBatch(t.Context(), buf)
			if errors.Is(err, ringbuffer.ErrClosed) {
				break
			}
			require.NoError(t, err)
			for _, it := range buf[:n] {
				require.Equal(t, next[it.producer], it.seq)
				next[it.producer]++
			}
			popped += n
			if popped >= 100*(round+1) && !q.Closed() {
				require.NoError(t, q.Close())
			}
		}
		wg.Wait()
		assert.Equal(t, accepted, next, "round %d", round)
	}
}

// TestPushAfterCloseWithRoom closes a ring that still has free slots: the
// single-value pushes, whose common case claims a slot with one CAS without
// looking at the closed state separately, must refuse with ErrClosed and
// use no sequence number, and the value accepted before Close is still
// delivered.
func TestPushAfterCloseWithRoom(t *testing.T) {
	q, err := ringbuffer.NewMPSC[int](8)
	require.NoError(t, err)
	require.NoError(t, q.Push(t.Context(), 1))
	require.NoError(t, q.Close())

	assert.ErrorIs(t, q.Push(t.Context(), 2), ringbuffer.ErrClosed)
	assert.ErrorIs(t, q.Offer(3), ringbuffer.ErrClosed)
	assert.False(t, q.TryPush(4))
	n, err := q.TryPushBatch([]int{5})
	assert.Zero(t, n)
	assert.ErrorIs(t, err, ringbuffer.ErrClosed)

	v, err := q.Pop(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	_, err = q.Pop(t.Context())
	assert.ErrorIs(t, err, ringbuffer.ErrClosed)
	assert.Equal(t, ringbuffer.Stats{Pushed: 1, Popped: 1, Cap: 8}, q.Stats())
}

// TestWaitersParkWithoutYielding checks that a consumer waiting in Pop on an
// empty ring and a producer waiting in Push on a full one park as soon as
// they find nothing to do, without polling through runtime.Gosched first. A waiter that yields in a loop is
// put back on the global run queue each time, and its processor takes it
// from there before it would take a runnable goroutine queued on another
// processor: with two producers and a consumer on two processors, the
// consumer kept its processor polling while one producer sat runnable for
// up to the scheduler's 10 ms time slice (the slow mode in BENCHMARKS.md).
//
// With one processor, every yield of the waiter gives this goroutine one
// turn, so the number of turns before the waiter shows as parked counts its
// yields: a waiter that parks at once is seen parked on the first turn.
func TestWaitersParkWithoutYielding(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const maxTurns = 2 // one turn to let it run, one spare

	q, err := ringbuffer.NewMPSC[int](2)
	require.NoError(t, err)
	popped := make(chan error, 1)
	go func() {
		_, err := q.Pop(t.Context())
		popped <- err
	}()
	turns := 0
	for !q.Sleeping() {
		runtime.Gosched()
		turns++
	}
	assert.LessOrEqual(t, turns, maxTurns, "consumer: turns of another goroutine before it parked")

	require.NoError(t, q.Push(t.Context(), 1))
	require.NoError(t, <-popped)
	require.True(t, q.TryPush(2))
	require.True(t, q.TryPush(3))
	pushed := make(chan error, 1)
	go func() { pushed <- q.Push(t.Context(), 4) }()
	turns = 0
	for q.Waiters() == 0 {
		runtime.Gosched()
		turns++
	}
	assert.LessOrEqual(t, turns, maxTurns, "producer: turns of another goroutine before it parked")

	assert.Equal(t, []int{2, 3}, q.Drain(nil, 0))
	require.NoError(t, <-pushed)
	assert.Equal(t, []int{4}, q.Drain(nil, 0))
}

func TestContextCancel(t *testing.T) {
	q, err := ringbuffer.NewMPSC[int](2)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { _, err := q.Pop(ctx); done <- err }()
	for !q.Sleeping() {
		runtime.Gosched()
	}
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	assert.False(t, q.Sleeping())

	require.True(t, q.TryPush(1))
	require.True(t, q.TryPush(2))
	ctx, cancel = context.WithCancel(t.Context())
	go func() { done <- q.Push(ctx, 3) }()
	for q.Waiters() == 0 {
		runtime.Gosched()
	}
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	assert.Zero(t, q.Waiters())
	assert.Equal(t, []int{1, 2}, q.Drain(nil, 0), "the cancelled value was not accepted")
}

// TestWakeParkedConsumer hands values one at a time to a parked consumer.
func TestWakeParkedConsumer(t *testing.T) {
	q, err := ringbuffer.NewMPSC[int](16)
	require.NoError(t, err)
	got := make(chan int)
	go func() {
		for {
			v, err := q.Pop(t.Context())
			if err != nil {
				close(got)
				return
			}
			got <- v
		}
	}()
	for i := range 50 {
		for !q.Sleeping() { // make sure the consumer parked
			runtime.Gosched()
		}
		require.NoError(t, q.Push(t.Context(), i))
		assert.Equal(t, i, <-got)
	}
	require.NoError(t, q.Close())
	_, open := <-got
	assert.False(t, open)
}

func TestZeroAllocs(t *testing.T) {
	type payload struct{ A, B, C, D, E, F, G, H uint64 }
	q, err := ringbuffer.NewMPSC[payload](64)
	require.NoError(t, err)
	ctx := t.Context()
	batch := make([]payload, 16)
	dst := make([]payload, 0, 64)
	tests := []struct {
		name string
		f    func()
	}{
		{"TryPush/TryPop", func() { q.TryPush(payload{A: 1}); q.TryPop() }},
		{"Offer/TryPop", func() { _ = q.Offer(payload{A: 1}); q.TryPop() }},
		{"Push/Pop", func() { _ = q.Push(ctx, payload{A: 1}); _, _ = q.Pop(ctx) }},
		{"TryPushBatch/Drain", func() { _, _ = q.TryPushBatch(batch); dst = q.Drain(dst[:0], 0) }},
		{"PushBatch/PopBatch", func() { _, _ = q.PushBatch(ctx, batch); _, _ = q.PopBatch(ctx, dst[:16]) }},
		{"full", func() { q.TryPush(payload{}); q.TryPush(payload{}) }}, // fills, then refuses
		{"Stats/Len", func() { _ = q.Stats(); _ = q.Len() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Zero(t, testing.AllocsPerRun(100, tt.f))
		})
	}
}

// TestIdleConsumerCPU parks a consumer on an empty ring for a second and
// compares the process CPU time with a consumer parked on a channel receive
// for the same second: the difference must stay within 2 percentage points
// of one core. A consumer that spins or loops on runtime.Gosched would use
// a whole core.
func TestIdleConsumerCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("takes two seconds of wall-clock time")
	}
	const idle = time.Second
	measure := func(wait func(ctx context.Context)) time.Duration {
		start := time.Now() // before the deadline is set, so that the wait lasts idle from start
		ctx, cancel := context.WithTimeout(t.Context(), idle)
		defer cancel()
		before := cpuTime(t)
		wait(ctx)
		used := cpuTime(t) - before
		require.GreaterOrEqual(t, time.Since(start), idle)
		return used
	}

	q, err := ringbuffer.NewMPSC[int](1024)
	require.NoError(t, err)
	ring := measure(func(ctx context.Context) {
		assert.ErrorIs(t, q.Wait(ctx), context.DeadlineExceeded)
	})
	ch := make(chan int, 1024)
	channel := measure(func(ctx context.Context) {
		select {
		case <-ch:
			t.Error("unexpected value")
		case <-ctx.Done():
		}
	})
	t.Logf("CPU over %v idle: ring %v, channel %v", idle, ring, channel)
	assert.LessOrEqual(t, ring-channel, idle*2/100,
		"ring consumer used %v of CPU more than a channel consumer in %v", ring-channel, idle)
}

func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
