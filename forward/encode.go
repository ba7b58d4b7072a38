package forward

import (
	"strconv"
	"time"
)

const hexDigits = "0123456789abcdef"

// Append-style JSON helpers shared by the sinks' encoders. None allocates
// beyond growing dst.

// appendEpochSeconds appends ns (nanoseconds since the Unix epoch) as epoch
// seconds with a millisecond fraction, e.g. 1700000000.123 (the HEC "time"
// format). Negative times are clamped to 0.
func appendEpochSeconds(dst []byte, ns int64) []byte {
	if ns < 0 {
		ns = 0
	}
	ms := ns / int64(time.Millisecond)
	dst = strconv.AppendInt(dst, ms/1000, 10)
	f := ms % 1000
	return append(dst, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// appendRFC3339 appends ns (nanoseconds since the Unix epoch) as an RFC 3339
// UTC timestamp with a fraction (Sentinel TimeGenerated), quotes excluded.
func appendRFC3339(dst []byte, ns int64) []byte {
	return time.Unix(0, ns).UTC().AppendFormat(dst, time.RFC3339Nano)
}
