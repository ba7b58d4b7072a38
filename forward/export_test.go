package forward

import "github.com/relaykit/relaykit/internal/jsonenc"

// Internals exported for the tests in package forward_test.
var (
	ParseRetryAfter    = parseRetryAfter
	AppendJSONString   = jsonenc.AppendString
	AppendEpochSeconds = appendEpochSeconds
	AppendRFC3339      = appendRFC3339
)

// SetMaxWire sets the limit of a Sentinel's compressed bodies.
func SetMaxWire(s *Sentinel, n int) { s.s.p.maxWire = n }
