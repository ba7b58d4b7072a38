package delivery_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/internal/testtool"
	"github.com/relaykit/relaykit/spool"
	"github.com/relaykit/relaykit/spool/spooltest"
)

func TestConfig(t *testing.T) {
	d := &dest{}
	for name, cfg := range map[string]delivery.Config{
		"no dir":           {},
		"bad mode":         {Dir: t.TempDir(), Mode: 7},
		"bad policy":       {Dir: t.TempDir(), Full: -1},
		"negative budget":  {Dir: t.TempDir(), RetryBudget: -1},
		"attempt > budget": {Dir: t.TempDir(), RetryBudget: time.Second, AttemptTimeout: 2 * time.Second},
	} {
		_, err := delivery.New(d, cfg)
		assert.ErrorIs(t, err, delivery.ErrInvalidConfig, name)
	}
	_, err := delivery.New(nil, delivery.Config{Dir: t.TempDir()})
	assert.ErrorIs(t, err, delivery.ErrInvalidConfig)

	dir := t.TempDir()
	q, err := delivery.New(d, delivery.Config{Dir: dir})
	require.NoError(t, err)
	_, err = delivery.New(d, delivery.Config{Dir: dir})
	require.ErrorIs(t, err, spool.ErrLocked, "one Queue per spool directory")
	closeQ(t, q, time.Second)
	assert.ErrorIs(t, q.Send(t.Context(), batchOf(0, 1)), delivery.ErrClosed)
	assert.NoError(t, q.Close(t.Context()), "Close is idempotent")
}

// TestHealthyPath: in both modes every batch is delivered once, in order;
// in WriteAhead the spool is written and acknowledged but never read.
func TestHealthyPath(t *testing.T) {
	for _, mode := range []delivery.Mode{delivery.WriteAhead, delivery.OnFailure} {
		t.Run(mode.String(), func(t *testing.T) {
			fsys := &spooltest.FaultFS{}
			// Any read of a segment would fail: write-ahead must not read
			// back what it holds in memory.
			fsys.Inject(spooltest.Fault{Op: spooltest.OpRead, Name: "*.seg", Err: syscall.EIO})
			d := &dest{}
			// Memory never overflows here, so nothing needs reading back
			// however the goroutines are scheduled.
			q := start(t, d, delivery.Config{Mode: mode, FS: fsys, MemoryBatches: 1000})
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
			if mode == delivery.WriteAhead {
				assert.Equal(t, int64(batches), st.Spool.Appended, "every batch written ahead")
				assert.Equal(t, int64(batches), st.Spool.Acked, "and acknowledged after delivery")
			} else {
				assert.Zero(t, st.Spool.Appended, "nothing spooled while healthy")
			}
		})
	}
}

// TestOutage: a destination down for 6 s while batches arrive every 20 ms,
// with the default timings. Sends never wait; everything arrives once, in
// order; delivery resumes within 2 s of the destination's return.
func TestOutage(t *testing.T) {
	for _, mode := range []delivery.Mode{delivery.WriteAhead, delivery.OnFailure} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			d := &dest{}
			q := start(t, d, delivery.Config{Mode: mode})
			const size = 20
			var slowest time.Duration
			n := 0
			send := func(until time.Time) {
				for time.Now().Before(until) {
					t0 := time.Now()
					require.NoError(t, q.Send(t.Context(), batchOf(n*size, size)))
					slowest = max(slowest, time.Since(t0))
					n++
					time.Sleep(20 * time.Millisecond) // the offered rate
				}
			}
			send(time.Now().Add(time.Second))
			d.set(func(d *dest) { d.down = true })
			send(time.Now().Add(6 * time.Second))
			assert.False(t, q.Stats().Healthy)
			assert.Positive(t, q.Stats().SpoolEvents, "the backlog is on disk")
			before := len(d.events())
			d.firstOK.Store(0)
			up := time.Now()
			d.set(func(d *dest) { d.down = false })
			send(time.Now().Add(2 * time.Second))
			closeQ(t, q, 20*time.Second)
			assertOnce(t, seqs(0, n*size), d.events())
			assert.Greater(t, len(d.events()), before)
			resumed := time.Duration(d.firstOK.Load() - up.UnixNano())
			assert.Less(t, resumed, 2*time.Second, "delivery resumed %v after recovery", resumed)
			assert.Less(t, slowest, 500*time.Millisecond, "Send never waits for the network")
			st := q.Stats()
			assertLedger(t, st)
			assert.Empty(t, st.Dropped)
			t.Logf("%d events; resumed %v after recovery; slowest Send %v", n*size, resumed, slowest)
		})
	}
}

