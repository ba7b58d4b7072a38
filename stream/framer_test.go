package stream_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/relaykit/relaykit/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type frameOut struct {
	Data  string
	Flags stream.Flags
}

func readAll(t testing.TB, r io.Reader, cfg stream.FramerConfig) ([]frameOut, *stream.Framer, error) {
	t.Helper()
	f := stream.NewFramer(r, cfg)
	var out []frameOut
	for {
		b, fl, err := f.Next()
		if err != nil {
			return out, f, err
		}
		out = append(out, frameOut{string(b), fl})
	}
}

const (
	cut = stream.Truncated
	bad = stream.FramingError
)

func TestFramer(t *testing.T) {
	oc := stream.OctetCounting
	tests := []struct {
		name    string
		in      string
		max     int
		framing stream.Framing
		want    []frameOut
		check   func(t *testing.T, s stream.FramerStats)
	}{
		{"lf", "<13>a\n<13>b\n", 64, 0, []frameOut{{"<13>a", 0}, {"<13>b", 0}}, nil},
		{"crlf", "<13>a\r\n<13>b\r\n", 64, 0, []frameOut{{"<13>a", 0}, {"<13>b", 0}}, nil},
		{"nul trailer", "<13>a\x00<13>b\x00", 64, 0, []frameOut{{"<13>a", 0}, {"<13>b", 0}}, nil},
		{"nul lf trailer", "<13>a\x00\n<13>b\x00\n", 64, 0, []frameOut{{"<13>a", 0}, {"<13>b", 0}},
			func(t *testing.T, s stream.FramerStats) { assert.Zero(t, s.EmptyFrames) }},
		{"nul inside an lf frame is data", "<13>a\n<13>b\x00c\n<13>d\n", 64, 0,
			[]frameOut{{"<13>a", 0}, {"<13>b\x00c", 0}, {"<13>d", 0}},
			func(t *testing.T, s stream.FramerStats) { assert.Equal(t, int64(1), s.NULFrames) }},
		{"last without delimiter", "<13>a\n<13>b", 64, 0, []frameOut{{"<13>a", 0}, {"<13>b", 0}}, nil},
		{"empty lines counted", "\n\n<13>a\n\r\n", 64, 0, []frameOut{{"<13>a", 0}},
			func(t *testing.T, s stream.FramerStats) { assert.Equal(t, int64(3), s.EmptyFrames) }},
		{"octet counting", "5 <13>a6 <13>bc", 64, 0, []frameOut{{"<13>a", 0}, {"<13>bc", 0}}, nil},
		{"octet counting with LF in message", "9 <13>a\nb\nc", 64, 0, []frameOut{{"<13>a\nb\nc", 0}}, nil},
		{"octet counting kept for the connection", "5 <13>a3 abc5 <13>b", 64, 0,
			[]frameOut{{"<13>a", 0}, {"abc", 0}, {"<13>b", 0}}, nil},
		{"octet frames followed by LF", "6 <13>a\n6 <13>b\n", 64, 0, []frameOut{{"<13>a", 0}, {"<13>b", 0}}, nil},
		{"bad header read to LF, octet counting resumes", "5 <13>aoops\n5 <13>b", 64, 0,
			[]frameOut{{"<13>a", 0}, {"oops", bad}, {"<13>b", 0}},
			func(t *testing.T, s stream.FramerStats) { assert.Equal(t, int64(1), s.FramingErrors) }},
		{"implausible length is a framing error", "5 <13>a99999999 x\n5 <13>b", 64, 0,
			[]frameOut{{"<13>a", 0}, {"99999999 x", bad}, {"<13>b", 0}}, nil},
		{"delimited kept for the connection", "<13>a\n5 <13>b\n", 64, 0, []frameOut{{"<13>a", 0}, {"5 <13>b", 0}}, nil},
		{"number without PRI is a line", "123 apples\n", 64, 0, []frameOut{{"123 apples", 0}}, nil},
		{"delimited forced", "5 <13>a\n", 64, stream.Delimited, []frameOut{{"5 <13>a", 0}}, nil},
		{"octet counting forced", "3 abc", 64, oc, []frameOut{{"abc", 0}}, nil},
		{"oversized LF cut, rest discarded", "<13>" + strings.Repeat("x", 20) + "\n<13>ok\n", 10, 0,
			[]frameOut{{"<13>xxxxxx", cut}, {"<13>ok", 0}},
			func(t *testing.T, s stream.FramerStats) { assert.Equal(t, int64(14), s.DiscardedBytes) }},
		{"oversized octet cut, rest discarded", "24 <13>" + strings.Repeat("y", 20) + "5 <13>z", 10, 0,
			[]frameOut{{"<13>yyyyyy", cut}, {"<13>z", 0}},
			func(t *testing.T, s stream.FramerStats) { assert.Equal(t, int64(14), s.DiscardedBytes) }},
		{"exactly max", "<13>456789\n<13>b\n", 10, 0, []frameOut{{"<13>456789", 0}, {"<13>b", 0}}, nil},
		{"truncated octet frame at EOF", "10 <13>ab", 64, 0, []frameOut{{"<13>ab", cut}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []struct {
				name string
				r    io.Reader
			}{
				{"whole", strings.NewReader(tt.in)},
				{"one byte", iotest.OneByteReader(strings.NewReader(tt.in))},
			} {
				got, f, err := readAll(t, r.r, stream.FramerConfig{MaxFrame: tt.max, Framing: tt.framing})
				require.ErrorIs(t, err, io.EOF)
				assert.Equal(t, tt.want, got, r.name)
				s := f.Stats()
				assert.Equal(t, int64(len(tt.in)), s.FrameBytes+s.OverheadBytes+s.DiscardedBytes+s.IncompleteBytes, "every byte accounted: %+v", s)
				if tt.check != nil {
					tt.check(t, s)
				}
			}
		})
	}
}

