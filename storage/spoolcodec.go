package storage

import (
	"encoding/binary"
	"errors"
	"hash/crc32"

	"github.com/relaykit/relaykit"
)

// Spool on-disk format. All integers are little endian.
//
//	segment  = magic record*
//	magic    = "RKSPOOL2"                                 8 bytes
//	record   = length:uint32 crc:uint32 payload           length = len(payload)
//	crc      = CRC-32C (Castagnoli) of payload
//	payload  = count:uvarint appended:varint event*count  appended: unix ns
//	event    = receiveTime:varint time:varint priority:byte flags:uvarint
//	           host source sourcetype index raw           each bytes
//	           nfields:uvarint (key:bytes value:bytes)*nfields
//	bytes    = length:uvarint data
const (
	segMagic     = "RKSPOOL2"
	segHeader    = int64(len(segMagic))
	recHeader    = 8
	maxRecordLen = 1 << 30
)

var (
	castagnoli = crc32.MakeTable(crc32.Castagnoli)

	errCorrupt = errors.New("storage: corrupt spool record")
)

// appendRecord appends batch as one record (header and payload) to dst;
// appended is the time of the append in unix ns.
func appendRecord(dst []byte, batch []relaykit.Event, appended int64) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, recHeader)...)
	dst = binary.AppendUvarint(dst, uint64(len(batch)))
	dst = binary.AppendVarint(dst, appended)
	for i := range batch {
		dst = appendEvent(dst, &batch[i])
	}
	payload := dst[start+recHeader:]
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(payload, castagnoli))
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

// checkRecordHeader validates a record header against the bytes left in the
// segment and returns the payload length.
func checkRecordHeader(h []byte, left int64) (int, uint32, bool) {
	n := binary.LittleEndian.Uint32(h)
	if n == 0 || n > maxRecordLen || int64(n) > left-recHeader {
		return 0, 0, false
	}
	return int(n), binary.LittleEndian.Uint32(h[4:]), true
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
