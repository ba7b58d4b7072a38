package stream_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/relaykit/relaykit/stream"
)

// loopReader serves data over and over, in reads of at most chunk bytes
// (a socket hands over what arrived, rarely a whole buffer).
type loopReader struct {
	data  []byte
	off   int
	chunk int
}

func (r *loopReader) Read(p []byte) (int, error) {
	n := copy(p[:min(len(p), r.chunk)], r.data[r.off:])
	r.off = (r.off + n) % len(r.data)
	return n, nil
}

// BenchmarkFramer measures one frame per op (ns/op reads as ns/frame) of a
// 200-byte RFC 5424 message, LF-terminated and octet-counted, read in 16 KiB
// chunks; bufio.Scanner splitting the same LF stream is the reference.
func BenchmarkFramer(b *testing.B) {
	msg := "<13>1 2026-11-22T10:00:00.000Z host.example.com app 1234 ID47 - " + string(bytes.Repeat([]byte("x"), 200-66))
	lf := []byte(msg + "\n")
	octet := fmt.Appendf(nil, "%d %s", len(msg), msg)
	streamOf := func(frame []byte) []byte { return bytes.Repeat(frame, 1000) }
	for _, tt := range []struct {
		name  string
		frame []byte
	}{{"framing=lf", lf}, {"framing=octet", octet}} {
		b.Run(tt.name+"/impl=framer", func(b *testing.B) {
			f := stream.NewFramer(&loopReader{data: streamOf(tt.frame), chunk: 16 << 10}, stream.FramerConfig{})
			b.SetBytes(int64(len(tt.frame)))
			b.ReportAllocs()
			for b.Loop() {
				got, _, err := f.Next()
				if err != nil || len(got) != len(msg) {
					b.Fatalf("frame of %d bytes, %v", len(got), err)
				}
			}
		})
	}
	b.Run("framing=lf/impl=bufio.Scanner", func(b *testing.B) {
		sc := bufio.NewScanner(&loopReader{data: streamOf(lf), chunk: 16 << 10})
		sc.Buffer(make([]byte, 64<<10), 64<<10)
		b.SetBytes(int64(len(lf)))
		b.ReportAllocs()
		for b.Loop() {
			if !sc.Scan() || len(sc.Bytes()) != len(msg) {
				b.Fatalf("scan: %v", sc.Err())
			}
		}
	})
}

var _ io.Reader = (*loopReader)(nil)
