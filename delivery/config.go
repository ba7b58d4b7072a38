package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/spool"
)

// Errors returned by the package. Test for them with [errors.Is].
var (
	// ErrInvalidConfig is wrapped by every error [New] returns for a bad
	// [Config].
	ErrInvalidConfig = errors.New("delivery: invalid config")
	// ErrClosed is returned by Send after Close, and by Run when called
	// twice. In mode Memory, a Send that Close cut short returns an error
	// wrapping it.
	ErrClosed = errors.New("delivery: closed")
	// ErrDropped is wrapped by the error Send returns when the full policy
	// dropped the batch ([DropNewest], or a batch larger than the whole
	// spool), and by Close when events held only in memory could not be
	// spooled at shutdown. The events are counted in Stats.Dropped.
	ErrDropped = errors.New("delivery: dropped")
)

// Mode says when a [Queue] writes a batch to its spool.
type Mode int

const (
	// WriteAhead appends every batch to the spool before Send returns, and
	// sends it from a copy in memory: a batch Send accepted survives a
	// crash of the process (and a power loss with Fsync). The disk copy is
	// acknowledged after delivery and read back only after a restart, or
	// when memory had to let the copy go. It is the default.
	WriteAhead Mode = iota
	// OnFailure keeps batches in memory and spools only what the
	// destination did not take within the retry budget, or what does not
	// fit in memory. Send accepts a batch once it is in memory: a crash
	// loses the batches memory holds.
	OnFailure
	// Memory has no spool and no queue: Send delivers the batch itself,
	// on its caller's goroutine, and returns once every event is delivered
	// or dead-lettered, retrying with the Queue's loop (backoff, the
	// destination's RetryAfter, dead letter, hooks) for as long as the
	// destination fails and ctx lasts: the caller gets back-pressure. A
	// Send cut short by ctx (or Close) returns an error wrapping ctx.Err()
	// (or ErrClosed) and a *relaykit.BatchError listing the events it did
	// not deliver: the caller owns them again. Config.Dir must be empty;
	// Full, MaxBytes, SegmentBytes, Fsync, FS, MemoryBatches, RetryBudget,
	// MaxAttempts and ProbeInterval do not apply. See the package
	// documentation.
	Memory
)

