package enrich

import (
	"sync/atomic"
	"unsafe"
)

// counterStripes is the number of stripes of a stripedCounter.
const counterStripes = 8

// stripedCounter is a counter that goroutines running at the same time
// increment on different cache lines, so hot-path counting does not
// serialise the cores. Reads sum the stripes.
type stripedCounter struct {
	// The leading pad keeps stripe 0 off the cache lines of the fields
	// declared before the counter, which hot paths read.
	_       [128]byte
	stripes [counterStripes]struct {
		n atomic.Uint64
		_ [120]byte // one stripe per 128-byte pair of cache lines
	}
}

// add increments the counter. The stripe is picked from the address of the
// calling goroutine's stack, which differs between goroutines that run at
// the same time and costs nothing to obtain.
func (c *stripedCounter) add() {
	var x byte
	h := uint64(uintptr(unsafe.Pointer(&x))>>10) * 0x9E3779B97F4A7C15
	c.stripes[h>>61].n.Add(1)
}

// load returns the sum of the stripes.
func (c *stripedCounter) load() uint64 {
	var n uint64
	for i := range c.stripes {
		n += c.stripes[i].n.Load()
	}
	return n
}
