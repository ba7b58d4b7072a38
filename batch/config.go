package batch

import (
	"errors"
	"fmt"
	"time"

	"github.com/relaykit/relaykit/clock"
)

// Defaults used for zero [Config] fields.
const (
	// DefaultMaxEvents is the batch size used when Config.MaxEvents is zero.
	DefaultMaxEvents = 1000
	// DefaultMaxBytes is the batch byte limit used when Config.MaxBytes is
	// zero and Config.Size is set: 1 MiB.
	DefaultMaxBytes = 1 << 20
	// DefaultMaxWait is the linger used when Config.MaxWait is zero.
	DefaultMaxWait = 100 * time.Millisecond
	// DefaultMaxInFlight is the number of concurrent flushes used when
	// Config.MaxInFlight is zero. One keeps batches in Add order.
	DefaultMaxInFlight = 1
	// DefaultDrainTimeout is the drain budget of [Collector.Run] used when
	// Config.DrainTimeout is zero.
	DefaultDrainTimeout = 5 * time.Second
)

// Errors returned by the package. Test for them with [errors.Is].
var (
	// ErrInvalidConfig is wrapped by every error [NewCollector] returns for a
	// bad [Config].
	ErrInvalidConfig = errors.New("batch: invalid config")
	// ErrClosed is returned by Add and Flush once the collector is closed
	// (by [Collector.Close] or by the end of Run's context).
	ErrClosed = errors.New("batch: closed")
	// ErrDrainTimeout is wrapped by the [*DrainError] that Close and Run
	// return when the drain deadline passed before every item was flushed.
	ErrDrainTimeout = errors.New("batch: drain timeout")
)

// Reason says why a batch was handed to the flush function. Its String form
// is a stable label, fit for metrics.
type Reason uint8

// Flush reasons.
const (
	// ReasonSize: the batch reached Config.MaxEvents items.
	ReasonSize Reason = iota
	// ReasonBytes: the batch reached Config.MaxBytes, or the next item would
	// have passed it, or a single item was larger than MaxBytes on its own.
	ReasonBytes
	// ReasonTime: Config.MaxWait passed since the batch's first item.
	ReasonTime
	// ReasonManual: [Collector.Flush] was called.
	ReasonManual
	// ReasonClose: the collector was closed ([Collector.Close] or the end of
	// Run's context).
	ReasonClose
)

