package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/relaykit/relaykit/clock"
)

var (
	// ErrInvalidConfig is wrapped by every error a constructor returns for a
	// bad configuration.
	ErrInvalidConfig = errors.New("storage: invalid config")
	// ErrClosed is returned by operations on a closed [Writer], [Archive] or
	// [Spool].
	ErrClosed = errors.New("storage: closed")
)

// Compression selects how a [Writer] compresses rotated files.
type Compression int

const (
	// CompressNone keeps rotated files as written.
	CompressNone Compression = iota
	// CompressGzip compresses rotated files with gzip (RFC 1952, klauspost
	// compress/gzip, default level) and appends ".gz" to their names.
	CompressGzip
	// CompressZstd compresses rotated files with Zstandard (RFC 8878,
	// klauspost compress/zstd, default level) and appends ".zst".
	CompressZstd
)

// String returns "none", "gzip" or "zstd".
func (c Compression) String() string {
	switch c {
	case CompressNone:
		return "none"
	case CompressGzip:
		return "gzip"
	case CompressZstd:
		return "zstd"
	}
	return fmt.Sprintf("Compression(%d)", int(c))
}

// ext returns the file name suffix of compressed files, or "".
func (c Compression) ext() string {
	switch c {
	case CompressGzip:
		return ".gz"
	case CompressZstd:
		return ".zst"
	}
	return ""
}

// SyncPolicy says when a [Writer] calls fsync(2) on its files. Data handed to
// the operating system (flushed from the Writer's buffer) survives a crash of
// the process without fsync; fsync only matters for a crash of the machine
// or a power loss.
type SyncPolicy int

const (
	// SyncOnRotate fsyncs each file once, when it is rotated or closed. The
	// fsync of a rotated file runs in the background goroutine, off the
	// write path. It is the default (the zero value).
	SyncOnRotate SyncPolicy = iota
	// SyncNone never calls fsync; the kernel writes pages back on its own
	// schedule (typically within 30 s on Linux).
	SyncNone
	// SyncInterval fsyncs the active file after each timed flush (every
	// [Config.FlushInterval]) and on rotation and Close.
	SyncInterval
)

// String returns "on-rotate", "none" or "interval".
func (p SyncPolicy) String() string {
	switch p {
	case SyncOnRotate:
		return "on-rotate"
	case SyncNone:
		return "none"
	case SyncInterval:
		return "interval"
	}
	return fmt.Sprintf("SyncPolicy(%d)", int(p))
}

// Defaults of [Config].
const (
	DefaultLayout        = "relay-2006-01-02.log"
	DefaultMaxBytes      = 100 << 20
	DefaultBufferSize    = 256 << 10
	DefaultFlushInterval = time.Second
	DefaultFileMode      = 0o640
	// DefaultDirMode is the permission of directories the Writer creates.
	DefaultDirMode = 0o750
)

