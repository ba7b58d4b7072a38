package otlp

import "unsafe"

// arenaChunk is the size of one strArena chunk: about a hundred events'
// strings.
const arenaChunk = 32 << 10

// strArena turns the byte slices of events into the strings pdata wants
// with one allocation per chunk rather than one per string: it copies
// them into a chunk and returns strings that alias it. Bytes once in a
// chunk are never written again (a full chunk is replaced, not reused),
// so the strings stay immutable; a chunk lives as long as any string in
// it, about as long as the plog.Logs the strings went into. Not safe for
// concurrent use. The nil *strArena converts with string(b).
type strArena struct {
	chunk []byte
}

// str returns b as a string.
func (a *strArena) str(b []byte) string {
	if a == nil || len(b) == 0 || len(b) > arenaChunk/8 {
		return string(b)
	}
	if cap(a.chunk)-len(a.chunk) < len(b) {
		a.chunk = make([]byte, 0, arenaChunk)
	}
	off := len(a.chunk)
	a.chunk = append(a.chunk, b...)
	return unsafe.String(&a.chunk[off], len(b))
}
