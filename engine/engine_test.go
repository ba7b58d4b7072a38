package engine_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/engine"
)

func TestConfig(t *testing.T) {
	for field, cfg := range map[string]engine.Config{
		"Sink":         {},
		"RingSize":     {Sink: newRecorder(), RingSize: 100}, // not a power of two
		"BatchMaxWait": {Sink: newRecorder(), BatchMaxWait: -1},
		"Workers":      {Sink: newRecorder(), Workers: -1},
	} {
		for _, err := range []error{cfg.Validate(), func() error { _, err := engine.New(cfg); return err }()} {
			require.ErrorIs(t, err, engine.ErrInvalidConfig, field)
			var fe *relaykit.FieldError
			require.ErrorAs(t, err, &fe, field)
			assert.Equal(t, field, fe.Field)
		}
	}
	e := newEngine(t, engine.Config{Sink: newRecorder(), Workers: 3})
	assert.Equal(t, 3, e.Workers())
	assert.Equal(t, 3, e.NewInput("in").Workers())
}

// Every way of pushing keeps the events of one shard in order, and every
// event pushed before Shutdown is routed exactly once.
func TestOrderPerShard(t *testing.T) {
	rec := newRecorder()
	e := newEngine(t, engine.Config{Sink: rec, Workers: 2, RingSize: 256, BatchMaxEvents: 100})
	done := start(t, e)
	const n = 5000
	in := e.NewInput("test")
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			host := "g" + strconv.Itoa(g)
			shard := uint64(g)
			switch g % 3 {
			case 0, 1: // a stream connection: a producer, pushes of up to a slab
				p := in.NewProducer(shard)
				defer p.Release()
				for i := range n {
					x := p.Event()
					x.Reset()
					x.Host = append(x.Host, host...)
					x.Raw = strconv.AppendInt(x.Raw, int64(i), 10)
					if p.Full() || i%97 == 0 {
						require.NoError(t, p.Flush(t.Context()))
					}
				}
				require.NoError(t, p.Flush(t.Context()))
			case 2: // single events, copied and owned
				for i := range n {
					if i%2 == 0 {
						x := ev(host, i)
						require.NoError(t, in.Push(t.Context(), shard, &x))
						continue
					}
					h := engine.NewEvent()
					h.Host = append(h.Host, host...)
					h.Raw = strconv.AppendInt(h.Raw, int64(i), 10)
					require.NoError(t, in.PushOwned(t.Context(), shard, h))
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, e.Shutdown(t.Context()))
	require.NoError(t, <-done)
	next := map[string]int{}
	for _, s := range rec.all() {
		host, num, _ := strings.Cut(s, " ")
		i, err := strconv.Atoi(num)
		require.NoError(t, err)
		require.Equal(t, next[host], i, "%s out of order", host)
		next[host]++
	}
	for g := range 6 {
		assert.Equal(t, n, next["g"+strconv.Itoa(g)])
	}
	s := e.Stats()
	assert.Equal(t, int64(6*n), s.Received)
	assert.Equal(t, int64(6*n), s.Routed)
	assert.Zero(t, s.Queued)
	assert.Zero(t, s.Late)
	balanced(t, s)
	var finished uint64
	for _, w := range s.Workers {
		finished += w.Finished
	}
	assert.Equal(t, uint64(6*n), finished)
	x := ev("late", 0)
	assert.ErrorIs(t, in.Push(t.Context(), 0, &x), engine.ErrClosed, "after Shutdown")
}

// PushWait answers only once the batch holding its events has been sent:
// while the Sink holds the batch, the caller waits.
func TestPushWaitWaitsForSend(t *testing.T) {
	rec := newRecorder()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	rec.before = func(_ context.Context, batch []relaykit.Event) error {
		if string(batch[len(batch)-1].Raw) == "2" { // the batch that ends the wait
			once.Do(func() { close(entered) })
			<-release
		}
		return nil
	}
	e := newEngine(t, engine.Config{Sink: rec, Workers: 1, BatchMaxWait: time.Hour})
	start(t, e)
	in := e.NewInput("hec")
	res := make(chan error, 1)
	go func() { res <- in.PushWait(t.Context(), 7, []relaykit.Event{ev("ack", 1), ev("ack", 2)}) }()
	// BatchMaxWait is an hour: only the group commit of a waiting input
	// cuts the batch.
	<-entered
	select {
	case err := <-res:
		t.Fatalf("PushWait returned %v while the Sink still held its batch", err)
	default:
	}
	close(release)
	require.NoError(t, <-res)
	assert.Equal(t, []string{"ack 1", "ack 2"}, rec.all())
	assert.Zero(t, in.Stats().Abandoned)
}

// A batch the Sink refuses fails the marks of its events, and only them:
// later pushes on the same worker are acknowledged again.
func TestPushWaitFailure(t *testing.T) {
	rec := newRecorder()
	rec.before = func(_ context.Context, batch []relaykit.Event) error {
		for i := range batch {
			if string(batch[i].Host) == "bad" {
				return errRefused
			}
		}
		return nil
	}
	var hookErrs []error
	var mu sync.Mutex
	e := newEngine(t, engine.Config{Sink: rec, Workers: 1, BatchMaxWait: time.Hour, Hooks: engine.Hooks{
		OnSendError: func(err error, _ int) { mu.Lock(); hookErrs = append(hookErrs, err); mu.Unlock() },
	}})
	start(t, e)
	in := e.NewInput("relp")
	err := in.PushWait(t.Context(), 1, []relaykit.Event{ev("bad", 1)})
	require.ErrorIs(t, err, engine.ErrNotFinished)
	assert.ErrorIs(t, err, errRefused, "the Sink's error is in the chain")
	assert.Equal(t, int64(1), in.Stats().Abandoned)
	require.NoError(t, in.PushWait(t.Context(), 1, []relaykit.Event{ev("good", 2)}), "not stuck after a failure")
	assert.Equal(t, []string{"good 2"}, rec.all())
	s := e.Stats()
	assert.Equal(t, int64(1), s.SendErrors)
	assert.Equal(t, int64(1), s.FailedEvents)
	mu.Lock()
	assert.Len(t, hookErrs, 1)
	mu.Unlock()
}

// A mark from Input.Mark covers everything the worker took before it: it
// is done once those are finished, and fails for a failure anywhere
// before it (positional acknowledgement, as Kafka's).
func TestMark(t *testing.T) {
	rec := newRecorder()
	fail := make(chan struct{}, 1)
	rec.before = func(context.Context, []relaykit.Event) error {
		select {
		case <-fail:
			return errRefused
		default:
			return nil
		}
	}
	e := newEngine(t, engine.Config{Sink: rec, Workers: 1, BatchMaxWait: time.Hour})
	start(t, e)
	in := e.NewInput("kafka")
	ok, err := engine.Mark{}.Done()
	assert.True(t, ok)
	require.NoError(t, err, "the zero Mark is finished")
	for i := range 10 {
		x := ev("p0", i)
		require.NoError(t, in.Push(t.Context(), 3, &x))
	}
	m := in.Mark(3)
	require.NoError(t, m.Wait(t.Context()))
	ok, err = m.Done()
	assert.True(t, ok)
	require.NoError(t, err)
	assert.Equal(t, 10, rec.count())

	fail <- struct{}{}
	x := ev("p0", 10)
	require.NoError(t, in.Push(t.Context(), 3, &x))
	m2 := in.Mark(3)
	require.ErrorIs(t, m2.Wait(t.Context()), engine.ErrNotFinished)
	x = ev("p0", 11)
	require.NoError(t, in.Push(t.Context(), 3, &x))
	m3 := in.Mark(3)
	require.ErrorIs(t, m3.Wait(t.Context()), engine.ErrNotFinished, "a positional mark fails after any failure before it")
	ok, err = m.Done()
	assert.True(t, ok)
	require.NoError(t, err, "an earlier mark stays finished")
}

// A mark Since an earlier one covers only the events between them: a
// failure before the earlier mark, which fails every positional mark
// after it, does not fail it (a stream input acknowledging read by read
// is not stuck after one refused batch).
func TestMarkSince(t *testing.T) {
	rec := newRecorder()
	fail := make(chan struct{}, 1)
	rec.before = func(context.Context, []relaykit.Event) error {
		select {
		case <-fail:
			return errRefused
		default:
			return nil
		}
	}
	e := newEngine(t, engine.Config{Sink: rec, Workers: 1, BatchMaxWait: time.Hour})
	start(t, e)
	in := e.NewInput("tcp")
	p := in.NewProducer(0)
	defer p.Release()
	read := func(n int) {
		for i := range n {
			*p.Event() = ev("c", i)
		}
		require.NoError(t, p.Flush(t.Context()))
	}

	last := p.Mark()
	fail <- struct{}{}
	read(3)
	m := p.Mark()
	require.ErrorIs(t, m.Since(last).Wait(t.Context()), engine.ErrNotFinished, "the refused read")
	last = m
	read(2)
	m = p.Mark()
	require.ErrorIs(t, m.Wait(t.Context()), engine.ErrNotFinished, "positional: the failure is before it")
	require.NoError(t, m.Since(last).Wait(t.Context()), "only the events since the last mark")
	assert.Equal(t, []string{"c 0", "c 1"}, rec.all())

	ok, err := m.Since(m).Done()
	assert.True(t, ok)
	require.NoError(t, err, "an empty mark is finished")
	require.ErrorIs(t, m.Since(engine.Mark{}).Wait(t.Context()), engine.ErrNotFinished, "Since the zero Mark is m")
}

// A wait ends with its context, counted as abandoned, and the events are
// still routed.
func TestPushWaitContext(t *testing.T) {
	rec := newRecorder()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	rec.before = func(context.Context, []relaykit.Event) error {
		once.Do(func() { close(entered) })
		<-release
		return nil
	}
	e := newEngine(t, engine.Config{Sink: rec, Workers: 1, BatchMaxWait: time.Hour})
	start(t, e)
	in := e.NewInput("hec")
	ctx, cancel := context.WithCancel(t.Context())
	res := make(chan error, 1)
	go func() { res <- in.PushWait(ctx, 0, []relaykit.Event{ev("h", 1), ev("h", 2), ev("h", 3)}) }()
	<-entered
	cancel()
	require.ErrorIs(t, <-res, context.Canceled)
	close(release)
	assert.Equal(t, int64(3), in.Stats().Abandoned)
	require.NoError(t, e.Shutdown(t.Context()))
	assert.Equal(t, 3, rec.count(), "abandoned events are still routed")
}

// With the Sink stuck, the hard deadline (Shutdown's context) ends the
// drain: what is left is routed late with an ended context, waiters fail,
// and the ledger balances.
func TestShutdownDeadline(t *testing.T) {
	rec := newRecorder()
	entered := make(chan struct{})
	var once sync.Once
	rec.before = func(ctx context.Context, _ []relaykit.Event) error {
		if ctx.Err() != nil {
			return ctx.Err() // the late route: refused
		}
		once.Do(func() { close(entered) })
		<-ctx.Done() // stuck until the deadline
		return ctx.Err()
	}
	var late []int
	var mu sync.Mutex
	e := newEngine(t, engine.Config{Sink: rec, Workers: 1, RingSize: 64, BatchMaxEvents: 10, BatchMaxWait: time.Hour,
		Hooks: engine.Hooks{OnSendError: func(_ error, n int) { mu.Lock(); late = append(late, n); mu.Unlock() }}})
	done := start(t, e)
	in := e.NewInput("relp")
	res := make(chan error, 1)
	go func() { res <- in.PushWait(context.Background(), 0, []relaykit.Event{ev("a", 1)}) }()
	<-entered
	p := in.NewProducer(0)
	for i := range 30 { // more than the open batch and the ring below it hold
		x := p.Event()
		*x = ev("b", i)
		if p.Full() {
			break
		}
	}
	pushed := make(chan error, 1)
	go func() { pushed <- p.Flush(context.Background()) }()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	require.NoError(t, e.Shutdown(ctx))
	require.NoError(t, <-done)
	require.ErrorIs(t, <-res, engine.ErrNotFinished)
	<-pushed
	s := e.Stats()
	balanced(t, s)
	assert.Zero(t, s.Queued)
	assert.Positive(t, s.SendErrors)
	assert.Equal(t, s.Routed, s.FailedEvents, "every batch was refused")
	assert.Zero(t, rec.count())
}

// TryPush never waits: what finds the ring full is dropped and counted.
func TestTryPushQueueFull(t *testing.T) {
	rec := newRecorder()
	var drops []string
	e := newEngine(t, engine.Config{Sink: rec, Workers: 1, RingSize: 8, Hooks: engine.Hooks{
		OnDrop: func(name, reason string, n int) { drops = append(drops, fmt.Sprintf("%s %s %d", name, reason, n)) },
	}})
	in := e.NewInput("udp")
	accepted := 0
	for i := range 20 { // no Run: nothing drains
		x := ev("u", i)
		if in.TryPush(0, &x) {
			accepted++
		}
	}
	assert.Equal(t, 8, accepted)
	p := in.NewProducer(0)
	*p.Event() = ev("u", 20)
	assert.Zero(t, p.TryPush())
	p.Release()
	in.Drop(relaykit.ReasonRcvbufFull, 2)
	s := in.Stats()
	assert.Equal(t, int64(23), s.Received)
	assert.Equal(t, map[string]int64{relaykit.ReasonQueueFull: 13, relaykit.ReasonRcvbufFull: 2}, s.Dropped)
	assert.Contains(t, drops, "udp queue_full 1")
	assert.Contains(t, drops, "udp rcvbuf_full 2")
	require.NoError(t, e.Shutdown(t.Context()), "Shutdown without Run drains on the caller's goroutine")
	assert.Equal(t, 8, rec.count())
	balanced(t, e.Stats())
}

// Events short of a batch are routed BatchMaxWait after the first of
// them, whoever pushed them; nothing is routed before.
func TestBatchMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		e := newEngine(t, engine.Config{Sink: rec, Workers: 1, BatchMaxEvents: 1000, BatchMaxWait: 100 * time.Millisecond,
			Clock: clock.New(time.Millisecond)}) // the bubble's own: it reads the bubble's time
		done := make(chan error, 1)
		go func() { done <- e.Run(context.Background()) }()
		in := e.NewInput("tcp")
		p := in.NewProducer(0)
		for i := range 3 {
			*p.Event() = ev("t", i)
		}
		require.NoError(t, p.Flush(t.Context()))
		x := ev("t", 3)
		require.NoError(t, in.Push(t.Context(), 0, &x)) // through the ring
		time.Sleep(90 * time.Millisecond)
		synctest.Wait()
		assert.Zero(t, rec.count(), "nothing before BatchMaxWait")
		time.Sleep(20 * time.Millisecond)
		synctest.Wait()
		assert.Equal(t, 4, rec.count(), "everything by BatchMaxWait")
		require.NoError(t, e.Shutdown(t.Context()))
		require.NoError(t, <-done)
	})
}

