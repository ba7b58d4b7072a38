package spool_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/spool"
)

// numbered returns a batch of n events whose Raw messages are "seq-i".
func numbered(seq, n int) []relaykit.Event {
	batch := make([]relaykit.Event, n)
	for i := range batch {
		e := &batch[i]
		e.ReceiveTime = int64(seq)*1000 + int64(i)
		e.Time = -int64(seq)
		e.Host = []byte("host")
		e.Raw = fmt.Appendf(nil, "%d-%d", seq, i)
		e.SetField("seq", strconv.AppendInt(nil, int64(seq), 10))
		e.SetPriority(3, 4)
	}
	return batch
}

// batchSeq returns the sequence number of a batch made by numbered and
// checks its events.
func batchSeq(t *testing.T, batch []relaykit.Event) int {
	t.Helper()
	require.NotEmpty(t, batch)
	v, ok := batch[0].Field("seq")
	require.True(t, ok)
	seq, err := strconv.Atoi(string(v))
	require.NoError(t, err)
	for i := range batch {
		require.Equal(t, fmt.Sprintf("%d-%d", seq, i), string(batch[i].Raw))
	}
	return seq
}

// app appends batch and requires success.
func app(t testing.TB, s *spool.Spool, batch []relaykit.Event) spool.RecordID {
	t.Helper()
	id, err := s.Append(batch)
	require.NoError(t, err)
	require.False(t, id.IsZero())
	return id
}

// replayAll replays the whole spool and returns the batch numbers.
func replayAll(t *testing.T, s *spool.Spool) []int {
	t.Helper()
	var got []int
	require.NoError(t, s.Replay(t.Context(), func(batch []relaykit.Event) error {
		got = append(got, batchSeq(t, batch))
		return nil
	}))
	return got
}

func seqs(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

func TestSpoolRoundTrip(t *testing.T) {
	s, err := spool.Open(spool.Config{Dir: t.TempDir(), SegmentBytes: 1 << 10})
	require.NoError(t, err)
	defer s.Close()
	want := numbered(7, 3)
	want[1].Flags |= relaykit.FlagTruncated
	want[2].Fields = nil
	want[2].Source, want[2].SourceType, want[2].Index = []byte("src"), []byte("st"), []byte("idx")
	app(t, s, want)
	for i := range 20 {
		app(t, s, numbered(100+i, 5))
	}
	st := s.Stats()
	assert.Equal(t, int64(21), st.Appended)
	assert.Equal(t, int64(103), st.AppendedEvents)
	assert.Greater(t, st.Segments, 1, "small segments rotate")

	first := true
	var got []int
	require.NoError(t, s.Replay(t.Context(), func(batch []relaykit.Event) error {
		if first {
			first = false
			require.Len(t, batch, 3)
			for i := range want {
				assert.Equal(t, want[i].ReceiveTime, batch[i].ReceiveTime)
				assert.Equal(t, want[i].Time, batch[i].Time)
				assert.Equal(t, want[i].Priority, batch[i].Priority)
				assert.Equal(t, want[i].Flags, batch[i].Flags)
				assert.Equal(t, string(want[i].Host), string(batch[i].Host))
				assert.Equal(t, string(want[i].Source), string(batch[i].Source))
				assert.Equal(t, string(want[i].SourceType), string(batch[i].SourceType))
				assert.Equal(t, string(want[i].Index), string(batch[i].Index))
				assert.Equal(t, string(want[i].Raw), string(batch[i].Raw))
				assert.Len(t, batch[i].Fields, len(want[i].Fields))
			}
			return nil
		}
		got = append(got, batchSeq(t, batch))
		return nil
	}))
	assert.Equal(t, seqs(100, 120), got)
	st = s.Stats()
	assert.Equal(t, int64(21), st.Acked)
	assert.Equal(t, int64(103), st.AckedEvents)
	assert.Equal(t, 1, st.Segments, "an emptied spool keeps only its write segment")
	assert.Zero(t, st.Batches)

	// Appending after an emptied spool continues.
	app(t, s, numbered(200, 1))
	assert.Equal(t, []int{200}, replayAll(t, s))
}

func TestSpoolReplayFailureKeepsBatch(t *testing.T) {
	s, err := spool.Open(spool.Config{Dir: t.TempDir()})
	require.NoError(t, err)
	defer s.Close()
	for i := range 3 {
		app(t, s, numbered(i, 2))
	}
	boom := errors.New("destination down")
	calls := 0
	err = s.Replay(t.Context(), func(batch []relaykit.Event) error {
		calls++
		if batchSeq(t, batch) == 1 {
			return boom
		}
		return nil
	})
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, 2, calls)
	assert.Equal(t, []int{1, 2}, replayAll(t, s))
}

