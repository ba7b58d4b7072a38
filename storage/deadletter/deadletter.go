// Package deadletter writes what a relay could not accept (a line that is
// not JSON, a record a destination refused as bad data) to a file of JSON
// Lines that any JSON reader takes, and reads it back.
//
// # Format
//
// Each record is one JSON object (RFC 8259) on one line, its fields in
// this order:
//
//	{"time":"2026-11-28T12:58:59.123456789Z","input":"json","peer":"10.0.0.5:51234","reason":"invalid_json","line":"{oops"}
//
// "time" is RFC 3339 with nanoseconds in UTC; "input" names the input or
// destination that refused the data, "peer" the sender (or another origin,
// such as a Kafka topic/partition@offset), "reason" why. The data itself
// is "line" when it is valid UTF-8, as a JSON string (every byte below
// 0x20, NUL, CR and LF among them, written as an escape, so a record never
// breaks across lines), or
// "line_base64" (standard base64, RFC 4648) when it is not: either way
// [Parse] recovers the original bytes exactly. "input", "peer" and
// "reason" are text: a byte of invalid UTF-8 in them becomes U+FFFD.
//
// The format is version 1 of the relay's dead-letter file; a reader must
// ignore fields it does not know.
//
// # Recovering
//
//	jq -r 'select(.line) | .line' deadletter-2026-11-28.jsonl        # the text lines
//	jq -r 'select(.line_base64) | .line_base64' … | base64 -d         # the others
package deadletter

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/internal/cfgerr"
	"github.com/relaykit/relaykit/internal/jsonenc"
)

// Record is one dead letter.
type Record struct {
	// Time is when the data was refused. Zero in [Writer.Write] means the
	// writer's clock.
	Time time.Time
	// Input names the input or destination that refused the data.
	Input string
	// Peer is the sender's address, or another origin of the data.
	Peer string
	// Reason says why the data was refused (a drop reason such as
	// invalid_json, or an error's text).
	Reason string
	// Line is the data, as received. Write does not retain it.
	Line []byte
}

// Stats counts a Writer's records.
type Stats struct {
	// Records is the number of records written.
	Records int64
	// Errors is the number of records the underlying writer failed to
	// take (each of them lost).
	Errors int64
}

// Writer writes [Record]s as JSON Lines to an io.Writer, one Write call
// per record, so an unbuffered file (storage.Config.BufferSize -1) learns
// of a failure at the record it lost. It is safe for concurrent use by
// multiple goroutines; writes are serialised.
type Writer struct {
	w     io.Writer
	clock *clock.Clock

	mu  sync.Mutex
	buf []byte

	records, errors atomic.Int64
}

// ErrInvalidConfig is wrapped by the error [NewWriter] returns for a bad
// [Config]: a *relaykit.FieldError naming the field.
var ErrInvalidConfig = errors.New("deadletter: invalid config")

// Config configures a [Writer]. Writer is required.
type Config struct {
	// Writer receives the records, one Write call each: a
	// storage.Writer (a rotating file; BufferSize -1 to learn of each
	// failure at its record), a file, a socket. Required.
	Writer io.Writer
	// Clock dates the records that carry no Time. Nil means
	// [clock.Default].
	Clock *clock.Clock
}

// NewWriter returns a Writer on cfg.Writer, or a *relaykit.FieldError
// wrapping [ErrInvalidConfig].
func NewWriter(cfg Config) (*Writer, error) {
	if cfg.Writer == nil {
		return nil, cfgerr.New(ErrInvalidConfig, "Writer", "required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Default()
	}
	return &Writer{w: cfg.Writer, clock: cfg.Clock}, nil
}

// maxKeptBuffer is the largest encoding buffer kept between writes.
const maxKeptBuffer = 4 << 20

// Write writes r as one line and returns the underlying writer's error,
// which is also counted in [Stats].Errors.
func (d *Writer) Write(r Record) error {
	if r.Time.IsZero() {
		r.Time = d.clock.Now()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	b := Append(d.buf[:0], r)
	_, err := d.w.Write(b)
	d.buf = b[:0]
	if cap(d.buf) > maxKeptBuffer {
		d.buf = nil
	}
	if err != nil {
		d.errors.Add(1)
		return fmt.Errorf("deadletter: %w", err)
	}
	d.records.Add(1)
	return nil
}

// Stats returns the writer's counters.
func (d *Writer) Stats() Stats {
	return Stats{Records: d.records.Load(), Errors: d.errors.Load()}
}

// Append appends r to dst as one JSON line, newline included, and returns
// the extended buffer.
func Append(dst []byte, r Record) []byte {
	dst = append(dst, `{"time":"`...)
	dst = r.Time.UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","input":`...)
	dst = jsonenc.AppendString(dst, []byte(r.Input))
	dst = append(dst, `,"peer":`...)
	dst = jsonenc.AppendString(dst, []byte(r.Peer))
	dst = append(dst, `,"reason":`...)
	dst = jsonenc.AppendString(dst, []byte(r.Reason))
	mark := len(dst)
	dst = append(dst, `,"line":`...)
	dst, valid := jsonenc.AppendStringChecked(dst, r.Line)
	if !valid {
		dst = append(dst[:mark], `,"line_base64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, r.Line)
		dst = append(dst, '"')
	}
	return append(dst, "}\n"...)
}

// ErrNoLine is returned by [Parse] for an object with neither "line" nor
// "line_base64".
var ErrNoLine = errors.New("deadletter: record has no line")

// Parse decodes one line written by [Append] (with or without its
// newline), the data restored byte for byte. Line is a new slice.
func Parse(line []byte) (Record, error) {
	var j struct {
		Time       time.Time `json:"time"`
		Input      string    `json:"input"`
		Peer       string    `json:"peer"`
		Reason     string    `json:"reason"`
		Line       *string   `json:"line"`
		LineBase64 *string   `json:"line_base64"`
	}
	if err := json.Unmarshal(line, &j); err != nil {
		return Record{}, fmt.Errorf("deadletter: %w", err)
	}
	r := Record{Time: j.Time, Input: j.Input, Peer: j.Peer, Reason: j.Reason}
	switch {
	case j.Line != nil:
		r.Line = []byte(*j.Line)
	case j.LineBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*j.LineBase64)
		if err != nil {
			return Record{}, fmt.Errorf("deadletter: line_base64: %w", err)
		}
		r.Line = b
	default:
		return Record{}, ErrNoLine
	}
	return r, nil
}
