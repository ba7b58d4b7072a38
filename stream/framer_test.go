package stream_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
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
		// A first frame "LEN SP x" with x not '<' is read by what follows it.
		{"first octet frame without PRI", "5 hello5 <13>a5 <13>b5 <13>c", 64, 0,
			[]frameOut{{"hello", 0}, {"<13>a", 0}, {"<13>b", 0}, {"<13>c", 0}}, nil},
		{"first octet frame without PRI counts its LF", "6 hello\n5 <13>a5 <13>b", 64, 0,
			[]frameOut{{"hello", 0}, {"<13>a", 0}, {"<13>b", 0}}, nil},
		{"a line that starts with a number, then octet frames", "7 hello\n5 <13>a5 <13>b5 <13>c", 64, 0,
			[]frameOut{{"7 hello", 0}, {"<13>a", 0}, {"<13>b", 0}, {"<13>c", 0}}, nil},
		{"lines that start with numbers stay lines", "123 apples\n45 pears\n<13>x\n5 <13>b\n", 64, 0,
			[]frameOut{{"123 apples", 0}, {"45 pears", 0}, {"<13>x", 0}, {"5 <13>b", 0}}, nil},
		{"number above MaxFrame is a line", "99 apples\n5 <13>a", 8, 0,
			[]frameOut{{"99 apple", cut}, {"<13>a", 0}}, nil},
		{"number line with NUL trailer", "4 ab\x00c\x005 <13>a", 64, 0,
			[]frameOut{{"4 ab", 0}, {"c", 0}, {"5 <13>a", 0}}, nil},
		// A wrong LEN costs its own frame: the framer resynchronises at the
		// next "LEN SP <".
		{"LEN too small", "5 <13>a3 <13>bc5 <13>d5 <13>e", 64, 0,
			[]frameOut{{"<13>a", 0}, {"<13", 0}, {">bc", bad}, {"<13>d", 0}, {"<13>e", 0}},
			func(t *testing.T, s stream.FramerStats) { assert.Equal(t, int64(1), s.FramingErrors) }},
		{"LEN too large", "5 <13>a9 <13>b5 <13>c5 <13>d", 64, 0,
			[]frameOut{{"<13>a", 0}, {"<13>b5 <1", 0}, {"3>c", bad}, {"<13>d", 0}}, nil},
		{"bad frame ending in digits", "5 <13>a4 <13>b125 <13>c14 <13>dddddddddd", 64, 0,
			[]frameOut{{"<13>a", 0}, {"<13>", 0}, {"b", bad}, {"<13>c", 0}, {"<13>dddddddddd", 0}},
			func(t *testing.T, s stream.FramerStats) { assert.Equal(t, int64(2), s.DiscardedBytes) }},
		{"bad frame ending in digits at EOF", "5 <13>a4 <13>b125 <13>c", 64, 0,
			[]frameOut{{"<13>a", 0}, {"<13>", 0}, {"b", bad}, {"<13>c", 0}}, nil},
		{"digit run whose frame is not followed by one is no header", "5 <13>a4 <13>bx12 <zz\n5 <13>c", 64, 0,
			[]frameOut{{"<13>a", 0}, {"<13>", 0}, {"bx", bad}, {"12 <zz", bad}, {"<13>c", 0}},
			func(t *testing.T, s stream.FramerStats) { assert.Equal(t, int64(2), s.FramingErrors) }},
		{"long bad frame cut, resynchronised", "5 <13>a" + strings.Repeat("x", 30) + "5 <13>b", 10, 0,
			[]frameOut{{"<13>a", 0}, {"xxxxxxxxxx", cut | bad}, {"<13>b", 0}},
			func(t *testing.T, s stream.FramerStats) {
				assert.Equal(t, int64(20), s.DiscardedBytes)
				assert.Equal(t, int64(1), s.FramingErrors)
			}},
		{"long bad frame cut, resynchronised after digits", "5 <13>a" + strings.Repeat("x", 30) + "1234567890125 <13>b", 20, 0,
			[]frameOut{{"<13>a", 0}, {"xxxxxxxxxxxxxxxxxxxx", cut | bad}, {"<13>b", 0}},
			func(t *testing.T, s stream.FramerStats) { assert.Equal(t, int64(10+12), s.DiscardedBytes) }},
		{"resynchronised with a small MaxFrame", "5 <13>a" + strings.Repeat("x", 30) + "1234567890125 <13>b", 10, 0,
			[]frameOut{{"<13>a", 0}, {"xxxxxxxxxx", cut | bad}, {"<13>b", 0}}, nil},
		{"frame after resynchronisation too long to check", "5 <13>a" + strings.Repeat("x", 30) + "1234567890120 <13>" + strings.Repeat("b", 16), 10, 0,
			[]frameOut{{"<13>a", 0}, {"xxxxxxxxxx", cut | bad}, {"1234567890", cut | bad}},
			func(t *testing.T, s stream.FramerStats) { assert.Equal(t, int64(2), s.FramingErrors) }},
		{"long digit run is not a header", "5 <13>a" + strings.Repeat("7", 30) + " <13>b\n5 <13>c", 10, 0,
			[]frameOut{{"<13>a", 0}, {"7777777777", cut | bad}, {"<13>c", 0}}, nil},
		{"space before PRI without digits is no header", "5 <13>ax <13>y\n5 <13>z", 64, 0,
			[]frameOut{{"<13>a", 0}, {"x <13>y", bad}, {"<13>z", 0}}, nil},
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

