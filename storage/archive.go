package storage

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/relaykit/relaykit/internal/eventjson"

	"github.com/relaykit/relaykit"
)

// Format selects how an [Archive] writes events.
type Format int

const (
	// FormatRaw writes each event's Raw message followed by '\n'. Line
	// breaks inside the message are written as rsyslog writes control
	// characters, "#012" for LF and "#015" for CR, so that one event stays
	// one line. It is the default (the zero value).
	FormatRaw Format = iota
	// FormatJSON writes each event as one JSON object (RFC 8259) followed
	// by '\n'; see [AppendJSON].
	FormatJSON
)

// String returns "raw" or "json".
func (f Format) String() string {
	switch f {
	case FormatRaw:
		return "raw"
	case FormatJSON:
		return "json"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ArchiveConfig configures an [Archive].
type ArchiveConfig struct {
	// Writer configures the rotating file writer the Archive owns. Its
	// zero BufferSize means -1 here (no buffer of the Writer's own): Send
	// writes each batch with as few write(2) calls as its size allows and
	// flushes before it returns anyway.
	Writer Config
	// Format is the line format. Zero means FormatRaw.
	Format Format
	// Fsync makes Send fsync the file before returning, so that a batch
	// Send accepted survives a power loss. Concurrent Sends share one
	// fsync (group commit). By default Send returns once the batch is in
	// the operating system (it survives kill -9 of the process).
	Fsync bool
}

// ArchiveStats is a snapshot of an [Archive]'s counters.
type ArchiveStats struct {
	// Events and Batches count what Send wrote successfully.
	Events, Batches int64
	// Bytes counts the encoded bytes written, newlines included.
	Bytes int64
	// Failed counts events Send returned as not written.
	Failed int64
	// Writes counts the Writer.Write calls (one write(2) each, without a
	// Writer buffer): Bytes/Writes is the bytes written per system call.
	Writes int64
	// Writer holds the counters of the underlying [Writer].
	Writer Stats
}

// Archive is a [relaykit.Sink] that writes every event as one line to a
// rotating [Writer]. It is safe for concurrent use by multiple goroutines;
// the lines of concurrent batches may interleave, but each line is whole.
// Send does not allocate once warm.
//
// Send returns nil only when every line of the batch was written to the
// file (and fsynced, with ArchiveConfig.Fsync): the acknowledgement
// contract of [relaykit.Sink]. An archive never holds accepted events in a
// buffer of its own.
type Archive struct {
	w      *Writer
	format Format
	fsync  bool
	pool   sync.Pool

	events, batches, bytes, failed, writes atomic.Int64
}

var _ relaykit.Sink = (*Archive)(nil)

// archiveChunk is the encoded size at which Send hands a part of a batch to
// the Writer (one write(2) each); chunks end at line boundaries. A relay
// batch of 1,000 events of 256 bytes is one chunk.
const archiveChunk = 512 << 10

// NewArchive validates cfg and opens the archive's Writer.
func NewArchive(cfg ArchiveConfig) (*Archive, error) {
	if cfg.Format < FormatRaw || cfg.Format > FormatJSON {
		return nil, fmt.Errorf("%w: unknown %v", ErrInvalidConfig, cfg.Format)
	}
	if cfg.Writer.BufferSize == 0 {
		cfg.Writer.BufferSize = -1
	}
	w, err := NewWriter(cfg.Writer)
	if err != nil {
		return nil, err
	}
	a := &Archive{w: w, format: cfg.Format, fsync: cfg.Fsync}
	a.pool.New = func() any {
		b := make([]byte, 0, archiveChunk+4096)
		return &b
	}
	return a, nil
}

// Send writes the batch, one line per event, in order, and returns once it
// is written to the file (fsynced with ArchiveConfig.Fsync). It returns an
// error wrapping ctx.Err() if ctx has ended before the write; if a write
// fails after earlier parts of the batch were written, a
// *relaykit.BatchError listing the events not written (the file holds no
// part of them; the next Send tries again, errors are not sticky), or the
// Writer's error when none was written. Failed events are counted in
// Stats.Failed. Send does not retain the batch.
func (a *Archive) Send(ctx context.Context, batch []relaykit.Event) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("storage: archive: %w", err)
	}
	if len(batch) == 0 {
		return nil
	}
	bp := a.pool.Get().(*[]byte)
	defer a.pool.Put(bp)
	buf := (*bp)[:0]
	first := 0 // first event encoded into buf
	var err error
	for i := range batch {
		buf = a.appendLine(buf, &batch[i])
		if len(buf) >= archiveChunk {
			if err = a.write(buf, i+1-first); err != nil {
				break
			}
			buf, first = buf[:0], i+1
		}
	}
	if err == nil && first < len(batch) {
		err = a.write(buf, len(batch)-first)
	}
	if err == nil && a.fsync {
		if err = a.w.Sync(); err != nil {
			// The file was closed: the whole batch is written again.
			first = 0
		}
	}
	if cap(buf) <= 4*archiveChunk {
		*bp = buf[:0]
	}
	if err != nil {
		a.failed.Add(int64(len(batch) - first))
		err = fmt.Errorf("storage: archive: %w", err)
		if first > 0 {
			return &relaykit.BatchError{Failed: []relaykit.FailedRange{{From: first, To: len(batch), Reason: "write_error", Err: err}}}
		}
		return err
	}
	a.batches.Add(1)
	return nil
}