// Flush routes the open batches now.
func TestFlush(t *testing.T) {
	rec := newRecorder()
	e := newEngine(t, engine.Config{Sink: rec, Workers: 2, BatchMaxWait: time.Hour})
	start(t, e)
	in := e.NewInput("x")
	for i := range 5 {
		x := ev("f", i)
		require.NoError(t, in.Push(t.Context(), uint64(i), &x))
	}
	require.NoError(t, e.Flush(t.Context()))
	assert.Equal(t, 5, rec.count())
}

// Run may be called once: of two calls, one returns ErrClosed at once,
// the other runs until its context ends.
func TestRunTwice(t *testing.T) {
	e := newEngine(t, engine.Config{Sink: newRecorder(), Workers: 1})
	ctx, cancel := context.WithCancel(t.Context())
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- e.Run(ctx) }()
	}
	require.ErrorIs(t, <-errs, engine.ErrClosed)
	cancel()
	require.NoError(t, <-errs)
}

// A program stopped before its Run goroutine started: Shutdown does Run's
// work, and the Run that starts after it returns Shutdown's result, not an
// error of its own (the engine's documented startup and shutdown order,
// with the stop coming first).
func TestRunAfterShutdown(t *testing.T) {
	rec := newRecorder()
	e := newEngine(t, engine.Config{Sink: rec, Workers: 1})
	in := e.NewInput("in")
	x := ev("f", 1)
	require.NoError(t, in.Push(t.Context(), 1, &x))
	require.NoError(t, e.Shutdown(t.Context()))
	assert.Equal(t, 1, rec.count(), "Shutdown routed what was pushed")
	require.NoError(t, e.Run(t.Context()))
}