func TestSpoolRestartResumes(t *testing.T) {
	dir := t.TempDir()
	cfg := spool.Config{Dir: dir, SegmentBytes: 300}
	s, err := spool.Open(cfg)
	require.NoError(t, err)
	for i := range 10 {
		app(t, s, numbered(i, 2))
	}
	stop := errors.New("stop")
	var got []int
	err = s.Replay(t.Context(), func(batch []relaykit.Event) error {
		seq := batchSeq(t, batch)
		if seq == 6 {
			return stop
		}
		got = append(got, seq)
		return nil
	})
	require.ErrorIs(t, err, stop)
	require.NoError(t, s.Close())
	assert.Equal(t, seqs(0, 6), got)

	s, err = spool.Open(cfg)
	require.NoError(t, err)
	defer s.Close()
	app(t, s, numbered(10, 1))
	assert.Equal(t, seqs(6, 11), replayAll(t, s))
}

func TestSpoolTornTailIsCut(t *testing.T) {
	tests := []struct {
		name string
		// damage changes the newest segment file of size n.
		damage func(t *testing.T, path string, n int64)
		want   []int
		torn   bool
	}{
		{"partial last record", func(t *testing.T, path string, n int64) {
			require.NoError(t, os.Truncate(path, n-5))
		}, []int{0, 1}, true},
		{"only the header of a record", func(t *testing.T, path string, n int64) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.Write([]byte{200, 0, 0, 0, 1, 2})
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}, []int{0, 1, 2}, true},
		{"garbage after the last record", func(t *testing.T, path string, n int64) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			_, err = f.Write([]byte("\x10\x00\x00\x00garbagegarbagegarbage"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}, []int{0, 1, 2}, true},
		{"intact", func(*testing.T, string, int64) {}, []int{0, 1, 2}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := spool.Config{Dir: dir}
			s, err := spool.Open(cfg)
			require.NoError(t, err)
			for i := range 3 {
				app(t, s, numbered(i, 3))
			}
			require.NoError(t, s.Close())
			segs, err := filepath.Glob(filepath.Join(dir, "*.seg"))
			require.NoError(t, err)
			require.Len(t, segs, 1)
			info, err := os.Stat(segs[0])
			require.NoError(t, err)
			tt.damage(t, segs[0], info.Size())

			s, err = spool.Open(cfg)
			require.NoError(t, err)
			defer s.Close()
			assert.Equal(t, tt.torn, s.Stats().TornBytes > 0)
			// New appends after the cut are readable.
			app(t, s, numbered(9, 1))
			assert.Equal(t, append(tt.want, 9), replayAll(t, s))
			assert.Zero(t, s.Stats().Corrupt)
		})
	}
}

func TestSpoolFull(t *testing.T) {
	dir := t.TempDir()
	size := int64(len("RKSPOOL3")) // segment header
	for i := range 3 {
		size += int64(len(spool.AppendRecord(nil, numbered(i, 10))))
	}
	s, err := spool.Open(spool.Config{Dir: dir, MaxBytes: size})
	require.NoError(t, err)
	defer s.Close()
	for i := range 3 {
		app(t, s, numbered(i, 10))
	}
	_, err = s.Append(numbered(3, 10))
	require.ErrorIs(t, err, spool.ErrFull)
	assert.Equal(t, int64(1), s.Stats().Refused)
	assert.Equal(t, seqs(0, 3), replayAll(t, s), "unread data is kept")
	app(t, s, numbered(4, 10)) // room again after replay
	assert.Equal(t, []int{4}, replayAll(t, s))
}

