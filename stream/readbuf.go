package stream

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
)

// Read buffer sizes. A framer's buffer is one of the size classes
// minRead << k (4 KiB, 8 KiB, ... up to maxReadSize), taken from and given
// back to a pool per class, or, for a frame longer than the largest class
// it may use, an exact size of its own that it drops when it shrinks.
const (
	minRead     = 4 << 10
	maxReadSize = 1 << 20
	// DefaultReadSize is the read size a [FramerConfig] with ReadSize zero
	// grows to, in bytes.
	DefaultReadSize = 64 << 10
	// shrinkAfter is how many reads in a row must each fill less than an
	// eighth of the buffer before it is halved.
	shrinkAfter = 16
)

// readPools holds one pool per size class: 4 KiB << 0 ... 4 KiB << 8 (1 MiB).
var readPools [9]sync.Pool

// class returns the size class of an n-byte buffer, or -1 when n is not a
// class size.
func class(n int) int {
	if n < minRead || n > maxReadSize || n&(n-1) != 0 {
		return -1
	}
	return bits.TrailingZeros(uint(n / minRead))
}

// getBuf returns a buffer of n bytes, from the pool when n is a class size.
// Its contents are whatever the last user left there.
func getBuf(n int) *[]byte {
	if c := class(n); c >= 0 {
		if p, ok := readPools[c].Get().(*[]byte); ok {
			return p
		}
	}
	b := make([]byte, n)
	return &b
}

// putBuf gives a buffer back to its pool; one of no class is left to the
// garbage collector.
func putBuf(p *[]byte) {
	if c := class(len(*p)); c >= 0 {
		readPools[c].Put(p)
	}
}

// ReadBudget bounds the memory of the read buffers of the framers that
// share it: the connections of one listener, say. A framer's buffer
// starts at 4 KiB and doubles, up to [FramerConfig].ReadSize, while its
// reads come back full (the socket held more than the buffer had room
// for), which cuts the system calls per frame on a busy connection; it
// halves again after 16 reads in a row that each filled less than an
// eighth of it, and goes back to 4 KiB when the framer is released. Growth
// for read-ahead is taken from the budget and happens only while the
// buffers of all its framers stay within the limit. What a framer needs to
// hold one frame (its first 4 KiB, or a frame up to MaxFrame that does not
// fit) is taken even past the limit, so a full budget slows connections
// down but never cuts a frame.
//
// With the defaults (64 KiB reads), 1,024 connections at rest hold 4 MiB
// of buffers, and the budget bounds the rest: a connection that falls
// silent right after a burst keeps its grown buffer until its next reads
// (or its idle timeout) end.
//
// A ReadBudget is safe for concurrent use by multiple goroutines; its zero
// value is not usable, use [NewReadBudget].
type ReadBudget struct {
	limit int64
	used  atomic.Int64
	peak  atomic.Int64
}

// NewReadBudget returns a budget of limit bytes. It returns an error
// wrapping [ErrInvalidConfig] when limit is below 4 KiB.
func NewReadBudget(limit int64) (*ReadBudget, error) {
	if limit < minRead {
		return nil, fmt.Errorf("%w: read budget %d bytes, want at least %d", ErrInvalidConfig, limit, minRead)
	}
	return &ReadBudget{limit: limit}, nil
}

// Limit returns the budget's limit, in bytes.
func (b *ReadBudget) Limit() int64 { return b.limit }

// InUse returns the bytes of read buffers its framers hold now: at most
// Limit, plus what frames that did not fit needed beyond it.
func (b *ReadBudget) InUse() int64 { return b.used.Load() }

// Peak returns the largest InUse seen, in bytes.
func (b *ReadBudget) Peak() int64 { return b.peak.Load() }

// tryTake reserves n bytes if the total stays within the limit.
func (b *ReadBudget) tryTake(n int64) bool {
	for {
		u := b.used.Load()
		if u+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			b.notePeak(u + n)
			return true
		}
	}
}

// take reserves n bytes whatever the limit (n may be negative: a release).
func (b *ReadBudget) take(n int64) {
	if u := b.used.Add(n); n > 0 {
		b.notePeak(u)
	}
}

func (b *ReadBudget) notePeak(u int64) {
	for {
		p := b.peak.Load()
		if u <= p || b.peak.CompareAndSwap(p, u) {
			return
		}
	}
}

// readSizeOf returns the read size for a configured ReadSize: a class size
// between 4 KiB and 1 MiB, rounded up.
func readSizeOf(n int) int {
	if n <= 0 {
		return DefaultReadSize
	}
	n = min(max(n, minRead), maxReadSize)
	return 1 << bits.Len(uint(n-1))
}

// floorClass returns the largest class size not above n, at least minRead.
func floorClass(n int) int {
	if n < minRead {
		return minRead
	}
	return 1 << (bits.Len(uint(n)) - 1)
}

// setBuf makes the framer's buffer one of n bytes holding the bytes not
// yet returned (moved to its start); the old buffer goes back to its pool.
// The caller settles the budget.
func (f *Framer) setBuf(n int) {
	p := getBuf(n)
	nb := *p
	k := copy(nb, f.buf[f.start:f.end])
	if f.bufp != nil {
		putBuf(f.bufp)
	}
	f.bufp, f.buf, f.start, f.end = p, nb, 0, k
}

// take charges n bytes (negative: gives them back) to the budget, if any.
func (f *Framer) take(n int) {
	if f.budget != nil && n != 0 {
		f.budget.take(int64(n))
	}
}

// resize adapts the buffer to the connection's pace before a read: it
// doubles after a read that came back full, within ReadSize and the
// budget, and halves after shrinkAfter reads in a row that each filled
// less than an eighth of it (if what it holds fits in half of the smaller
// buffer). It moves the bytes held to the start of the buffer when less
// than half of it is free behind them, so that each read has room.
func (f *Framer) resize() {
	n := len(f.buf)
	switch {
	case f.full && n < f.readMax:
		f.full = false
		want := floorClass(min(2*n, f.readMax))
		if want > n && (f.budget == nil || f.budget.tryTake(int64(want-n))) {
			f.setBuf(want)
			return
		}
	case f.sparse >= shrinkAfter && n > minRead:
		f.sparse = 0
		if want := floorClass(n / 2); f.end-f.start <= want/2 {
			f.setBuf(want)
			f.take(want - n)
			return
		}
	}
	if f.start > 0 && n-f.end < n/2 {
		f.end = copy(f.buf, f.buf[f.start:f.end])
		f.start = 0
	}
}

// Release gives the framer's buffer back (to the pool its size comes
// from, and its bytes to the [ReadBudget]). Call it when the connection
// ends; the framer must not be used afterwards, except after [Framer.Reset],
// which takes a new buffer. Release is idempotent.
func (f *Framer) Release() {
	if f.buf == nil {
		return
	}
	f.take(-len(f.buf))
	if f.bufp != nil {
		putBuf(f.bufp)
	}
	f.buf, f.bufp, f.start, f.end = nil, nil, 0, 0
}
