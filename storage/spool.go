package storage

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
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
)

// ErrSpoolFull is returned by [Spool.Append] when the batch would make the
// spool exceed [SpoolConfig.MaxBytes]. The batch was not written; the
// caller counts it as dropped (or retries later). Unread data is never
// overwritten.
var ErrSpoolFull = errors.New("storage: spool full")

// Defaults of [SpoolConfig].
const (
	DefaultSpoolMaxBytes     = 1 << 30
	DefaultSpoolSegmentBytes = 64 << 20
)

const (
	segSuffix   = ".seg"
	posFile     = "position"
	posMagic    = "RKPOS001"
	posFileSize = len(posMagic) + 8 + 8 + 4
)

// SpoolConfig configures a [Spool]. Only Dir is required.
type SpoolConfig struct {
	// Dir is the spool's directory, used by this Spool alone. It is
	// created (mode 0750 before umask) if missing.
	Dir string
	// MaxBytes is the most bytes the spool's segment files may hold
	// together (unread data, plus read records of a segment not yet
	// removed). Zero means 1 GiB.
	MaxBytes int64
	// SegmentBytes is the size at which a new segment file is started.
	// Segments are removed once every record in them has been replayed.
	// Zero means 64 MiB.
	SegmentBytes int64
	// Fsync makes Append fsync the segment before returning, and Replay
	// fsync the position file after each record: acknowledged batches then
	// survive a power loss, at the cost of one or two disk flushes per
	// call. The default (false) relies on the page cache, which survives a
	// crash or kill -9 of the process but not of the machine.
	Fsync bool
	// FileMode is the permission of created files, before umask. Zero
	// means 0640.
	FileMode os.FileMode
}

// SpoolStats is a snapshot of a [Spool]'s counters.
type SpoolStats struct {
	// Appended and AppendedEvents count batches and events Append wrote.
	Appended, AppendedEvents int64
	// Replayed and ReplayedEvents count batches and events whose Replay
	// callback succeeded (and were removed from the queue).
	Replayed, ReplayedEvents int64
	// Refused counts batches Append refused with ErrSpoolFull.
	Refused int64
	// Corrupt counts records Replay skipped because their checksum or
	// encoding was wrong (disk corruption; never the result of a process
	// crash, whose torn tail is cut at open).
	Corrupt int64
	// TornBytes counts bytes of an incomplete last record cut at open.
	TornBytes int64
	// Discarded and DiscardedEvents count batches and events
	// [Spool.Discard] removed unread.
	Discarded, DiscardedEvents int64
	// Bytes is the current size of the segment files, in bytes.
	Bytes int64
	// Segments is the current number of segment files.
	Segments int
	// Batches and Events are the backlog: batches and events appended and
	// not yet replayed or discarded, those left by an earlier process
	// included (counted from the record headers at open).
	Batches, Events int64
	// Oldest is when the oldest batch of the backlog was appended; zero
	// when the backlog is empty.
	Oldest time.Time
}

// Spool is a disk queue of batches: [Spool.Append] writes a batch as one
// checksummed record at the end of the newest segment file and
// [Spool.Replay] hands records back in order, removing each only after its
// callback succeeded. The read position is kept in a small file replaced
// atomically, so a restarted process resumes where it stopped. See the
// package documentation for the format and the crash guarantees.
//
// A Spool is safe for concurrent use by multiple goroutines: Appends are
// serialised, one Replay runs at a time, and Append may run during Replay.
// Only one Spool may use a directory at a time.
type Spool struct {
	cfg  SpoolConfig
	pool sync.Pool

	mu     sync.Mutex
	segs   []segInfo // ascending id; the last is the write segment
	w      *os.File  // open write segment (the last of segs), or nil
	bytes  int64
	nextID uint64
	closed bool
	err    error
	// backlog: unread records, their events, append time (unix ns) of the
	// first one (0 when none).
	pendBatches, pendEvents, oldest int64

	rmu    sync.Mutex
	rID    uint64
	rOff   int64
	rf     *os.File
	rfID   uint64
	rbuf   []byte
	events []relaykit.Event
	posBuf []byte

	appended, appendedEvents atomic.Int64
	replayed, replayedEvents atomic.Int64
	refused, corrupt, torn   atomic.Int64
	discarded, discardedEv   atomic.Int64
}