// TestPartialFailures: only the events a sink reports undelivered are sent
// again, and those it refuses permanently are dead-lettered once each.
func TestPartialFailures(t *testing.T) {
	d := &dest{half: true, reject: func(seq int) bool { return seq%10 == 3 }}
	var mu sync.Mutex
	var dead []int
	q := start(t, d, delivery.Config{DeadLetter: func(_ context.Context, evs []relaykit.Event, reason string, _ error) error {
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, "rejected", reason)
		for i := range evs {
			dead = append(dead, seqOf(&evs[i]))
		}
		return nil
	}})
	for i := range 20 {
		require.NoError(t, q.Send(t.Context(), batchOf(i*10, 10)))
	}
	closeQ(t, q, 10*time.Second)
	var want, wantDead []int
	for i := range 200 {
		if i%10 == 3 {
			wantDead = append(wantDead, i)
		} else {
			want = append(want, i)
		}
	}
	got := d.events()
	assert.ElementsMatch(t, want, got, "each delivered once")
	assert.Equal(t, wantDead, dead, "each rejected event dead-lettered once")
	st := q.Stats()
	assert.Equal(t, int64(len(wantDead)), st.DeadLettered)
	assertLedger(t, st)
}

// TestHungDestination: a destination that accepts connections but never
// answers costs the retry budget, not the sink's own timeout: Sends never
// wait, batches go to the spool, and delivery resumes within 2 s once it
// answers again.
func TestHungDestination(t *testing.T) {
	d := &dest{}
	q := start(t, d, delivery.Config{})
	hang := make(chan struct{})
	d.set(func(d *dest) { d.hang = hang })
	const size = 10
	n := 0
	var slowest time.Duration
	for deadline := time.Now().Add(6 * time.Second); time.Now().Before(deadline); n++ {
		t0 := time.Now()
		require.NoError(t, q.Send(t.Context(), batchOf(n*size, size)))
		slowest = max(slowest, time.Since(t0))
		time.Sleep(20 * time.Millisecond)
	}
	st := q.Stats()
	assert.False(t, st.Healthy, "marked unhealthy within the budget")
	assert.Positive(t, st.SpoolEvents)
	up := time.Now()
	d.set(func(d *dest) { d.hang = nil })
	close(hang)
	eventually(t, 5*time.Second, func() bool { return d.firstOK.Load() != 0 }, "no delivery after the destination answered")
	resumed := time.Duration(d.firstOK.Load() - up.UnixNano())
	closeQ(t, q, 20*time.Second)
	assertOnce(t, seqs(0, n*size), d.events())
	assert.Less(t, resumed, 2*time.Second, "resumed %v after the destination answered", resumed)
	assert.Less(t, slowest, 500*time.Millisecond)
	assertLedger(t, q.Stats())
}

