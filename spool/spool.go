package spool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
)

// ErrFull is returned by [Spool.Append] when the batch would make the
// spool exceed [Config.MaxBytes]. The batch was not written; the
// caller counts it as dropped, waits for room, or calls [Spool.Discard].
// Unread data is never overwritten.
var ErrFull = errors.New("spool: full")

// Errors returned by the package besides [ErrFull] and [ErrLocked]. Test
// for them with [errors.Is].
var (
	// ErrClosed is returned by every method of a [Spool] after Close.
	ErrClosed = errors.New("spool: closed")
	// ErrInvalidConfig is wrapped by every error [Open] returns for a bad
	// [Config].
	ErrInvalidConfig = errors.New("spool: invalid config")
	// ErrRequests is wrapped by the error [Spool.Replay] returns at a
	// record of requests, which has no events to replay.
	ErrRequests = errors.New("spool: record holds requests, not events")
)

// Defaults of [Config].
const (
	DefaultMaxBytes     = 1 << 30
	DefaultSegmentBytes = 64 << 20
	// DefaultFileMode is the permission of the files a Spool creates.
	DefaultFileMode = 0o640
	// DefaultDirMode is the permission of the directory a Spool creates.
	DefaultDirMode = 0o750
)

const (
	segSuffix = ".seg"
	lockName  = "lock"
)

// Config configures a [Spool]. Only Dir is required.
type Config struct {
	// Dir is the spool's directory, used by this Spool alone: Open
	// locks it (file "lock"), and a second Spool on it, in this process or
	// another, gets an error wrapping [ErrLocked]. It is created (mode 0750
	// before umask) if missing.
	Dir string
	// MaxBytes is the most bytes the spool's segment files may hold
	// together (unacknowledged records, plus acknowledged records of
	// segments not yet removed). Zero means 1 GiB.
	MaxBytes int64
	// SegmentBytes is the size at which a new segment file is started.
	// Segments are removed once every record in them is acknowledged or
	// discarded. Zero means 64 MiB.
	SegmentBytes int64
	// Fsync makes Append fsync the segment before returning, and Ack
	// fsync the head file: acknowledged batches then survive a power loss,
	// at the cost of a disk flush per call. The default (false) relies on
	// the page cache, which survives a crash or kill -9 of the process but
	// not of the machine.
	Fsync bool
	// FileMode is the permission of created files, before umask. Zero
	// means 0640.
	FileMode os.FileMode
	// FS is the file system. Nil means the operating system's ([OSFS]).
	FS FS
	// Clock stamps each record's append time (one read per Append). Nil
	// means [clock.Default].
	Clock *clock.Clock
}

// Stats is a snapshot of a [Spool]'s counters. Counters only grow;
// Bytes, Segments, Batches, Events and Oldest describe the spool now.
type Stats struct {
	// Appended and AppendedEvents count batches and events Append wrote.
	Appended, AppendedEvents int64
	// Acked and AckedEvents count batches and events acknowledged (by
	// [Spool.Ack], or by Replay after its callback succeeded).
	Acked, AckedEvents int64
	// Refused counts batches Append refused with ErrFull.
	Refused int64
	// Discarded and DiscardedEvents count batches and events
	// [Spool.Discard] removed unacknowledged.
	Discarded, DiscardedEvents int64

	// Corrupt counts damaged records and damaged runs of bytes that
	// reading skipped: a record whose header or payload checksum failed,
	// or bytes between two valid records that are none.
	Corrupt int64
	// CorruptBytes counts the bytes skipped with them.
	CorruptBytes int64
	// LostEvents counts the events of the backlog that damage cost: the
	// events of skipped records whose header was intact, and of records in
	// segments that went missing. Events of a record whose header itself
	// was destroyed are unknown and not counted here (see CorruptBytes).
	LostEvents int64
	// TornBytes counts bytes of an incomplete or damaged last record cut
	// from the newest segment at open (a crash during Append).
	TornBytes int64
	// MissingSegments counts segment files that were expected (between
	// the head and the newest segment) but absent or unreadable.
	MissingSegments int64

	// WriteErrors, SyncErrors, ReadErrors and HeadErrors count failed
	// writes (and segment creations), fsyncs, reads of records, and writes
	// of the head file. None is sticky: the next call tries again.
	WriteErrors, SyncErrors, ReadErrors, HeadErrors int64

	// Bytes is the current size of the segment files, in bytes.
	Bytes int64
	// Segments is the current number of segment files.
	Segments int
	// Batches and Events are the backlog: batches and events appended and
	// not yet acknowledged, discarded or lost, those left by an earlier
	// process included (counted from the record headers at open).
	Batches, Events int64
	// Oldest is when the oldest batch of the backlog was appended; zero
	// when the backlog is empty.
	Oldest time.Time
}

