package stream_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/stream"
)

// lines returns n LF-terminated frames of size bytes each (LF included).
func lines(n, size int) []byte {
	line := append(bytes.Repeat([]byte("x"), size-1), '\n')
	return bytes.Repeat(line, n)
}

// drain reads every frame and checks their count and size.
func drain(t *testing.T, f *stream.Framer, n, size int) {
	t.Helper()
	got := 0
	for {
		b, _, err := f.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		require.Len(t, b, size-1)
		got++
	}
	require.Equal(t, n, got)
}

// A stream that always has more than the buffer holds is read in ever
// larger reads, up to ReadSize: 1 MiB takes 4 KiB, 8, 16, 32 and then
// 64 KiB reads, 20 in all, where a 4 KiB buffer would take 256.
func TestFramerReadsGrowWhileFull(t *testing.T) {
	data := lines(4096, 256) // 1 MiB
	budget, err := stream.NewReadBudget(1 << 20)
	require.NoError(t, err)
	f := stream.NewFramer(bytes.NewReader(data), stream.FramerConfig{Budget: budget})
	drain(t, f, 4096, 256)
	s := f.Stats()
	assert.LessOrEqual(t, s.Reads, int64(4+16+2), "reads of 1 MiB")
	assert.Equal(t, int64(64<<10), budget.InUse(), "the buffer grew to ReadSize")
	f.Release()
	assert.Zero(t, budget.InUse(), "released")

	f = stream.NewFramer(bytes.NewReader(data), stream.FramerConfig{ReadSize: 16 << 10})
	drain(t, f, 4096, 256)
	assert.LessOrEqual(t, f.Stats().Reads, int64(2+64+2), "16 KiB reads")
	assert.Greater(t, f.Stats().Reads, int64(64), "not more than 16 KiB a read")
}

// sizedReader hands over reads of the next size of sizes (the last one
// repeats), like a socket that holds that much each time.
type sizedReader struct {
	data  []byte
	sizes []int
}

func (r *sizedReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := r.sizes[0]
	if len(r.sizes) > 1 {
		r.sizes = r.sizes[1:]
	}
	n = copy(p[:min(n, len(p))], r.data)
	r.data = r.data[n:]
	return n, nil
}

// burstReader holds its first burst bytes all at once (reads fill the
// buffer), then has 100 bytes for each read.
type burstReader struct {
	data  []byte
	burst int
}

func (r *burstReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := 100
	if r.burst > 0 {
		n = r.burst
	}
	n = copy(p[:min(n, len(p))], r.data)
	r.data = r.data[n:]
	r.burst = max(r.burst-n, 0)
	return n, nil
}

// After a burst the buffer halves every 16 reads that each fill less than
// an eighth of it, back to 4 KiB; frames held across a change of buffer
// survive it.
func TestFramerShrinksWhenQuiet(t *testing.T) {
	burst := lines(1024, 256) // 256 KiB, read in full reads
	quiet := lines(200, 100)  // then 100-byte reads, one frame each
	budget, err := stream.NewReadBudget(1 << 20)
	require.NoError(t, err)
	f := stream.NewFramer(&burstReader{data: append(burst, quiet...), burst: len(burst)}, stream.FramerConfig{Budget: budget})
	for range 1024 {
		b, _, err := f.Next()
		require.NoError(t, err)
		require.Len(t, b, 255)
	}
	grown := budget.InUse()
	assert.Equal(t, int64(64<<10), grown, "grew to ReadSize during the burst")
	var seen []int64
	for i := range 200 {
		b, _, err := f.Next()
		require.NoError(t, err, "frame %d", i)
		require.Len(t, b, 99)
		seen = append(seen, budget.InUse())
	}
	assert.Equal(t, int64(4<<10), budget.InUse(), "back to 4 KiB: %v", seen)
	// Halving, not dropping at once: every size from grown down to 4 KiB.
	for want := grown / 2; want >= 4<<10; want /= 2 {
		assert.Contains(t, seen, want)
	}
	_, _, err = f.Next()
	assert.ErrorIs(t, err, io.EOF)
}

