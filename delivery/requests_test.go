package delivery_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/spool/spooltest"
)

// reqDest is dest as a relaykit.RequestSink: it encodes a batch into
// requests of at most 7 events (the sequence numbers, one a line), and
// sends a request by decoding it and giving the events to dest, so that
// dest's refusals, hangs and partial failures apply to requests. Events
// for which refuse returns true cannot be encoded (permanently).
type reqDest struct {
	*dest
	refuse func(seq int) bool

	mu      sync.Mutex
	encoded int // events encoded
	sent    int // requests given to SendRequests
	cuts    int
}

const reqFormat = "test.seq"

var _ relaykit.RequestSink = (*reqDest)(nil)

func (d *reqDest) EncodeRequests(dst []relaykit.Request, batch []relaykit.Event) ([]relaykit.Request, error) {
	var be relaykit.BatchError
	var cur *relaykit.Request
	for i := range batch {
		seq := seqOf(&batch[i])
		if d.refuse != nil && d.refuse(seq) {
			be.Failed = append(be.Failed, relaykit.FailedRange{From: i, To: i + 1, Permanent: true, Reason: relaykit.ReasonTooLarge, Err: errors.New("too large")})
			continue
		}
		if cur == nil || cur.Events == 7 {
			if len(dst) < cap(dst) {
				dst = dst[:len(dst)+1]
			} else {
				dst = append(dst, relaykit.Request{})
			}
			cur = &dst[len(dst)-1]
			*cur = relaykit.Request{Format: reqFormat, Body: cur.Body[:0], Index: cur.Index[:0]}
		}
		if cur.Events > 0 {
			cur.Body = append(cur.Body, '\n')
		}
		cur.Body = strconv.AppendInt(cur.Body, int64(seq), 10)
		cur.Events++
		if rt := batch[i].ReceiveTime; cur.OldestReceive == 0 || rt < cur.OldestReceive {
			cur.OldestReceive = rt
		}
		cur.NewestReceive = max(cur.NewestReceive, batch[i].ReceiveTime)
	}
	d.mu.Lock()
	d.encoded += len(batch) - be.Events()
	d.mu.Unlock()
	if len(be.Failed) > 0 {
		return dst, &be
	}
	return dst, nil
}

func (d *reqDest) DecodeRequest(dst []relaykit.Event, r *relaykit.Request) ([]relaykit.Event, error) {
	if r.Format != reqFormat {
		return dst, errors.New("unknown format")
	}
	lines := bytes.Split(r.Body, []byte("\n"))
	if len(lines) != r.Events {
		return dst, errors.New("damaged request")
	}
	for _, l := range lines {
		dst = append(dst, relaykit.Event{Raw: append([]byte(nil), l...), Host: []byte("host-1"), ReceiveTime: r.OldestReceive})
	}
	return dst, nil
}

func (d *reqDest) CutRequest(r *relaykit.Request, from, to int) (relaykit.Request, error) {
	lines := bytes.Split(r.Body, []byte("\n"))
	if r.Format != reqFormat || len(lines) != r.Events || from < 0 || to > r.Events || from >= to {
		return relaykit.Request{}, errors.New("cannot cut")
	}
	d.mu.Lock()
	d.cuts++
	d.mu.Unlock()
	return relaykit.Request{Format: reqFormat, Events: to - from, OldestReceive: r.OldestReceive, NewestReceive: r.NewestReceive,
		Body: bytes.Join(lines[from:to], []byte("\n"))}, nil
}

func (d *reqDest) SendRequests(ctx context.Context, reqs []relaykit.Request) error {
	d.mu.Lock()
	d.sent += len(reqs)
	d.mu.Unlock()
	var evs []relaykit.Event
	for i := range reqs {
		var err error
		if evs, err = d.DecodeRequest(evs, &reqs[i]); err != nil {
			return err
		}
	}
	return d.dest.Send(ctx, evs)
}