// String returns "size", "bytes", "time", "manual" or "close".
func (r Reason) String() string {
	switch r {
	case ReasonSize:
		return "size"
	case ReasonBytes:
		return "bytes"
	case ReasonTime:
		return "time"
	case ReasonManual:
		return "manual"
	case ReasonClose:
		return "close"
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// DropDrainTimeout is the reason given to Hooks.OnDrop for batches that were
// still waiting for a flusher when the drain deadline passed.
const DropDrainTimeout = "drain_timeout"

// Hooks are optional callbacks, in the manner of net/http/httptrace. A nil
// field is skipped. Hooks run synchronously on the flushing goroutine, possibly
// on several goroutines at once when MaxInFlight > 1: they must be fast and
// safe for concurrent use, and must not call the collector's Add, Flush or
// Close (a blocked hook blocks a flusher).
type Hooks[T any] struct {
	// OnFlush is called after every call of the flush function returns,
	// successful or not, with the reason the batch was cut, its number of
	// items, its size in bytes (the sum of Config.Size, or 0 without Size)
	// and how long the flush function ran.
	OnFlush func(reason Reason, items, bytes int, took time.Duration)
	// OnFlushError is called when the flush function returns an error, with
	// the batch it was given and that error, before OnFlush. The batch is
	// valid only until OnFlushError returns: copy (or spill) what must
	// outlive the call. The items are counted in Stats.FailedItems; the
	// collector does not retry them.
	OnFlushError func(batch []T, err error)
	// OnDrop is called with a batch the collector gives up on without
	// flushing it, and the reason (today only [DropDrainTimeout]: the
	// drain deadline of Close or Run passed while the batch waited for a
	// flusher). The batch is valid only until OnDrop returns. The items are
	// counted in Stats.DroppedItems.
	OnDrop func(batch []T, reason string)
}

// Config configures a [Collector]. The zero value is valid: every zero field
// means the documented default. [NewCollector] copies it.
type Config[T any] struct {
	// MaxEvents is the maximum number of items in a batch; a batch is
	// flushed as soon as it holds MaxEvents items. Each of the
	// MaxInFlight+1 batch buffers is allocated with room for MaxEvents
	// items when first used, and kept. Zero means DefaultMaxEvents (1000).
	// Negative is invalid.
	MaxEvents int

	// MaxBytes is the maximum size of a batch in bytes, as measured by
	// Size. A batch is flushed when it reaches MaxBytes, or before an item
	// is added that would take it past MaxBytes. An item larger than
	// MaxBytes on its own is flushed alone, in a batch of one. Zero means
	// DefaultMaxBytes (1 MiB) when Size is set and no byte limit when Size
	// is nil. Negative, or positive without Size, is invalid.
	MaxBytes int

	// Size returns the size of an item in bytes (for instance the length of
	// its encoded form). It is called once per item added: by Add outside
	// the collector's lock, by AddBatch under it. It must be fast, safe for
	// concurrent use and must not call the collector. A negative result
	// counts as zero. Nil means items have no size and there is no byte
	// limit.
	Size func(T) int

	// MaxWait is how long a batch may stay open, counted from the moment its
	// first item was added (not a free-running ticker): a batch that
	// started at t is flushed at t+MaxWait unless a limit cut it sooner. It
	// is enforced by [Collector.Run]. Zero means DefaultMaxWait (100 ms).
	// Negative means no time limit.
	MaxWait time.Duration

	// MaxInFlight is the number of flush function calls that may run at
	// once. Together with the open batch it bounds memory: at most
	// MaxInFlight+1 batches exist, and Add blocks while all of them are
	// full or being flushed. With 1, batches are flushed one at a time in
	// the order their items were added. Zero means DefaultMaxInFlight (1).
	// Negative is invalid.
	MaxInFlight int

	// InlineFlush makes the goroutine that cuts a batch flush it, instead of
	// a flushing goroutine of [Collector.Run]: Add and AddBatch flush the
	// batches they cut before they return, Flush flushes on its caller's
	// goroutine, and the MaxWait timer's cuts are flushed on Run's. A batch
	// is then flushed on the processor whose cache holds its items, with no
	// goroutine to wake per batch; in exchange an adder that cuts a batch
	// takes as long as the flush. Flushes still run one at a time, in the
	// order the batches were cut, whichever goroutine runs them; an adder
	// that finds every buffer taken flushes what is waiting, or waits for
	// the flush in progress (not for its context). MaxInFlight must be 0
	// or 1. False (the default) flushes on Run's goroutines.
	InlineFlush bool

	// DrainTimeout is how long [Collector.Run], once its context has ended,
	// waits for the open batch and the batches already cut to be flushed.
	// The flush functions still running at the deadline see their context
	// canceled. [Collector.Close] uses its own context's deadline instead.
	// Zero means DefaultDrainTimeout (5 s). Negative is invalid.
	DrainTimeout time.Duration

	// Clock stamps the first item of each batch (once per batch, not per
	// item) to measure MaxWait. Nil means [clock.Default].
	Clock *clock.Clock

	// Hooks are optional callbacks; see [Hooks].
	Hooks Hooks[T]
}

// withDefaults returns a copy of cfg with defaults filled, or an error
// wrapping ErrInvalidConfig.
func (cfg Config[T]) withDefaults() (Config[T], error) {
	switch {
	case cfg.MaxEvents < 0:
		return cfg, fmt.Errorf("%w: MaxEvents %d is negative", ErrInvalidConfig, cfg.MaxEvents)
	case cfg.MaxBytes < 0:
		return cfg, fmt.Errorf("%w: MaxBytes %d is negative", ErrInvalidConfig, cfg.MaxBytes)
	case cfg.MaxBytes > 0 && cfg.Size == nil:
		return cfg, fmt.Errorf("%w: MaxBytes %d needs a Size function", ErrInvalidConfig, cfg.MaxBytes)
	case cfg.MaxInFlight < 0:
		return cfg, fmt.Errorf("%w: MaxInFlight %d is negative", ErrInvalidConfig, cfg.MaxInFlight)
	case cfg.InlineFlush && cfg.MaxInFlight > 1:
		return cfg, fmt.Errorf("%w: MaxInFlight %d with InlineFlush (one flush at a time)", ErrInvalidConfig, cfg.MaxInFlight)
	case cfg.DrainTimeout < 0:
		return cfg, fmt.Errorf("%w: DrainTimeout %v is negative", ErrInvalidConfig, cfg.DrainTimeout)
	}
	if cfg.MaxEvents == 0 {
		cfg.MaxEvents = DefaultMaxEvents
	}
	if cfg.MaxBytes == 0 && cfg.Size != nil {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxWait == 0 {
		cfg.MaxWait = DefaultMaxWait
	}
	if cfg.MaxInFlight == 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.DrainTimeout == 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	return cfg, nil
}

// DrainError is the error Close and Run return when the drain deadline
// passed before every item was flushed. It matches [ErrDrainTimeout] and the
// context's error with [errors.Is].
type DrainError struct {
	// Unflushed is the number of items whose flush had not completed at the
	// deadline: those in batches still waiting for a flusher (handed to
	// Hooks.OnDrop) and those in flushes still running (whose flush
	// context is canceled; their outcome is reported through the hooks
	// and Stats as usual).
	Unflushed int
	// Err is the cause: the context's error.
	Err error
}

// Error returns "batch: drain timeout: N items not flushed: <cause>".
func (e *DrainError) Error() string {
	return fmt.Sprintf("batch: drain timeout: %d items not flushed: %v", e.Unflushed, e.Err)
}

// Unwrap returns [ErrDrainTimeout] and the cause.
func (e *DrainError) Unwrap() []error { return []error{ErrDrainTimeout, e.Err} }
