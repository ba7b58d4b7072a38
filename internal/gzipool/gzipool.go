// Package gzipool holds the pooled gzip writers that forward's sinks and
// the otlp exporter compress request bodies with.
//
// A github.com/klauspost/compress gzip writer holds hundreds of KB of
// compressor state, which is why it is reused (Reset) rather than created
// per request. The free lists are bounded channels rather than
// sync.Pools, so a garbage collection does not throw that state away: at
// most 4×GOMAXPROCS writers per level are kept; beyond that a writer is
// left to the GC.
package gzipool

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// ErrLevel is returned by [Append] for a level other than 1..9,
// [HuffmanOnly] and [Stateless].
var ErrLevel = errors.New("gzip level is not 1..9, -2 (Huffman only) or -3 (stateless)")

// The levels below 1 that [Append] accepts (klauspost/compress's).
const (
	// HuffmanOnly compresses with Huffman coding alone, no match search.
	HuffmanOnly = gzip.HuffmanOnly // -2
	// Stateless is klauspost's stateless compression: level-1 matching
	// within each block, no state kept between writes.
	Stateless = gzip.StatelessCompression // -3
)

// minLevel is the lowest level accepted; free lists are indexed from it.
const minLevel = Stateless

// Valid reports whether [Append] accepts level: 1..9, [HuffmanOnly] or
// [Stateless].
func Valid(level int) bool {
	return level >= 1 && level <= 9 || level == HuffmanOnly || level == Stateless
}

// free holds idle writers per level (index level-minLevel): bounded channels rather
// than sync.Pools, so a collection does not throw the compressor state
// away; at most 4×GOMAXPROCS per level are kept. They are made when the
// package is initialised, not on first use: a channel made inside a
// testing/synctest bubble could not be used outside it.
var free = func() (free [10 - minLevel]chan *gzipper) {
	n := 4 * runtime.GOMAXPROCS(0)
	for i := range free {
		free[i] = make(chan *gzipper, n)
	}
	return free
}()

func freeList(level int) chan *gzipper { return free[level-minLevel] }

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

// Append appends the gzip (RFC 1952) compression of src at level (1
// fastest to 9 smallest, or [HuffmanOnly] or [Stateless]) to dst and
// returns the extended slice, or [ErrLevel]. It uses a pooled writer that is Reset for each call and
// Closed before it returns to the pool, so it allocates nothing once warm
// beyond growing dst. It is safe for concurrent use.
func Append(dst, src []byte, level int) ([]byte, error) {
	if !Valid(level) {
		return dst, ErrLevel
	}
	fl := freeList(level)
	var g *gzipper
	select {
	case g = <-fl:
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
	case fl <- g:
	default:
	}
	return dst, err
}

// readers holds idle gzip readers for [Decompress].
var readers sync.Pool // *gzip.Reader

// ErrTooLarge is returned by [Decompress] when the data inflates beyond
// its limit.
var ErrTooLarge = errors.New("gzip data inflates beyond the limit")

// Decompress appends the decompression of the gzip data src to dst and
// returns the extended slice. It fails for data that is not gzip, is
// truncated, or inflates to more than limit bytes ([ErrTooLarge]). It uses
// pooled readers; it is safe for concurrent use.
func Decompress(dst, src []byte, limit int) ([]byte, error) {
	zr, _ := readers.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(bytes.NewReader(src))
	} else {
		err = zr.Reset(bytes.NewReader(src))
	}
	if err != nil {
		return dst, err
	}
	defer readers.Put(zr)
	zr.Multistream(false)
	start := len(dst)
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, rerr := zr.Read(dst[len(dst):min(cap(dst), start+limit+1)])
		dst = dst[:len(dst)+n]
		if len(dst)-start > limit {
			return dst[:start], ErrTooLarge
		}
		if rerr == io.EOF {
			return dst, nil
		}
		if rerr != nil {
			return dst[:start], rerr
		}
	}
}