// TestRequestsHealthyPath: with a sink that encodes ahead, every batch is
// encoded once, written ahead as its requests, sent from memory and never
// read back; everything is delivered once, in order.
func TestRequestsHealthyPath(t *testing.T) {
	for _, mode := range []delivery.Mode{delivery.WriteAhead, delivery.OnFailure} {
		t.Run(mode.String(), func(t *testing.T) {
			fsys := &spooltest.FaultFS{}
			fsys.Inject(spooltest.Fault{Op: spooltest.OpRead, Name: "*.seg", Err: syscall.EIO})
			d := &reqDest{dest: &dest{}}
			var runs, runEvents int
			var mu sync.Mutex
			q := start(t, d, delivery.Config{Mode: mode, FS: fsys, MemoryBatches: 1000, Hooks: delivery.Hooks{
				OnDelivered: func([]relaykit.Event) { t.Error("OnDelivered called for requests") },
				OnDeliveredRun: func(n int, oldest, newest int64) {
					mu.Lock()
					runs++
					runEvents += n
					mu.Unlock()
					assert.Positive(t, oldest)
					assert.GreaterOrEqual(t, newest, oldest)
				},
			}})
			const batches, size = 300, 50
			for i := range batches {
				require.NoError(t, q.Send(t.Context(), batchOf(i*size, size)))
			}
			closeQ(t, q, 10*time.Second)
			assertOnce(t, seqs(0, batches*size), d.events())
			st := q.Stats()
			assertLedger(t, st)
			assert.Zero(t, st.Pending)
			assert.Zero(t, fsys.Failed(spooltest.OpRead), "nothing read back")
			assert.Equal(t, batches*size, d.encoded, "each event encoded once")
			assert.Equal(t, batches*size, runEvents, "every delivery reported")
			assert.Zero(t, d.cuts)
			if mode == delivery.WriteAhead {
				assert.Equal(t, int64(batches), st.Spool.Appended, "every batch written ahead")
				assert.Equal(t, int64(batches), st.Spool.Acked, "and acknowledged after delivery")
			} else {
				assert.Zero(t, st.Spool.Appended, "nothing spooled while healthy")
			}
		})
	}
}

// TestRequestsPartialFailures: only the events a sink reports undelivered
// are sent again (the rest of their request cut to them), those it refuses
// permanently are decoded from their request and dead-lettered once each,
// and those it cannot encode are dead-lettered at Send.
func TestRequestsPartialFailures(t *testing.T) {
	d := &reqDest{
		dest:   &dest{half: true, reject: func(seq int) bool { return seq%10 == 3 }},
		refuse: func(seq int) bool { return seq%50 == 7 },
	}
	var mu sync.Mutex
	dead := map[string][]int{}
	q := start(t, d, delivery.Config{DeadLetter: func(_ context.Context, evs []relaykit.Event, reason string, _ error) error {
		mu.Lock()
		defer mu.Unlock()
		for i := range evs {
			dead[reason] = append(dead[reason], seqOf(&evs[i]))
			assert.Equal(t, "host-1", string(evs[i].Host), "decoded from the request")
		}
		return nil
	}})
	for i := range 20 {
		require.NoError(t, q.Send(t.Context(), batchOf(i*10, 10)))
	}
	closeQ(t, q, 10*time.Second)
	var want, wantRejected, wantTooLarge []int
	for i := range 200 {
		switch {
		case i%50 == 7:
			wantTooLarge = append(wantTooLarge, i)
		case i%10 == 3:
			wantRejected = append(wantRejected, i)
		default:
			want = append(want, i)
		}
	}
	assert.ElementsMatch(t, want, d.events(), "each delivered once")
	assert.Equal(t, wantRejected, dead["rejected"], "each rejected event dead-lettered once")
	assert.Equal(t, wantTooLarge, dead[relaykit.ReasonTooLarge], "each event that cannot be encoded dead-lettered at Send")
	st := q.Stats()
	assert.Equal(t, int64(len(wantRejected)+len(wantTooLarge)), st.DeadLettered)
	assert.Positive(t, d.cuts, "the undelivered halves were cut from their requests")
	assertLedger(t, st)
}

// TestRequestsOutage is TestOutage with requests: a destination down for
// 6 s while batches arrive every 20 ms, with the default timings. Sends
// never wait; everything arrives once, in order; the backlog is on disk as
// requests and read back from there.
func TestRequestsOutage(t *testing.T) {
	for _, mode := range []delivery.Mode{delivery.WriteAhead, delivery.OnFailure} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			d := &reqDest{dest: &dest{}}
			q := start(t, d, delivery.Config{Mode: mode})
			const size = 20
			n := 0
			send := func(until time.Time) {
				for time.Now().Before(until) {
					require.NoError(t, q.Send(t.Context(), batchOf(n*size, size)))
					n++
					time.Sleep(20 * time.Millisecond) // the offered rate
				}
			}
			send(time.Now().Add(time.Second))
			d.set(func(d *dest) { d.down = true })
			send(time.Now().Add(6 * time.Second))
			assert.False(t, q.Stats().Healthy)
			assert.Positive(t, q.Stats().SpoolEvents, "the backlog is on disk")
			d.set(func(d *dest) { d.down = false })
			send(time.Now().Add(2 * time.Second))
			closeQ(t, q, 20*time.Second)
			assertOnce(t, seqs(0, n*size), d.events())
			st := q.Stats()
			assertLedger(t, st)
			assert.Empty(t, st.Dropped)
			assert.Equal(t, n*size, d.encoded, "each event encoded once")
		})
	}
}