// RecordID identifies a record of a [Spool]: its segment and offset. IDs
// order as the records do. The zero RecordID identifies no record.
type RecordID struct {
	seg uint64
	off int64
	// size (header included) and events, when known: Ack needs no read.
	size, events int64
}

// IsZero reports whether id identifies no record.
func (id RecordID) IsZero() bool { return id.seg == 0 && id.off == 0 }

// at returns the position of id alone.
func (id RecordID) at() RecordID { return RecordID{seg: id.seg, off: id.off} }

// Less reports whether id comes before o in the spool.
func (id RecordID) Less(o RecordID) bool {
	return id.seg < o.seg || (id.seg == o.seg && id.off < o.off)
}

// String returns "segment:offset".
func (id RecordID) String() string {
	return strconv.FormatUint(id.seg, 10) + ":" + strconv.FormatInt(id.off, 10)
}

// Record is a batch read back by [Spool.Peek]: its events (a record
// written by [Spool.Append]) or its requests (written by
// [Spool.AppendRequests]).
type Record struct {
	// ID identifies the record, for [Spool.Ack].
	ID RecordID
	// Events is the batch, or nil for a record of requests. The slice and
	// the events' byte slices alias the spool's read buffer: valid only
	// until the next Peek, Replay or Close.
	Events []relaykit.Event
	// Requests are the requests of a record written by AppendRequests, in
	// order, or nil. Their byte slices alias the spool's read buffer, as
	// Events do.
	Requests []relaykit.Request
	// Appended is when the batch was appended.
	Appended time.Time
}

// Discarded says what [Spool.Discard] removed.
type Discarded struct {
	// Batches and Events count the unacknowledged records removed and
	// their events.
	Batches, Events int64
	// First and Last are the first and last record removed (zero when
	// none), so that a caller holding copies of some records in memory
	// knows which of them lost their disk copy.
	First, Last RecordID
}

// Spool is a disk queue of batches, safe for concurrent use by multiple
// goroutines. [Spool.Append] writes a batch as one checksummed record at
// the tail; [Spool.Peek] reads the record at the head (the oldest not yet
// acknowledged) and [Spool.Ack] acknowledges records up to one, which
// moves the head past them. A write-ahead user appends each batch, sends
// its own copy from memory and acknowledges the record after delivery: it
// never reads back what it still holds. [Spool.Replay] is the loop of
// Peek, a callback and Ack. The head is saved in a small file, so a
// restarted process resumes at the oldest unacknowledged record. See the
// package documentation for the format, the crash guarantees and what
// each kind of disk damage costs.
//
// Appends are serialised; one Peek (or Replay) runs at a time; Append,
// Ack, Discard and Stats may run during a Peek, and none of them waits for
// the I/O of another beyond its own lock.
type Spool struct {
	cfg  Config
	fs   FS
	lock io.Closer
	pool sync.Pool

	mu       sync.Mutex
	segs     []segInfo // ascending id, none before the head's; the last is the write segment
	done     []segInfo // acknowledged segments not removed yet (the head could not be saved)
	w        File      // open write segment (the last of segs), or nil when sealed
	bytes    int64
	nextID   uint64
	head     RecordID // oldest unacknowledged record, or where the next one will be
	closed   bool
	gen      uint64 // changes whenever the head moves other than by Ack
	headF    File
	headGen  uint64
	headBuf  [headSlot]byte
	recent   [recentRecords]recentRec // records appended or read lately, for Ack
	recentAt int
	// backlog: unacknowledged records and their events.
	pendBatches, pendEvents int64
	readErrAt               RecordID
	readErrs                int

	rmu        sync.Mutex // the reader: Peek and its buffers
	rf         File
	rfID       uint64
	rbuf       []byte
	events     []relaykit.Event
	reqs       []relaykit.Request
	lastFormat string

	appended, appendedEvents atomic.Int64
	acked, ackedEvents       atomic.Int64
	refused                  atomic.Int64
	discarded, discardedEv   atomic.Int64
	corrupt, corruptBytes    atomic.Int64
	lost, torn, missing      atomic.Int64
	writeErrors, syncErrors  atomic.Int64
	readErrors, headErrors   atomic.Int64
}

