package forward

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// Append-style JSON helpers shared by the sinks' encoders. None allocates
// beyond growing dst.

const hexDigits = "0123456789abcdef"

// jsonSafe reports the bytes that go into a JSON string as they are:
// printable ASCII except the quote and the backslash.
var jsonSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendJSONString appends s as a JSON string (RFC 8259), quotes included.
// Invalid UTF-8 becomes U+FFFD, so the output is always valid JSON and
// valid UTF-8; control characters, U+2028 and U+2029 are escaped.
func appendJSONString(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if jsonSafe[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\\ufffd"...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

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
