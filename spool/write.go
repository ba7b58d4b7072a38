package spool

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/relaykit/relaykit"
)

// Append writes batch as one record at the tail of the spool and returns
// its ID. It returns once the record is in the operating system's page
// cache, or on disk with [Config.Fsync]. An empty batch is a no-op
// (zero ID). Append does not retain batch.
//
// Errors:
//   - [ErrFull] (wrapped): the record would make the spool exceed
//     MaxBytes; nothing was written.
//   - ErrClosed after Close.
//   - a write or segment-creation error (ENOSPC, EIO, ...), with a zero
//     ID: nothing was written (a partial record is cut again). Errors are
//     not sticky: the next Append tries again, in a new segment if the old
//     one could not be repaired.
//
// When the disk or the spool is full and every record is acknowledged,
// Append first reclaims the space of the acknowledged records.
//   - an fsync error, with a non-zero ID: the record was written but may
//     not survive a power loss. It is part of the backlog like any other;
//     a caller that delivers its own copy acknowledges it as usual. The
//     segment is sealed; the next Append starts a new one.
func (s *Spool) Append(batch []relaykit.Event) (RecordID, error) {
	if len(batch) == 0 {
		return RecordID{}, nil
	}
	bp := s.pool.Get().(*[]byte)
	now := s.cfg.Clock.Nano()
	rec := appendRecord((*bp)[:0], batch, now)
	return s.append(bp, rec, int64(len(batch)), now)
}

// AppendRequests writes reqs, the requests a [relaykit.RequestSink]
// encoded from one batch, as one record at the tail of the spool and
// returns its ID, exactly as [Spool.Append] writes a batch of events (same
// durability, errors and space accounting): [Spool.Peek] returns them in
// Record.Requests. Requests without events are a no-op (zero ID). It does
// not retain reqs.
func (s *Spool) AppendRequests(reqs []relaykit.Request) (RecordID, error) {
	events := int64(0)
	for i := range reqs {
		events += int64(reqs[i].Events)
	}
	if events == 0 {
		return RecordID{}, nil
	}
	bp := s.pool.Get().(*[]byte)
	now := s.cfg.Clock.Nano()
	rec := appendRequestRecord((*bp)[:0], reqs, now)
	return s.append(bp, rec, events, now)
}

// append writes the record rec (of events, in the pooled buffer bp) as
// Append does.
func (s *Spool) append(bp *[]byte, rec []byte, events, now int64) (RecordID, error) {
	s.mu.Lock()
	id, err := s.writeLocked(rec, events, now)
	if err != nil && id.IsZero() && (errors.Is(err, syscall.ENOSPC) || errors.Is(err, ErrFull)) && s.reclaimLocked() {
		id, err = s.writeLocked(rec, events, now)
	}
	if errors.Is(err, ErrFull) {
		s.refused.Add(1)
	}
	s.mu.Unlock()
	if cap(rec) <= 4<<20 {
		*bp = rec[:0]
	}
	s.pool.Put(bp)
	return id, err
}

func (s *Spool) writeLocked(rec []byte, events, appended int64) (RecordID, error) {
	if s.closed {
		return RecordID{}, ErrClosed
	}
	n := int64(len(rec))
	if n-recHeader > maxRecordLen {
		return RecordID{}, fmt.Errorf("%w: batch of %d bytes exceeds the record limit", ErrFull, n)
	}
	last := s.lastSeg()
	newSeg := s.w == nil || (last.size > segHeader && last.size+n > s.cfg.SegmentBytes)
	need := n
	if newSeg {
		need += segHeader
	}
	if s.bytes+need > s.cfg.MaxBytes {
		return RecordID{}, ErrFull
	}
	if newSeg {
		if err := s.newSegmentLocked(); err != nil {
			s.writeErrors.Add(1)
			return RecordID{}, err
		}
		last = s.lastSeg()
	}
	off := last.size
	if k, err := s.w.WriteAt(rec, off); err != nil {
		s.writeErrors.Add(1)
		if k > 0 {
			// Cut the partial record so later records follow a valid one.
			if terr := s.w.Truncate(off); terr != nil {
				// The garbage stays past the segment's valid size, where
				// no reader looks; seal the segment.
				s.sealLocked()
			}
		}
		return RecordID{}, spoolErr("append", err)
	}
	id := RecordID{seg: last.id, off: off, size: n, events: events}
	last.size += n
	s.bytes += n
	s.pendBatches++
	s.pendEvents += events
	s.appended.Add(1)
	s.appendedEvents.Add(events)
	s.remember(id, appended)
	if s.cfg.Fsync {
		if err := s.w.Sync(); err != nil {
			// After a failed fsync the kernel may have dropped the dirty
			// pages' error state: never trust this file again for new
			// records.
			s.syncErrors.Add(1)
			s.sealLocked()
			return id, spoolErr("fsync", err)
		}
	}
	return id, nil
}