// TestFullPolicies: a healthy destination slower than the input, with a
// small spool: Block waits (back-pressure) and drops nothing; DropOldest
// never waits for the sender and counts what it discards; DropNewest
// refuses batches with ErrDropped and counts them. In every case what is
// delivered is in order and the ledger balances.
func TestFullPolicies(t *testing.T) {
	for _, full := range []delivery.FullPolicy{delivery.Block, delivery.DropOldest, delivery.DropNewest} {
		t.Run(full.String(), func(t *testing.T) {
			t.Parallel()
			d := &dest{delay: 15 * time.Millisecond}
			var hookMu sync.Mutex
			hooked := map[string]int64{}
			q := start(t, d, delivery.Config{Name: "slow", Full: full, MaxBytes: 256 << 10, SegmentBytes: 64 << 10, MemoryBatches: 2,
				Hooks: delivery.Hooks{OnDrop: func(name, reason string, n int) {
					assert.Equal(t, "slow", name)
					hookMu.Lock()
					hooked[reason] += int64(n)
					hookMu.Unlock()
				}}})
			const size = 40
			var accepted []int
			var slowest time.Duration
			refused := 0
			for i := range 400 { // ~3.5 MB offered against a 256 KiB spool
				t0 := time.Now()
				err := q.Send(t.Context(), batchOf(i*size, size))
				slowest = max(slowest, time.Since(t0))
				if err != nil {
					require.ErrorIs(t, err, delivery.ErrDropped)
					refused++
					continue
				}
				accepted = append(accepted, seqs(i*size, (i+1)*size)...)
				time.Sleep(time.Millisecond)
			}
			closeQ(t, q, 30*time.Second)
			got := d.events()
			st := q.Stats()
			assertLedger(t, st)
			assert.Zero(t, st.Pending)
			switch full {
			case delivery.Block:
				assertOnce(t, accepted, got)
				assert.Empty(t, st.Dropped)
				assert.Greater(t, slowest, 10*time.Millisecond, "Send waited for room")
			case delivery.DropOldest:
				assert.Zero(t, refused)
				assert.Positive(t, st.Dropped[relaykit.ReasonSpoolOldest])
				assert.Equal(t, int64(len(accepted)), int64(len(got))+st.Dropped[relaykit.ReasonSpoolOldest])
				assertSubsequence(t, accepted, got)
				assert.Less(t, slowest, 200*time.Millisecond, "drop_oldest never waits for the sender")
			case delivery.DropNewest:
				assert.Positive(t, refused)
				assert.Equal(t, int64(refused*size), st.Dropped[relaykit.ReasonSpoolFull])
				assertOnce(t, accepted, got)
			}
			hookMu.Lock()
			assert.Equal(t, st.Dropped, hooked, "OnDrop saw every drop, by reason")
			hookMu.Unlock()
			t.Logf("%s: delivered %d, dropped %v, refused batches %d, slowest Send %v", full, len(got), st.Dropped, refused, slowest)
		})
	}
}

// assertSubsequence checks that got is a subsequence of want with no
// repeats: in order, each at most once.
func assertSubsequence(t *testing.T, want, got []int) {
	t.Helper()
	j := 0
	for _, g := range got {
		for j < len(want) && want[j] != g {
			j++
		}
		if !assert.Less(t, j, len(want), "event %d out of order or repeated", g) {
			return
		}
		j++
	}
}

// TestDiskFaults fails the spool's disk in every way spooltest can, for
// a while, under a healthy destination: nothing is dropped, every Send
// returns nil, everything arrives once in order, the failure is reported
// and then clears without a restart.
func TestDiskFaults(t *testing.T) {
	faults := map[string]spooltest.Fault{
		"ENOSPC on write":       {Op: spooltest.OpWrite, Name: "*.seg", Err: syscall.ENOSPC},
		"EIO on write":          {Op: spooltest.OpWrite, Name: "*.seg", Err: syscall.EIO},
		"torn write":            {Op: spooltest.OpWrite, Name: "*.seg", Err: syscall.ENOSPC, Partial: true},
		"fsync error":           {Op: spooltest.OpSync, Name: "*.seg", Err: syscall.EIO},
		"segment creation":      {Op: spooltest.OpCreate, Name: "*.seg", Err: syscall.ENOSPC},
		"every third write EIO": {Op: spooltest.OpWrite, Err: syscall.EIO, After: 2},
		"head file write":       {Op: spooltest.OpWrite, Name: "head", Err: syscall.EIO},
	}
	for name, f := range faults {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fsys := &spooltest.FaultFS{}
			d := &dest{}
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
			if f.Name == "head" {
				// Acknowledgements fail on the sender, after delivery.
				eventually(t, 10*time.Second, func() bool { return q.Stats().Spool.HeadErrors > 0 }, "no head write failed")
			} else {
				assert.True(t, q.Stats().DiskFailing, "the failure is reported")
			}
			clear()
			send(20)
			closeQ(t, q, 10*time.Second)
			assertOnce(t, seqs(0, n*size), d.events())
			st := q.Stats()
			assertLedger(t, st)
			assert.Empty(t, st.Dropped)
			assert.False(t, st.DiskFailing, "cleared without a restart")
			assert.Positive(t, st.DiskErrors)
		})
	}
}

