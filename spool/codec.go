package spool

import (
	"encoding/binary"
	"errors"
	"hash/crc32"

	"github.com/relaykit/relaykit"
)

// Spool on-disk format, version 4. All integers are little endian.
//
//	segment  = magic record*
//	magic    = "RKSPOOL4"                                 8 bytes
//	record   = header payload
//	header   = marker length events appended crc hcrc     28 bytes
//	marker   = "RKR4"                                     4 bytes
//	length   = uint32                                     payload length
//	events   = uint32                                     events in the record
//	appended = int64                                      unix ns
//	crc      = uint32                                     CRC-32C of payload
//	hcrc     = uint32                                     CRC-32C of the 24 bytes before it
//	payload  = 'E' batch | 'R' requests
//	batch    = count:uvarint appended:varint event*count  (version 3's payload)
//	event    = receiveTime:varint time:varint priority:byte flags:uvarint
//	           host source sourcetype index raw           each bytes
//	           nfields:uvarint (key:bytes value:bytes)*nfields
//	requests = count:uvarint request*count
//	request  = format:bytes events:uvarint oldestReceive:varint
//	           newestReceive:varint index:bytes body:bytes
//	bytes    = length:uvarint data
//
// A batch record holds events (Append); a requests record holds the
// request bodies a relaykit.RequestSink encoded from one batch
// (AppendRequests), as the destination receives them.
//
// The marker and the header's own checksum let a reader find the next
// record after damage: it scans for the marker and accepts a candidate
// only if the header checksum, the length and the payload checksum agree.
//
// Version 3 segments ("RKSPOOL3", records marked "RKR3" whose payload is
// a batch without the 'E') and version 2 segments ("RKSPOOL2", written by
// earlier releases: length:uint32 crc:uint32 batch, which cannot be
// resynchronised after damage) are still read. New records always go to
// version 4 segments.
const (
	version     = 4 // of the segments written
	segMagic    = "RKSPOOL4"
	segMagicV3  = "RKSPOOL3"
	segMagicV2  = "RKSPOOL2"
	segHeader   = int64(len(segMagic))
	recMarker   = "RKR4"
	recMarkerV3 = "RKR3"
	recHeader   = 28
	recHeaderV2 = 8
	// maxRecordLen bounds a record's payload, in bytes.
	maxRecordLen = 1 << 30

	kindBatch    = 'E'
	kindRequests = 'R'
)

// recMarkerOf returns the record marker of segments of version v (3 or 4).
func recMarkerOf(v byte) string {
	if v == 3 {
		return recMarkerV3
	}
	return recMarker
}

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

// appendRecord appends batch as one batch record (header and payload) to
// dst; appended is the time of the append in unix ns.
func appendRecord(dst []byte, batch []relaykit.Event, appended int64) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, recHeader)...)
	dst = append(dst, kindBatch)
	dst = appendBatch(dst, batch, appended)
	return sealRecord(dst, start, int64(len(batch)), appended)
}

// appendBatch appends the batch payload of version 3 (without a kind).
func appendBatch(dst []byte, batch []relaykit.Event, appended int64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(batch)))
	dst = binary.AppendVarint(dst, appended)
	for i := range batch {
		dst = appendEvent(dst, &batch[i])
	}
	return dst
}

// appendRequestRecord appends reqs as one requests record to dst.
func appendRequestRecord(dst []byte, reqs []relaykit.Request, appended int64) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, recHeader)...)
	dst = append(dst, kindRequests)
	dst = binary.AppendUvarint(dst, uint64(len(reqs)))
	events := int64(0)
	for i := range reqs {
		r := &reqs[i]
		dst = appendBytes(dst, []byte(r.Format))
		dst = binary.AppendUvarint(dst, uint64(r.Events))
		dst = binary.AppendVarint(dst, r.OldestReceive)
		dst = binary.AppendVarint(dst, r.NewestReceive)
		dst = appendBytes(dst, r.Index)
		dst = appendBytes(dst, r.Body)
		events += int64(r.Events)
	}
	return sealRecord(dst, start, events, appended)
}

// sealRecord fills in the header of the record at dst[start:].
func sealRecord(dst []byte, start int, events, appended int64) []byte {
	payload := dst[start+recHeader:]
	h := dst[start : start+recHeader]
	copy(h, recMarker)
	binary.LittleEndian.PutUint32(h[4:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[8:], uint32(events))
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

// parseHeader decodes a record header of a segment of version v (3 or 4)
// and checks it against the bytes left in the segment (left counts from the
// header's start).
func parseHeader(h []byte, left int64, v byte) (recHead, bool) {
	if len(h) < recHeader || string(h[:4]) != recMarkerOf(v) ||
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

// decodeRecord decodes the payload p of a record of a segment of version v
// into the events of a batch record (reusing evs) or the requests of a
// requests record (reusing reqs); the other is returned empty. Byte slices
// alias p.
func decodeRecord(p []byte, v byte, evs []relaykit.Event, reqs []relaykit.Request) ([]relaykit.Event, []relaykit.Request, error) {
	if v >= 4 {
		if len(p) == 0 {
			return evs[:0], reqs[:0], errCorrupt
		}
		kind := p[0]
		p = p[1:]
		if kind == kindRequests {
			reqs, err := decodeRequests(p, reqs)
			return evs[:0], reqs, err
		}
		if kind != kindBatch {
			return evs[:0], reqs[:0], errCorrupt
		}
	}
	evs, err := decodeBatch(p, evs)
	return evs, reqs[:0], err
}

// decodeRequests decodes the requests of a requests payload (after its
// kind) into dst. Their byte slices alias p; Format is a new string.
func decodeRequests(p []byte, dst []relaykit.Request) ([]relaykit.Request, error) {
	d := decoder{p: p}
	count := d.uvarint()
	// Every request takes at least 6 bytes.
	if d.err || count == 0 || count > uint64(len(p))/6 {
		return dst[:0], errCorrupt
	}
	dst = dst[:0]
	for range int(count) {
		var r relaykit.Request
		r.Format = string(d.bytes())
		n := d.uvarint()
		r.OldestReceive = d.varint()
		r.NewestReceive = d.varint()
		r.Index = d.bytes()
		r.Body = d.bytes()
		if d.err || n > maxRecordLen {
			return dst[:0], errCorrupt
		}
		r.Events = int(n)
		dst = append(dst, r)
	}
	if len(d.p) != 0 {
		return dst[:0], errCorrupt
	}
	return dst, nil
}

// decodeBatch decodes a batch payload (without a kind) into dst, reusing
// dst's events and their Fields slices. The events' byte slices alias p
// (capacity-limited, so appending to them copies).
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
