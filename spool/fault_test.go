package spool_test

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/testtool"
	"github.com/relaykit/relaykit/spool"
	"github.com/relaykit/relaykit/spool/spooltest"
)

// spooled appends batches 0..n-1 of 5 events each and returns their IDs.
func spooled(t *testing.T, s *spool.Spool, n int) []spool.RecordID {
	t.Helper()
	ids := make([]spool.RecordID, n)
	for i := range n {
		ids[i] = app(t, s, numbered(i, 5))
	}
	return ids
}

func without(all []int, drop ...int) []int {
	var out []int
next:
	for _, v := range all {
		for _, d := range drop {
			if v == d {
				continue next
			}
		}
		out = append(out, v)
	}
	return out
}

// TestSpoolDamage damages a closed spool as disks and power losses do and
// checks, after reopening, what is replayed and what is counted: a
// damaged record costs itself, a damaged page the records it touched, a
// missing segment that segment, never more.
func TestSpoolDamage(t *testing.T) {
	const n = 12 // batches 0..11, four segments of three
	type result struct {
		lost                         []int // batches not replayed
		corrupt, lostEvents, missing int64
		torn                         bool
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string, s *spool.Spool, ids []spool.RecordID)
		want   result
	}{
		{"bit flip in a payload of the newest segment", func(t *testing.T, dir string, s *spool.Spool, ids []spool.RecordID) {
			flip(t, s, ids[10], 40)
		}, result{lost: []int{10}, corrupt: 1, lostEvents: 5}},
		{"bit flip in a payload of a sealed segment", func(t *testing.T, dir string, s *spool.Spool, ids []spool.RecordID) {
			flip(t, s, ids[4], 60)
		}, result{lost: []int{4}, corrupt: 1, lostEvents: 5}},
		{"bit flip in a record header", func(t *testing.T, dir string, s *spool.Spool, ids []spool.RecordID) {
			flip(t, s, ids[7], 5) // the length
		}, result{lost: []int{7}, corrupt: 1}}, // events of a destroyed header are unknown
		{"zeroed page across records", func(t *testing.T, dir string, s *spool.Spool, ids []spool.RecordID) {
			// From the middle of 3's payload to the middle of 5's header.
			seg, off := spool.IDPos(ids[3])
			_, end := spool.IDPos(ids[5])
			require.NoError(t, spooltest.Zero(spool.SegPath(s, seg), off+40, end-off-20))
		}, result{lost: []int{3, 4, 5}, corrupt: 2, lostEvents: 5}}, // 3: its payload; 4-5: one damaged run
		{"truncated sealed segment", func(t *testing.T, dir string, s *spool.Spool, ids []spool.RecordID) {
			seg, off := spool.IDPos(ids[5])
			require.NoError(t, spooltest.Truncate(spool.SegPath(s, seg), off+20))
		}, result{lost: []int{5}, corrupt: 1}},
		{"torn tail of the newest segment", func(t *testing.T, dir string, s *spool.Spool, ids []spool.RecordID) {
			seg, off := spool.IDPos(ids[11])
			require.NoError(t, spooltest.Truncate(spool.SegPath(s, seg), off+40))
		}, result{lost: []int{11}, torn: true}},
		{"deleted sealed segment", func(t *testing.T, dir string, s *spool.Spool, ids []spool.RecordID) {
			seg, _ := spool.IDPos(ids[3])
			require.NoError(t, os.Remove(spool.SegPath(s, seg)))
		}, result{lost: []int{3, 4, 5}, missing: 1}},
		{"deleted first segment", func(t *testing.T, dir string, s *spool.Spool, ids []spool.RecordID) {
			seg, _ := spool.IDPos(ids[0])
			require.NoError(t, os.Remove(spool.SegPath(s, seg)))
		}, result{lost: []int{0, 1, 2}, missing: 1}},
		{"head file lost", func(t *testing.T, dir string, s *spool.Spool, ids []spool.RecordID) {
			require.NoError(t, spooltest.Zero(filepath.Join(dir, "head"), 0, 64))
		}, result{}}, // nothing acknowledged yet: replay from the first segment
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			rec := int64(len(spool.AppendRecord(nil, numbered(10, 5))))
			cfg := spool.Config{Dir: dir, SegmentBytes: 8 + 3*rec}
			s, err := spool.Open(cfg)
			require.NoError(t, err)
			ids := spooled(t, s, n)
			require.Equal(t, 4, s.Stats().Segments)
			tt.damage(t, dir, s, ids)
			require.NoError(t, s.Close())

			s, err = spool.Open(cfg)
			require.NoError(t, err)
			defer s.Close()
			open := s.Stats()
			got := replayAll(t, s)
			assert.Equal(t, without(seqs(0, n), tt.want.lost...), got)
			st := s.Stats()
			assert.Equal(t, tt.want.corrupt, st.Corrupt, "damaged records and runs")
			assert.Equal(t, tt.want.lostEvents, st.LostEvents, "events the damage cost, where known")
			assert.Equal(t, tt.want.missing, st.MissingSegments)
			assert.Equal(t, tt.want.torn, st.TornBytes > 0)
			if tt.want.corrupt > 0 {
				assert.Positive(t, st.CorruptBytes)
			}
			// The ledger: what the spool counted at open is replayed or lost.
			assert.Equal(t, open.Events, st.AckedEvents+st.LostEvents)
			assert.Zero(t, st.Events)
			// Sending resumes: new batches are appended and replayed.
			app(t, s, numbered(99, 2))
			assert.Equal(t, []int{99}, replayAll(t, s))
		})
	}
}

