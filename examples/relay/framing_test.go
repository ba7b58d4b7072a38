package main

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type frameOut struct {
	data string
	cut  bool
}

func frames(t testing.TB, r io.Reader, maxSize int, octets bool) ([]frameOut, *framer) {
	t.Helper()
	f := newFramer(r, maxSize, octets)
	var out []frameOut
	for {
		b, cut, err := f.Next()
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			return out, f
		}
		out = append(out, frameOut{string(b), cut})
	}
}

func TestFramer(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		max    int
		octets bool
		want   []frameOut
	}{
		{"lf", "<13>a\n<13>b\n", 64, true, []frameOut{{"<13>a", false}, {"<13>b", false}}},
		{"crlf", "<13>a\r\n<13>b\r\n", 64, true, []frameOut{{"<13>a", false}, {"<13>b", false}}},
		{"nul", "<13>a\x00<13>b\x00", 64, true, []frameOut{{"<13>a", false}, {"<13>b", false}}},
		{"last without delimiter", "<13>a\n<13>b", 64, true, []frameOut{{"<13>a", false}, {"<13>b", false}}},
		{"empty lines skipped", "\n\n<13>a\n\r\n", 64, true, []frameOut{{"<13>a", false}}},
		{"octet counting", "5 <13>a6 <13>bc", 64, true, []frameOut{{"<13>a", false}, {"<13>bc", false}}},
		{"octet counting with LF in message", "9 <13>a\nb\nc", 64, true, []frameOut{{"<13>a\nb\nc", false}}},
		{"mixed per frame", "5 <13>a<13>b\n6 <13>cd", 64, true, []frameOut{{"<13>a", false}, {"<13>b", false}, {"<13>cd", false}}},
		{"number without PRI is a line", "123 apples\n", 64, true, []frameOut{{"123 apples", false}}},
		{"octets off", "5 <13>a\n", 64, false, []frameOut{{"5 <13>a", false}}},
		{"oversized LF cut, rest discarded", "<13>" + strings.Repeat("x", 20) + "\n<13>ok\n", 10, true,
			[]frameOut{{"<13>xxxxxx", true}, {"<13>ok", false}}},
		{"oversized octet cut, rest discarded", "24 <13>" + strings.Repeat("y", 20) + "5 <13>z", 10, true,
			[]frameOut{{"<13>yyyyyy", true}, {"<13>z", false}}},
		{"exactly max", "<13>456789\n<13>b\n", 10, true, []frameOut{{"<13>456789", false}, {"<13>b", false}}},
		{"truncated octet frame at EOF", "10 <13>ab", 64, true, []frameOut{{"<13>ab", true}}},
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
				got, _ := frames(t, r.r, tt.max, tt.octets)
				assert.Equal(t, tt.want, got, r.name)
			}
		})
	}
}

// A 64 MiB frame without delimiter is cut at the limit with bounded memory;
// the relay keeps reading the next frame.
func TestFramerHugeFrameBoundedMemory(t *testing.T) {
	const huge = 64 << 20
	r := io.MultiReader(
		strings.NewReader("<13>"),
		io.LimitReader(repeatReader('A'), huge),
		strings.NewReader("\n<13>after\n"),
	)
	f := newFramer(r, 64<<10, true)
	b, cut, err := f.Next()
	require.NoError(t, err)
	assert.True(t, cut)
	assert.Len(t, b, 64<<10)
	b, cut, err = f.Next()
	require.NoError(t, err)
	assert.False(t, cut)
	assert.Equal(t, "<13>after", string(b))
	_, _, err = f.Next()
	assert.ErrorIs(t, err, io.EOF)
	assert.LessOrEqual(t, cap(f.buf), 64<<10+framerHeader, "buffer stays bounded")
	assert.Equal(t, int64(huge+4-64<<10), f.discarded)
	assert.Equal(t, int64(1), f.truncated)
}

type repeatReader byte

func (c repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

// A read error (deadline at shutdown) ends the stream without emitting the
// incomplete frame, but complete frames already buffered are delivered.
func TestFramerReadErrorDropsPartial(t *testing.T) {
	boom := errors.New("deadline")
	r := io.MultiReader(strings.NewReader("<13>a\n<13>partial"), iotest.ErrReader(boom))
	f := newFramer(r, 64, true)
	b, _, err := f.Next()
	require.NoError(t, err)
	assert.Equal(t, "<13>a", string(b))
	_, _, err = f.Next()
	assert.ErrorIs(t, err, boom)
}

// FuzzFramer checks the framer's invariants for any input and size: frames
// never exceed the limit, every frame is a substring of the input, and the
// framer terminates.
func FuzzFramer(f *testing.F) {
	for _, s := range []string{"<13>a\n", "5 <13>a", "99999999999 <", "1 <", "\x00\x00\n\r", "12 <13>abc\n<13>x", "3 <1"} {
		f.Add([]byte(s), uint16(8), true)
	}
	f.Fuzz(func(t *testing.T, in []byte, maxSize uint16, octets bool) {
		m := int(maxSize%512) + 1
		fr := newFramer(iotest.HalfReader(bytes.NewReader(in)), m, octets)
		for i := 0; ; i++ {
			b, _, err := fr.Next()
			if err != nil {
				return
			}
			if len(b) > m {
				t.Fatalf("frame of %d bytes exceeds max %d", len(b), m)
			}
			if !bytes.Contains(in, b) {
				t.Fatalf("frame %q is not part of the input", b)
			}
			if i > len(in) {
				t.Fatal("more frames than input bytes")
			}
		}
	})
}