// TestDiskFull: the spool on a real 2 MiB file system, 20 MiB of events,
// a healthy destination: Sends wait for delivery instead of failing,
// nothing is dropped.
func TestDiskFull(t *testing.T) {
	dir := testtool.Tmpfs(t, "2m")
	d := &dest{}
	q := start(t, d, delivery.Config{Dir: filepath.Join(dir, "spool")})
	const size = 200
	payload := make([]byte, 300)
	n := 0
	for range 350 { // 350 × 200 × ~330 B ≈ 23 MB
		b := batchOf(n*size, size)
		for i := range b {
			b[i].Raw = append(append(b[i].Raw, ' '), payload...)
		}
		require.NoError(t, q.Send(t.Context(), b))
		n++
	}
	closeQ(t, q, 10*time.Second)
	got := d.events()
	assertOnce(t, seqs(0, n*size), got)
	st := q.Stats()
	assertLedger(t, st)
	assert.Empty(t, st.Dropped)
	assert.Positive(t, st.DiskErrors, "the disk filled up")
	t.Logf("disk errors %d; spool appended %d batches of %d", st.DiskErrors, st.Spool.Appended, n)
}

// TestDiskFailsDuringOutage: destination down and disk failing at once:
// nothing can take the batches, so Send pushes back (waits, then gives up
// with its context) and nothing accepted is lost; when the destination
// returns everything accepted arrives in order.
func TestDiskFailsDuringOutage(t *testing.T) {
	fsys := &spooltest.FaultFS{}
	d := &dest{}
	q := start(t, d, delivery.Config{FS: fsys, MemoryBatches: 4})
	d.set(func(d *dest) { d.down = true })
	clear := fsys.Inject(spooltest.Fault{Op: spooltest.OpWrite, Name: "*.seg", Err: syscall.EIO})
	var accepted []int
	refused := 0
	for i := range 30 {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		err := q.Send(ctx, batchOf(i*10, 10))
		cancel()
		if err != nil {
			require.ErrorIs(t, err, context.DeadlineExceeded)
			refused++
			continue
		}
		accepted = append(accepted, seqs(i*10, i*10+10)...)
	}
	assert.Equal(t, 30, refused, "no batch is acknowledged while neither disk nor destination takes it")
	clear()
	d.set(func(d *dest) { d.down = false })
	closeQ(t, q, 20*time.Second)
	st := q.Stats()
	assertLedger(t, st)
	assert.Empty(t, st.Dropped)
	// Batches whose Send gave up may still have been delivered (they were
	// queued): at least once, in order.
	got := d.events()
	assertSubsequence(t, seqs(0, 300), got)
	assert.Empty(t, accepted)
}

