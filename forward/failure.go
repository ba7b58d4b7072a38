package forward

import (
	"context"
	"errors"
	"fmt"

	"github.com/relaykit/relaykit"
)

// ErrInvalidConfig is wrapped by every error a constructor returns for a bad
// configuration.
var ErrInvalidConfig = errors.New("forward: invalid config")

// Reasons a batch, or part of one, is handed to a [FailureFunc]. They are
// stable strings, fit for metric labels.
const (
	// ReasonRetriesExhausted: a retryable failure persisted past the retry
	// budget (attempts or time).
	ReasonRetriesExhausted = "retries_exhausted"
	// ReasonRejected: the destination refused the data as invalid (HEC bad
	// data, Sentinel schema mismatch); resending it unchanged cannot succeed.
	ReasonRejected = "rejected"
	// ReasonTooLarge: a single event exceeds the destination's size limit.
	ReasonTooLarge = "too_large"
	// ReasonUnauthorized: the destination refused the credentials.
	ReasonUnauthorized = "unauthorized"
	// ReasonShutdown: the context ended before the events were delivered.
	ReasonShutdown = "shutdown"
)

// Failure describes events a sink could not deliver.
type Failure struct {
	// Destination names the remote system, as in [SendError].
	Destination string
	// Events are the undelivered events, in their original order. The slice
	// and the events' bytes are valid only until the FailureFunc returns:
	// copy (relaykit.Event.Clone) what must outlive the call.
	Events []relaykit.Event
	// Reason is one of the Reason constants.
	Reason string
	// Err is the last error seen; it never contains secrets.
	Err error
}

// FailureFunc receives every event a sink gives up on, so the caller can
// spill, dead-letter or count it: a sink never drops events silently. It is
// called synchronously from the sending goroutine, possibly from several
// goroutines at once, so it must be safe for concurrent use and fast.
type FailureFunc func(ctx context.Context, f Failure)

// SendError is the error type returned for a failed delivery to a remote
// destination, like *url.Error for HTTP requests.
type SendError struct {
	// Destination names the remote system ("hec", "sentinel", "syslog" or
	// the configured name).
	Destination string
	// StatusCode is the HTTP status code, or 0 when there was no response.
	StatusCode int
	// Code is the destination's own status code (HEC "code"), or -1.
	Code int
	// Retryable reports whether sending the same data again may succeed.
	Retryable bool
	// Err is the underlying error.
	Err error
}

// Error returns the destination, the status codes and the cause. It never
// contains secrets.
func (e *SendError) Error() string {
	switch {
	case e.StatusCode != 0 && e.Code >= 0:
		return fmt.Sprintf("forward: send to %s: HTTP %d (code %d): %v", e.Destination, e.StatusCode, e.Code, e.Err)
	case e.StatusCode != 0:
		return fmt.Sprintf("forward: send to %s: HTTP %d: %v", e.Destination, e.StatusCode, e.Err)
	default:
		return fmt.Sprintf("forward: send to %s: %v", e.Destination, e.Err)
	}
}

// Unwrap returns Err, for errors.Is and errors.As.
func (e *SendError) Unwrap() error { return e.Err }