type segInfo struct {
	id   uint64
	size int64 // valid bytes: reads stop here
	v    byte  // format version: 2, 3 or 4 (version)
}

// recentRecords is how many records' sizes Ack can find without reading
// their header: more than a delivery queue holds in memory.
const recentRecords = 64

type recentRec struct {
	id       RecordID // position only
	size     int64
	events   int64
	appended int64 // unix ns
}

func spoolErr(op string, err error) error { return fmt.Errorf("spool:: %s: %w", op, err) }

// Open opens (or creates) the spool in cfg.Dir and locks the
// directory. It removes segments already acknowledged, cuts an incomplete
// record at the end of the newest segment (left by a crash during Append),
// and counts the backlog from the record headers. It returns an error
// wrapping [ErrLocked] if another Spool has the directory open, and
// [ErrInvalidConfig] for a bad cfg.
func Open(cfg Config) (*Spool, error) {
	if cfg.Dir == "" {
		return nil, fmt.Errorf("%w: Dir is empty", ErrInvalidConfig)
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.SegmentBytes == 0 {
		cfg.SegmentBytes = DefaultSegmentBytes
	}
	if cfg.MaxBytes < 0 || cfg.SegmentBytes < 0 {
		return nil, fmt.Errorf("%w: negative MaxBytes or SegmentBytes", ErrInvalidConfig)
	}
	if cfg.FileMode == 0 {
		cfg.FileMode = DefaultFileMode
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Default()
	}
	if cfg.FileMode&^os.ModePerm != 0 {
		return nil, fmt.Errorf("%w: FileMode %v has bits other than permissions", ErrInvalidConfig, cfg.FileMode)
	}
	s := &Spool{cfg: cfg, fs: cfg.FS, nextID: 1}
	if s.fs == nil {
		s.fs = OSFS{}
	}
	if err := s.fs.MkdirAll(cfg.Dir, DefaultDirMode); err != nil {
		return nil, spoolErr("create directory", err)
	}
	lock, err := s.fs.Lock(filepath.Join(cfg.Dir, lockName))
	if err != nil {
		return nil, err
	}
	s.lock = lock
	s.pool.New = func() any { b := make([]byte, 0, 64<<10); return &b }
	if err := s.load(); err != nil {
		s.closeFiles()
		_ = s.lock.Close()
		return nil, err
	}
	return s, nil
}

func (s *Spool) segPath(id uint64) string {
	return filepath.Join(s.cfg.Dir, fmt.Sprintf("%020d%s", id, segSuffix))
}

// load reads the directory: segments, head, torn tail, backlog.
func (s *Spool) load() error {
	entries, err := s.fs.ReadDir(s.cfg.Dir)
	if err != nil {
		return spoolErr("read directory", err)
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), segSuffix)
		if !ok || len(name) != 20 || !e.Type().IsRegular() {
			continue
		}
		id, err := strconv.ParseUint(name, 10, 64)
		if err != nil || id == 0 {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return spoolErr("read directory", err)
		}
		s.segs = append(s.segs, segInfo{id: id, size: info.Size(), v: version})
	}
	slices.SortFunc(s.segs, func(a, b segInfo) int { return cmpU64(a.id, b.id) })

	head, gen, ok := s.readHead()
	s.headGen = gen
	write := !ok // a new spool gets its head file at once
	if !ok {
		head, ok = s.readPositionV2()
	}
	if !ok && len(s.segs) > 0 {
		head = RecordID{seg: s.segs[0].id, off: segHeader}
	}
	s.head = head
	// Segments before the head are fully acknowledged.
	for len(s.segs) > 0 && s.segs[0].id < s.head.seg {
		if err := s.fs.Remove(s.segPath(s.segs[0].id)); err != nil {
			return spoolErr("remove acknowledged segment", err)
		}
		s.segs = s.segs[1:]
	}
	if err := s.checkSegments(); err != nil {
		return err
	}
	if len(s.segs) == 0 {
		s.nextID = max(s.head.seg, 1)
		s.head = RecordID{seg: s.nextID, off: segHeader}
	} else {
		s.nextID = s.segs[len(s.segs)-1].id + 1
		if s.head.seg < s.segs[0].id {
			s.missing.Add(int64(s.segs[0].id - s.head.seg))
			s.head = RecordID{seg: s.segs[0].id, off: segHeader}
		}
		if err := s.openWriteSegment(); err != nil {
			return err
		}
	}
	for _, sg := range s.segs {
		s.bytes += sg.size
	}
	s.recountLocked()
	if write {
		// Counted when it fails (HeadErrors); the next acknowledgement
		// writes it again. Until then a crash reads from the first
		// segment, which is where the head is anyway.
		if s.writeHeadLocked() == nil {
			_ = s.fs.Remove(filepath.Join(s.cfg.Dir, posFileV2))
		}
	}
	return nil
}

