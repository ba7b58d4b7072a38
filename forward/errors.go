package forward

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidConfig is wrapped by every error a constructor returns for a bad
// configuration.
var ErrInvalidConfig = errors.New("forward: invalid config")

// SendError is the error of one failed request to a remote destination,
// like *url.Error for HTTP requests. A sink reports undelivered events in a
// [*relaykit.BatchError] whose runs have a *SendError as their Err.
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
	// RetryAfter is the wait the destination asked for before the next
	// request (Retry-After, retry-after-ms or x-ms-retry-after-ms), or
	// zero when it named none. It is also the RetryAfter of the
	// [relaykit.FailedRange] the error belongs to.
	RetryAfter time.Duration
	// Err is the underlying error.
	Err error
}

// Error returns the destination, the status codes and the cause. It never
// contains secrets.
func (e *SendError) Error() string {
	var ra string
	if e.RetryAfter > 0 {
		ra = fmt.Sprintf(" (retry after %v)", e.RetryAfter)
	}
	switch {
	case e.StatusCode != 0 && e.Code >= 0:
		return fmt.Sprintf("forward: send to %s: HTTP %d (code %d): %v%s", e.Destination, e.StatusCode, e.Code, e.Err, ra)
	case e.StatusCode != 0:
		return fmt.Sprintf("forward: send to %s: HTTP %d: %v%s", e.Destination, e.StatusCode, e.Err, ra)
	default:
		return fmt.Sprintf("forward: send to %s: %v%s", e.Destination, e.Err, ra)
	}
}

// Unwrap returns Err, for errors.Is and errors.As.
func (e *SendError) Unwrap() error { return e.Err }
