// Package eventjson holds the JSON object of the archive format, shared by
// the storage archive and the Kafka sink so the two cannot drift apart.
package eventjson

import (
	"encoding/base64"
	"strconv"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/jsonenc"
	"github.com/relaykit/relaykit/internal/syslogname"
)

// Append appends e as one JSON object, without a trailing newline, and
// returns the extended buffer:
//
//	{"time":"2026-11-22T10:00:00.123456789Z","time_is_receive_time":true,
//	 "host":"h","source":"s","sourcetype":"st","index":"i",
//	 "facility":"auth","facility_code":4,"severity":"err","severity_code":3,
//	 "priority_assumed":true,
//	 "message":"...","message_base64":"...","fields":{"k":"v"}}
//
// time is [relaykit.Event.EventTime] in RFC 3339 with nanoseconds, UTC,
// omitted when unknown; time_is_receive_time (true) says that it is the
// receive time, the event having no time of its own, and is omitted
// otherwise. host, source, sourcetype and index are omitted when empty,
// fields when there are none (duplicate keys are written as they are).
// facility and severity are written for events with a syslog priority
// ([relaykit.FlagPriority]): the names of RFC 5424 tables 1 and 2 as
// syslog.conf(5) spells them (kern ... local7; emerg, alert, crit, err,
// warning, notice, info, debug) and the numerical codes (0-23, 0-7);
// priority_assumed (true) says the message had no valid PRI and the
// priority is the one assumed for it, user.notice
// ([relaykit.FlagPriorityAssumed]), and is omitted otherwise.
// Strings are escaped as encoding/json does: '"', '\\' and control
// characters are escaped, and each byte that is not part of valid UTF-8
// becomes U+FFFD. message_base64 is written only for a message that is not
// valid UTF-8: its bytes as received, in standard base64 (RFC 4648 section
// 4), so a reader can restore what message could not carry. It does not
// allocate when dst has room.
func Append(dst []byte, e *relaykit.Event) []byte {
	dst = append(dst, '{')
	first := true
	if t := e.EventTime(); !t.IsZero() {
		dst = append(dst, `"time":"`...)
		dst = t.AppendFormat(dst, time.RFC3339Nano)
		dst = append(dst, '"')
		if e.Time == 0 {
			dst = append(dst, `,"time_is_receive_time":true`...)
		}
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
		if e.Flags&relaykit.FlagPriorityAssumed != 0 {
			dst = append(dst, `,"priority_assumed":true`...)
		}
	}
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, `"message":`...)
	dst, valid := jsonenc.AppendStringChecked(dst, e.Raw)
	if !valid {
		dst = append(dst, `,"message_base64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, e.Raw)
		dst = append(dst, '"')
	}
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