// A 64 MiB frame without delimiter is cut at the limit with bounded memory;
// the framer goes on with the next frame.
func TestFramerHugeFrameBoundedMemory(t *testing.T) {
	const huge = 64 << 20
	r := io.MultiReader(
		strings.NewReader("<13>"),
		io.LimitReader(repeatReader('A'), huge),
		strings.NewReader("\n<13>after\n"),
	)
	c := new(stream.Counters)
	f := stream.NewFramer(r, stream.FramerConfig{MaxFrame: 64 << 10, Counters: c})
	b, fl, err := f.Next()
	require.NoError(t, err)
	assert.Equal(t, cut, fl)
	assert.Len(t, b, 64<<10)
	b, fl, err = f.Next()
	require.NoError(t, err)
	assert.Zero(t, fl)
	assert.Equal(t, "<13>after", string(b))
	_, _, err = f.Next()
	assert.ErrorIs(t, err, io.EOF)
	assert.Equal(t, int64(huge+4-64<<10), f.Stats().DiscardedBytes)
	assert.Equal(t, int64(huge+4-64<<10), c.DiscardedBytes.Load())
	assert.Equal(t, int64(1), c.Truncated.Load())
}

type repeatReader byte

func (c repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

// A read error (reset, deadline) ends the stream: complete frames already
// buffered are returned, the incomplete one is dropped and counted.
func TestFramerReadErrorCountsIncomplete(t *testing.T) {
	boom := errors.New("reset")
	for _, tt := range []struct{ name, in string }{
		{"delimited", "<13>a\n<13>partial"},
		{"octet counting", "5 <13>a20 <13>partial"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := new(stream.Counters)
			r := io.MultiReader(strings.NewReader(tt.in), iotest.ErrReader(boom))
			got, f, err := readAll(t, r, stream.FramerConfig{MaxFrame: 64, Counters: c})
			assert.ErrorIs(t, err, boom)
			assert.Equal(t, []frameOut{{"<13>a", 0}}, got)
			s := f.Stats()
			assert.Equal(t, int64(1), s.IncompleteFrames)
			assert.Equal(t, int64(1), c.IncompleteFrames.Load())
			assert.Equal(t, s.IncompleteBytes, c.IncompleteBytes.Load())
			assert.Equal(t, int64(len(tt.in)), s.FrameBytes+s.OverheadBytes+s.IncompleteBytes, "%+v", s)
		})
	}
}

// The framer does not allocate per frame once warm.
func TestFramerAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	data := bytes.Repeat([]byte("<13>1 2026-11-22T10:00:00Z host app - - - hello world\n"), 64)
	r := bytes.NewReader(data)
	f := stream.NewFramer(r, stream.FramerConfig{})
	allocs := testing.AllocsPerRun(100, func() {
		r.Reset(data)
		for {
			if _, _, err := f.Next(); err != nil {
				break
			}
		}
		f.Reset(r)
	})
	assert.Zero(t, allocs)
}