// One frame with a wrong LEN, among frames sent without LF, costs that
// frame and, when LEN is too large, the frame it runs into: every other
// frame arrives whole, and the error is counted. The messages end in
// digits or not: digits before the next header must not be taken as part
// of it.
func TestFramerOneBadLength(t *testing.T) {
	for _, tail := range []string{"", "7", "42", "9001"} {
		var msgs []string
		for i := range 22 {
			msgs = append(msgs, fmt.Sprintf("<13>1 2026-11-22T10:00:00Z host app - - - event %c%s", 'a'+i, tail))
		}
		for k := range msgs {
			for _, delta := range []int{-20, -3, -1, 1, 2, 9} {
				if rem := msgs[k][len(msgs[k])+min(delta, 0):]; delta < 0 && k+1 < len(msgs) && rem[0] != '0' && strings.Trim(rem, "0123456789") == "" {
					// The rest of the frame cut short is a number that,
					// with the next header, makes a valid header ("1" and
					// "53 <" read "153 <"): no framer can tell that stream
					// from a well-formed one.
					continue
				}
				var in strings.Builder
				var starts []int
				for i, m := range msgs {
					n := len(m)
					if i == k {
						n += delta
					}
					starts = append(starts, in.Len())
					fmt.Fprintf(&in, "%d %s", n, m)
				}
				name := fmt.Sprintf("tail=%q/frame=%d/delta=%d", tail, k, delta)
				got, f, err := readAll(t, strings.NewReader(in.String()), stream.FramerConfig{})
				require.ErrorIs(t, err, io.EOF, name)
				// Frames before the odd one, and those that start past the
				// end its LEN announced, arrive whole; the ones between are
				// its cost.
				end := len(in.String())
				if k+1 < len(msgs) {
					end = starts[k+1] + max(delta, 0)
				}
				var want []string
				for i, m := range msgs {
					if i < k || (i > k && starts[i] >= end) {
						want = append(want, m)
					}
				}
				var whole []string
				for _, g := range got {
					if slices.Contains(msgs, g.Data) && g.Data != msgs[k] {
						assert.Zero(t, g.Flags, name)
						whole = append(whole, g.Data)
					}
				}
				if k < len(msgs)-1 || delta < 0 {
					assert.Equal(t, want, slices.DeleteFunc(whole, func(s string) bool { return s == msgs[k] }), name)
					assert.Equal(t, int64(1), f.Stats().FramingErrors, name)
				}
				s := f.Stats()
				assert.Equal(t, int64(in.Len()), s.FrameBytes+s.OverheadBytes+s.DiscardedBytes+s.IncompleteBytes, name)
			}
		}
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