type segInfo struct {
	id   uint64
	size int64
}

// OpenSpool opens (or creates) the spool in cfg.Dir. It removes segments
// already replayed, and cuts an incomplete record at the end of the newest
// segment (left by a crash during Append; that Append had not returned).
func OpenSpool(cfg SpoolConfig) (*Spool, error) {
	if cfg.Dir == "" {
		return nil, fmt.Errorf("%w: Dir is empty", ErrInvalidConfig)
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultSpoolMaxBytes
	}
	if cfg.SegmentBytes == 0 {
		cfg.SegmentBytes = DefaultSpoolSegmentBytes
	}
	if cfg.MaxBytes < 0 || cfg.SegmentBytes < 0 {
		return nil, fmt.Errorf("%w: negative MaxBytes or SegmentBytes", ErrInvalidConfig)
	}
	if cfg.FileMode == 0 {
		cfg.FileMode = DefaultFileMode
	}
	if cfg.FileMode&^os.ModePerm != 0 {
		return nil, fmt.Errorf("%w: FileMode %v has bits other than permissions", ErrInvalidConfig, cfg.FileMode)
	}
	if err := os.MkdirAll(cfg.Dir, DefaultDirMode); err != nil {
		return nil, fmt.Errorf("storage: spool: %w", err)
	}
	s := &Spool{cfg: cfg, nextID: 1}
	s.pool.New = func() any { b := make([]byte, 0, 64<<10); return &b }
	if err := s.load(); err != nil {
		if s.w != nil {
			_ = s.w.Close()
		}
		return nil, err
	}
	return s, nil
}

func (s *Spool) segPath(id uint64) string {
	return filepath.Join(s.cfg.Dir, fmt.Sprintf("%020d%s", id, segSuffix))
}

func (s *Spool) load() error {
	entries, err := os.ReadDir(s.cfg.Dir)
	if err != nil {
		return fmt.Errorf("storage: spool: %w", err)
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
			return fmt.Errorf("storage: spool: %w", err)
		}
		s.segs = append(s.segs, segInfo{id: id, size: info.Size()})
	}
	slices.SortFunc(s.segs, func(a, b segInfo) int { return cmpU64(a.id, b.id) })
	_ = os.Remove(filepath.Join(s.cfg.Dir, posFile+tmpSuffix))

	s.rID, s.rOff = 0, segHeader
	if id, off, ok := s.readPosition(); ok {
		s.rID, s.rOff = id, off
	}
	// Remove segments before the read position: fully replayed.
	for len(s.segs) > 0 && s.segs[0].id < s.rID {
		if err := os.Remove(s.segPath(s.segs[0].id)); err != nil {
			return fmt.Errorf("storage: spool: remove replayed segment: %w", err)
		}
		s.segs = s.segs[1:]
	}
	if len(s.segs) == 0 {
		s.nextID = max(s.rID, 1)
		s.rID, s.rOff = s.nextID, segHeader
		return nil
	}
	if s.segs[0].id != s.rID {
		s.rID, s.rOff = s.segs[0].id, segHeader
	}
	last := &s.segs[len(s.segs)-1]
	s.nextID = last.id + 1
	valid, err := s.validEnd(last.id)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(s.segPath(last.id), os.O_WRONLY, s.cfg.FileMode)
	if err != nil {
		return fmt.Errorf("storage: spool: %w", err)
	}
	s.w = f
	if valid < segHeader {
		// Crash while the segment was created: rewrite its header.
		if err := f.Truncate(0); err != nil {
			return fmt.Errorf("storage: spool: %w", err)
		}
		if _, err := f.WriteAt([]byte(segMagic), 0); err != nil {
			return fmt.Errorf("storage: spool: %w", err)
		}
		s.torn.Add(last.size)
		last.size = segHeader
	} else if valid < last.size {
		if err := f.Truncate(valid); err != nil {
			return fmt.Errorf("storage: spool: cut torn record: %w", err)
		}
		s.torn.Add(last.size - valid)
		last.size = valid
	}
	if _, err := f.Seek(last.size, io.SeekStart); err != nil {
		return fmt.Errorf("storage: spool: %w", err)
	}
	for _, sg := range s.segs {
		s.bytes += sg.size
	}
	if s.rID == last.id && s.rOff > last.size {
		s.rOff = last.size
	}
	return s.recountLocked()
}