// Config configures a [Writer]. The zero value of each field means the
// documented default; only Dir is required.
type Config struct {
	// Dir is the directory of the files. It is created (with its parents,
	// mode 0750 before umask) if missing. Required.
	Dir string
	// Layout is the time layout (package time) of file names, formatted
	// with the start of the rotation period in Location. It must contain a
	// time element, format to a plain file name made of ASCII letters,
	// digits, '-', '_' and '.' (not starting with '.'; so no path
	// separators), and parse back to the time it formats, so that files
	// can be ordered. Zero means "relay-2006-01-02.log".
	Layout string
	// Location is the time zone of period boundaries and file names. Nil
	// means time.Local.
	Location *time.Location
	// Interval is the rotation period. Periods are aligned to the wall
	// clock in Location: they start at local midnight and every Interval
	// after it, and the last period of a day ends at the next midnight.
	// Zero means 24h: calendar days, which may be 23 or 25 hours long at
	// daylight saving changes. Must be between 1s and 24h.
	Interval time.Duration
	// MaxBytes is the size of a file, in bytes, above which the Writer
	// rotates before a write. A single write larger than MaxBytes goes to
	// a file of its own. Zero means 100 MiB; -1 means no size limit.
	MaxBytes int64
	// MaxFiles is the number of rotated files (not counting the active
	// file) kept; older ones are removed. Zero keeps all.
	MaxFiles int
	// MaxAge is the age (now minus the file's modification time) above
	// which rotated files are removed. Zero keeps files of any age.
	MaxAge time.Duration
	// Compression compresses rotated files in the background. Zero means
	// CompressNone.
	Compression Compression
	// FileMode is the permission of created files, before umask. Zero means
	// 0640.
	FileMode os.FileMode
	// BufferSize is the size of the write buffer, in bytes. Writes larger
	// than the buffer bypass it. Zero means 256 KiB; -1 disables buffering
	// (every Write is one write(2)).
	BufferSize int
	// FlushInterval is the longest time written data stays in the buffer,
	// measured from the previous timed flush. Zero means 1s; -1 disables
	// timed flushes (data is flushed when the buffer fills, on Sync, Rotate
	// and Close).
	FlushInterval time.Duration
	// Sync is the fsync policy. Zero means SyncOnRotate.
	Sync SyncPolicy
	// Clock is read before each write for the rotation check, and by the
	// background goroutines. Nil means [clock.Default] (no system call per
	// write); tests pass a [clock.NewFake].
	Clock *clock.Clock
	// OnError, if set, is called with errors of the background work
	// (fsync, compression, retention), which no Write can return. It must
	// be fast and safe for concurrent use.
	OnError func(err error)
}

// Stats is a snapshot of a [Writer]'s counters.
type Stats struct {
	// Writes and Bytes count successful Write calls and their bytes.
	Writes, Bytes int64
	// Rotations counts files closed by rotation.
	Rotations int64
	// Compressed counts rotated files compressed.
	Compressed int64
	// Removed counts rotated files removed by retention.
	Removed int64
	// Errors counts background errors (see [Config.OnError]).
	Errors int64
	// WriteErrors counts failed writes and fsyncs of the active file; each
	// failed its call alone.
	WriteErrors int64
	// TornBytes counts bytes of failed writes that could not be cut from
	// the file (it was closed, and the next one started).
	TornBytes int64
}

// Writer is a rotating file writer: an io.WriteCloser that writes to a file
// in [Config.Dir] and starts a new file when a period ends or the file would
// exceed [Config.MaxBytes]. See the package documentation for naming,
// rotation, retention and durability.
//
// A Writer is safe for concurrent use by multiple goroutines; each Write is
// written as one piece, never split across files nor interleaved with
// another Write. Errors are not sticky: a failed Write leaves nothing of
// itself in the file, and the next one tries again. A Writer runs two goroutines (timed
// flushes and creating the next file ahead of rotation; fsync, compression
// and retention of rotated files), which Close stops and waits for.
type Writer struct {
	cfg   Config
	clock *clock.Clock
	daily bool

	mu         sync.Mutex
	f          *os.File
	buf        []byte
	size       int64 // bytes in the active file, buffered bytes included
	name       string
	seq        int
	path       string
	nextRotate int64 // ns since epoch
	closed     bool
	gen        int64 // Writes so far, for group commit
	syncing    bool  // Sync was called: rotation fsyncs synchronously

	syncMu sync.Mutex   // one fsync at a time
	synced atomic.Int64 // gen covered by the last successful fsync

	active atomic.Pointer[string]
	// next is a file created ahead by the mill goroutine under prepPath,
	// linked to its final name at rotation (file creation can take
	// milliseconds on a busy file system; a link takes microseconds).
	next     *os.File
	prepPath string

	millMu sync.Mutex
	jobs   []string
	notify chan struct{}
	prepCh chan struct{}
	// leftover lists rotated files of a previous run to compress.
	leftover []string
	stop     chan struct{}
	wg       sync.WaitGroup
	compact  compressor

	writes, bytes         int64 // guarded by mu
	rotations, compressed atomic.Int64
	removed, bgErrors     atomic.Int64
	writeErrors, torn     atomic.Int64
}

