package ringbuffer

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func TestHasPointers(t *testing.T) {
	type flat struct {
		A int
		B [4]float64
		C struct{ D uint8 }
	}
	type withSlice struct {
		A int
		B []byte
	}
	tests := []struct {
		name string
		typ  reflect.Type
		want bool
	}{
		{"int", reflect.TypeFor[int](), false},
		{"flat struct", reflect.TypeFor[flat](), false},
		{"empty array of pointers", reflect.TypeFor[[0]*int](), false},
		{"string", reflect.TypeFor[string](), true},
		{"pointer", reflect.TypeFor[*int](), true},
		{"slice field", reflect.TypeFor[withSlice](), true},
		{"array of strings", reflect.TypeFor[[2]string](), true},
		{"interface", reflect.TypeFor[any](), true},
		{"map", reflect.TypeFor[map[int]int](), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, hasPointers(tt.typ))
		})
	}
}

// TestPopClearsSlots checks that a popped value holding pointers is no
// longer referenced by the ring.
func TestPopClearsSlots(t *testing.T) {
	q, err := NewMPSC[*int](4)
	require.NoError(t, err)
	v := 1
	require.True(t, q.TryPush(&v))
	require.True(t, q.TryPush(&v))
	_, ok := q.TryPop()
	require.True(t, ok)
	_ = q.Drain(nil, 0)
	for i := range q.slots {
		assert.Nil(t, q.slots[i].val, "slot %d", i)
	}
}
