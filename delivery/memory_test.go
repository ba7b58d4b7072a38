package delivery_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
)

// scripted is a destination whose answers a test writes: answer returns
// the error of attempt n (1 for the first) for batch, where nil delivers it
// all and a *relaykit.BatchError delivers the events it does not list. It
// records when each attempt came, from which goroutine, and how many ran
// at once.
type scripted struct {
	answer func(n int, batch []relaykit.Event) error

	mu          sync.Mutex
	n           int
	got         []int       // sequence numbers delivered, in order
	at          []time.Time // start of each attempt
	gids        []uint64    // goroutine of each attempt
	active, max int         // attempts running now, and at most
}

func (s *scripted) Send(_ context.Context, batch []relaykit.Event) error {
	s.mu.Lock()
	s.n++
	n := s.n
	s.at = append(s.at, time.Now())
	s.gids = append(s.gids, goid())
	s.active++
	s.max = max(s.max, s.active)
	s.mu.Unlock()
	if s.answer != nil {
		// Give other callers a chance to overlap, were they allowed to.
		runtime.Gosched()
	}
	var err error
	if s.answer != nil {
		err = s.answer(n, batch)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	var be *relaykit.BatchError
	if err != nil && !errors.As(err, &be) {
		return err
	}
	listed := func(i int) bool {
		if be == nil {
			return false
		}
		for _, f := range be.Failed {
			if i >= f.From && i < f.To {
				return true
			}
		}
		return false
	}
	for i := range batch {
		if !listed(i) {
			s.got = append(s.got, seqOf(&batch[i]))
		}
	}
	return err
}

func (s *scripted) attempts() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.at...)
}

func (s *scripted) delivered() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.got...)
}

// goid returns the current goroutine's id, from its stack header.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	b = b[:bytes.IndexByte(b, ' ')]
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}

func newMemory(t *testing.T, sink relaykit.Sink, cfg delivery.Config) *delivery.Queue {
	t.Helper()
	cfg.Mode = delivery.Memory
	q, err := delivery.New(sink, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = q.Close(context.Background()) })
	return q
}

var errRefused = errors.New("destination refused")

// TestMemoryHealthyPath: Send delivers on its caller's goroutine, with the
// caller's events, and returns once they are delivered; Run has nothing to
// do.
func TestMemoryHealthyPath(t *testing.T) {
	d := &scripted{}
	q := newMemory(t, d, delivery.Config{Name: "archive"})
	require.NoError(t, q.Run(t.Context()), "Run returns at once in mode memory")
	me := goid()
	for i := range 10 {
		require.NoError(t, q.Send(t.Context(), batchOf(i*10, 10)))
		assert.Equal(t, seqs(0, (i+1)*10), d.delivered(), "delivered before Send returned")
	}
	for _, g := range d.gids {
		assert.Equal(t, me, g, "the sink ran on the caller's goroutine")
	}
	st := q.Stats()
	assert.Equal(t, int64(100), st.In)
	assert.Equal(t, int64(100), st.Delivered)
	assert.Equal(t, int64(10), st.Attempts)
	assert.True(t, st.Healthy)
	assert.Zero(t, st.Pending)
	assertLedger(t, st)
	require.NoError(t, q.Close(t.Context()))
	assert.ErrorIs(t, q.Send(t.Context(), batchOf(0, 1)), delivery.ErrClosed)
}

