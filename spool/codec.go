package spool

import (
	"encoding/binary"
	"errors"
	"hash/crc32"

	"github.com/relaykit/relaykit"
)

// Spool on-disk format, version 3. All integers are little endian.
//
//	segment  = magic record*
//	magic    = "RKSPOOL3"                                 8 bytes
//	record   = header payload
//	header   = marker length events appended crc hcrc     28 bytes
//	marker   = "RKR3"                                     4 bytes
//	length   = uint32                                     payload length
//	events   = uint32                                     events in the batch
//	appended = int64                                      unix ns
//	crc      = uint32                                     CRC-32C of payload
//	hcrc     = uint32                                     CRC-32C of the 24 bytes before it
//	payload  = count:uvarint appended:varint event*count
//	event    = receiveTime:varint time:varint priority:byte flags:uvarint
//	           host source sourcetype index raw           each bytes
//	           nfields:uvarint (key:bytes value:bytes)*nfields
//	bytes    = length:uvarint data
//
// The marker and the header's own checksum let a reader find the next
// record after damage: it scans for the marker and accepts a candidate
// only if the header checksum, the length and the payload checksum agree.
//
// Version 2 segments ("RKSPOOL2", written by earlier releases) are still
// read: their records are length:uint32 crc:uint32 payload, with the same
// payload, and cannot be resynchronised after damage.
const (
	segMagic    = "RKSPOOL3"
	segMagicV2  = "RKSPOOL2"
	segHeader   = int64(len(segMagic))
	recMarker   = "RKR3"
	recHeader   = 28
	recHeaderV2 = 8
	// maxRecordLen bounds a record's payload, in bytes.
	maxRecordLen = 1 << 30
)

var (
	castagnoli = crc32.MakeTable(crc32.Castagnoli)

	errCorrupt = errors.New("spool: corrupt spool record")
)

// recHead is a decoded record header.
type recHead struct {
	length   int   // payload bytes
	events   int64 // events in the batch
	appended int64 // unix ns
	crc      uint32
}

// size is the record's size on disk (header and payload) in a segment of
// version v.
func (h recHead) size(v byte) int64 {
	if v == 2 {
		return recHeaderV2 + int64(h.length)
	}
	return recHeader + int64(h.length)
}

// appendRecord appends batch as one version 3 record (header and payload)
// to dst; appended is the time of the append in unix ns.
func appendRecord(dst []byte, batch []relaykit.Event, appended int64) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, recHeader)...)
	dst = binary.AppendUvarint(dst, uint64(len(batch)))
	dst = binary.AppendVarint(dst, appended)
	for i := range batch {
		dst = appendEvent(dst, &batch[i])
	}
	payload := dst[start+recHeader:]
	h := dst[start : start+recHeader]
	copy(h, recMarker)
	binary.LittleEndian.PutUint32(h[4:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[8:], uint32(len(batch)))
	binary.LittleEndian.PutUint64(h[12:], uint64(appended))
	binary.LittleEndian.PutUint32(h[20:], crc32.Checksum(payload, castagnoli))
	binary.LittleEndian.PutUint32(h[24:], crc32.Checksum(h[:24], castagnoli))
	return dst
}

