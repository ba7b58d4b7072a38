package forward

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfter caps a Retry-After value so that a bogus header cannot
// overflow a time.Duration or park events for days; a retrying caller
// (delivery.Queue) applies its own, smaller cap.
const maxRetryAfter = 24 * time.Hour

// parseRetryAfter returns the wait a response asks for: the retry-after-ms
// or x-ms-retry-after-ms header (milliseconds, Azure), else Retry-After as
// delay-seconds or an HTTP-date (RFC 9110 section 10.2.3), relative to now.
// It returns 0 when there is none or it cannot be parsed.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	for _, k := range [...]string{"Retry-After-Ms", "X-Ms-Retry-After-Ms"} {
		if v := h.Get(k); v != "" {
			if ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && ms > 0 {
				return min(time.Duration(min(ms, float64(maxRetryAfter/time.Millisecond))*float64(time.Millisecond)), maxRetryAfter)
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
		return min(time.Duration(min(s, float64(maxRetryAfter/time.Second))*float64(time.Second)), maxRetryAfter)
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
