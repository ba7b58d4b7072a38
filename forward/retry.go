package forward

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

func (r RetryConfig) withDefaults() (RetryConfig, error) {
	switch {
	case r.MaxAttempts < 0:
		return r, errors.New("field Retry.MaxAttempts is negative")
	case r.MaxElapsed < 0, r.InitialBackoff < 0, r.MaxBackoff < 0:
		return r, errors.New("fields Retry.MaxElapsed, InitialBackoff and MaxBackoff must not be negative")
	}
	if r.MaxAttempts == 0 {
		r.MaxAttempts = 10
	}
	if r.MaxElapsed == 0 {
		r.MaxElapsed = 5 * time.Minute
	}
	if r.InitialBackoff == 0 {
		r.InitialBackoff = 200 * time.Millisecond
	}
	if r.MaxBackoff == 0 {
		r.MaxBackoff = 30 * time.Second
	}
	if r.MaxBackoff < r.InitialBackoff {
		r.MaxBackoff = r.InitialBackoff
	}
	return r, nil
}

// backoff returns the wait after the failed attempt number attempt (1 for
// the first): retryAfter when the destination sent one, otherwise full
// jitter, uniform in [0, min(MaxBackoff, InitialBackoff·2^(attempt-1))].
func (r RetryConfig) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return retryAfter
	}
	ceiling := r.InitialBackoff
	for i := 1; i < attempt && ceiling < r.MaxBackoff; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, r.MaxBackoff)
	return rand.N(ceiling + 1) //nolint:gosec // jitter, not security
}

// maxRetryAfter caps a Retry-After value so that a bogus header cannot park
// a request for days; MaxElapsed applies anyway.
const maxRetryAfter = time.Hour

// parseRetryAfter returns the wait a response asks for: the retry-after-ms
// or x-ms-retry-after-ms header (milliseconds, Azure), else Retry-After as
// delay-seconds or an HTTP-date (RFC 9110 section 10.2.3), relative to now.
// It returns 0 when there is none or it cannot be parsed.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	for _, k := range [...]string{"Retry-After-Ms", "X-Ms-Retry-After-Ms"} {
		if v := h.Get(k); v != "" {
			if ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && ms > 0 {
				return min(time.Duration(ms*float64(time.Millisecond)), maxRetryAfter)
			}
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return min(time.Duration(s*float64(time.Second)), maxRetryAfter)
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d, maxRetryAfter)
		}
	}
	return 0
}

// sleep waits for d or until ctx ends, and returns ctx.Err() in that case.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