var _ io.WriteCloser = (*Writer)(nil)

// NewWriter validates cfg, creates the directory and opens the active file:
// the newest file of the current period if it is uncompressed and below
// MaxBytes (appending to it), otherwise a new one. It starts the background
// goroutines, which first remove temporary files left by an interrupted
// compression, compress rotated files left uncompressed and apply retention.
func NewWriter(cfg Config) (*Writer, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	w := &Writer{
		cfg:    cfg,
		notify: make(chan struct{}, 1),
		prepCh: make(chan struct{}, 1),
		stop:   make(chan struct{}),
		daily:  cfg.Interval == 24*time.Hour,
	}
	w.prepPath = filepath.Join(cfg.Dir, "."+cfg.Layout+".next")
	w.clock = cfg.Clock
	if w.clock == nil {
		w.clock = clock.Default()
	}
	if cfg.BufferSize > 0 {
		w.buf = make([]byte, 0, cfg.BufferSize)
	}
	if err := os.MkdirAll(cfg.Dir, DefaultDirMode); err != nil {
		return nil, fmt.Errorf("storage: create directory: %w", err)
	}
	// Rotated files a previous run left uncompressed: listed before any
	// file of ours exists, so the mill never touches a newer file.
	var leftover []string
	if cfg.Compression != CompressNone {
		files, err := w.list()
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if f.ext == "" {
				leftover = append(leftover, filepath.Join(cfg.Dir, f.name))
			}
		}
	}
	if err := w.openLocked(w.clock.Nano(), true); err != nil {
		return nil, err
	}
	w.leftover = slices.DeleteFunc(leftover, func(p string) bool { return p == w.path })
	w.wg.Add(2)
	go w.mill()
	go w.flusher()
	return w, nil
}

func (c *Config) fill() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	if c.Dir == "" {
		return bad("Dir is empty")
	}
	if c.Layout == "" {
		c.Layout = DefaultLayout
	}
	if c.Location == nil {
		c.Location = time.Local
	}
	if c.Interval == 0 {
		c.Interval = 24 * time.Hour
	}
	if c.Interval < time.Second || c.Interval > 24*time.Hour {
		return bad("Interval %v not between 1s and 24h", c.Interval)
	}
	if err := checkLayout(c.Layout, c.Location); err != nil {
		return bad("Layout %q: %v", c.Layout, err)
	}
	switch {
	case c.MaxBytes == 0:
		c.MaxBytes = DefaultMaxBytes
	case c.MaxBytes == -1:
		c.MaxBytes = 1<<63 - 1
	case c.MaxBytes < 0:
		return bad("MaxBytes %d is negative", c.MaxBytes)
	}
	if c.MaxFiles < 0 {
		return bad("MaxFiles %d is negative", c.MaxFiles)
	}
	if c.MaxAge < 0 {
		return bad("MaxAge %v is negative", c.MaxAge)
	}
	if c.Compression < CompressNone || c.Compression > CompressZstd {
		return bad("unknown %v", c.Compression)
	}
	if c.FileMode == 0 {
		c.FileMode = DefaultFileMode
	}
	if c.FileMode&^os.ModePerm != 0 {
		return bad("FileMode %v has bits other than permissions", c.FileMode)
	}
	switch {
	case c.BufferSize == 0:
		c.BufferSize = DefaultBufferSize
	case c.BufferSize < -1:
		return bad("BufferSize %d is negative", c.BufferSize)
	}
	switch {
	case c.FlushInterval == 0:
		c.FlushInterval = DefaultFlushInterval
	case c.FlushInterval < -1:
		return bad("FlushInterval %v is negative", c.FlushInterval)
	}
	if c.Sync < SyncOnRotate || c.Sync > SyncInterval {
		return bad("unknown %v", c.Sync)
	}
	if c.Sync == SyncInterval && c.FlushInterval <= 0 {
		return bad("SyncInterval needs a FlushInterval")
	}
	return nil
}

