package forward

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// gzipPools holds idle gzip writers per compression level (index 1-9).
// A writer holds about 1 MB of compressor state at level 1-9, which is why
// it is pooled and Reset rather than created per request.
var gzipPools [10]sync.Pool

// gzipper is a pooled writer and the buffer it writes to.
type gzipper struct {
	zw  *gzip.Writer
	out appendWriter
}

// appendWriter is an io.Writer that appends to a byte slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// AppendGzip appends the gzip (RFC 1952) compression of src at level (1
// fastest to 9 smallest) to dst and returns the extended slice. It uses a
// pooled github.com/klauspost/compress writer that is Reset for each call
// and Closed before it returns to the pool, so it allocates nothing once
// warm beyond growing dst. It is safe for concurrent use.
func AppendGzip(dst, src []byte, level int) ([]byte, error) {
	if level < 1 || level > 9 {
		return dst, fmt.Errorf("forward: gzip level %d is outside 1..9", level)
	}
	g, _ := gzipPools[level].Get().(*gzipper)
	if g == nil {
		g = new(gzipper)
		zw, err := gzip.NewWriterLevel(&g.out, level)
		if err != nil {
			return dst, err
		}
		g.zw = zw
	} else {
		g.zw.Reset(&g.out)
	}
	g.out.b = dst
	_, _ = g.zw.Write(src) // appendWriter never fails
	err := g.zw.Close()
	dst = g.out.b
	g.out.b = nil // the pool must not keep the caller's buffer
	gzipPools[level].Put(g)
	return dst, err
}