func (s *Spool) lastSeg() *segInfo {
	if len(s.segs) == 0 {
		return &segInfo{}
	}
	return &s.segs[len(s.segs)-1]
}

// sealLocked closes the write segment; the next Append starts a new one.
func (s *Spool) sealLocked() {
	if s.w != nil {
		_ = s.w.Close()
		s.w = nil
	}
}

// newSegmentLocked seals the write segment and creates the next one.
func (s *Spool) newSegmentLocked() error {
	if s.w != nil && s.cfg.Fsync {
		if err := s.w.Sync(); err != nil {
			s.syncErrors.Add(1)
		}
	}
	s.sealLocked()
	id := s.nextID
	path := s.segPath(id)
	f, err := s.fs.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, s.cfg.FileMode)
	if err != nil {
		return spoolErr("new segment", err)
	}
	if _, err := f.WriteAt([]byte(segMagic), 0); err != nil {
		_ = f.Close()
		_ = s.fs.Remove(path)
		return spoolErr("new segment", err)
	}
	if s.cfg.Fsync {
		if err := syncDirFS(s.fs, s.cfg.Dir); err != nil {
			_ = f.Close()
			_ = s.fs.Remove(path)
			return spoolErr("new segment", err)
		}
	}
	s.nextID++
	s.w = f
	s.segs = append(s.segs, segInfo{id: id, size: segHeader, v: version})
	s.bytes += segHeader
	s.advanceLocked()
	return nil
}

// reclaimLocked frees the space of acknowledged records when the disk or
// the spool is full and nothing is left to read: it removes sealed segments and cuts the
// write segment back to its magic. It reports whether it freed anything.
func (s *Spool) reclaimLocked() bool {
	if !s.emptyLocked() || len(s.segs) == 0 {
		return false
	}
	freed := false
	for len(s.segs) > 1 {
		sg := s.segs[0]
		if err := s.fs.Remove(s.segPath(sg.id)); err != nil {
			return freed
		}
		s.segs = s.segs[1:]
		s.bytes -= sg.size
		freed = true
	}
	last := &s.segs[0]
	if s.w != nil && last.size > segHeader {
		if err := s.w.Truncate(segHeader); err != nil {
			s.sealLocked()
			return freed
		}
		s.bytes -= last.size - segHeader
		last.size = segHeader
		freed = true
	}
	s.head = RecordID{seg: last.id, off: segHeader}
	s.gen++
	_ = s.writeHeadLocked()
	return freed
}

// remember notes a record's size, events and append time.
func (s *Spool) remember(id RecordID, appended int64) {
	s.recent[s.recentAt] = recentRec{id: id.at(), size: id.size, events: id.events, appended: appended}
	s.recentAt = (s.recentAt + 1) % recentRecords
}

// recall finds a remembered record by its position.
func (s *Spool) recall(id RecordID) (recentRec, bool) {
	at := id.at()
	for i := range s.recent {
		if s.recent[i].id == at && s.recent[i].size > 0 {
			return s.recent[i], true
		}
	}
	return recentRec{}, false
}