// TestRequestsDiskFaults is TestDiskFaults with requests: while the disk
// refuses writes, batches are held (encoded) in memory and delivered in
// order; the state clears without a restart.
func TestRequestsDiskFaults(t *testing.T) {
	faults := map[string]spooltest.Fault{
		"ENOSPC on write": {Op: spooltest.OpWrite, Name: "*.seg", Err: syscall.ENOSPC},
		"torn write":      {Op: spooltest.OpWrite, Name: "*.seg", Err: syscall.ENOSPC, Partial: true},
		"fsync error":     {Op: spooltest.OpSync, Name: "*.seg", Err: syscall.EIO},
	}
	for name, f := range faults {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fsys := &spooltest.FaultFS{}
			d := &reqDest{dest: &dest{}}
			q := start(t, d, delivery.Config{FS: fsys, Fsync: f.Op == spooltest.OpSync, SegmentBytes: 64 << 10})
			const size = 25
			n := 0
			send := func(k int) {
				for range k {
					require.NoError(t, q.Send(t.Context(), batchOf(n*size, size)))
					n++
				}
			}
			send(20)
			clear := fsys.Inject(f)
			send(100)
			assert.True(t, q.Stats().DiskFailing, "the failure is reported")
			clear()
			send(20)
			closeQ(t, q, 10*time.Second)
			assertOnce(t, seqs(0, n*size), d.events())
			st := q.Stats()
			assertLedger(t, st)
			assert.Empty(t, st.Dropped)
			assert.False(t, st.DiskFailing, "cleared without a restart")
			assert.Equal(t, n*size, d.encoded, "each event encoded once")
		})
	}
}

// TestRequestsDamagedSpool is TestDamagedSpool with requests: a flipped
// bit in the spooled backlog costs the record it hit, counted; the rest is
// delivered in order after a restart.
func TestRequestsDamagedSpool(t *testing.T) {
	dir := t.TempDir()
	d := &reqDest{dest: &dest{down: true}}
	q, err := delivery.New(d, delivery.Config{Dir: dir})
	require.NoError(t, err)
	for i := range 20 {
		require.NoError(t, q.Send(t.Context(), batchOf(i*10, 10)))
	}
	require.NoError(t, q.Close(t.Context()))
	segs, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	require.NoError(t, err)
	require.Len(t, segs, 1)
	info, err := os.Stat(segs[0])
	require.NoError(t, err)
	require.NoError(t, spooltest.FlipBit(segs[0], info.Size()/2, 2))

	d.set(func(d *dest) { d.down = false })
	q = start(t, d, delivery.Config{Dir: dir})
	assert.Equal(t, int64(200), q.Stats().Recovered)
	closeQ(t, q, 10*time.Second)
	got := d.events()
	st := q.Stats()
	assert.Equal(t, int64(10), st.Dropped[relaykit.ReasonSpoolCorrupt], "one batch lost")
	assert.Len(t, got, 190)
	assertSubsequence(t, seqs(0, 200), got)
	assertLedger(t, st)
}

// TestRequestsOfAnotherSink: a spool of requests left for a sink that
// cannot send them (the destination's type changed) costs their events,
// counted, and does not stop the queue.
func TestRequestsOfAnotherSink(t *testing.T) {
	dir := t.TempDir()
	rd := &reqDest{dest: &dest{down: true}}
	q, err := delivery.New(rd, delivery.Config{Dir: dir})
	require.NoError(t, err)
	require.NoError(t, q.Send(t.Context(), batchOf(0, 10)))
	require.NoError(t, q.Close(t.Context()))

	d := &dest{}
	q = start(t, d, delivery.Config{Dir: dir})
	require.NoError(t, q.Send(t.Context(), batchOf(10, 10)))
	closeQ(t, q, 10*time.Second)
	assertOnce(t, seqs(10, 20), d.events())
	st := q.Stats()
	assert.Equal(t, int64(10), st.Dropped[relaykit.ReasonRejected])
	assertLedger(t, st)
}
