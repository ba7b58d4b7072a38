package ringbuffer

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// TestPadding checks that the fields written by different goroutines sit at
// least 128 bytes apart, so they never share a cache line (nor an adjacent
// line pair fetched together).
func TestPadding(t *testing.T) {
	var q MPSC[[64]byte]
	offsets := []struct {
		name string
		off  uintptr
	}{
		{"slots", unsafe.Offsetof(q.slots)},
		{"tail", unsafe.Offsetof(q.tail)},
		{"headCache", unsafe.Offsetof(q.headCache)},
		{"head", unsafe.Offsetof(q.head)},
		{"next", unsafe.Offsetof(q.next)},
		{"sleeping", unsafe.Offsetof(q.sleeping)},
		{"waiters", unsafe.Offsetof(q.waiters)},
		{"refused", unsafe.Offsetof(q.refused)},
	}
	assert.GreaterOrEqual(t, offsets[0].off, uintptr(128), "slots header from the start of the struct")
	for i := range offsets {
		for j := i + 1; j < len(offsets); j++ {
			a, b := offsets[i], offsets[j]
			d := b.off - a.off
			if a.off > b.off {
				d = a.off - b.off
			}
			assert.GreaterOrEqual(t, d, uintptr(128), "%s (%d) and %s (%d)", a.name, a.off, b.name, b.off)
		}
	}
	last := offsets[len(offsets)-1].off
	assert.GreaterOrEqual(t, unsafe.Sizeof(q)-last, uintptr(128), "refused to the end of the struct")
	// Read-only fields share the slots header's block.
	assert.Less(t, unsafe.Offsetof(q.done)-unsafe.Offsetof(q.slots), uintptr(128))
}
