package storage

import (
	"time"

	"github.com/relaykit/relaykit"
)

// BreakFile closes the active file behind the Writer's back, so that the
// next write to it fails.
func (w *Writer) BreakFile() {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.f.Close()
}

// DecodeBatch exposes the record payload decoder to fuzzing.
func DecodeBatch(p []byte) ([]relaykit.Event, error) { return decodeBatch(p, nil) }

// AppendRecord exposes the record encoder.
func AppendRecord(dst []byte, batch []relaykit.Event) []byte {
	return appendRecord(dst, batch, time.Now().UnixNano())
}

// ScanSegment exposes the segment scanner used to cut a torn tail.
var ScanSegment = scanSegment

// RecordHeader is the size of a record header.
const RecordHeader = recHeader
