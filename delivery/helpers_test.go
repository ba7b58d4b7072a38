package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
)

// dest is a destination for tests: it records the sequence numbers of the
// events it takes, and can be made to refuse, hang, be slow, or reject
// events.
type dest struct {
	mu       sync.Mutex
	got      []int
	down     bool          // refuse every batch (retryable)
	hang     chan struct{} // non-nil: block until closed or ctx ends
	delay    time.Duration // per batch
	reject   func(seq int) bool
	half     bool // take only the first half of a batch of ten, once
	halfDone map[int]bool
	calls    atomic.Int64
	firstOK  atomic.Int64 // unix ns of the first delivery after setUp
}

var errDown = errors.New("destination down")

func (d *dest) Send(ctx context.Context, batch []relaykit.Event) error {
	d.calls.Add(1)
	d.mu.Lock()
	down, hang, delay := d.down, d.hang, d.delay
	d.mu.Unlock()
	if hang != nil {
		select {
		case <-hang:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	if down {
		return errDown
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var be relaykit.BatchError
	cut := len(batch)
	if d.half && len(batch) > 1 {
		// The first attempt of each batch of ten takes only its first half.
		key := seqOf(&batch[0]) / 10
		if !d.halfDone[key] {
			if d.halfDone == nil {
				d.halfDone = map[int]bool{}
			}
			d.halfDone[key] = true
			cut = len(batch) / 2
		}
	}
	for i := range batch {
		seq := seqOf(&batch[i])
		switch {
		case i >= cut:
			be.Failed = append(be.Failed, relaykit.FailedRange{From: i, To: i + 1, Reason: relaykit.ReasonSinkError, Err: errDown})
		case d.reject != nil && d.reject(seq):
			be.Failed = append(be.Failed, relaykit.FailedRange{From: i, To: i + 1, Permanent: true, Reason: "rejected", Err: errors.New("bad event")})
		default:
			d.got = append(d.got, seq)
		}
	}
	if len(d.got) > 0 && d.firstOK.Load() == 0 {
		d.firstOK.Store(time.Now().UnixNano())
	}
	if len(be.Failed) > 0 {
		return &be
	}
	return nil
}

func (d *dest) set(f func(d *dest)) {
	d.mu.Lock()
	f(d)
	d.mu.Unlock()
}

func (d *dest) events() []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]int(nil), d.got...)
}

func seqOf(e *relaykit.Event) int {
	raw, _, _ := strings.Cut(string(e.Raw), " ")
	n, err := strconv.Atoi(raw)
	if err != nil {
		panic(err)
	}
	return n
}

// batchOf returns n events numbered from first.
func batchOf(first, n int) []relaykit.Event {
	b := make([]relaykit.Event, n)
	for i := range b {
		b[i].Raw = strconv.AppendInt(nil, int64(first+i), 10)
		b[i].Host = []byte("host-1")
		b[i].ReceiveTime = time.Now().UnixNano()
	}
	return b
}

// start opens a Queue in front of d and runs its sender until the test
// ends (or Close).
func start(t *testing.T, d relaykit.Sink, cfg delivery.Config) *delivery.Queue {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	q, err := delivery.New(d, cfg)
	require.NoError(t, err)
	run(t, q)
	return q
}

// run runs q's sender; the test's cleanup closes q and waits for it.
func run(t *testing.T, q *delivery.Queue) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx) }()
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		_ = q.Close(cctx)
		cancel()
		<-done
	})
}

// closeQ closes q within d and requires success.
func closeQ(t *testing.T, q *delivery.Queue, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	require.NoError(t, q.Close(ctx))
}

// seqs returns from..to-1.
func seqs(from, to int) []int {
	s := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// assertLedger checks the Queue's ledger.
func assertLedger(t *testing.T, st delivery.Stats) {
	t.Helper()
	var dropped int64
	for _, n := range st.Dropped {
		dropped += n
	}
	assert.Equal(t, st.In+st.Recovered, st.Delivered+st.DeadLettered+dropped+st.Returned+st.Pending,
		"ledger: in %d + recovered %d = delivered %d + dead-lettered %d + dropped %d + returned %d + pending %d",
		st.In, st.Recovered, st.Delivered, st.DeadLettered, dropped, st.Returned, st.Pending)
}

// assertOnce checks that got holds each of want exactly once, in order.
func assertOnce(t *testing.T, want, got []int) {
	t.Helper()
	if assert.Equal(t, len(want), len(got), "events delivered") {
		for i := range want {
			if want[i] != got[i] {
				assert.Failf(t, "order", "event %d: want %d, got %d", i, want[i], got[i])
				return
			}
		}
	}
}

// eventually waits until cond holds, for up to d.
func eventually(t *testing.T, d time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			require.Failf(t, "timeout", format, args...)
		}
		time.Sleep(5 * time.Millisecond) // polling an outcome, not ordering goroutines
	}
}

var _ = fmt.Sprint