// TestDamagedSpool: the destination is down, the spool holds the backlog,
// the process stops, a record is damaged on disk; after a restart the
// backlog is delivered in order except that record, whose events are
// counted as relaykit.ReasonSpoolCorrupt.
func TestDamagedSpool(t *testing.T) {
	dir := t.TempDir()
	d := &dest{down: true}
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

// TestCloseDrains: a graceful stop delivers the spool's backlog while the
// destination is healthy.
func TestCloseDrains(t *testing.T) {
	d := &dest{down: true}
	q := start(t, d, delivery.Config{})
	for i := range 50 {
		require.NoError(t, q.Send(t.Context(), batchOf(i*10, 10)))
	}
	eventually(t, 5*time.Second, func() bool { return !q.Stats().Healthy }, "not marked unhealthy")
	d.set(func(d *dest) { d.down = false })
	eventually(t, 5*time.Second, func() bool { return q.Stats().Healthy }, "not healthy again")
	closeQ(t, q, 10*time.Second)
	assertOnce(t, seqs(0, 500), d.events())
	assert.Zero(t, q.Stats().SpoolEvents)
}

// TestCloseDeadline: at the deadline, with the destination hanging, Close
// returns; in OnFailure what memory held is spooled and the next Queue on
// the directory delivers it.
func TestCloseDeadline(t *testing.T) {
	dir := t.TempDir()
	d := &dest{hang: make(chan struct{})}
	q := start(t, d, delivery.Config{Dir: dir, Mode: delivery.OnFailure})
	for i := range 5 {
		require.NoError(t, q.Send(t.Context(), batchOf(i*10, 10)))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	require.NoError(t, q.Close(ctx))
	assert.Less(t, time.Since(t0), 2*time.Second)
	st := q.Stats()
	assert.Equal(t, int64(50), st.SpoolEvents, "memory spooled at shutdown")
	assertLedger(t, st)

	d2 := &dest{}
	q2 := start(t, d2, delivery.Config{Dir: dir, Mode: delivery.OnFailure})
	closeQ(t, q2, 10*time.Second)
	assertOnce(t, seqs(0, 50), d2.events())
}

// TestSendBlockedReleasedByClose: a Send waiting for room returns
// ErrClosed when the Queue closes.
func TestSendBlockedReleasedByClose(t *testing.T) {
	d := &dest{down: true}
	q, err := delivery.New(d, delivery.Config{Dir: t.TempDir(), MaxBytes: 64 << 10, SegmentBytes: 64 << 10})
	require.NoError(t, err)
	var last error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			if last = q.Send(context.Background(), batchOf(i*10, 10)); last != nil {
				return
			}
		}
	}()
	eventually(t, 5*time.Second, func() bool { return q.Stats().Spool.Refused > 0 }, "spool never full")
	require.NoError(t, q.Close(t.Context()))
	<-done
	assert.ErrorIs(t, last, delivery.ErrClosed)
}

var _ = errors.New

// TestEveryWriteFails runs the same 30 batches through a Queue again and
// again, failing a different one of the disk writes (and, with Fsync, of
// the fsyncs) each time, with ENOSPC and with EIO: whichever write fails —
// a segment's creation, a record, the head file — nothing is dropped, every
// event arrives once in order, and the disk works again for the next one.
func TestEveryWriteFails(t *testing.T) {
	run := func(t *testing.T, fsys *spooltest.FaultFS, fsync bool) []int {
		d := &dest{}
		q, err := delivery.New(d, delivery.Config{Dir: t.TempDir(), FS: fsys, Fsync: fsync, SegmentBytes: 64 << 10, MemoryBatches: 4})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- q.Run(ctx) }()
		for i := range 30 {
			require.NoError(t, q.Send(t.Context(), batchOf(i*40, 40)))
		}
		closeQ(t, q, 10*time.Second)
		cancel()
		<-done
		st := q.Stats()
		assertLedger(t, st)
		assert.Empty(t, st.Dropped)
		return d.events()
	}
	for _, tc := range []struct {
		op    spooltest.Op
		fsync bool
	}{{spooltest.OpWrite, false}, {spooltest.OpSync, true}} {
		clean := &spooltest.FaultFS{}
		want := run(t, clean, tc.fsync)
		n := clean.Count(tc.op)
		require.Positive(t, n)
		for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
			for k := range n {
				fsys := &spooltest.FaultFS{}
				fsys.Inject(spooltest.Fault{Op: tc.op, After: k, Times: 1, Err: errno})
				got := run(t, fsys, tc.fsync)
				if !assert.Equal(t, want, got, "%v %v failing at operation %d of %d", tc.op, errno, k+1, n) {
					return
				}
			}
		}
		t.Logf("%v: each of %d operations failed in turn, twice", tc.op, n)
	}
}