// TestMemoryRetriesUntilDelivered: a destination that fails three times
// and then takes the batch: Send returns nil after the fourth attempt,
// having waited the jittered backoff between attempts (100, 200, 400 ms,
// each in its upper half).
func TestMemoryRetriesUntilDelivered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &scripted{answer: func(n int, _ []relaykit.Event) error {
			if n <= 3 {
				return errRefused
			}
			return nil
		}}
		q := newMemory(t, d, delivery.Config{})
		require.NoError(t, q.Send(t.Context(), batchOf(0, 5)))
		assert.Equal(t, seqs(0, 5), d.delivered())
		at := d.attempts()
		require.Len(t, at, 4)
		for i, ceiling := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
			gap := at[i+1].Sub(at[i])
			assert.GreaterOrEqual(t, gap, ceiling/2, "wait %d", i)
			assert.LessOrEqual(t, gap, ceiling, "wait %d", i)
		}
		st := q.Stats()
		assert.Equal(t, int64(4), st.Attempts)
		assert.Equal(t, int64(3), st.Failures)
		assert.True(t, st.Healthy, "healthy again")
		assert.Equal(t, errRefused, st.LastError)
		assertLedger(t, st)
	})
}

// TestMemoryHonoursRetryAfter: the wait the destination names replaces a
// shorter backoff, capped at MaxRetryAfter; no attempt comes sooner, and
// the waits are counted and reported.
func TestMemoryHonoursRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		name     string
		asked    time.Duration
		maxAfter time.Duration
		want     time.Duration
	}{
		{"honoured", 3 * time.Second, 0, 3 * time.Second},
		{"capped", time.Hour, 10 * time.Second, 10 * time.Second},
		{"default cap", time.Hour, 0, delivery.DefaultMaxRetryAfter},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := &scripted{answer: func(n int, b []relaykit.Event) error {
					if n <= 2 {
						return &relaykit.BatchError{Failed: []relaykit.FailedRange{{From: 0, To: len(b), RetryAfter: tt.asked,
							Reason: relaykit.ReasonSinkError, Err: errRefused}}}
					}
					return nil
				}}
				var waits []time.Duration
				q := newMemory(t, d, delivery.Config{Name: "siem", MaxRetryAfter: tt.maxAfter,
					Hooks: delivery.Hooks{OnThrottled: func(name string, w time.Duration) {
						assert.Equal(t, "siem", name)
						waits = append(waits, w)
					}}})
				require.NoError(t, q.Send(t.Context(), batchOf(0, 3)))
				at := d.attempts()
				require.Len(t, at, 3)
				assert.Equal(t, tt.want, at[1].Sub(at[0]))
				assert.Equal(t, tt.want, at[2].Sub(at[1]))
				assert.Equal(t, []time.Duration{tt.want, tt.want}, waits)
				st := q.Stats()
				assert.Equal(t, int64(2), st.Throttled)
				assert.Equal(t, 2*tt.want, st.ThrottledFor)
			})
		})
	}
}

// TestMemoryPartialFailures: only the events the destination did not take
// are sent again; those it refused permanently are dead-lettered once;
// the caller's batch is left as it was.
func TestMemoryPartialFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &scripted{answer: func(n int, b []relaykit.Event) error {
			var be relaykit.BatchError
			for i := range b {
				seq := seqOf(&b[i])
				switch {
				case seq%10 == 3:
					be.Failed = append(be.Failed, relaykit.FailedRange{From: i, To: i + 1, Permanent: true,
						Reason: relaykit.ReasonRejected, Err: errors.New("bad event")})
				case n == 1 && seq%2 == 0, n == 2 && seq%4 == 0:
					be.Failed = append(be.Failed, relaykit.FailedRange{From: i, To: i + 1, Reason: relaykit.ReasonSinkError, Err: errRefused})
				}
			}
			if len(be.Failed) == 0 {
				return nil
			}
			return &be
		}}
		var dead []int
		q := newMemory(t, d, delivery.Config{DeadLetter: func(_ context.Context, evs []relaykit.Event, reason string, _ error) error {
			assert.Equal(t, relaykit.ReasonRejected, reason)
			for i := range evs {
				dead = append(dead, seqOf(&evs[i]))
			}
			return nil
		}})
		batch := batchOf(0, 20)
		orig := fmt.Sprint(seqsOfEvents(batch))
		require.NoError(t, q.Send(t.Context(), batch))
		assert.Equal(t, orig, fmt.Sprint(seqsOfEvents(batch)), "the caller's batch is unchanged")
		assert.Equal(t, []int{3, 13}, dead)
		var want []int
		for i := range 20 {
			if i%10 != 3 {
				want = append(want, i)
			}
		}
		assert.ElementsMatch(t, want, d.delivered(), "each delivered once")
		assert.Len(t, d.attempts(), 3)
		st := q.Stats()
		assert.Equal(t, int64(2), st.DeadLettered)
		assert.Equal(t, int64(18), st.Delivered)
		assertLedger(t, st)
	})
}

