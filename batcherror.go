package relaykit

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// BatchError reports which events of a batch a [Sink] did not deliver;
// every event it does not list was delivered (or dead-lettered, see the
// acknowledgement contract on [Sink]). A Sink that may deliver part of a
// batch returns one from Send, possibly wrapped; callers find it with
// errors.As. It lets a caller retry, spool or dead-letter exactly the
// undelivered events instead of the whole batch.
type BatchError struct {
	// Failed lists the undelivered events as runs of indexes into the batch
	// given to Send, in ascending order and not overlapping.
	Failed []FailedRange
}

// FailedRange is a run of undelivered events of a batch: batch[From:To].
type FailedRange struct {
	// From and To bound the run: indexes into the batch, From < To.
	From, To int
	// Permanent reports that sending the same events again cannot succeed:
	// the destination refused them as invalid or too large. A caller
	// dead-letters such events rather than retrying them.
	Permanent bool
	// RetryAfter is the wait the destination asked for before these
	// events are sent again (HTTP 429 or 503 with Retry-After or
	// retry-after-ms, HEC code 9 with Retry-After, gRPC RetryInfo), or
	// zero when it named none. Only meaningful when Permanent is false. A
	// retrying caller (delivery.Queue) never sends sooner than this.
	RetryAfter time.Duration
	// Reason is a short, stable label for metrics, one of the Reason
	// constants such as [ReasonRejected] or [ReasonTooLarge].
	Reason string
	// Err is the cause. It never contains secrets.
	Err error
}

// Events returns the number of undelivered events.
func (e *BatchError) Events() int {
	n := 0
	for _, f := range e.Failed {
		n += f.To - f.From
	}
	return n
}

// Permanent reports whether every undelivered event failed permanently.
func (e *BatchError) Permanent() bool {
	for _, f := range e.Failed {
		if !f.Permanent {
			return false
		}
	}
	return len(e.Failed) > 0
}

// RetryAfter returns the longest wait a destination asked for among the
// retryable runs, or zero when none named one.
func (e *BatchError) RetryAfter() time.Duration {
	var d time.Duration
	for _, f := range e.Failed {
		if !f.Permanent {
			d = max(d, f.RetryAfter)
		}
	}
	return d
}

// Error summarises the failures: the number of undelivered events and the
// first cause.
func (e *BatchError) Error() string {
	if len(e.Failed) == 0 {
		return "relaykit: batch partly undelivered"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "relaykit: %d events undelivered", e.Events())
	f := e.Failed[0]
	fmt.Fprintf(&b, " (%s", f.Reason)
	if f.Err != nil {
		fmt.Fprintf(&b, ": %v", f.Err)
	}
	b.WriteByte(')')
	if len(e.Failed) > 1 {
		fmt.Fprintf(&b, " and %d more runs", len(e.Failed)-1)
	}
	return b.String()
}

// Unwrap returns the causes of the failed runs, for errors.Is and
// errors.As.
func (e *BatchError) Unwrap() []error {
	errs := make([]error, 0, len(e.Failed))
	for _, f := range e.Failed {
		if f.Err != nil {
			errs = append(errs, f.Err)
		}
	}
	return errs
}

// AsBatchError returns the [*BatchError] in err's chain, or, for any other
// non-nil error, a BatchError that lists the whole batch of n events as
// undelivered and retryable with reason [ReasonSinkError]. It returns nil for a nil
// err. It lets a caller treat every Send error in terms of events.
func AsBatchError(err error, n int) *BatchError {
	if err == nil {
		return nil
	}
	var be *BatchError
	if errors.As(err, &be) {
		return be
	}
	if n == 0 {
		return &BatchError{}
	}
	return &BatchError{Failed: []FailedRange{{From: 0, To: n, Reason: ReasonSinkError, Err: err}}}
}
