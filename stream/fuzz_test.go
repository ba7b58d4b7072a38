package stream_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/relaykit/relaykit/stream"
)

// chunkReader returns data in reads whose sizes come from splits (cycled;
// a zero size becomes one byte).
type chunkReader struct {
	data   []byte
	splits []byte
	i      int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := len(r.data)
	if len(r.splits) > 0 {
		n = max(int(r.splits[r.i%len(r.splits)]), 1)
		r.i++
	}
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// FuzzFramer checks the framer's invariants for any stream, size limit,
// framing and read boundaries: the frames and counts are the same whatever
// the split, no frame exceeds the limit or is anything but a piece of the
// input that follows the frame before it, every input byte is in a frame or counted, and nothing panics.
func FuzzFramer(f *testing.F) {
	for _, s := range []string{
		"<13>a\n", "5 <13>a", "99999999999 <", "1 <", "\x00\x00\n\r", "12 <13>abc\n<13>x", "3 <1",
		"5 <13>a3 abc5 <13>b", "5 <13>aoops\n5 <13>b", "<13>a\x00b\n<13>c\n", "<13>a\x00\n<13>b\x00\n",
		"\r\n\r\n<13>x\r", "24 <13>yyyyyyyyyyyyyyyyyyyy5 <13>z",
		"5 hello5 <13>a5 <13>b", "7 hello\n5 <13>a5 <13>b", "6 hello\n5 <13>a", "123 apples\n45 pears\n",
		"5 <13>a3 <13>bc5 <13>d5 <13>e", "5 <13>a9 <13>b5 <13>c5 <13>d", "5 <13>a4 <13>b125 <13>c14 <13>dddddddddd",
		"5 <13>a00153 <13>b5 <13>c", "5 <13>axxxxxxxxxxxxxxxxxxxxxxxxxxxxx1234567890125 <13>b",
		"5 <13>a77777777777777777777777 <13>b\n5 <13>c", "5 <13>a4 <13>b12",
	} {
		f.Add([]byte(s), []byte{1, 3, 7}, uint16(8), uint8(0))
	}
	f.Fuzz(func(t *testing.T, in, splits []byte, maxSize uint16, framing uint8) {
		cfg := stream.FramerConfig{MaxFrame: int(maxSize%512) + 1, Framing: stream.Framing(framing % 3)}
		run := func(r io.Reader) ([]frameOut, stream.FramerStats) {
			fr := stream.NewFramer(r, cfg)
			var out []frameOut
			rest := in // frames come in order, each after the previous one
			for i := 0; ; i++ {
				b, fl, err := fr.Next()
				if err != nil {
					if err != io.EOF {
						t.Fatalf("error %v, want io.EOF", err)
					}
					return out, fr.Stats()
				}
				if len(b) == 0 || len(b) > cfg.MaxFrame {
					t.Fatalf("frame of %d bytes, want 1..%d", len(b), cfg.MaxFrame)
				}
				j := bytes.Index(rest, b)
				if j < 0 {
					t.Fatalf("frame %q is not part of the input after the frame before it", b)
				}
				rest = rest[j+len(b):]
				if i > len(in) {
					t.Fatal("more frames than input bytes")
				}
				out = append(out, frameOut{string(b), fl})
			}
		}
		whole, ws := run(bytes.NewReader(in))
		split, ss := run(&chunkReader{data: in, splits: splits})
		if len(whole) != len(split) {
			t.Fatalf("%d frames read whole, %d read split %v", len(whole), len(split), splits)
		}
		for i := range whole {
			if whole[i] != split[i] {
				t.Fatalf("frame %d: %q read whole, %q read split", i, whole[i], split[i])
			}
		}
		ws.Reads, ss.Reads = 0, 0 // the split reads more often, by design
		if ws != ss {
			t.Fatalf("counts differ: whole %+v, split %+v", ws, ss)
		}
		if got := ws.FrameBytes + ws.OverheadBytes + ws.DiscardedBytes + ws.IncompleteBytes; got != int64(len(in)) {
			t.Fatalf("%d bytes in, %d accounted: %+v", len(in), got, ws)
		}
		if ws.Frames != int64(len(whole)) {
			t.Fatalf("Frames %d, returned %d", ws.Frames, len(whole))
		}
	})
}