func seqsOfEvents(b []relaykit.Event) []int {
	out := make([]int, len(b))
	for i := range b {
		out[i] = seqOf(&b[i])
	}
	return out
}

// TestMemoryPermanentFailure: a batch the destination refuses permanently
// is dead-lettered, not retried, and Send returns nil; without a
// dead-letter handler it is counted dropped under the sink's reason.
func TestMemoryPermanentFailure(t *testing.T) {
	refuse := func(_ int, b []relaykit.Event) error {
		return &relaykit.BatchError{Failed: []relaykit.FailedRange{{From: 0, To: len(b), Permanent: true,
			Reason: relaykit.ReasonUnauthorized, Err: errors.New("HTTP 403")}}}
	}
	var dead int
	d := &scripted{answer: refuse}
	q := newMemory(t, d, delivery.Config{DeadLetter: func(_ context.Context, evs []relaykit.Event, reason string, cause error) error {
		assert.Equal(t, relaykit.ReasonUnauthorized, reason)
		assert.EqualError(t, cause, "HTTP 403")
		dead += len(evs)
		return nil
	}})
	require.NoError(t, q.Send(t.Context(), batchOf(0, 4)))
	assert.Equal(t, 4, dead)
	assert.Len(t, d.attempts(), 1, "not retried")
	assertLedger(t, q.Stats())

	var drops []string
	d2 := &scripted{answer: refuse}
	q2 := newMemory(t, d2, delivery.Config{Name: "siem", Hooks: delivery.Hooks{OnDrop: func(name, reason string, n int) {
		drops = append(drops, fmt.Sprint(name, " ", reason, " ", n))
	}}})
	require.NoError(t, q2.Send(t.Context(), batchOf(0, 4)))
	st := q2.Stats()
	assert.Equal(t, map[string]int64{relaykit.ReasonUnauthorized: 4}, st.Dropped)
	assert.Equal(t, []string{"siem unauthorized 4"}, drops)
	assertLedger(t, st)
}

// TestMemoryContextEnds: when ctx ends while Send retries, Send returns
// ctx's error and the events it did not deliver, by their index in the
// caller's batch; they are counted as returned, not dropped.
func TestMemoryContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &scripted{answer: func(n int, b []relaykit.Event) error {
			if n == 1 { // the first three events go through
				return &relaykit.BatchError{Failed: []relaykit.FailedRange{{From: 3, To: len(b), Reason: relaykit.ReasonSinkError, Err: errRefused}}}
			}
			return errRefused
		}}
		q := newMemory(t, d, delivery.Config{})
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		start := time.Now()
		err := q.Send(ctx, batchOf(0, 10))
		assert.Equal(t, 5*time.Second, time.Since(start), "retried until ctx ended")
		require.ErrorIs(t, err, context.DeadlineExceeded)
		var be *relaykit.BatchError
		require.ErrorAs(t, err, &be)
		require.Len(t, be.Failed, 1)
		assert.Equal(t, [2]int{3, 10}, [2]int{be.Failed[0].From, be.Failed[0].To})
		assert.Equal(t, seqs(0, 3), d.delivered())
		st := q.Stats()
		assert.Equal(t, int64(7), st.Returned)
		assert.Equal(t, int64(3), st.Delivered)
		assert.Empty(t, st.Dropped)
		assert.Zero(t, st.Pending)
		assertLedger(t, st)
	})
}