// recountLocked sets the backlog from the record headers of every unread
// segment. s.mu is held (or the spool not shared yet).
func (s *Spool) recountLocked() error {
	s.pendBatches, s.pendEvents, s.oldest = 0, 0, 0
	for _, sg := range s.segs {
		if sg.id < s.rID {
			continue
		}
		off := segHeader
		if sg.id == s.rID {
			off = s.rOff
		}
		b, e, first, err := s.walk(sg.id, off, sg.size, -1)
		if err != nil {
			return err
		}
		if s.pendBatches == 0 && b > 0 {
			s.oldest = first
		}
		s.pendBatches += b
		s.pendEvents += e
	}
	return nil
}

// walk reads the record headers of segment id in [off, end), at most limit
// records (all when negative), and returns the number of records, their
// events and the append time of the first. It stops at the first invalid
// header (the rest is handled by Replay, which counts it corrupt).
func (s *Spool) walk(id uint64, off, end int64, limit int) (batches, events, first int64, err error) {
	if off >= end {
		return 0, 0, 0, nil
	}
	f, err := os.Open(s.segPath(id))
	if err != nil {
		return 0, 0, 0, fmt.Errorf("storage: spool: %w", err)
	}
	defer f.Close()
	var buf [recHeader + maxMetaLen]byte
	for off < end && (limit < 0 || batches < int64(limit)) {
		n, _ := f.ReadAt(buf[:], off)
		if n < recHeader {
			break
		}
		plen, _, ok := checkRecordHeader(buf[:recHeader], end-off)
		if !ok {
			break
		}
		ev, t, ok := recordMeta(buf[recHeader:min(n, recHeader+plen)])
		if !ok {
			break
		}
		if batches == 0 {
			first = t
		}
		batches++
		events += ev
		off += recHeader + int64(plen)
	}
	return batches, events, first, nil
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

// validEnd scans a segment and returns the offset after its last complete
// record with a correct checksum (or 0 when even the magic is missing).
func (s *Spool) validEnd(id uint64) (int64, error) {
	f, err := os.Open(s.segPath(id))
	if err != nil {
		return 0, fmt.Errorf("storage: spool: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("storage: spool: %w", err)
	}
	return scanSegment(bufio.NewReaderSize(f, 256<<10), info.Size()), nil
}

// scanSegment returns the offset after the last valid record of a segment
// of the given size read from r.
func scanSegment(r io.Reader, size int64) int64 {
	var magic [len(segMagic)]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil || string(magic[:]) != segMagic {
		return 0
	}
	off := segHeader
	var h [recHeader]byte
	var buf []byte
	for {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return off
		}
		n, sum, ok := checkRecordHeader(h[:], size-off)
		if !ok {
			return off
		}
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil || crc32.Checksum(buf, castagnoli) != sum {
			return off
		}
		off += recHeader + int64(n)
	}
}

func (s *Spool) readPosition() (uint64, int64, bool) {
	b, err := os.ReadFile(filepath.Join(s.cfg.Dir, posFile))
	if err != nil || len(b) != posFileSize || string(b[:len(posMagic)]) != posMagic {
		return 0, 0, false
	}
	body := b[:posFileSize-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[posFileSize-4:]) {
		return 0, 0, false
	}
	id := binary.LittleEndian.Uint64(b[len(posMagic):])
	off := int64(binary.LittleEndian.Uint64(b[len(posMagic)+8:]))
	if off < segHeader {
		off = segHeader
	}
	return id, off, true
}

// writePosition replaces the position file atomically (write a temporary
// file, optionally fsync, rename).
func (s *Spool) writePosition() error {
	b := append(s.posBuf[:0], posMagic...)
	b = binary.LittleEndian.AppendUint64(b, s.rID)
	b = binary.LittleEndian.AppendUint64(b, uint64(s.rOff))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	s.posBuf = b
	tmp := filepath.Join(s.cfg.Dir, posFile+tmpSuffix)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, s.cfg.FileMode)
	if err != nil {
		return fmt.Errorf("storage: spool: write position: %w", err)
	}
	_, err = f.Write(b)
	if err == nil && s.cfg.Fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(s.cfg.Dir, posFile))
	}
	if err == nil && s.cfg.Fsync {
		err = syncDir(s.cfg.Dir)
	}
	if err != nil {
		return fmt.Errorf("storage: spool: write position: %w", err)
	}
	return nil
}