func TestSpoolConcurrentAppend(t *testing.T) {
	s, err := spool.Open(spool.Config{Dir: t.TempDir(), SegmentBytes: 4 << 10})
	require.NoError(t, err)
	defer s.Close()
	const writers, per = 4, 200
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range per {
				if _, err := s.Append(numbered(g*per+i, 3)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	// Replay while appending.
	var got []int
	ctx := t.Context()
	for range 5 {
		require.NoError(t, s.Replay(ctx, func(batch []relaykit.Event) error {
			got = append(got, batchSeq(t, batch))
			return nil
		}))
	}
	wg.Wait()
	got = append(got, replayAll(t, s)...)
	require.Len(t, got, writers*per)
	last := make([]int, writers)
	for g := range last {
		last[g] = -1
	}
	for _, seq := range got {
		g := seq / per
		assert.Greater(t, seq, last[g], "per-writer order")
		last[g] = seq
	}
}

func TestSpoolCloseAndConfig(t *testing.T) {
	_, err := spool.Open(spool.Config{})
	require.ErrorIs(t, err, spool.ErrInvalidConfig)
	_, err = spool.Open(spool.Config{Dir: t.TempDir(), MaxBytes: -1})
	require.ErrorIs(t, err, spool.ErrInvalidConfig)

	s, err := spool.Open(spool.Config{Dir: t.TempDir(), Fsync: true})
	require.NoError(t, err)
	app(t, s, numbered(1, 1))
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	_, err = s.Append(numbered(2, 1))
	assert.ErrorIs(t, err, spool.ErrClosed)
	assert.ErrorIs(t, s.Replay(t.Context(), func([]relaykit.Event) error { return nil }), spool.ErrClosed)
}

func TestSpoolReplayHonoursContext(t *testing.T) {
	s, err := spool.Open(spool.Config{Dir: t.TempDir()})
	require.NoError(t, err)
	defer s.Close()
	app(t, s, numbered(1, 1))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, s.Replay(ctx, func([]relaykit.Event) error { return nil }), context.Canceled)
	assert.Equal(t, []int{1}, replayAll(t, s))
}

const crashChildEnv = "RELAYKIT_SPOOL_CRASH_DIR"

// TestSpoolCrashChild is the child of TestSpoolCrash: it appends numbered
// batches forever and prints "ack N" after each Append returned nil.
func TestSpoolCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("run by TestSpoolCrash")
	}
	start, err := strconv.Atoi(os.Getenv(crashChildEnv + "_START"))
	require.NoError(t, err)
	s, err := spool.Open(spool.Config{Dir: dir, SegmentBytes: 64 << 10})
	require.NoError(t, err)
	for seq := start; ; seq++ {
		if _, err := s.Append(numbered(seq, 1+seq%7)); err != nil {
			fmt.Fprintf(os.Stdout, "error %v\n", err)
			os.Exit(3)
		}
		// Unbuffered: the parent sees an ack only for a returned Append.
		fmt.Fprintf(os.Stdout, "ack %d\n", seq)
	}
}

// TestSpoolCrash kills a child process appending to the spool with
// SIGKILL, mid-stream, twice, and checks that every acknowledged batch is
// replayed exactly once and in order: at most the one batch that was
// written but not yet acknowledged may appear beyond the acknowledged ones.
func TestSpoolCrash(t *testing.T) {
	dir := t.TempDir()
	acked := -1
	var want []int // acknowledged batch numbers, in order
	extra := map[int]bool{}
	for round := range 2 {
		start := acked + 1 + len(extra) // skip numbers possibly written
		lastAck := runCrashChild(t, dir, start, 300+round*200)
		require.GreaterOrEqual(t, lastAck, start)
		want = append(want, seqs(start, lastAck+1)...)
		extra[lastAck+1] = true // may have been written, not acknowledged
		acked = lastAck
	}
	s, err := spool.Open(spool.Config{Dir: dir, SegmentBytes: 64 << 10})
	require.NoError(t, err)
	defer s.Close()
	got := replayAll(t, s)
	var gotAcked []int
	for _, seq := range got {
		if !extra[seq] {
			gotAcked = append(gotAcked, seq)
		}
	}
	assert.Equal(t, want, gotAcked, "every acknowledged batch exactly once, in order")
	assert.LessOrEqual(t, len(got)-len(gotAcked), len(extra))
	assert.Zero(t, s.Stats().Corrupt)
	t.Logf("replayed %d batches, %d unacknowledged, %d torn bytes cut", len(got), len(got)-len(gotAcked), s.Stats().TornBytes)
}

// runCrashChild starts the child, waits for at least n acks, kills it with
// SIGKILL and returns the last acknowledged batch number.
func runCrashChild(t *testing.T, dir string, start, n int) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSpoolCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, crashChildEnv+"_START="+strconv.Itoa(start))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	last, count := start-1, 0
	killed := false
	for sc.Scan() {
		line := sc.Text()
		seqText, ok := strings.CutPrefix(line, "ack ")
		if !ok {
			continue // test framework output
		}
		seq, err := strconv.Atoi(seqText)
		require.NoError(t, err)
		require.Equal(t, last+1, seq)
		last = seq
		count++
		if count == n && !killed {
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			killed = true
			// Keep reading: acks already printed before the kill count.
		}
	}
	err = cmd.Wait()
	require.True(t, killed, "child exited by itself: %v", err)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	ws, ok := ee.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	require.Equal(t, syscall.SIGKILL, ws.Signal())
	return last
}