// Framers sharing a budget grow only while the total stays within it; a
// frame longer than the budget allows is still read whole (beyond it),
// and released buffers go back to it.
func TestReadBudget(t *testing.T) {
	budget, err := stream.NewReadBudget(64 << 10)
	require.NoError(t, err)
	data := lines(2048, 256) // 512 KiB each
	// All four take their first 4 KiB (which a framer takes whatever
	// the budget) before any grows: one created after the others grew
	// would take it past the limit.
	framers := make([]*stream.Framer, 4)
	for i := range framers {
		framers[i] = stream.NewFramer(bytes.NewReader(data), stream.FramerConfig{Budget: budget})
	}
	var wg sync.WaitGroup
	for _, f := range framers {
		wg.Go(func() {
			defer f.Release()
			for {
				if _, _, err := f.Next(); err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, budget.Peak(), int64(64<<10), "peak within the limit")
	assert.Zero(t, budget.InUse())

	big := "<13>" + strings.Repeat("y", 200<<10) + "\n<13>after\n"
	f := stream.NewFramer(strings.NewReader(big), stream.FramerConfig{MaxFrame: 256 << 10, Budget: budget})
	b, fl, err := f.Next()
	require.NoError(t, err)
	assert.Zero(t, fl, "not cut")
	assert.Len(t, b, len(big)-len("\n<13>after\n"))
	assert.Greater(t, budget.InUse(), int64(64<<10), "taken beyond the limit for the frame")
	b, _, err = f.Next()
	require.NoError(t, err)
	assert.Equal(t, "<13>after", string(b))
	f.Release()
	f.Release() // idempotent
	assert.Zero(t, budget.InUse())

	_, err = stream.NewReadBudget(100)
	assert.ErrorIs(t, err, stream.ErrInvalidConfig)
}

// BeforeRead runs before every read, once every complete frame read so
// far has been returned: the frames returned between two calls are those
// of one read.
func TestFramerBeforeRead(t *testing.T) {
	for _, tt := range []struct {
		name  string
		in    string
		frame int // bytes per frame, header and trailer included
		sizes []int
	}{
		{"delimited", string(lines(300, 50)), 50, []int{7, 1000, 3, 4096, 123}},
		{"octet counting", strings.Repeat("11 <13>abcdefg", 300), 14, []int{5, 700, 2, 3000, 99}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &sizedReader{data: []byte(tt.in), sizes: tt.sizes}
			var returned, calls int
			var f *stream.Framer
			f = stream.NewFramer(r, stream.FramerConfig{BeforeRead: func() error {
				calls++
				// Every byte read so far is returned or accounted for,
				// but for the start of one frame.
				s := f.Stats()
				assert.Equal(t, int(s.Frames), returned, "frames returned before read %d", calls)
				read := len(tt.in) - len(r.data)
				assert.Less(t, read-int(s.FrameBytes+s.OverheadBytes), tt.frame, "bytes held before read %d", calls)
				return nil
			}})
			for {
				_, _, err := f.Next()
				if err != nil {
					require.ErrorIs(t, err, io.EOF)
					break
				}
				returned++
			}
			assert.Equal(t, 300, returned)
			assert.Equal(t, int(f.Stats().Reads), calls, "one call per read")
		})
	}
}

// An error from BeforeRead ends the stream like a read error: the reader
// is not read again, the partial frame is counted incomplete, and Next
// returns the error.
func TestFramerBeforeReadError(t *testing.T) {
	boom := errors.New("ring closed")
	r := &sizedReader{data: []byte("<13>a\n<13>b\n<13>part"), sizes: []int{16, 100}}
	calls := 0
	f := stream.NewFramer(r, stream.FramerConfig{BeforeRead: func() error {
		calls++
		if calls == 2 {
			return boom
		}
		return nil
	}})
	var got []string
	for {
		b, _, err := f.Next()
		if err != nil {
			assert.ErrorIs(t, err, boom)
			break
		}
		got = append(got, string(b))
	}
	assert.Equal(t, []string{"<13>a", "<13>b"}, got)
	s := f.Stats()
	assert.Equal(t, int64(1), s.Reads)
	assert.Equal(t, int64(1), s.IncompleteFrames)
	assert.Equal(t, int64(4), s.IncompleteBytes, `"<13>" of the third frame`)
	assert.Equal(t, "part", string(r.data), "not read again")
}