// TestMemoryConcurrentCallers: callers that send at once never see their
// own batches reordered; while the destination fails they take turns, so
// the outage costs one attempt per backoff, not one per caller; all is
// delivered once.
func TestMemoryConcurrentCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		down := true
		var downMax int // attempts at once while down
		var d *scripted
		d = &scripted{answer: func(_ int, _ []relaykit.Event) error {
			mu.Lock()
			defer mu.Unlock()
			if down {
				d.mu.Lock()
				downMax = max(downMax, d.active)
				d.mu.Unlock()
				return errRefused
			}
			return nil
		}}
		q := newMemory(t, d, delivery.Config{})
		const callers, batches, size = 8, 20, 5
		begin := time.Now()
		var wg sync.WaitGroup
		for c := range callers {
			wg.Go(func() {
				for b := range batches {
					first := (c*batches + b) * size
					assert.NoError(t, q.Send(t.Context(), batchOf(first, size)))
				}
			})
		}
		time.Sleep(10 * time.Second) // an outage of 10 s while the callers wait
		late := 0                    // attempts after the first 2 s of the outage
		for _, at := range d.attempts() {
			if at.Sub(begin) >= 2*time.Second {
				late++
			}
		}
		mu.Lock()
		down = false
		mu.Unlock()
		wg.Wait()
		got := d.delivered()
		assert.Len(t, got, callers*batches*size)
		for c := range callers {
			var mine []int
			for _, seq := range got {
				if seq/(batches*size) == c {
					mine = append(mine, seq)
				}
			}
			assertOnce(t, seqs(c*batches*size, (c+1)*batches*size), mine)
		}
		// The first attempts overlap (the destination looked healthy);
		// once it failed, one caller at a time: one attempt per backoff
		// (0.5 to 1 s by then: 8 to 16 in 8 s), not one per caller per
		// backoff (64 to 128).
		assert.LessOrEqual(t, late, 16, "attempts in the last 8 s of the outage")
		t.Logf("%d attempts in the last 8 s of the outage, at most %d at once", late, downMax)
		st := q.Stats()
		assert.Equal(t, int64(callers*batches*size), st.Delivered)
		assertLedger(t, st)
	})
}

// TestMemoryClose: Close waits for the Sends in progress; when its
// deadline comes first it cuts them short: they return an error wrapping
// ErrClosed with their events, which are counted as returned.
func TestMemoryClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &scripted{answer: func(int, []relaykit.Event) error { return errRefused }}
		q, err := delivery.New(d, delivery.Config{Mode: delivery.Memory})
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- q.Send(context.Background(), batchOf(0, 4)) }()
		time.Sleep(3 * time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		require.NoError(t, q.Close(ctx))
		assert.Equal(t, 2*time.Second, time.Since(start), "Close waited for the Send until its deadline")
		err = <-done
		require.ErrorIs(t, err, delivery.ErrClosed)
		var be *relaykit.BatchError
		require.ErrorAs(t, err, &be)
		assert.Equal(t, 4, be.Events())
		st := q.Stats()
		assert.Equal(t, int64(4), st.Returned)
		assertLedger(t, st)
		assert.ErrorIs(t, q.Send(context.Background(), batchOf(4, 1)), delivery.ErrClosed)
		assert.NoError(t, q.Close(context.Background()), "idempotent")
	})
}

func TestMemoryConfig(t *testing.T) {
	_, err := delivery.New(&scripted{}, delivery.Config{Mode: delivery.Memory, Dir: t.TempDir()})
	assert.ErrorIs(t, err, delivery.ErrInvalidConfig, "no spool in mode memory")
	_, err = delivery.New(&scripted{}, delivery.Config{Mode: delivery.Memory, MaxRetryAfter: -1})
	assert.ErrorIs(t, err, delivery.ErrInvalidConfig)
	assert.Equal(t, "memory", delivery.Memory.String())
}