func FuzzDecodeBatch(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	rec := spool.AppendRecord(nil, numbered(1, 3))
	f.Add(rec[spool.RecordHeader:])
	f.Add(spool.AppendRecord(nil, []relaykit.Event{{}})[spool.RecordHeader:])
	f.Fuzz(func(t *testing.T, p []byte) {
		events, err := spool.DecodeBatch(p)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes and decodes to the same events.
		again, err := spool.DecodeBatch(spool.AppendRecord(nil, events)[spool.RecordHeader:])
		require.NoError(t, err)
		require.Len(t, again, len(events))
		for i := range events {
			assert.Equal(t, events[i].ReceiveTime, again[i].ReceiveTime)
			assert.Equal(t, string(events[i].Raw), string(again[i].Raw))
			assert.Len(t, again[i].Fields, len(events[i].Fields))
		}
	})
}

func FuzzSpoolOpen(f *testing.F) {
	// Arbitrary bytes as the only segment: opening and replaying never
	// panics, and replay stops at the cut.
	seg := append([]byte("RKSPOOL4"), spool.AppendRecord(nil, numbered(1, 2))...)
	f.Add(seg)
	f.Add(append(seg, 1, 2, 3))
	f.Add(append(seg, seg[8:]...))
	f.Add(append([]byte("RKSPOOL2"), spool.RecordV2(numbered(1, 2))...))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "00000000000000000001.seg"), data, 0o640))
		s, err := spool.Open(spool.Config{Dir: dir})
		require.NoError(t, err)
		defer s.Close()
		err = s.Replay(t.Context(), func([]relaykit.Event) error { return nil })
		assert.NoError(t, err)
		app(t, s, numbered(5, 1))
		var last int
		require.NoError(t, s.Replay(t.Context(), func(b []relaykit.Event) error { last = batchSeq(t, b); return nil }))
		assert.Equal(t, 5, last)
	})
}

const replayChildEnv = "RELAYKIT_SPOOL_REPLAY_DIR"

// TestSpoolReplayCrashChild is the child of TestSpoolReplayCrash: it
// replays the spool and prints "got N" for each batch before its callback
// returns nil.
func TestSpoolReplayCrashChild(t *testing.T) {
	dir := os.Getenv(replayChildEnv)
	if dir == "" {
		t.Skip("run by TestSpoolReplayCrash")
	}
	s, err := spool.Open(spool.Config{Dir: dir, SegmentBytes: 16 << 10})
	require.NoError(t, err)
	var permit [1]byte
	_ = s.Replay(context.Background(), func(batch []relaykit.Event) error {
		// Deliver in step with the parent, so that it can kill us
		// mid-replay however fast this machine is.
		if _, err := os.Stdin.Read(permit[:]); err != nil {
			return err
		}
		v, _ := batch[0].Field("seq")
		fmt.Fprintf(os.Stdout, "got %s\n", v)
		return nil
	})
	fmt.Fprintln(os.Stdout, "end")
	select {} // wait for the kill
}

