package sources

import "unsafe"

// EntrySize is the size of one key's entry, for the memory test.
const EntrySize = unsafe.Sizeof(entry{})
