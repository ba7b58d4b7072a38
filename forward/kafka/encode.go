package kafka

import (
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/jsonenc"
)

// AppendJSON appends e as the JSON object of the archive format (the same
// as storage.AppendJSON), without a trailing newline, and returns the
// extended buffer:
//
//	{"time":"2026-11-22T10:00:00.123456789Z","host":"h","source":"s",
//	 "sourcetype":"st","index":"i","message":"...","fields":{"k":"v"}}
//
// time is [relaykit.Event.EventTime] in RFC 3339 with nanoseconds, UTC,
// omitted when unknown; host, source, sourcetype and index are omitted when
// empty, fields when there are none. Strings are escaped as encoding/json
// does, and bytes that are not valid UTF-8 become U+FFFD. It does not
// allocate when dst has room.
//
// The format is duplicated here rather than imported because package
// storage is not a dependency of the sinks; a test holds the two encoders
// to the same output.
func AppendJSON(dst []byte, e *relaykit.Event) []byte {
	dst = append(dst, '{')
	first := true
	if t := e.EventTime(); !t.IsZero() {
		dst = append(dst, `"time":"`...)
		dst = t.AppendFormat(dst, time.RFC3339Nano)
		dst = append(dst, '"')
		first = false
	}
	for _, kv := range [...]struct {
		key string
		v   []byte
	}{{`"host":`, e.Host}, {`"source":`, e.Source}, {`"sourcetype":`, e.SourceType}, {`"index":`, e.Index}} {
		if len(kv.v) == 0 {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, kv.key...)
		dst = jsonenc.AppendString(dst, kv.v)
	}
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, `"message":`...)
	dst = jsonenc.AppendString(dst, e.Raw)
	if len(e.Fields) > 0 {
		dst = append(dst, `,"fields":{`...)
		for i := range e.Fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonenc.AppendString(dst, e.Fields[i].Key)
			dst = append(dst, ':')
			dst = jsonenc.AppendString(dst, e.Fields[i].Value)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

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