// Append writes batch as one record and returns once it is in the
// operating system's page cache (and on disk, with Fsync). It returns
// ErrSpoolFull, without writing, when the record would make the spool
// exceed MaxBytes, and ErrClosed after Close. An empty batch is a no-op.
// Append does not retain batch.
func (s *Spool) Append(batch []relaykit.Event) error {
	if len(batch) == 0 {
		return nil
	}
	bp := s.pool.Get().(*[]byte)
	now := time.Now().UnixNano()
	rec := appendRecord((*bp)[:0], batch, now)
	err := s.appendRecord(rec, len(batch), now)
	if cap(rec) <= 4<<20 {
		*bp = rec[:0]
	}
	s.pool.Put(bp)
	return err
}

func (s *Spool) appendRecord(rec []byte, events int, now int64) error {
	n := int64(len(rec))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.err != nil {
		return s.err
	}
	if n-recHeader > maxRecordLen {
		s.refused.Add(1)
		return fmt.Errorf("%w: batch of %d bytes exceeds the record limit", ErrSpoolFull, n)
	}
	newSeg := s.w == nil || (s.lastSize() > segHeader && s.lastSize()+n > s.cfg.SegmentBytes)
	need := n
	if newSeg {
		need += segHeader
	}
	if s.bytes+need > s.cfg.MaxBytes {
		s.refused.Add(1)
		return ErrSpoolFull
	}
	if newSeg {
		if err := s.newSegment(); err != nil {
			return err
		}
	}
	last := &s.segs[len(s.segs)-1]
	if _, err := s.w.Write(rec); err != nil {
		// Cut the partial record so later records stay readable.
		if terr := s.w.Truncate(last.size); terr != nil {
			s.err = fmt.Errorf("storage: spool: append: %w (and cutting it: %w)", err, terr)
			return s.err
		}
		if _, serr := s.w.Seek(last.size, io.SeekStart); serr != nil {
			s.err = fmt.Errorf("storage: spool: append: %w", serr)
			return s.err
		}
		return fmt.Errorf("storage: spool: append: %w", err)
	}
	if s.cfg.Fsync {
		if err := s.w.Sync(); err != nil {
			s.err = fmt.Errorf("storage: spool: fsync: %w", err)
			return s.err
		}
	}
	last.size += n
	s.bytes += n
	if s.pendBatches == 0 {
		s.oldest = now
	}
	s.pendBatches++
	s.pendEvents += int64(events)
	s.appended.Add(1)
	s.appendedEvents.Add(int64(events))
	return nil
}

func (s *Spool) lastSize() int64 {
	if len(s.segs) == 0 {
		return 0
	}
	return s.segs[len(s.segs)-1].size
}

// newSegment closes the write segment and creates the next one.
func (s *Spool) newSegment() error {
	if s.w != nil {
		if s.cfg.Fsync {
			if err := s.w.Sync(); err != nil {
				return fmt.Errorf("storage: spool: fsync: %w", err)
			}
		}
		if err := s.w.Close(); err != nil {
			return fmt.Errorf("storage: spool: close segment: %w", err)
		}
		s.w = nil
	}
	id := s.nextID
	f, err := os.OpenFile(s.segPath(id), os.O_WRONLY|os.O_CREATE|os.O_EXCL, s.cfg.FileMode)
	if err != nil {
		return fmt.Errorf("storage: spool: new segment: %w", err)
	}
	if _, err := f.Write([]byte(segMagic)); err != nil {
		_ = f.Close()
		_ = os.Remove(s.segPath(id))
		return fmt.Errorf("storage: spool: new segment: %w", err)
	}
	if s.cfg.Fsync {
		if err := syncDir(s.cfg.Dir); err != nil {
			_ = f.Close()
			return fmt.Errorf("storage: spool: new segment: %w", err)
		}
	}
	s.nextID++
	s.w = f
	s.segs = append(s.segs, segInfo{id: id, size: segHeader})
	s.bytes += segHeader
	return nil
}