func flip(t *testing.T, s *spool.Spool, id spool.RecordID, at int64) {
	t.Helper()
	seg, off := spool.IDPos(id)
	require.NoError(t, spooltest.FlipBit(spool.SegPath(s, seg), off+at, 3))
}

// TestSpoolDamageWhileOpen: a record damaged after it was appended, and a
// segment removed under a running spool, cost only themselves, counted.
func TestSpoolDamageWhileOpen(t *testing.T) {
	rec := int64(len(spool.AppendRecord(nil, numbered(10, 5))))
	s, err := spool.Open(spool.Config{Dir: t.TempDir(), SegmentBytes: 8 + 3*rec})
	require.NoError(t, err)
	defer s.Close()
	ids := spooled(t, s, 9)
	flip(t, s, ids[1], 50)
	seg, _ := spool.IDPos(ids[4])
	require.NoError(t, os.Remove(spool.SegPath(s, seg)))
	assert.Equal(t, []int{0, 2, 6, 7, 8}, replayAll(t, s))
	st := s.Stats()
	assert.Equal(t, int64(1), st.Corrupt)
	assert.Equal(t, int64(1), st.MissingSegments)
	assert.Equal(t, int64(5+15), st.LostEvents, "the flipped record and the removed segment's three")
	assert.Zero(t, st.Events)
}

// TestSpoolWriteFaults fails each write of an Append in turn (ENOSPC and
// EIO, whole and torn): the failing Append returns the error with a zero
// ID and leaves nothing behind, the next Append succeeds, and every batch
// whose Append succeeded is replayed once, in order, across a reopen.
func TestSpoolWriteFaults(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
		for _, partial := range []bool{false, true} {
			for _, op := range []spooltest.Op{spooltest.OpWrite, spooltest.OpCreate} {
				name := errno.Error() + "/" + op.String()
				if partial {
					name += "/torn"
				}
				t.Run(name, func(t *testing.T) {
					fsys := &spooltest.FaultFS{}
					dir := t.TempDir()
					rec := int64(len(spool.AppendRecord(nil, numbered(10, 5))))
					cfg := spool.Config{Dir: dir, SegmentBytes: 8 + 2*rec, FS: fsys}
					s, err := spool.Open(cfg)
					require.NoError(t, err)
					var want []int
					for i := range 20 {
						var clear func()
						if i%3 == 1 {
							clear = fsys.Inject(spooltest.Fault{Op: op, Name: "*.seg", Err: errno, Partial: partial, Times: 1})
						}
						id, err := s.Append(numbered(i, 5))
						if clear != nil {
							clear()
						}
						if err != nil {
							assert.ErrorIs(t, err, errno)
							assert.True(t, id.IsZero())
							continue
						}
						want = append(want, i)
					}
					assert.Less(t, len(want), 20, "some appends failed")
					assert.Positive(t, s.Stats().WriteErrors)
					require.NoError(t, s.Close())
					s, err = spool.Open(cfg)
					require.NoError(t, err)
					defer s.Close()
					assert.Equal(t, want, replayAll(t, s))
					assert.Zero(t, s.Stats().LostEvents)
				})
			}
		}
	}
}