// TestSpoolReplayCrash kills a replaying child with SIGKILL and checks that
// the restarted spool resumes at the last delivered batch (replayed again:
// the documented window of one) or the one after it, losing nothing.
func TestSpoolReplayCrash(t *testing.T) {
	dir := t.TempDir()
	cfg := spool.Config{Dir: dir, SegmentBytes: 16 << 10}
	s, err := spool.Open(cfg)
	require.NoError(t, err)
	const total = 1500
	for i := range total {
		app(t, s, numbered(i, 2))
	}
	require.NoError(t, s.Close())

	cmd := exec.Command(os.Args[0], "-test.run=^TestSpoolReplayCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), replayChildEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	defer stdin.Close()
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	permit := func() { _, _ = stdin.Write([]byte{1}) }
	permit()
	sc := bufio.NewScanner(stdout)
	last, count := -1, 0
	for sc.Scan() {
		seqText, ok := strings.CutPrefix(sc.Text(), "got ")
		if !ok {
			if sc.Text() == "end" {
				break
			}
			continue
		}
		seq, err := strconv.Atoi(seqText)
		require.NoError(t, err)
		require.Equal(t, last+1, seq)
		last = seq
		if count++; count <= 300 {
			permit() // the child may deliver one more
		}
		if count == 300 {
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		}
	}
	if count < 300 || last == total-1 {
		_ = cmd.Process.Kill()
	}
	_ = cmd.Wait()
	require.Less(t, last, total-1, "the child finished before the kill; nothing tested")

	s, err = spool.Open(cfg)
	require.NoError(t, err)
	defer s.Close()
	got := replayAll(t, s)
	require.NotEmpty(t, got)
	assert.Contains(t, []int{last, last + 1}, got[0], "resumes at the last delivered batch or the next")
	assert.Equal(t, seqs(got[0], total), got, "in order, nothing lost")
	t.Logf("killed after delivering %d batches; restart replayed %d (%d again)", last+1, len(got), last+1-got[0])
}

// TestSpoolBacklog: the spool counts its own backlog (batches, events, age
// of the oldest), across a restart too, from the record headers.
func TestSpoolBacklog(t *testing.T) {
	dir := t.TempDir()
	cfg := spool.Config{Dir: dir, SegmentBytes: 300}
	s, err := spool.Open(cfg)
	require.NoError(t, err)
	st := s.Stats()
	assert.Zero(t, st.Batches)
	assert.True(t, st.Oldest.IsZero())
	before := time.Now()
	for i := range 10 {
		app(t, s, numbered(i, i+1)) // 55 events
	}
	st = s.Stats()
	assert.Equal(t, int64(10), st.Batches)
	assert.Equal(t, int64(55), st.Events)
	assert.False(t, st.Oldest.Before(before.Add(-time.Second)), "oldest %v", st.Oldest)
	assert.False(t, st.Oldest.After(time.Now()))
	first := st.Oldest

	stop := errors.New("stop")
	err = s.Replay(t.Context(), func(b []relaykit.Event) error {
		if batchSeq(t, b) == 4 {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop)
	st = s.Stats()
	assert.Equal(t, int64(6), st.Batches, "batches 4..9 left")
	assert.Equal(t, int64(5+6+7+8+9+10), st.Events)
	assert.False(t, st.Oldest.Before(first))
	require.NoError(t, s.Close())

	// A restart knows the backlog left by the earlier process.
	s, err = spool.Open(cfg)
	require.NoError(t, err)
	defer s.Close()
	st2 := s.Stats()
	assert.Equal(t, st.Batches, st2.Batches)
	assert.Equal(t, st.Events, st2.Events)
	assert.Equal(t, st.Oldest, st2.Oldest)
	assert.Equal(t, seqs(4, 10), replayAll(t, s))
	st = s.Stats()
	assert.Zero(t, st.Batches)
	assert.Zero(t, st.Events)
	assert.True(t, st.Oldest.IsZero())
}

// TestSpoolDiscard: Discard drops the oldest segment's unread batches,
// counts them, and leaves the rest in order.
func TestSpoolDiscard(t *testing.T) {
	one := int64(len(spool.AppendRecord(nil, numbered(5, 3)))) + 1 // seq 5 is the largest of 0..9
	s, err := spool.Open(spool.Config{Dir: t.TempDir(), SegmentBytes: 8 + 3*one, MaxBytes: 3 * (8 + 3*one)})
	require.NoError(t, err)
	defer s.Close()
	for i := range 9 { // three segments of three batches
		app(t, s, numbered(i, 3))
	}
	_, err = s.Append(numbered(9, 3))
	require.ErrorIs(t, err, spool.ErrFull)
	// Read one batch of the first segment, then discard the rest of it.
	stop := errors.New("stop")
	n := 0
	err = s.Replay(t.Context(), func([]relaykit.Event) error {
		if n++; n > 1 {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop)
	d, err := s.Discard()
	require.NoError(t, err)
	assert.Equal(t, int64(2), d.Batches)
	assert.Equal(t, int64(6), d.Events)
	assert.True(t, d.First.Less(d.Last))
	app(t, s, numbered(9, 3)) // room after discard
	st := s.Stats()
	assert.Equal(t, int64(7), st.Batches)
	assert.Equal(t, int64(2), st.Discarded)
	assert.Equal(t, int64(6), st.DiscardedEvents)
	assert.Equal(t, seqs(3, 10), replayAll(t, s))
	d, err = s.Discard()
	require.NoError(t, err)
	assert.Zero(t, d, "nothing to discard in an empty spool")

	// Discarding the write segment: later appends go to a new one.
	app(t, s, numbered(10, 3))
	d, err = s.Discard()
	require.NoError(t, err)
	assert.Equal(t, int64(1), d.Batches)
	app(t, s, numbered(11, 3))
	assert.Equal(t, []int{11}, replayAll(t, s))
}