// Replay calls fn with each stored batch, oldest first, until the spool is
// empty, fn returns an error or ctx ends. A batch is removed (the read
// position moves past it and is saved) only after fn returned nil; if fn
// fails, Replay returns its error and the same batch comes first next time.
// Batches appended while Replay runs are replayed too. Replay returns nil
// when it has caught up with the end of the spool.
//
// The batch and the events' byte slices are valid only until fn returns
// (they alias a reused read buffer); fn must not retain them. Records that
// fail their checksum are skipped and counted as Corrupt. One Replay runs
// at a time; a second call waits for the first.
func (s *Spool) Replay(ctx context.Context, fn func(batch []relaykit.Event) error) error {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return ErrClosed
		}
		i, _ := slices.BinarySearchFunc(s.segs, s.rID, func(sg segInfo, id uint64) int { return cmpU64(sg.id, id) })
		if i == len(s.segs) {
			s.mu.Unlock()
			return nil
		}
		seg := s.segs[i]
		active := i == len(s.segs)-1
		s.mu.Unlock()
		if seg.id != s.rID {
			s.rID, s.rOff = seg.id, segHeader
		}
		if s.rOff >= seg.size {
			done, err := s.finishSegment(seg, active)
			if err != nil || done {
				return err
			}
			continue
		}
		if err := s.replayOne(seg, fn); err != nil {
			return err
		}
	}
}

// finishSegment handles a fully read segment: a sealed one is removed and
// reading moves on; the write segment is removed too if no Append came in
// meanwhile, so that an emptied spool holds no files. It reports whether
// the spool is empty.
func (s *Spool) finishSegment(seg segInfo, active bool) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if active {
		last := s.segs[len(s.segs)-1]
		if last.id != seg.id || last.size != seg.size {
			return false, nil // new data arrived: read on
		}
		if s.rOff == segHeader {
			return true, nil // empty write segment: keep it
		}
		if s.w != nil {
			if err := s.w.Close(); err != nil {
				return false, fmt.Errorf("storage: spool: %w", err)
			}
			s.w = nil
		}
	}
	s.closeReader()
	// Save the position first: after a crash between the two steps the
	// segment is removed at open, never replayed twice.
	s.rID, s.rOff = seg.id+1, segHeader
	if err := s.writePosition(); err != nil {
		return false, err
	}
	if err := os.Remove(s.segPath(seg.id)); err != nil {
		return false, fmt.Errorf("storage: spool: remove replayed segment: %w", err)
	}
	i, _ := slices.BinarySearchFunc(s.segs, seg.id, func(sg segInfo, id uint64) int { return cmpU64(sg.id, id) })
	s.segs = slices.Delete(s.segs, i, i+1)
	s.bytes -= seg.size
	return active, nil
}

func (s *Spool) closeReader() {
	if s.rf != nil {
		_ = s.rf.Close()
		s.rf = nil
	}
}