func (a *Archive) write(buf []byte, n int) error {
	if _, err := a.w.Write(buf); err != nil {
		return err
	}
	a.events.Add(int64(n))
	a.bytes.Add(int64(len(buf)))
	a.writes.Add(1)
	return nil
}

func (a *Archive) appendLine(dst []byte, e *relaykit.Event) []byte {
	if a.format == FormatJSON {
		dst = AppendJSON(dst, e)
	} else {
		dst = appendRaw(dst, e.Raw)
	}
	return append(dst, '\n')
}

func appendRaw(dst, raw []byte) []byte {
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(dst, raw...) // the common case, vectorised scans
	}
	for len(raw) > 0 {
		i := 0
		for i < len(raw) && raw[i] != '\n' && raw[i] != '\r' {
			i++
		}
		dst = append(dst, raw[:i]...)
		if i == len(raw) {
			break
		}
		if raw[i] == '\n' {
			dst = append(dst, "#012"...)
		} else {
			dst = append(dst, "#015"...)
		}
		raw = raw[i+1:]
	}
	return dst
}

// Writer returns the archive's Writer, for Sync, Rotate and Stats. Do not
// close it; close the Archive.
func (a *Archive) Writer() *Writer { return a.w }

// Sync flushes and fsyncs the archive's active file.
func (a *Archive) Sync() error { return a.w.Sync() }

// Stats returns a snapshot of the counters.
func (a *Archive) Stats() ArchiveStats {
	return ArchiveStats{
		Events:  a.events.Load(),
		Batches: a.batches.Load(),
		Bytes:   a.bytes.Load(),
		Failed:  a.failed.Load(),
		Writes:  a.writes.Load(),
		Writer:  a.w.Stats(),
	}
}

// Close closes the Writer (see [Writer.Close]). Send after Close returns an
// error wrapping ErrClosed. Close is idempotent.
func (a *Archive) Close() error { return a.w.Close() }

// AppendJSON appends e as one JSON object, without a trailing newline, and
// returns the extended buffer:
//
//	{"time":"2026-11-22T10:00:00.123456789Z","time_is_receive_time":true,
//	 "host":"h","source":"s","sourcetype":"st","index":"i",
//	 "facility":"auth","facility_code":4,"severity":"err","severity_code":3,
//	 "message":"...","message_base64":"...","fields":{"k":"v"}}
//
// time is [relaykit.Event.EventTime] in RFC 3339 with nanoseconds, UTC,
// omitted when unknown; time_is_receive_time (true) says that it is the
// receive time, the event having no time of its own, and is omitted
// otherwise. host, source, sourcetype and index are omitted when empty,
// fields when there are none (duplicate keys are written as they are).
// facility and severity are written for events with a syslog priority
// ([relaykit.FlagPriority]): the names of RFC 5424 tables 1 and 2 as
// syslog.conf(5) spells them (kern ... local7; emerg, alert, crit, err,
// warning, notice, info, debug) and the numerical codes (0-23, 0-7).
// Strings are escaped as encoding/json does: '"', '\\' and control
// characters are escaped, and each byte that is not part of valid UTF-8
// becomes U+FFFD. message_base64 is written only for a message that is not
// valid UTF-8: its bytes as received, in standard base64 (RFC 4648 section
// 4). It does not allocate when dst has room.
func AppendJSON(dst []byte, e *relaykit.Event) []byte { return eventjson.Append(dst, e) }
