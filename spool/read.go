package spool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/relaykit/relaykit"
)

// readHead reads and checks the header of the record at off in segment sg
// (read through f). A read error counts as damage: see readHeadErr.
func readHead(f File, sg segInfo, off int64) (recHead, bool) {
	h, ok, _ := readHeadErr(f, sg, off)
	return h, ok
}

// readHeadErr is readHead that also returns a read error (other than a
// short read at the end of the file), which is not damage.
func readHeadErr(f File, sg segInfo, off int64) (recHead, bool, error) {
	var buf [recHeader + maxMetaLen]byte
	left := sg.size - off
	if left <= 0 {
		return recHead{}, false, nil
	}
	n, err := f.ReadAt(buf[:min(int64(len(buf)), left)], off)
	if err != nil && !errors.Is(err, io.EOF) {
		return recHead{}, false, err
	}
	h, ok := parseAny(buf[:n], sg.v, left)
	return h, ok, nil
}

// parseAny parses the header at the start of buf in a segment of version v.
func parseAny(buf []byte, v byte, left int64) (recHead, bool) {
	n := len(buf)
	if v == 2 {
		if n < recHeaderV2 {
			return recHead{}, false
		}
		return parseHeaderV2(buf[:recHeaderV2], buf[recHeaderV2:n], left)
	}
	if n < recHeader {
		return recHead{}, false
	}
	return parseHeader(buf[:recHeader], left, v)
}

// payloadOK reads the payload of the record at off into p and checks it.
func payloadOK(f File, sg segInfo, off int64, h recHead, p []byte) bool {
	hs := h.size(sg.v) - int64(h.length)
	if _, err := f.ReadAt(p, off+hs); err != nil {
		return false
	}
	return crc32.Checksum(p, castagnoli) == h.crc
}

// resync returns the offset of the first valid record (header and payload
// checksums) at or after from in a version 3 segment, or end.
func resync(f File, from, end int64, v byte) int64 {
	const chunk = 64 << 10
	buf := make([]byte, chunk+recHeader)
	var payload []byte
	sg := segInfo{size: end, v: v}
	marker := []byte(recMarkerOf(v))
	for from < end {
		n, _ := f.ReadAt(buf[:min(int64(len(buf)), end-from)], from)
		if n < len(marker) {
			return end
		}
		b := buf[:n]
		for i := 0; ; {
			j := bytes.Index(b[i:], marker)
			if j < 0 {
				break
			}
			at := from + int64(i+j)
			if h, ok := readHead(f, sg, at); ok {
				if cap(payload) < h.length {
					payload = make([]byte, h.length)
				}
				if payloadOK(f, sg, at, h, payload[:h.length]) {
					return at
				}
			}
			i += j + 1
		}
		if n < len(buf) {
			return end
		}
		from += chunk // the overlap covers a marker cut by the chunk's end
	}
	return end
}

// advanceLocked moves the head past exhausted sealed segments and onto the
// first segment; the segments it leaves are removed once the head is
// saved, so that a crash in between never shows a missing segment. If the
// head cannot be saved, they wait (out of the readers' sight) for the next
// call. s.mu is held.
func (s *Spool) advanceLocked() {
	for len(s.segs) > 0 {
		first := s.segs[0]
		if s.head.seg < first.id {
			s.head = RecordID{seg: first.id, off: segHeader}
		}
		if s.head.seg == first.id && (s.head.off < first.size || len(s.segs) == 1) {
			break
		}
		if s.head.seg == first.id {
			s.head = RecordID{seg: s.segs[1].id, off: segHeader}
		}
		s.segs = s.segs[1:]
		s.done = append(s.done, first)
	}
	if len(s.done) == 0 || s.writeHeadLocked() != nil {
		return
	}
	kept := s.done[:0]
	for _, sg := range s.done {
		if err := s.fs.Remove(s.segPath(sg.id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			kept = append(kept, sg)
			continue
		}
		s.bytes -= sg.size
	}
	s.done = kept
}

// Peek reads the oldest unacknowledged record. It returns io.EOF when
// every record is acknowledged, and ErrClosed after Close. Records that
// fail their checksums are skipped and counted ([Stats] Corrupt,
// CorruptBytes, LostEvents), and so is a segment file that went missing;
// the head moves past them. A read error is returned (and counted) as it
// is, unless the same record failed to read three times in a row: it is
// then skipped as damaged, so one bad sector cannot stop the queue.
//
// The record stays the oldest until [Spool.Ack] acknowledges it (or
// Discard removes it): Peek returns it again. Its Events are valid only
// until the next Peek, Replay or Close. One Peek runs at a time; a second
// call waits for the first.
func (s *Spool) Peek() (Record, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return Record{}, ErrClosed
		}
		s.advanceLocked()
		if s.emptyLocked() {
			s.mu.Unlock()
			return Record{}, io.EOF
		}
		sg, at, gen := s.segs[0], s.head, s.gen
		s.mu.Unlock()

		rec, err := s.readAt(sg, at, gen)
		if errors.Is(err, errRetry) {
			continue
		}
		return rec, err
	}
}