// TestSpoolTornWriteUnrepaired: a torn write whose repair (truncate) fails
// too seals the segment; the garbage costs nothing but its bytes.
func TestSpoolTornWriteUnrepaired(t *testing.T) {
	fsys := &spooltest.FaultFS{}
	dir := t.TempDir()
	cfg := spool.Config{Dir: dir, FS: fsys}
	s, err := spool.Open(cfg)
	require.NoError(t, err)
	app(t, s, numbered(0, 5))
	fsys.Inject(spooltest.Fault{Op: spooltest.OpWrite, Name: "*.seg", Err: syscall.EIO, Partial: true, Times: 1})
	fsys.Inject(spooltest.Fault{Op: spooltest.OpTruncate, Err: syscall.EIO, Times: 1})
	_, err = s.Append(numbered(1, 5))
	require.ErrorIs(t, err, syscall.EIO)
	app(t, s, numbered(2, 5))
	assert.Equal(t, 2, s.Stats().Segments, "a new segment after the unrepaired one")
	require.NoError(t, s.Close())
	s, err = spool.Open(cfg)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, []int{0, 2}, replayAll(t, s))
	assert.Zero(t, s.Stats().LostEvents)
}

// TestSpoolFsyncFault: a failed fsync returns the record's ID with the
// error (written, durability unknown); the record stays in the backlog, the
// segment is sealed, and later appends go to a new one.
func TestSpoolFsyncFault(t *testing.T) {
	fsys := &spooltest.FaultFS{}
	s, err := spool.Open(spool.Config{Dir: t.TempDir(), Fsync: true, FS: fsys})
	require.NoError(t, err)
	defer s.Close()
	app(t, s, numbered(0, 5))
	fsys.Inject(spooltest.Fault{Op: spooltest.OpSync, Name: "*.seg", Err: syscall.EIO, Times: 1})
	id, err := s.Append(numbered(1, 5))
	require.ErrorIs(t, err, syscall.EIO)
	assert.False(t, id.IsZero())
	app(t, s, numbered(2, 5))
	st := s.Stats()
	assert.Equal(t, int64(1), st.SyncErrors)
	assert.Equal(t, 2, st.Segments)
	assert.Equal(t, int64(3), st.Batches)
	assert.Equal(t, []int{0, 1, 2}, replayAll(t, s))
}

// TestSpoolReadFault: a read error is returned and the record read again
// next time; the third failure in a row at one record skips it, counted.
func TestSpoolReadFault(t *testing.T) {
	fsys := &spooltest.FaultFS{}
	s, err := spool.Open(spool.Config{Dir: t.TempDir(), FS: fsys})
	require.NoError(t, err)
	defer s.Close()
	spooled(t, s, 3)
	clear := fsys.Inject(spooltest.Fault{Op: spooltest.OpRead, Name: "*.seg", Err: syscall.EIO, Times: 1})
	_, err = s.Peek()
	require.ErrorIs(t, err, syscall.EIO)
	clear()
	assert.Equal(t, []int{0, 1, 2}, replayAll(t, s), "a transient error costs nothing")

	spooled(t, s, 3)
	fsys.Inject(spooltest.Fault{Op: spooltest.OpRead, Name: "*.seg", Err: syscall.EIO, Times: 3})
	for range 2 {
		_, err = s.Peek()
		require.ErrorIs(t, err, syscall.EIO)
	}
	assert.Equal(t, []int{1, 2}, replayAll(t, s), "an unreadable record is skipped on the third failure")
	st := s.Stats()
	assert.Equal(t, int64(1), st.Corrupt)
	assert.Equal(t, int64(5), st.LostEvents)
	assert.Equal(t, int64(4), st.ReadErrors)
}

