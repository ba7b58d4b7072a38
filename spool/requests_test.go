package spool_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/spool"
)

// requests returns n requests of a made-up format, request i carrying
// events of seq*10+i.
func requests(seq, n int) []relaykit.Request {
	reqs := make([]relaykit.Request, n)
	for i := range reqs {
		reqs[i] = relaykit.Request{
			Format:        "test.lines+gzip",
			Events:        i + 1,
			OldestReceive: int64(seq*10 + i),
			NewestReceive: int64(seq*10 + i + 1),
			Index:         []byte{1, byte(i)},
			Body:          fmt.Appendf(nil, "body %d-%d", seq, i),
		}
	}
	return reqs
}

// TestSpoolRequests: records of requests are written, counted (their
// events), read back byte for byte, acknowledged, and survive a restart,
// between records of events.
func TestSpoolRequests(t *testing.T) {
	dir := t.TempDir()
	s, err := spool.Open(spool.Config{Dir: dir, SegmentBytes: 256})
	require.NoError(t, err)
	app(t, s, numbered(0, 2))
	for seq := 1; seq <= 5; seq++ {
		id, err := s.AppendRequests(requests(seq, 3))
		require.NoError(t, err)
		require.False(t, id.IsZero())
	}
	app(t, s, numbered(6, 2))
	id, err := s.AppendRequests([]relaykit.Request{{Format: "x"}})
	require.NoError(t, err)
	assert.True(t, id.IsZero(), "requests without events are a no-op")
	st := s.Stats()
	assert.Equal(t, int64(7), st.Batches)
	assert.Equal(t, int64(2+5*6+2), st.Events)
	require.NoError(t, s.Close())

	s, err = spool.Open(spool.Config{Dir: dir, SegmentBytes: 256})
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, int64(2+5*6+2), s.Stats().Events, "counted from the headers at open")
	rec, err := s.Peek()
	require.NoError(t, err)
	assert.Equal(t, 0, batchSeq(t, rec.Events))
	assert.Nil(t, rec.Requests)
	require.NoError(t, s.Ack(rec.ID))
	for seq := 1; seq <= 5; seq++ {
		rec, err := s.Peek()
		require.NoError(t, err)
		assert.Nil(t, rec.Events)
		assert.Equal(t, requests(seq, 3), rec.Requests)
		require.NoError(t, s.Ack(rec.ID))
	}
	err = s.Replay(t.Context(), func([]relaykit.Event) error { return nil })
	require.NoError(t, err)
	_, err = s.Peek()
	assert.ErrorIs(t, err, io.EOF)
}

// TestSpoolReplayStopsAtRequests: Replay has no events to give for a
// record of requests; it says so and leaves it at the head.
func TestSpoolReplayStopsAtRequests(t *testing.T) {
	s, err := spool.Open(spool.Config{Dir: t.TempDir()})
	require.NoError(t, err)
	defer s.Close()
	app(t, s, numbered(0, 2))
	_, err = s.AppendRequests(requests(1, 1))
	require.NoError(t, err)
	var got []int
	err = s.Replay(t.Context(), func(b []relaykit.Event) error { got = append(got, batchSeq(t, b)); return nil })
	require.ErrorIs(t, err, spool.ErrRequests)
	assert.Equal(t, []int{0}, got)
	rec, err := s.Peek()
	require.NoError(t, err)
	assert.Len(t, rec.Requests, 1)
}

// TestSpoolRequestDamage: a flipped byte in the body of a request costs
// that record (its events counted lost), and the next record is read.
func TestSpoolRequestDamage(t *testing.T) {
	dir := t.TempDir()
	s, err := spool.Open(spool.Config{Dir: dir})
	require.NoError(t, err)
	defer s.Close()
	var ids []spool.RecordID
	for seq := range 4 {
		id, err := s.AppendRequests(requests(seq, 2))
		require.NoError(t, err)
		ids = append(ids, id)
	}
	flip(t, s, ids[1], 40)
	var got [][]relaykit.Request
	for {
		rec, err := s.Peek()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		got = append(got, cloneRequests(rec.Requests)) // valid only until the next Peek
		require.NoError(t, s.Ack(rec.ID))
	}
	assert.Equal(t, [][]relaykit.Request{requests(0, 2), requests(2, 2), requests(3, 2)}, got)
	st := s.Stats()
	assert.Equal(t, int64(1), st.Corrupt)
	assert.Equal(t, int64(3), st.LostEvents)
}

func cloneRequests(reqs []relaykit.Request) []relaykit.Request {
	out := make([]relaykit.Request, len(reqs))
	for i, r := range reqs {
		r.Index = append([]byte(nil), r.Index...)
		r.Body = append([]byte(nil), r.Body...)
		out[i] = r
	}
	return out
}

// copyDir copies the test data directory src to a new temporary directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o750)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o640)
	}))
	return dst
}

// TestSpoolUpgradeFromVersion3: testdata/spool-v3 was written by the
// release before version 4 (relaykit e993e75, delivery/testdata/genv3):
// 20 batches of 5 events in three segments of version 3, the first three
// batches acknowledged. It is read after the upgrade: the backlog is
// counted from its headers, every batch not acknowledged is read back with
// its events intact, and new records go to a segment of version 4 after
// it.
func TestSpoolUpgradeFromVersion3(t *testing.T) {
	dir := copyDir(t, "testdata/spool-v3")
	s, err := spool.Open(spool.Config{Dir: dir, SegmentBytes: 4096})
	require.NoError(t, err)
	defer s.Close()
	st := s.Stats()
	assert.Equal(t, int64(17), st.Batches)
	assert.Equal(t, int64(85), st.Events)
	_, err = s.AppendRequests(requests(9, 2))
	require.NoError(t, err)
	app(t, s, numbered(10, 2))
	assert.Equal(t, 4, s.Stats().Segments, "new records in a new segment")

	next := 15
	for range 17 {
		rec, err := s.Peek()
		require.NoError(t, err)
		require.Len(t, rec.Events, 5)
		for i := range rec.Events {
			e := &rec.Events[i]
			assert.Equal(t, fmt.Sprintf("event %d: user login accepted from 192.0.2.%d", next, next%250), string(e.Raw))
			assert.Equal(t, fmt.Sprintf("host-%d", next%3), string(e.Host))
			v, _ := e.Field("msgid")
			assert.Equal(t, fmt.Sprintf("ID%d", next), string(v))
			assert.Equal(t, uint8(13), e.Priority)
			assert.NotZero(t, e.ReceiveTime)
			next++
		}
		require.NoError(t, s.Ack(rec.ID))
	}
	assert.Equal(t, 100, next)
	rec, err := s.Peek()
	require.NoError(t, err)
	assert.Equal(t, requests(9, 2), rec.Requests)
	require.NoError(t, s.Ack(rec.ID))
	rec, err = s.Peek()
	require.NoError(t, err)
	assert.Equal(t, 10, batchSeq(t, rec.Events))
	require.NoError(t, s.Ack(rec.ID))
	st = s.Stats()
	assert.Zero(t, st.Events)
	assert.Zero(t, st.Corrupt+st.LostEvents+st.TornBytes+st.MissingSegments, "no damage")
	assert.Equal(t, 1, st.Segments, "the version 3 segments are removed once read")
}