// errRetry makes Peek look at the head again: it moved, or damage was
// skipped.
var errRetry = errors.New("retry")

// readAt reads the record at the head (at, in sg) as Peek does. gen is
// s.gen when at was the head.
func (s *Spool) readAt(sg segInfo, at RecordID, gen uint64) (Record, error) {
	if s.rf == nil || s.rfID != sg.id {
		if s.rf != nil {
			_ = s.rf.Close()
			s.rf = nil
		}
		f, err := s.fs.OpenFile(s.segPath(sg.id), os.O_RDONLY, 0)
		if errors.Is(err, fs.ErrNotExist) {
			return Record{}, s.dropSegment(sg, gen)
		}
		if err != nil {
			return Record{}, s.readFailed(at, gen, err)
		}
		s.rf, s.rfID = f, sg.id
	}
	h, ok, err := readHeadErr(s.rf, sg, at.off)
	if err != nil {
		return Record{}, s.readFailed(at, gen, err)
	}
	if !ok {
		next := sg.size
		if sg.v >= 3 {
			next = resync(s.rf, at.off+1, sg.size, sg.v)
		}
		return Record{}, s.skip(at, gen, next-at.off, 0, false)
	}
	if cap(s.rbuf) < h.length {
		s.rbuf = make([]byte, h.length)
	}
	p := s.rbuf[:h.length]
	hs := h.size(sg.v) - int64(h.length)
	if _, err := s.rf.ReadAt(p, at.off+hs); err != nil && !errors.Is(err, io.EOF) {
		return Record{}, s.readFailed(at, gen, err)
	}
	if crc32.Checksum(p, castagnoli) != h.crc {
		return Record{}, s.skip(at, gen, h.size(sg.v), h.events, true)
	}
	events, reqs, err := decodeRecord(p, sg.v, s.events, s.reqs)
	s.events, s.reqs = events[:0], reqs[:0]
	n := int64(len(events))
	for i := range reqs {
		n += int64(reqs[i].Events)
		if f := reqs[i].Format; f == s.lastFormat {
			reqs[i].Format = s.lastFormat // one string for the formats read
		} else {
			s.lastFormat = f
		}
	}
	if err != nil || n != h.events {
		return Record{}, s.skip(at, gen, h.size(sg.v), h.events, true)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen != gen || s.closed {
		return Record{}, errRetry
	}
	s.readErrs = 0
	id := RecordID{seg: at.seg, off: at.off, size: h.size(sg.v), events: h.events}
	s.remember(id, h.appended)
	if len(reqs) > 0 {
		return Record{ID: id, Requests: reqs, Appended: time.Unix(0, h.appended)}, nil
	}
	return Record{ID: id, Events: events, Appended: time.Unix(0, h.appended)}, nil
}

// skip moves the head past n damaged bytes at at. With counted, they were
// one record of the backlog with the given events; otherwise the backlog is
// counted again from the headers, and what it lost is the damage's cost.
func (s *Spool) skip(at RecordID, gen uint64, n, events int64, counted bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen != gen || s.closed {
		return errRetry
	}
	s.corrupt.Add(1)
	s.corruptBytes.Add(n)
	s.head = RecordID{seg: at.seg, off: at.off + n}
	s.gen++
	s.readErrs = 0
	if counted {
		s.pendBatches--
		s.pendEvents -= events
		s.lost.Add(events)
	} else {
		s.recountLostLocked()
	}
	_ = s.writeHeadLocked()
	return errRetry
}

// recountLostLocked counts the backlog again and adds what it shrank by to
// LostEvents.
func (s *Spool) recountLostLocked() {
	before := s.pendEvents
	s.advanceLocked()
	s.recountLocked()
	if d := before - s.pendEvents; d > 0 {
		s.lost.Add(d)
	}
}

// dropSegment handles a segment file that disappeared under the spool.
func (s *Spool) dropSegment(sg segInfo, gen uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen != gen || s.closed {
		return errRetry
	}
	s.missing.Add(1)
	if len(s.segs) > 0 && s.segs[0].id == sg.id {
		if len(s.segs) == 1 {
			// The write segment: its writer still holds the removed file.
			s.sealLocked()
		}
		s.segs = s.segs[1:]
		s.bytes -= sg.size
	}
	s.head = RecordID{seg: sg.id + 1, off: segHeader}
	s.gen++
	s.recountLostLocked()
	_ = s.writeHeadLocked()
	return errRetry
}

// readFailed counts a read error at the head; the third in a row at the
// same record skips it as damaged.
func (s *Spool) readFailed(at RecordID, gen uint64, err error) error {
	s.readErrors.Add(1)
	s.mu.Lock()
	if s.readErrAt != at.at() {
		s.readErrAt, s.readErrs = at.at(), 0
	}
	s.readErrs++
	again := s.readErrs < 3
	s.mu.Unlock()
	if s.rf != nil {
		_ = s.rf.Close() // reopen next time
		s.rf = nil
	}
	if again {
		return spoolErr("read", err)
	}
	s.mu.Lock()
	size, events, counted := int64(0), int64(0), false
	if r, ok := s.recall(at); ok {
		size, events, counted = r.size, r.events, true
	}
	s.mu.Unlock()
	if !counted {
		// Nothing known of the record: give up on the rest of its segment.
		size = max(s.segSize(at.seg)-at.off, 1)
	}
	return s.skip(at, gen, size, events, counted)
}

func (s *Spool) segSize(id uint64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sg := range s.segs {
		if sg.id == id {
			return sg.size
		}
	}
	return 0
}

// Ack acknowledges every record up to and including id: the head moves
// past it, and the new head is saved (fsynced with Fsync). Acknowledging a
// record already acknowledged or discarded is a no-op. Segments left with
// no unacknowledged record are removed. It returns ErrClosed after Close,
// and an error if the head file could not be written: the acknowledgement
// holds in this process, but after a crash before the next successful
// write the records since the last one would be read again.
func (s *Spool) Ack(id RecordID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if id.IsZero() || id.Less(s.head) {
		return nil
	}
	for !s.emptyLocked() && !id.Less(s.head) {
		sz, ev, ok, err := s.sizeAtHeadLocked(id)
		if err != nil {
			s.readErrors.Add(1)
			return spoolErr("ack", err)
		}
		if !ok {
			// The header at the head is damaged: resynchronise.
			sg := s.segs[0]
			next := sg.size
			if f, err := s.fs.OpenFile(s.segPath(sg.id), os.O_RDONLY, 0); err == nil {
				if sg.v >= 3 {
					next = resync(f, s.head.off+1, sg.size, sg.v)
				}
				_ = f.Close()
			}
			s.corrupt.Add(1)
			s.corruptBytes.Add(next - s.head.off)
			s.head.off = next
			s.gen++
			s.recountLostLocked()
			continue
		}
		s.head.off += sz
		s.pendBatches--
		s.pendEvents -= ev
		s.acked.Add(1)
		s.ackedEvents.Add(ev)
		s.advanceLocked()
	}
	if s.pendBatches <= 0 {
		s.pendBatches, s.pendEvents = 0, 0
	}
	return s.writeHeadLocked()
}

// sizeAtHeadLocked returns the size and events of the record at the head:
// from id when it is that record, remembered, or read from its header. A
// read error is returned as such; ok false means the header is damaged.
func (s *Spool) sizeAtHeadLocked(id RecordID) (size, events int64, ok bool, err error) {
	s.advanceLocked()
	if id.at() == s.head.at() && id.size > 0 {
		return id.size, id.events, true, nil
	}
	if r, ok := s.recall(s.head); ok {
		return r.size, r.events, true, nil
	}
	sg := s.segs[0]
	f, err := s.fs.OpenFile(s.segPath(sg.id), os.O_RDONLY, 0)
	if err != nil {
		return 0, 0, false, err
	}
	defer f.Close()
	h, ok, err := readHeadErr(f, sg, s.head.off)
	if err != nil || !ok {
		return 0, 0, false, err
	}
	return h.size(sg.v), h.events, true, nil
}

// Discard removes the unacknowledged records of the oldest segment file
// (all of it, or what is left of it past the head) to make room, and says
// what it removed. It is how a caller implements a drop-oldest policy:
// space is freed a segment at a time ([Config.SegmentBytes]), so one
// call usually makes room for many Appends. It does not wait for a Peek in
// progress (that Peek's record may be among those removed; acknowledging it
// later is a no-op). It returns a zero Discarded when the spool is empty,
// and ErrClosed after Close.
func (s *Spool) Discard() (Discarded, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Discarded{}, ErrClosed
	}
	s.advanceLocked()
	if s.emptyLocked() {
		return Discarded{}, nil
	}
	sg := s.segs[0]
	d := s.discardRange(sg, s.head.off)
	old := s.head
	s.head = RecordID{seg: sg.id + 1, off: segHeader}
	if err := s.writeHeadLocked(); err != nil {
		s.head = old
		return Discarded{}, err
	}
	if len(s.segs) == 1 {
		s.sealLocked()
	}
	if err := s.fs.Remove(s.segPath(sg.id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// The head is past it: it is removed at the next open.
		s.writeErrors.Add(1)
	}
	s.segs = s.segs[1:]
	s.bytes -= sg.size
	s.gen++
	s.advanceLocked()
	s.pendBatches -= d.Batches
	s.pendEvents -= d.Events
	if s.pendBatches <= 0 || s.pendEvents < 0 {
		s.recountLocked()
	}
	s.discarded.Add(d.Batches)
	s.discardedEv.Add(d.Events)
	return d, nil
}

// discardRange counts the records of sg from off on, as Discard reports
// them.
func (s *Spool) discardRange(sg segInfo, off int64) Discarded {
	var d Discarded
	f, err := s.fs.OpenFile(s.segPath(sg.id), os.O_RDONLY, 0)
	if err != nil {
		return d
	}
	defer f.Close()
	for off < sg.size {
		h, ok := readHead(f, sg, off)
		if !ok {
			if sg.v < 3 {
				break
			}
			off = resync(f, off+1, sg.size, sg.v)
			continue
		}
		id := RecordID{seg: sg.id, off: off, size: h.size(sg.v), events: h.events}
		if d.First.IsZero() {
			d.First = id
		}
		d.Last = id
		d.Batches++
		d.Events += h.events
		off += h.size(sg.v)
	}
	return d
}

// Replay calls fn with each stored batch, oldest first, until the spool is
// empty, fn returns an error or ctx ends: a loop of [Spool.Peek], fn and
// [Spool.Ack]. A batch is acknowledged only after fn returned nil; if fn
// fails, Replay returns its error and the same batch comes first next time.
// Batches appended while Replay runs are replayed too. Replay returns nil
// when it has caught up with the end of the spool.
//
// The batch and the events' byte slices are valid only until fn returns
// (they alias a reused read buffer); fn must not retain them. Damaged
// records are skipped and counted (see Peek). A record of requests
// ([Spool.AppendRequests]) has no events to give fn: Replay returns an
// error wrapping [ErrRequests] and leaves it at the head (read such a
// spool with Peek and Ack).
func (s *Spool) Replay(ctx context.Context, fn func(batch []relaykit.Event) error) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := s.Peek()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if rec.Requests != nil {
			return fmt.Errorf("spool: replay record %v: %w", rec.ID, ErrRequests)
		}
		if err := fn(rec.Events); err != nil {
			return err
		}
		if err := s.Ack(rec.ID); err != nil && !errors.Is(err, ErrClosed) {
			// The head file could not be written: counted; the batch may
			// be replayed again after a crash, never lost.
			continue
		}
	}
}

// Acked reports whether record id was acknowledged, discarded or lost:
// whether the head is past it.
func (s *Spool) Acked(id RecordID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return id.Less(s.head)
}
