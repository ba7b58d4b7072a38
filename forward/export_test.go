package forward

import "github.com/relaykit/relaykit/internal/jsonenc"

// Internals exported for the tests in package forward_test.
var (
	ParseRetryAfter    = parseRetryAfter
	AppendJSONString   = jsonenc.AppendString
	AppendEpochSeconds = appendEpochSeconds
	AppendRFC3339      = appendRFC3339
)
