package kafka

import (
	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/eventjson"
)

// AppendJSON appends e as the JSON object of the archive format, without a
// trailing newline, and returns the extended buffer. It is the same encoder
// as storage.AppendJSON (one implementation, shared internally), so a
// record's value reads like an archive line; see there for the layout:
// time, host, source, sourcetype, index, facility and severity (names and
// codes, for events with a syslog priority), message (and message_base64,
// the bytes of a message that is not valid UTF-8) and fields. It does not
// allocate when dst has room.
func AppendJSON(dst []byte, e *relaykit.Event) []byte { return eventjson.Append(dst, e) }

// validTopic reports whether t is a legal Kafka topic name: 1 to 249 bytes
// of [a-zA-Z0-9._-], and not "." or "..".
func validTopic(t []byte) bool {
	if len(t) == 0 || len(t) > 249 || string(t) == "." || string(t) == ".." {
		return false
	}
	for _, c := range t {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
