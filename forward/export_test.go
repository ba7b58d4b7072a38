package forward

// Internals exported for the tests in package forward_test.
var (
	ParseRetryAfter    = parseRetryAfter
	AppendJSONString   = appendJSONString
	AppendEpochSeconds = appendEpochSeconds
	AppendRFC3339      = appendRFC3339
)

// Backoff exposes RetryConfig.backoff with defaults applied.
func Backoff(r RetryConfig, attempt int) (ceilingCheck func(d int64) bool, d int64) {
	r, _ = r.withDefaults()
	ceiling := r.InitialBackoff
	for i := 1; i < attempt && ceiling < r.MaxBackoff; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, r.MaxBackoff)
	return func(x int64) bool { return x >= 0 && x <= int64(ceiling) }, int64(r.backoff(attempt, 0))
}