// replayOne reads the record at the read position, calls fn and moves on.
// It reads with pread(2) below the size seen under the lock, so a
// concurrent Append never shows a partial record.
func (s *Spool) replayOne(seg segInfo, fn func([]relaykit.Event) error) error {
	if s.rf == nil || s.rfID != seg.id {
		s.closeReader()
		f, err := os.Open(s.segPath(seg.id))
		if err != nil {
			return fmt.Errorf("storage: spool: %w", err)
		}
		s.rf, s.rfID = f, seg.id
	}
	skip := func() error {
		s.corrupt.Add(1)
		s.rOff = seg.size
		if err := s.writePosition(); err != nil {
			return err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.recountLocked()
	}
	var h [recHeader]byte
	if _, err := s.rf.ReadAt(h[:], s.rOff); err != nil {
		return skip()
	}
	n, sum, ok := checkRecordHeader(h[:], seg.size-s.rOff)
	if !ok {
		return skip()
	}
	if cap(s.rbuf) < n {
		s.rbuf = make([]byte, n)
	}
	p := s.rbuf[:n]
	if _, err := s.rf.ReadAt(p, s.rOff+recHeader); err != nil || crc32.Checksum(p, castagnoli) != sum {
		return skip()
	}
	events, err := decodeBatch(p, s.events)
	s.events = events[:0]
	if err != nil {
		s.rOff += recHeader + int64(n)
		return skip()
	}
	if _, t, ok := recordMeta(p); ok {
		s.mu.Lock()
		if s.pendBatches > 0 {
			s.oldest = t
		}
		s.mu.Unlock()
	}
	if err := fn(events); err != nil {
		return err
	}
	s.rOff += recHeader + int64(n)
	s.replayed.Add(1)
	s.replayedEvents.Add(int64(len(events)))
	s.mu.Lock()
	s.pendBatches--
	s.pendEvents -= int64(len(events))
	if s.pendBatches <= 0 {
		s.pendBatches, s.pendEvents, s.oldest = 0, 0, 0
	}
	s.mu.Unlock()
	return s.writePosition()
}

// Discard removes the unread records of the oldest segment file (all of
// it, or what is left of it past the read position) to make room, and
// returns how many batches and events it removed. It is how a caller
// implements a drop-oldest policy: space is freed a segment at a time
// ([SpoolConfig.SegmentBytes]), so one call usually makes room for many
// Appends. It returns 0, 0, nil when the spool is empty and ErrClosed
// after Close. Discard waits for a running Replay callback to return.
func (s *Spool) Discard() (batches, events int64, err error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, 0, ErrClosed
	}
	i, _ := slices.BinarySearchFunc(s.segs, s.rID, func(sg segInfo, id uint64) int { return cmpU64(sg.id, id) })
	if i == len(s.segs) {
		return 0, 0, nil
	}
	seg := s.segs[i]
	off := segHeader
	if seg.id == s.rID {
		off = s.rOff
	}
	batches, events, _, err = s.walk(seg.id, off, seg.size, -1)
	if err != nil {
		return 0, 0, err
	}
	if i == len(s.segs)-1 && s.w != nil {
		if err := s.w.Close(); err != nil {
			return 0, 0, fmt.Errorf("storage: spool: %w", err)
		}
		s.w = nil
	}
	s.closeReader()
	s.rID, s.rOff = seg.id+1, segHeader
	if err := s.writePosition(); err != nil {
		return 0, 0, err
	}
	if err := os.Remove(s.segPath(seg.id)); err != nil {
		return 0, 0, fmt.Errorf("storage: spool: remove discarded segment: %w", err)
	}
	s.segs = slices.Delete(s.segs, i, i+1)
	s.bytes -= seg.size
	s.discarded.Add(batches)
	s.discardedEv.Add(events)
	if err := s.recountLocked(); err != nil {
		return batches, events, err
	}
	return batches, events, nil
}

// Stats returns a snapshot of the counters.
func (s *Spool) Stats() SpoolStats {
	s.mu.Lock()
	bytes, segs := s.bytes, len(s.segs)
	pb, pe, oldest := s.pendBatches, s.pendEvents, s.oldest
	s.mu.Unlock()
	var ot time.Time
	if oldest != 0 {
		ot = time.Unix(0, oldest)
	}
	return SpoolStats{
		Batches:         pb,
		Events:          pe,
		Oldest:          ot,
		Discarded:       s.discarded.Load(),
		DiscardedEvents: s.discardedEv.Load(),
		Appended:        s.appended.Load(),
		AppendedEvents:  s.appendedEvents.Load(),
		Replayed:        s.replayed.Load(),
		ReplayedEvents:  s.replayedEvents.Load(),
		Refused:         s.refused.Load(),
		Corrupt:         s.corrupt.Load(),
		TornBytes:       s.torn.Load(),
		Bytes:           bytes,
		Segments:        segs,
	}
}

// Close closes the spool's files, fsyncing the write segment when Fsync
// is set. It waits for a running Replay to return. Append and Replay after
// Close return ErrClosed; Close is idempotent.
func (s *Spool) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	var err error
	if s.w != nil {
		if s.cfg.Fsync {
			err = s.w.Sync()
		}
		if cerr := s.w.Close(); err == nil {
			err = cerr
		}
		s.w = nil
	}
	s.mu.Unlock()
	s.rmu.Lock()
	s.closeReader()
	s.rmu.Unlock()
	if err != nil {
		return fmt.Errorf("storage: spool: close: %w", err)
	}
	return nil
}
