// Package eventjson holds the JSON object of the archive format, shared by
// the storage archive and the Kafka sink so the two cannot drift apart.
package eventjson

import (
	"strconv"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/jsonenc"
	"github.com/relaykit/relaykit/internal/syslogname"
)

// Append appends e as one JSON object, without a trailing newline, and
// returns the extended buffer:
//
//	{"time":"2026-11-22T10:00:00.123456789Z","host":"h","source":"s",
//	 "sourcetype":"st","index":"i","facility":"auth","facility_code":4,
//	 "severity":"err","severity_code":3,"message":"...","fields":{"k":"v"}}
//
// time is [relaykit.Event.EventTime] in RFC 3339 with nanoseconds, UTC,
// omitted when unknown; host, source, sourcetype and index are omitted when
// empty, fields when there are none (duplicate keys are written as they
// are). facility and severity are written for events with a syslog
// priority ([relaykit.FlagPriority]): the names of RFC 5424 tables 1 and 2
// as syslog.conf(5) spells them (kern ... local7; emerg, alert, crit, err,
// warning, notice, info, debug) and the numerical codes (0-23, 0-7). Strings are escaped as encoding/json does: '"', '\\' and control
// characters are escaped, and each byte that is not part of valid UTF-8
// becomes U+FFFD. It does not allocate when dst has room.
func Append(dst []byte, e *relaykit.Event) []byte {
	dst = append(dst, '{')
	first := true
	if t := e.EventTime(); !t.IsZero() {
		dst = append(dst, `"time":"`...)
		dst = t.AppendFormat(dst, time.RFC3339Nano)
		dst = append(dst, '"')
		first = false
	}
	str := func(key string, v []byte) {
		if len(v) == 0 {
			return
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, key...)
		dst = jsonenc.AppendString(dst, v)
	}
	str(`"host":`, e.Host)
	str(`"source":`, e.Source)
	str(`"sourcetype":`, e.SourceType)
	str(`"index":`, e.Index)
	if e.Flags&relaykit.FlagPriority != 0 {
		fac, sev := e.Priority>>3, e.Priority&7
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, `"facility":"`...)
		dst = append(dst, syslogname.Facility(fac)...)
		dst = append(dst, `","facility_code":`...)
		dst = strconv.AppendUint(dst, uint64(fac), 10)
		dst = append(dst, `,"severity":"`...)
		dst = append(dst, syslogname.Severity(sev)...)
		dst = append(dst, `","severity_code":`...)
		dst = strconv.AppendUint(dst, uint64(sev), 10)
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