// checkLayout rejects layouts that are not plain file names or do not
// round-trip through time.Format and time.ParseInLocation.
func checkLayout(layout string, loc *time.Location) error {
	if strings.ContainsAny(layout, `/\`+"\x00") || layout == "." || layout == ".." {
		return errors.New("not a plain file name")
	}
	t := time.Date(2001, 2, 3, 4, 5, 6, 0, loc)
	s := t.Format(layout)
	if s == layout {
		return errors.New("no time element")
	}
	if SanitizeFileName(s) != s {
		return errors.New("formats to an unsafe file name")
	}
	if _, err := time.ParseInLocation(layout, s, loc); err != nil {
		return fmt.Errorf("does not parse back: %w", err)
	}
	return nil
}

// Write writes p to the active file, rotating first when the current
// period has ended or when p would make the file exceed MaxBytes (unless
// the file is empty). It returns len(p) and nil, or 0 and an error, or
// ErrClosed. The bytes may stay in the buffer until the next flush.
//
// Errors are not sticky: a failed write leaves the file as it was before
// it (a partial write is cut again; if that fails too, the file is closed
// and the next Write starts a new one), and the next Write tries again.
func (w *Writer) Write(p []byte) (int, error) {
	now := w.clock.Nano()
	n := int64(len(p))
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return 0, ErrClosed
	}
	if w.f == nil {
		// An earlier failure closed the file: start the next one.
		if err := w.reopenLocked(now); err != nil {
			w.mu.Unlock()
			return 0, err
		}
	}
	if now >= w.nextRotate || (w.size > 0 && w.size+n > w.cfg.MaxBytes) {
		if err := w.rotateLocked(now); err != nil {
			w.mu.Unlock()
			return 0, err
		}
	}
	if len(w.buf)+len(p) <= cap(w.buf) {
		// The common case: append to the buffer.
		w.buf = append(w.buf, p...)
		w.size += n
		w.writes++
		w.bytes += n
		w.gen++
		w.mu.Unlock()
		return len(p), nil
	}
	err := w.writeSlow(p)
	w.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeSlow flushes the buffer and buffers p, or writes it directly when it
// does not fit in the buffer.
func (w *Writer) writeSlow(p []byte) error {
	if err := w.flushLocked(); err != nil {
		return err
	}
	if len(p) < cap(w.buf) {
		w.buf = append(w.buf, p...)
	} else if err := w.writeFile(p); err != nil {
		return err
	}
	n := int64(len(p))
	w.size += n
	w.writes++
	w.bytes += n
	w.gen++
	return nil
}

// writeFile writes p to the file with one write(2). On failure it cuts
// what part of p reached the file, or, if that fails, closes the file so
// that the next Write starts a new one; w.size is unchanged either way.
func (w *Writer) writeFile(p []byte) error {
	k, err := w.f.Write(p)
	if err == nil {
		return nil
	}
	w.writeErrors.Add(1)
	full := errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
	err = fmt.Errorf("storage: write %s: %w", w.path, err)
	if k > 0 {
		onDisk := w.size - int64(len(w.buf))
		if terr := w.f.Truncate(onDisk); terr != nil {
			w.torn.Add(int64(k))
			full = false
		}
	}
	if !full {
		// Not just a full disk (EIO, a broken descriptor, a torn write
		// that could not be cut): do not trust this file again.
		w.sealLocked()
	}
	return err
}

// sealLocked closes the active file after an error it could not repair;
// the next Write opens the next file of the period.
func (w *Writer) sealLocked() {
	if w.f == nil {
		return
	}
	_ = w.f.Close()
	w.f = nil
	if w.size-int64(len(w.buf)) == 0 {
		_ = os.Remove(w.path) // nothing in it: no empty files pile up
		return
	}
	w.enqueue(w.path)
}

// reopenLocked opens the next file after sealLocked.
func (w *Writer) reopenLocked(now int64) error {
	if err := w.openLocked(now, false); err != nil {
		return err
	}
	w.rotations.Add(1)
	return nil
}

// Flush writes buffered data to the operating system (no fsync). On error
// the data stays buffered, to be written by the next flush.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	return w.flushLocked()
}

// Sync flushes the buffer and fsyncs the active file. Concurrent calls
// share fsyncs (group commit): a call returns without one when an fsync
// that started after its caller's last Write has completed. After a failed
// fsync the file is closed (Linux may forget the failed pages' error
// state, so it is never trusted again): the next Write starts a new file,
// and the caller should write again what it needed on disk.
func (w *Writer) Sync() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	if err := w.flushLocked(); err != nil {
		w.mu.Unlock()
		return err
	}
	target := w.gen
	w.syncing = true
	w.mu.Unlock()

	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	if w.synced.Load() >= target {
		return nil // an fsync that started after our writes covered them
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	if err := w.flushLocked(); err != nil {
		w.mu.Unlock()
		return err
	}
	f, gen, path := w.f, w.gen, w.path
	w.mu.Unlock()
	if f == nil {
		return fmt.Errorf("storage: sync %s: the file was closed by an earlier error", path)
	}
	// Outside w.mu: writers go on during the fsync. A rotation meanwhile
	// fsyncs the old file itself before closing it (see rotateLocked).
	if err := f.Sync(); err != nil && !errors.Is(err, os.ErrClosed) {
		w.writeErrors.Add(1)
		w.mu.Lock()
		if w.f == f {
			w.sealLocked()
		}
		w.mu.Unlock()
		return fmt.Errorf("storage: sync %s: %w", path, err)
	}
	w.synced.Store(gen)
	return nil
}

// Rotate closes the active file now and opens the next one, even if the
// period has not ended; the next file of the same period gets the next
// sequence number. The closed file is handed to the background goroutine
// for fsync (SyncOnRotate), compression and retention.
func (w *Writer) Rotate() error {
	now := w.clock.Nano()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if w.f == nil {
		return w.reopenLocked(now)
	}
	return w.rotateLocked(now)
}

// Path returns the path of the active file.
func (w *Writer) Path() string {
	return *w.active.Load()
}

// Stats returns a snapshot of the counters.
func (w *Writer) Stats() Stats {
	w.mu.Lock()
	writes, bytes := w.writes, w.bytes
	w.mu.Unlock()
	return Stats{
		Writes:      writes,
		Bytes:       bytes,
		Rotations:   w.rotations.Load(),
		Compressed:  w.compressed.Load(),
		Removed:     w.removed.Load(),
		Errors:      w.bgErrors.Load(),
		WriteErrors: w.writeErrors.Load(),
		TornBytes:   w.torn.Load(),
	}
}

// Close flushes the buffer, fsyncs the active file (unless the policy is
// SyncNone) and closes it, then stops the background goroutines and waits
// for them; files already rotated are compressed before Close returns. It
// returns the error of that last flush, fsync or close, if any. Close is
// idempotent: later calls return nil, and Write after Close returns
// ErrClosed.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	var err error
	if w.f != nil {
		err = w.flushLocked()
		if err == nil && w.cfg.Sync != SyncNone {
			if serr := w.f.Sync(); serr != nil {
				err = fmt.Errorf("storage: sync %s: %w", w.path, serr)
			}
		}
		if cerr := w.f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("storage: close %s: %w", w.path, cerr)
		}
		w.f = nil
	} else if len(w.buf) > 0 {
		err = fmt.Errorf("storage: close: %d buffered bytes not written: no open file", len(w.buf))
	}
	w.mu.Unlock()
	close(w.stop)
	w.wg.Wait()
	w.mu.Lock()
	w.dropPrepared() // after the mill stopped: it cannot prepare another
	w.mu.Unlock()
	return err
}

// flushLocked writes the buffer. On failure the buffer is kept (its Writes
// already returned) and the file cut back to its size before the flush.
func (w *Writer) flushLocked() error {
	if len(w.buf) == 0 {
		return nil
	}
	if w.f == nil {
		if err := w.reopenLocked(w.clock.Nano()); err != nil {
			return err
		}
	}
	if err := w.writeFile(w.buf); err != nil {
		return err
	}
	w.buf = w.buf[:0]
	return nil
}

func (w *Writer) rotateLocked(now int64) error {
	if err := w.flushLocked(); err != nil {
		return err
	}
	old := w.path
	if w.syncing && w.synced.Load() < w.gen {
		// A Sync caller may be waiting for bytes in this file: fsync it
		// before it is closed, not later in the background.
		if err := w.f.Sync(); err != nil {
			w.writeErrors.Add(1)
			w.sealLocked()
			return fmt.Errorf("storage: sync %s: %w", old, err)
		}
		w.synced.Store(w.gen)
	}
	if err := w.f.Close(); err != nil {
		w.bgError(fmt.Errorf("storage: close %s: %w", old, err))
	}
	w.f = nil
	w.rotations.Add(1)
	if err := w.openLocked(now, false); err != nil {
		w.enqueue(old)
		return err
	}
	select {
	case w.prepCh <- struct{}{}:
	default:
	}
	w.enqueue(old)
	return nil
}

// openLocked opens the file for the period containing now. At start it
// appends to the newest file of the period when possible; on rotation it
// opens the next sequence number.
func (w *Writer) openLocked(now int64, starting bool) error {
	t := time.Unix(0, now).In(w.cfg.Location)
	start, end := w.period(t)
	name := start.Format(w.cfg.Layout)
	seq, appendOK := 0, false
	switch {
	case !starting && name == w.name:
		seq = w.seq + 1
	case !starting:
		// A new period: its name is new, unless the clock went back; the
		// exclusive create below detects that and we then scan.
	default:
		var err error
		if seq, appendOK, err = w.startSeq(name); err != nil {
			return err
		}
	}
	path := filepath.Join(w.cfg.Dir, seqName(name, seq))
	f, err := w.create(path, appendOK)
	if errors.Is(err, fs.ErrExist) && !starting {
		maxSeq, _, serr := w.maxSeq(name)
		if serr != nil {
			return serr
		}
		seq = maxSeq + 1
		path = filepath.Join(w.cfg.Dir, seqName(name, seq))
		f, err = w.create(path, false)
	}
	if err != nil {
		return err
	}
	var size int64
	if appendOK {
		fi, err := f.Stat()
		if err != nil {
			_ = f.Close()
			return fmt.Errorf("storage: stat %s: %w", path, err)
		}
		size = fi.Size()
	}
	w.f, w.name, w.seq, w.path, w.size = f, name, seq, path, size
	w.nextRotate = end.UnixNano()
	w.active.Store(&path)
	return nil
}

// startSeq picks the file to open at start: the newest file of the period
// if it is uncompressed and below MaxBytes (appendOK), else the next
// sequence number.
func (w *Writer) startSeq(name string) (seq int, appendOK bool, err error) {
	maxSeq, found, err := w.maxSeq(name)
	if err != nil || !found {
		return 0, false, err
	}
	p := filepath.Join(w.cfg.Dir, seqName(name, maxSeq))
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Size() < w.cfg.MaxBytes {
		return maxSeq, true, nil
	}
	return maxSeq + 1, false, nil
}

// create opens path for appending. Unless appendOK, the file must not
// exist: a rotated file's name is never reused, so a leftover of that name
// means the clock went back, and data must not be mixed.
func (w *Writer) create(path string, appendOK bool) (*os.File, error) {
	if !appendOK {
		if f := w.takePrepared(path); f != nil {
			return f, nil
		}
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if !appendOK {
		flags |= os.O_EXCL
	}
	f, err := os.OpenFile(path, flags, w.cfg.FileMode)
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	return f, nil
}

// takePrepared gives the file prepared by the mill goroutine the name path
// and returns it, or returns nil if there is none or linking fails (the
// caller then creates the file). link(2) fails rather than replace an
// existing file, like O_EXCL.
func (w *Writer) takePrepared(path string) *os.File {
	f := w.next
	if f == nil {
		return nil
	}
	if err := os.Link(w.prepPath, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil // keep it for the retry under another name
		}
		w.dropPrepared()
		return nil
	}
	w.next = nil
	_ = os.Remove(w.prepPath)
	return f
}

// prepare creates the next file ahead of a rotation. It runs in the
// flusher goroutine.
func (w *Writer) prepare() {
	w.mu.Lock()
	skip := w.next != nil || w.closed
	w.mu.Unlock()
	if skip {
		return
	}
	// A leftover of a previous run may have another mode: start afresh.
	_ = os.Remove(w.prepPath)
	f, err := os.OpenFile(w.prepPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, w.cfg.FileMode)
	if err != nil {
		w.bgError(fmt.Errorf("storage: prepare next file: %w", err))
		return
	}
	w.mu.Lock()
	if w.next == nil && !w.closed {
		w.next, f = f, nil
	}
	w.mu.Unlock()
	if f != nil { // closed meanwhile
		_ = f.Close()
		_ = os.Remove(w.prepPath)
	}
}

// dropPrepared closes and removes the prepared file. Called with w.mu held.
func (w *Writer) dropPrepared() {
	if w.next != nil {
		_ = w.next.Close()
		w.next = nil
		_ = os.Remove(w.prepPath)
	}
}

// period returns the start and end of the rotation period containing t.
func (w *Writer) period(t time.Time) (start, end time.Time) {
	loc := w.cfg.Location
	y, m, d := t.Date()
	midnight := time.Date(y, m, d, 0, 0, 0, 0, loc)
	next := time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	if w.daily {
		return midnight, next
	}
	k := t.Sub(midnight) / w.cfg.Interval
	start = midnight.Add(k * w.cfg.Interval)
	end = start.Add(w.cfg.Interval)
	if end.After(next) {
		end = next
	}
	return start, end
}

// seqName returns the file name of sequence number seq of a period.
func seqName(name string, seq int) string {
	if seq == 0 {
		return name
	}
	return name + "." + strconv.Itoa(seq)
}

// maxSeq returns the highest sequence number of files (compressed or not)
// of the period named name.
func (w *Writer) maxSeq(name string) (int, bool, error) {
	files, err := w.list()
	if err != nil {
		return 0, false, err
	}
	best, found := 0, false
	for _, f := range files {
		if f.base == name && (!found || f.seq > best) {
			best, found = f.seq, true
		}
	}
	return best, found, nil
}

// flusher is the goroutine of timed work: flushes every FlushInterval,
// and preparing the next file after each rotation.
func (w *Writer) flusher() {
	defer w.wg.Done()
	w.prepare()
	var tick <-chan time.Time
	if w.cfg.FlushInterval > 0 {
		t := time.NewTicker(w.cfg.FlushInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-w.stop:
			return
		case <-w.prepCh:
			w.prepare()
		case <-tick:
			w.tick()
		}
	}
}

// tick flushes the buffer, rotates a non-empty file whose period has ended
// (so that an idle day's file is rotated and compressed without waiting
// for the next write) and, with SyncInterval, fsyncs the file.
func (w *Writer) tick() {
	now := w.clock.Nano()
	w.mu.Lock()
	if w.closed || w.f == nil {
		w.mu.Unlock()
		return
	}
	if now >= w.nextRotate && w.size > 0 {
		if err := w.rotateLocked(now); err != nil {
			w.bgError(err) // the next Write tries again
		}
	} else if err := w.flushLocked(); err != nil {
		w.bgError(err) // kept buffered for the next flush
	}
	f := w.f
	w.mu.Unlock()
	if w.cfg.Sync == SyncInterval && f != nil {
		// Outside the lock: writers are not held up by the fsync. A
		// concurrent rotation may close f; it then fsyncs it itself.
		if err := f.Sync(); err != nil && !errors.Is(err, os.ErrClosed) {
			w.bgError(fmt.Errorf("storage: sync: %w", err))
		}
	}
}

func (w *Writer) bgError(err error) {
	w.bgErrors.Add(1)
	if w.cfg.OnError != nil {
		w.cfg.OnError(err)
	}
}