func appendEvent(dst []byte, e *relaykit.Event) []byte {
	dst = binary.AppendVarint(dst, e.ReceiveTime)
	dst = binary.AppendVarint(dst, e.Time)
	dst = append(dst, e.Priority)
	dst = binary.AppendUvarint(dst, uint64(e.Flags))
	dst = appendBytes(dst, e.Host)
	dst = appendBytes(dst, e.Source)
	dst = appendBytes(dst, e.SourceType)
	dst = appendBytes(dst, e.Index)
	dst = appendBytes(dst, e.Raw)
	dst = binary.AppendUvarint(dst, uint64(len(e.Fields)))
	for i := range e.Fields {
		dst = appendBytes(dst, e.Fields[i].Key)
		dst = appendBytes(dst, e.Fields[i].Value)
	}
	return dst
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// parseHeader decodes a version 3 record header and checks it against the
// bytes left in the segment (left counts from the header's start).
func parseHeader(h []byte, left int64) (recHead, bool) {
	if len(h) < recHeader || string(h[:4]) != recMarker ||
		crc32.Checksum(h[:24], castagnoli) != binary.LittleEndian.Uint32(h[24:]) {
		return recHead{}, false
	}
	r := recHead{
		length:   int(binary.LittleEndian.Uint32(h[4:])),
		events:   int64(binary.LittleEndian.Uint32(h[8:])),
		appended: int64(binary.LittleEndian.Uint64(h[12:])),
		crc:      binary.LittleEndian.Uint32(h[20:]),
	}
	if r.length == 0 || r.length > maxRecordLen || int64(r.length) > left-recHeader {
		return recHead{}, false
	}
	return r, true
}

// parseHeaderV2 decodes a version 2 record header; the event count and the
// append time are at the start of the payload (p, which may be cut after
// maxMetaLen bytes).
func parseHeaderV2(h, p []byte, left int64) (recHead, bool) {
	if len(h) < recHeaderV2 {
		return recHead{}, false
	}
	n := binary.LittleEndian.Uint32(h)
	if n == 0 || n > maxRecordLen || int64(n) > left-recHeaderV2 {
		return recHead{}, false
	}
	events, appended, ok := recordMeta(p)
	if !ok {
		return recHead{}, false
	}
	return recHead{length: int(n), events: events, appended: appended, crc: binary.LittleEndian.Uint32(h[4:])}, true
}

// maxMetaLen is the most bytes recordMeta needs: two varints.
const maxMetaLen = 2 * binary.MaxVarintLen64

// recordMeta reads the event count and append time at the start of a
// record payload (p may be cut after maxMetaLen bytes).
func recordMeta(p []byte) (events int64, appended int64, ok bool) {
	d := decoder{p: p}
	n := d.uvarint()
	t := d.varint()
	if d.err || n > maxRecordLen {
		return 0, 0, false
	}
	return int64(n), t, true
}

// decodeBatch decodes a record payload into dst, reusing dst's events and
// their Fields slices. The events' byte slices alias p (capacity-limited,
// so appending to them copies).
func decodeBatch(p []byte, dst []relaykit.Event) ([]relaykit.Event, error) {
	d := decoder{p: p}
	count := d.uvarint()
	d.varint() // append time
	// Every event takes at least 10 bytes; a larger count is corrupt and
	// must not drive an allocation.
	if d.err || count > uint64(len(p))/10 {
		return dst[:0], errCorrupt
	}
	n := int(count)
	if cap(dst) < n {
		grown := make([]relaykit.Event, n)
		copy(grown, dst[:cap(dst)])
		dst = grown
	}
	dst = dst[:n]
	for i := range dst {
		e := &dst[i]
		e.ReceiveTime = d.varint()
		e.Time = d.varint()
		e.Priority = d.byte()
		e.Flags = relaykit.Flags(d.uvarint())
		e.Host = d.bytes()
		e.Source = d.bytes()
		e.SourceType = d.bytes()
		e.Index = d.bytes()
		e.Raw = d.bytes()
		nf := d.uvarint()
		if d.err || nf > uint64(len(d.p))/2 {
			return dst[:0], errCorrupt
		}
		e.Fields = e.Fields[:0]
		for range int(nf) {
			k := d.bytes()
			v := d.bytes()
			e.Fields = append(e.Fields, relaykit.Field{Key: k, Value: v})
		}
		if d.err {
			return dst[:0], errCorrupt
		}
	}
	if d.err || len(d.p) != 0 {
		return dst[:0], errCorrupt
	}
	return dst, nil
}

type decoder struct {
	p   []byte
	err bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.p)
	if n <= 0 {
		d.err, d.p = true, nil
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.p)
	if n <= 0 {
		d.err, d.p = true, nil
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.p) == 0 {
		d.err = true
		return 0
	}
	c := d.p[0]
	d.p = d.p[1:]
	return c
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err || n > uint64(len(d.p)) {
		d.err, d.p = true, nil
		return nil
	}
	if n == 0 {
		return nil
	}
	b := d.p[:n:n]
	d.p = d.p[n:]
	return b
}