// String returns "write_ahead", "on_failure" or "memory".
func (m Mode) String() string {
	switch m {
	case WriteAhead:
		return "write_ahead"
	case OnFailure:
		return "on_failure"
	case Memory:
		return "memory"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// FullPolicy says what Send does when the spool is full.
type FullPolicy int

const (
	// Block makes Send wait until the spool has room (or ctx ends): the
	// caller gets back-pressure, nothing is dropped. It is the default.
	Block FullPolicy = iota
	// DropOldest discards the oldest segment of the spool to make room
	// (SegmentBytes at a time), counted as [relaykit.ReasonSpoolOldest].
	DropOldest
	// DropNewest refuses the new batch: Send returns an error wrapping
	// [ErrDropped], counted as [relaykit.ReasonSpoolFull].
	DropNewest
)

// String returns "block", "drop_oldest" or "drop_newest".
func (p FullPolicy) String() string {
	switch p {
	case Block:
		return "block"
	case DropOldest:
		return "drop_oldest"
	case DropNewest:
		return "drop_newest"
	}
	return fmt.Sprintf("FullPolicy(%d)", int(p))
}

// Defaults of [Config].
const (
	DefaultMemoryBatches = 8
	DefaultRetryBudget   = 2 * time.Second
	DefaultProbeInterval = time.Second
	DefaultMaxRetryAfter = 5 * time.Minute
)

// Config configures a [Queue]. Only Dir is required (and, in mode Memory,
// must be empty); every zero field means the documented default.
//
// The Queue is the retry loop; the sink should not retry, and the sinks of
// package forward do not: each Send makes one attempt and reports what it
// did not deliver. A sink that retries inside one attempt turns a
// destination that refuses quickly into one that looks hung (its attempts
// end at AttemptTimeout), hides the destination's Retry-After from the
// Queue, and may deliver just after the attempt gave up, which costs a
// duplicate.
type Config struct {
	// Name names the destination in errors, hooks and logs, e.g.
	// "splunk-prod". Zero means "destination".
	Name string
	// Dir is the spool directory, used by this Queue alone (it is locked;
	// see spool.Config.Dir). Batches that failed from memory in
	// mode OnFailure are kept in its subdirectory "retry". Required,
	// except in mode Memory, where it must be empty.
	Dir string
	// Mode is when batches are spooled. Zero means WriteAhead.
	Mode Mode
	// Full is what Send does when the spool is full. Zero means Block.
	Full FullPolicy

	// MaxBytes bounds the spool's files, in bytes. Zero means 1 GiB.
	MaxBytes int64
	// SegmentBytes is the size of a spool segment file, in bytes: the unit
	// in which DropOldest frees space. Zero means MaxBytes/8, at most
	// 64 MiB and at least 64 KiB.
	SegmentBytes int64
	// Fsync fsyncs every spool append (and acknowledgement), so that what
	// Send accepted in mode WriteAhead survives a power loss. Default off:
	// it survives a crash of the process (kill -9), not of the machine.
	Fsync bool
	// FS is the spool's file system. Nil means the operating system's;
	// package spool/spooltest injects disk faults through it.
	FS spool.FS

	// MemoryBatches is how many batches the Queue holds in memory, in
	// order, ahead of the spool. Zero means 8.
	MemoryBatches int
	// RetryBudget bounds how long a batch is retried from memory, from its
	// first attempt, before the destination is marked unhealthy and later
	// batches go to the spool. A destination that asks for a wait
	// (RetryAfter) longer than what is left of the budget sends the batch
	// to the spool at once. Zero means 2 s. Not used in mode Memory, which
	// retries until the batch is delivered or ctx ends.
	RetryBudget time.Duration
	// MaxAttempts bounds the attempts of a batch from memory, the first
	// included, within RetryBudget. Zero means no bound but the budget.
	// Not used in mode Memory.
	MaxAttempts int
	// InitialBackoff is the wait after a batch's first failed attempt; it
	// doubles after each further one (with jitter: uniform in the upper
	// half), up to MaxBackoff. Zero means 100 ms and 1 s. A destination
	// that names a longer wait gets it (see MaxRetryAfter).
	InitialBackoff, MaxBackoff time.Duration
	// MaxRetryAfter caps the wait a destination may ask for after a failed
	// attempt (relaykit.FailedRange.RetryAfter: HTTP 429 or 503 with
	// Retry-After, retry-after-ms, HEC code 9). The Queue sends nothing
	// to the destination before that wait, capped, has passed: no retry,
	// no probe, not the next batch. Zero means 5 minutes.
	MaxRetryAfter time.Duration
	// AttemptTimeout bounds one Send to the sink, so that a destination
	// that hangs costs the budget, not the sink's own timeout. A
	// destination that has shown it is slow rather than hung gets more:
	// three times the slowest of its last 16 successful sends, or twice the
	// bound of a send that ran out of time, up to 16 times AttemptTimeout.
	// Zero means
	// RetryBudget; it may not exceed it.
	AttemptTimeout time.Duration
	// ProbeInterval caps the wait between probes of an unhealthy
	// destination (100 ms doubling up to it, or the destination's
	// RetryAfter when longer) and bounds each probe. A probe sends the
	// oldest event alone; once it is delivered, the rest of its batch
	// follows at once. So delivery resumes at most about two
	// ProbeIntervals after a destination answers again (or after the wait
	// it asked for), whether it was refusing or hanging, however large the
	// batches. Zero means 1 s. Not used in mode Memory.
	ProbeInterval time.Duration

	// DeadLetter receives events the destination refused permanently
	// (relaykit.FailedRange.Permanent: invalid, too large, unauthorized),
	// with the reason and the cause. The events are valid only until it
	// returns. It is called from the Queue's Run goroutine, or in mode
	// Memory from Send's caller, possibly on several goroutines at once;
	// for events a relaykit.RequestSink cannot encode, from Send's caller.
	// A nil DeadLetter, or one that returns an error, leaves them counted
	// in Stats.Dropped under the reason.
	DeadLetter func(ctx context.Context, events []relaykit.Event, reason string, cause error) error

	// Hooks observe the Queue.
	Hooks Hooks
	// Logger logs state changes (destination unhealthy and recovered, disk
	// failing and recovered, damage found, drops), never events. Nil means
	// no logging.
	Logger *slog.Logger
}

// Hooks are optional callbacks, in the manner of net/http/httptrace. They
// run synchronously on the Queue's Run goroutine (OnDrop also on Send's
// caller; every hook on Send's caller in mode Memory, possibly on several
// goroutines at once): they must be fast, safe for concurrent use, and
// must not retain their arguments.
type Hooks struct {
	// OnDelivered is called with each run of events the destination took,
	// for example to observe latency from their ReceiveTime, when the
	// Queue holds the events: a sink that encodes ahead (a
	// relaykit.RequestSink: the forward sinks, the OTLP exporter) has its
	// batches stored and sent as requests, whose deliveries only
	// OnDeliveredRun reports.
	OnDelivered func(events []relaykit.Event)
	// OnDeliveredRun is called with each run of events the destination
	// took, events or requests alike: their number, and the least and the
	// greatest of their ReceiveTimes in ns since the Unix epoch (zero when
	// none had one; for part of a request, those of the whole request).
	// Count deliveries here; with OnDelivered also set, both are called
	// for the same run of events.
	OnDeliveredRun func(events int, oldestReceive, newestReceive int64)
	// OnDrop is called when events are dropped, with Config.Name, the
	// reason (relaykit.ReasonSpoolFull, ReasonSpoolOldest,
	// ReasonSpoolCorrupt, ReasonShutdown, or the sink's reason for
	// permanent failures no dead-letter handler took) and their number,
	// the shape of every OnDrop hook in relaykit.
	OnDrop func(name, reason string, events int)
	// OnThrottled is called when a failed attempt's destination asked for
	// a wait (relaykit.FailedRange.RetryAfter), with Config.Name and the
	// wait, capped at MaxRetryAfter: nothing is sent to it before the
	// wait has passed. Counted in Stats.Throttled and ThrottledFor.
	OnThrottled func(name string, wait time.Duration)
}

func (c Config) withDefaults() (Config, error) {
	bad := func(format string, args ...any) (Config, error) {
		return c, fmt.Errorf("%w: %s: %s", ErrInvalidConfig, c.Name, fmt.Sprintf(format, args...))
	}
	if c.Name == "" {
		c.Name = "destination"
	}
	switch {
	case c.Mode < WriteAhead || c.Mode > Memory:
		return bad("unknown %v", c.Mode)
	case c.Dir == "" && c.Mode != Memory:
		return bad("Dir is empty")
	case c.Dir != "" && c.Mode == Memory:
		return bad("Dir %q is set, but mode memory has no spool", c.Dir)
	case c.Full < Block || c.Full > DropNewest:
		return bad("unknown %v", c.Full)
	case c.MaxBytes < 0, c.SegmentBytes < 0, c.MemoryBatches < 0:
		return bad("negative MaxBytes, SegmentBytes or MemoryBatches")
	case c.RetryBudget < 0, c.AttemptTimeout < 0, c.ProbeInterval < 0, c.MaxAttempts < 0,
		c.InitialBackoff < 0, c.MaxBackoff < 0, c.MaxRetryAfter < 0:
		return bad("negative RetryBudget, AttemptTimeout, ProbeInterval, MaxAttempts, backoff or MaxRetryAfter")
	}
	if c.MaxRetryAfter == 0 {
		c.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if c.InitialBackoff == 0 {
		c.InitialBackoff = 100 * time.Millisecond
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = time.Second
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = spool.DefaultMaxBytes
	}
	if c.SegmentBytes == 0 {
		c.SegmentBytes = min(spool.DefaultSegmentBytes, max(c.MaxBytes/8, 64<<10))
	}
	if c.MemoryBatches == 0 {
		c.MemoryBatches = DefaultMemoryBatches
	}
	if c.RetryBudget == 0 {
		c.RetryBudget = DefaultRetryBudget
	}
	if c.AttemptTimeout == 0 {
		c.AttemptTimeout = c.RetryBudget
	}
	if c.AttemptTimeout > c.RetryBudget {
		return bad("AttemptTimeout %v exceeds RetryBudget %v", c.AttemptTimeout, c.RetryBudget)
	}
	if c.ProbeInterval == 0 {
		c.ProbeInterval = DefaultProbeInterval
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}
