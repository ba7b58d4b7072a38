package forward

import (
	"fmt"
	"runtime"

	"github.com/klauspost/compress/gzip"
)

// gzipFree holds idle gzip writers per compression level (index 1-9). A
// writer holds hundreds of KB of compressor state, which is why it is
// reused (Reset) rather than created per request. The free lists are
// bounded channels rather than sync.Pools, so a garbage collection does not
// throw that state away: at most 4×GOMAXPROCS writers per level are kept;
// beyond that a writer is left to the GC. They are made when the package
// is initialised, not on first use: a channel made inside a
// testing/synctest bubble could not be used outside it.
var gzipFree = func() (free [10]chan *gzipper) {
	n := 4 * runtime.GOMAXPROCS(0)
	for i := range free {
		free[i] = make(chan *gzipper, n)
	}
	return free
}()

func gzipFreeList(level int) chan *gzipper { return gzipFree[level] }

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
// and Closed before it returns to the pool (a bounded free list that
// survives garbage collections), so it allocates nothing once
// warm beyond growing dst. It is safe for concurrent use.
func AppendGzip(dst, src []byte, level int) ([]byte, error) {
	if level < 1 || level > 9 {
		return dst, fmt.Errorf("forward: gzip level %d is outside 1..9", level)
	}
	free := gzipFreeList(level)
	var g *gzipper
	select {
	case g = <-free:
	default:
	}
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
	g.out.b = nil // the free list must not keep the caller's buffer
	select {
	case free <- g:
	default:
	}
	return dst, err
}