// checkSegments reads each segment's magic, drops unreadable segments and
// counts gaps in the numbering.
func (s *Spool) checkSegments() error {
	kept := s.segs[:0]
	var prev uint64
	for i, sg := range s.segs {
		v, err := s.segVersion(sg.id)
		last := i == len(s.segs)-1
		switch {
		case err == nil:
		case last && sg.size < segHeader+recHeader:
			// A crash while the newest segment was created: it holds no
			// record yet. Start it again.
			if err := s.rewriteMagic(sg.id); err != nil {
				return err
			}
			s.torn.Add(sg.size)
			sg.size, v = segHeader, version
		default:
			// A segment whose magic is gone cannot be read: count it.
			s.missing.Add(1)
			continue
		}
		sg.v = v
		if prev != 0 && sg.id > prev+1 && sg.id-prev-1 < 1<<32 {
			s.missing.Add(int64(sg.id - prev - 1))
		}
		prev = sg.id
		kept = append(kept, sg)
	}
	s.segs = kept
	return nil
}

// segVersion reads a segment's magic: 4, 3 or 2.
func (s *Spool) segVersion(id uint64) (byte, error) {
	f, err := s.fs.OpenFile(s.segPath(id), os.O_RDONLY, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var m [len(segMagic)]byte
	if _, err := f.ReadAt(m[:], 0); err != nil {
		return 0, err
	}
	switch string(m[:]) {
	case segMagic:
		return version, nil
	case segMagicV3:
		return 3, nil
	case segMagicV2:
		return 2, nil
	}
	return 0, errCorrupt
}

func (s *Spool) rewriteMagic(id uint64) error {
	f, err := s.fs.OpenFile(s.segPath(id), os.O_WRONLY, s.cfg.FileMode)
	if err != nil {
		return spoolErr("open segment", err)
	}
	defer f.Close()
	if err := f.Truncate(0); err != nil {
		return spoolErr("open segment", err)
	}
	if _, err := f.WriteAt([]byte(segMagic), 0); err != nil {
		return spoolErr("open segment", err)
	}
	return nil
}

// openWriteSegment cuts the torn tail of the newest segment and opens it
// for appending. A segment of an earlier version is left sealed: the next
// Append starts one of the current version.
func (s *Spool) openWriteSegment() error {
	last := &s.segs[len(s.segs)-1]
	if last.v != version {
		end := s.scanEnd(*last)
		if end < last.size {
			s.torn.Add(last.size - end)
			last.size = end
		}
		return nil
	}
	f, err := s.fs.OpenFile(s.segPath(last.id), os.O_RDWR, s.cfg.FileMode)
	if err != nil {
		return spoolErr("open segment", err)
	}
	end := s.scanEnd(*last)
	if end < last.size {
		if err := f.Truncate(end); err != nil {
			_ = f.Close()
			return spoolErr("cut torn record", err)
		}
		s.torn.Add(last.size - end)
		last.size = end
	}
	s.w = f
	return nil
}

// scanEnd returns the offset after the last valid record of a segment,
// resynchronising over damage in its middle (version 3): what follows the
// last valid record is a torn tail.
func (s *Spool) scanEnd(sg segInfo) int64 {
	f, err := s.fs.OpenFile(s.segPath(sg.id), os.O_RDONLY, 0)
	if err != nil {
		return segHeader
	}
	defer f.Close()
	end := segHeader
	off := segHeader
	var buf []byte
	for off < sg.size {
		h, ok := readHead(f, sg, off)
		if ok {
			if cap(buf) < h.length {
				buf = make([]byte, h.length)
			}
			p := buf[:h.length]
			if payloadOK(f, sg, off, h, p) {
				off += h.size(sg.v)
				end = off
				continue
			}
		}
		if sg.v < 3 {
			break
		}
		off = resync(f, off+1, sg.size, sg.v)
	}
	return end
}

// recountLocked sets the backlog from the record headers of the segments
// from the head on. s.mu is held (or the spool not shared yet).
func (s *Spool) recountLocked() {
	s.pendBatches, s.pendEvents = 0, 0
	for _, sg := range s.segs {
		off := segHeader
		if sg.id == s.head.seg {
			off = s.head.off
		}
		b, e := s.walk(sg, off, sg.size)
		s.pendBatches += b
		s.pendEvents += e
	}
}

// walk counts the records of segment sg in [off, end) and their events,
// reading only headers (resynchronising over damage in version 3
// segments).
func (s *Spool) walk(sg segInfo, off, end int64) (batches, events int64) {
	if off >= end {
		return 0, 0
	}
	f, err := s.fs.OpenFile(s.segPath(sg.id), os.O_RDONLY, 0)
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	for off < end {
		h, ok := readHead(f, sg, off)
		if !ok {
			if sg.v < 3 {
				break
			}
			off = resync(f, off+1, end, sg.v)
			continue
		}
		batches++
		events += h.events
		off += h.size(sg.v)
	}
	return batches, events
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// emptyLocked reports whether every record is acknowledged.
func (s *Spool) emptyLocked() bool {
	if len(s.segs) == 0 {
		return true
	}
	last := s.segs[len(s.segs)-1]
	return s.head.seg > last.id || (s.head.seg == last.id && s.head.off >= last.size)
}

// Len returns the backlog: unacknowledged batches and their events.
func (s *Spool) Len() (batches, events int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pendBatches, s.pendEvents
}

// Stats returns a snapshot of the counters. For Oldest it reads the header
// of the oldest unacknowledged record, unless it was appended or read
// lately.
func (s *Spool) Stats() Stats {
	s.mu.Lock()
	bytes, segs := s.bytes, len(s.segs)+len(s.done)
	pb, pe := s.pendBatches, s.pendEvents
	var oldest time.Time
	if r, ok := s.recall(s.head); ok && pb > 0 {
		oldest = time.Unix(0, r.appended)
	} else if pb > 0 && !s.closed && len(s.segs) > 0 {
		if f, err := s.fs.OpenFile(s.segPath(s.segs[0].id), os.O_RDONLY, 0); err == nil {
			if h, ok := readHead(f, s.segs[0], s.head.off); ok {
				oldest = time.Unix(0, h.appended)
			}
			_ = f.Close()
		}
	}
	s.mu.Unlock()
	return Stats{
		Appended:        s.appended.Load(),
		AppendedEvents:  s.appendedEvents.Load(),
		Acked:           s.acked.Load(),
		AckedEvents:     s.ackedEvents.Load(),
		Refused:         s.refused.Load(),
		Discarded:       s.discarded.Load(),
		DiscardedEvents: s.discardedEv.Load(),
		Corrupt:         s.corrupt.Load(),
		CorruptBytes:    s.corruptBytes.Load(),
		LostEvents:      s.lost.Load(),
		TornBytes:       s.torn.Load(),
		MissingSegments: s.missing.Load(),
		WriteErrors:     s.writeErrors.Load(),
		SyncErrors:      s.syncErrors.Load(),
		ReadErrors:      s.readErrors.Load(),
		HeadErrors:      s.headErrors.Load(),
		Bytes:           bytes,
		Segments:        segs,
		Batches:         pb,
		Events:          pe,
		Oldest:          oldest,
	}
}

// Close closes the spool's files and releases the directory lock. It waits for a running Peek or
// Replay to return. Every other method returns ErrClosed after Close;
// Close is idempotent.
func (s *Spool) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	var err error // with Fsync every Append fsynced its record already
	s.mu.Unlock()
	s.rmu.Lock()
	s.mu.Lock()
	s.closeFiles()
	s.mu.Unlock()
	s.rmu.Unlock()
	if lerr := s.lock.Close(); err == nil {
		err = lerr
	}
	if err != nil {
		return spoolErr("close", err)
	}
	return nil
}

// closeFiles closes every open file. s.mu (and s.rmu) are held.
func (s *Spool) closeFiles() {
	if s.w != nil {
		_ = s.w.Close()
		s.w = nil
	}
	if s.headF != nil {
		_ = s.headF.Close()
		s.headF = nil
	}
	if s.rf != nil {
		_ = s.rf.Close()
		s.rf = nil
	}
}
