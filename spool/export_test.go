package spool

import (
	"encoding/binary"
	"hash/crc32"
	"time"

	"github.com/relaykit/relaykit"
)

// DecodeBatch exposes the record payload decoder (version 4: a kind, then
// a batch) to fuzzing.
func DecodeBatch(p []byte) ([]relaykit.Event, error) {
	evs, _, err := decodeRecord(p, version, nil, nil)
	return evs, err
}

// AppendRecord exposes the record encoder.
func AppendRecord(dst []byte, batch []relaykit.Event) []byte {
	return appendRecord(dst, batch, time.Now().UnixNano())
}

// RecordHeader is the size of a record header.
const RecordHeader = recHeader

// RecordV2 encodes batch as a version 2 record, as earlier releases wrote.
func RecordV2(batch []relaykit.Event) []byte {
	payload := appendBatch(nil, batch, time.Now().UnixNano())
	out := binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(payload, castagnoli))
	return append(out, payload...)
}

// IDPos returns the segment number and offset of a record ID.
func IDPos(id RecordID) (seg uint64, off int64) { return id.seg, id.off }

// SegPath returns the path of a segment of s.
func SegPath(s *Spool, seg uint64) string { return s.segPath(seg) }