// TestSpoolHeadWriteFault: a failed head write is counted and returned by
// Ack; the acknowledgement holds, and the next one writes the head again.
func TestSpoolHeadWriteFault(t *testing.T) {
	fsys := &spooltest.FaultFS{}
	dir := t.TempDir()
	cfg := spool.Config{Dir: dir, FS: fsys}
	s, err := spool.Open(cfg)
	require.NoError(t, err)
	ids := spooled(t, s, 3)
	fsys.Inject(spooltest.Fault{Op: spooltest.OpWrite, Name: "head", Err: syscall.ENOSPC, Times: 1})
	require.ErrorIs(t, s.Ack(ids[0]), syscall.ENOSPC)
	require.NoError(t, s.Ack(ids[1]))
	assert.Equal(t, int64(1), s.Stats().HeadErrors)
	require.NoError(t, s.Close())
	s, err = spool.Open(cfg)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, []int{2}, replayAll(t, s))
}

// TestSpoolDiskFull runs the spool on a real 1 MiB tmpfs: Append fails
// with ENOSPC (the spool's own limit is far away), nothing is lost, and
// once the backlog is acknowledged Append reclaims the space and works
// again without a restart.
func TestSpoolDiskFull(t *testing.T) {
	dir := testtool.Tmpfs(t, "1m")
	s, err := spool.Open(spool.Config{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	var ok []int
	var full error
	for i := 0; full == nil; i++ {
		if _, err := s.Append(numbered(i, 50)); err != nil {
			full = err
			break
		}
		ok = append(ok, i)
	}
	require.ErrorIs(t, full, syscall.ENOSPC)
	assert.NotErrorIs(t, full, spool.ErrFull)
	assert.Equal(t, ok, replayAll(t, s))
	// Everything is acknowledged: the next Append reclaims the space.
	for i := range len(ok) / 2 {
		app(t, s, numbered(1000+i, 50))
	}
	assert.Len(t, replayAll(t, s), len(ok)/2)
}

// TestSpoolHeadSlots: a torn write of the head file falls back to the
// other slot, one acknowledgement older: that batch is read again, nothing
// is lost; and generations go on rising across restarts.
func TestSpoolHeadSlots(t *testing.T) {
	dir := t.TempDir()
	cfg := spool.Config{Dir: dir}
	for round := range 3 { // restarts must not reuse generations
		s, err := spool.Open(cfg)
		require.NoError(t, err)
		ids := spooled(t, s, 3)
		require.NoError(t, s.Ack(ids[0]))
		require.NoError(t, s.Ack(ids[1]))
		require.NoError(t, s.Close())
		newest := newestSlot(t, filepath.Join(dir, "head"))
		require.NoError(t, spooltest.Zero(filepath.Join(dir, "head"), newest*32, 32))
		s, err = spool.Open(cfg)
		require.NoError(t, err)
		assert.Equal(t, []int{1, 2}, replayAll(t, s), "round %d", round)
		require.NoError(t, s.Close())
	}
}

// newestSlot returns the head file slot (0 or 1) with the higher
// generation.
func newestSlot(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Len(t, b, 64)
	gen := func(i int) uint64 { return binary.LittleEndian.Uint64(b[i*32+4:]) }
	if gen(1) > gen(0) {
		return 1
	}
	return 0
}

// TestSpoolLock: one Spool per directory, in this process or another.
func TestSpoolLock(t *testing.T) {
	dir := t.TempDir()
	s, err := spool.Open(spool.Config{Dir: dir})
	require.NoError(t, err)
	_, err = spool.Open(spool.Config{Dir: dir})
	require.ErrorIs(t, err, spool.ErrLocked)
	assert.Contains(t, err.Error(), "pid")
	require.NoError(t, s.Close())
	s, err = spool.Open(spool.Config{Dir: dir})
	require.NoError(t, err)
	require.NoError(t, s.Close())
}

// TestSpoolDiscardDoesNotWaitForReplay: a drop-oldest caller is never held
// up by a replay in progress (the callback may be a slow network send).
func TestSpoolDiscardDoesNotWaitForReplay(t *testing.T) {
	rec := int64(len(spool.AppendRecord(nil, numbered(10, 5))))
	s, err := spool.Open(spool.Config{Dir: t.TempDir(), SegmentBytes: 8 + 3*rec})
	require.NoError(t, err)
	defer s.Close()
	spooled(t, s, 9)
	inCallback, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	var got []int
	wg.Go(func() {
		_ = s.Replay(t.Context(), func(b []relaykit.Event) error {
			got = append(got, batchSeq(t, b))
			if len(got) == 1 {
				close(inCallback)
				<-release
			}
			return nil
		})
	})
	<-inCallback
	done := make(chan spool.Discarded)
	go func() {
		d, err := s.Discard()
		assert.NoError(t, err)
		done <- d
	}()
	var d spool.Discarded
	select {
	case d = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Discard waited for the replay callback")
	}
	close(release)
	wg.Wait()
	assert.Equal(t, int64(3), d.Batches, "the first segment, its record in flight included")
	assert.Equal(t, []int{0, 3, 4, 5, 6, 7, 8}, got, "batch 0 was in flight; 1 and 2 were discarded")
}

// TestSpoolReadsVersion2: a spool written by an earlier release (segment
// magic RKSPOOL2, position file RKPOS001) is read after an upgrade; new
// batches go to version 3 segments after it.
func TestSpoolReadsVersion2(t *testing.T) {
	dir := t.TempDir()
	seg := []byte("RKSPOOL2")
	for i := range 4 {
		seg = append(seg, spool.RecordV2(numbered(i, 3))...)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "00000000000000000007.seg"), seg, 0o640))
	s, err := spool.Open(spool.Config{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, int64(12), s.Stats().Events)
	app(t, s, numbered(4, 3))
	assert.Equal(t, 2, s.Stats().Segments)
	rec, err := s.Peek()
	require.NoError(t, err)
	assert.Equal(t, 0, batchSeq(t, rec.Events))
	require.NoError(t, s.Ack(rec.ID))
	assert.Equal(t, seqs(1, 5), replayAll(t, s))
	_, err = s.Peek()
	assert.ErrorIs(t, err, io.EOF)
}

// TestSpoolHeadFailsAcrossSegments: while the head file cannot be
// written, replay crosses segment boundaries without losing or repeating a
// batch; the emptied segments are removed once the head is saved again.
func TestSpoolHeadFailsAcrossSegments(t *testing.T) {
	fsys := &spooltest.FaultFS{}
	rec := int64(len(spool.AppendRecord(nil, numbered(10, 5))))
	s, err := spool.Open(spool.Config{Dir: t.TempDir(), SegmentBytes: 8 + 2*rec, FS: fsys})
	require.NoError(t, err)
	defer s.Close()
	spooled(t, s, 10)
	require.Equal(t, 5, s.Stats().Segments)
	clear := fsys.Inject(spooltest.Fault{Op: spooltest.OpWrite, Name: "head", Err: syscall.EIO})
	var got []int
	for range 10 {
		r, err := s.Peek()
		require.NoError(t, err)
		got = append(got, batchSeq(t, r.Events))
		_ = s.Ack(r.ID) // the head is not saved
	}
	assert.Equal(t, seqs(0, 10), got)
	st := s.Stats()
	assert.Zero(t, st.Corrupt)
	assert.Zero(t, st.LostEvents)
	assert.Equal(t, 5, st.Segments, "kept until the head is saved")
	clear()
	app(t, s, numbered(10, 5))
	assert.Equal(t, []int{10}, replayAll(t, s))
	assert.Equal(t, 1, s.Stats().Segments, "removed once the head was saved")
}
