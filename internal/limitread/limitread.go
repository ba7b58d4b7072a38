// Package limitread reads a request body into a reused buffer up to a
// limit: what the HTTP receivers (stream/hec, otlp) share to cap a body
// before and after decompression.
package limitread

import (
	"errors"
	"io"
)

// ErrTooLarge is returned by [Append] when r yields more than the limit.
var ErrTooLarge = errors.New("body too large")

// Append appends what r yields to dst, up to limit bytes, and returns the
// extended slice; more is [ErrTooLarge] (with dst holding limit+1 bytes).
// It grows dst by doubling from 4 KiB, never past limit+1, so a reused dst
// does not allocate once it is large enough. Other read errors are
// returned as they are.
func Append(dst []byte, r io.Reader, limit int64) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			n := min(max(2*cap(dst), 4<<10), int(limit)+1)
			if n <= len(dst) {
				return dst, ErrTooLarge
			}
			nb := make([]byte, len(dst), n)
			copy(nb, dst)
			dst = nb
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if int64(len(dst)) > limit {
			return dst, ErrTooLarge
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}
