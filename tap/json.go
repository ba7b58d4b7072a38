package tap

import (
	"time"

	"github.com/relaykit/relaykit/internal/eventjson"
	"github.com/relaykit/relaykit/internal/jsonenc"
)

// AppendJSON appends o as one JSON object, without a trailing newline, and
// returns the extended buffer. It is the object the [Handler] streams:
//
//	{"point":"destination:hec","outcome":"failed","reason":"rejected","permanent":true,
//	 "receive_time":"2026-11-22T10:00:00.5Z",
//	 "time":"2026-11-22T10:00:00.123456789Z","host":"h","source":"s",
//	 "sourcetype":"st","index":"i","facility":"auth","facility_code":4,
//	 "severity":"err","severity_code":3,"message":"...","fields":{"k":"v"}}
//
// point is always present. outcome ("delivered" or "failed") is omitted
// at points without one; reason (when not empty) and permanent (when true)
// only come with "failed". receive_time is [relaykit.Event].ReceiveTime in
// RFC 3339 with nanoseconds, UTC, omitted when unknown. The keys from time
// on are those of the relay's archive format, with the same meanings and
// omissions: time (the event's time, or its receive time with
// "time_is_receive_time":true), host, source, sourcetype, index, facility
// and severity names and codes for events with a syslog priority,
// priority_assumed, message (the raw message, with message_base64 when it
// is not valid UTF-8) and fields.
func AppendJSON(dst []byte, o *Observation) []byte {
	dst = append(dst, `{"point":`...)
	dst = jsonenc.AppendString(dst, []byte(o.Point))
	if s := o.Outcome.Status.String(); s != "" {
		dst = append(dst, `,"outcome":"`...)
		dst = append(dst, s...)
		dst = append(dst, '"')
		if o.Outcome.Status == StatusFailed {
			if o.Outcome.Reason != "" {
				dst = append(dst, `,"reason":`...)
				dst = jsonenc.AppendString(dst, []byte(o.Outcome.Reason))
			}
			if o.Outcome.Permanent {
				dst = append(dst, `,"permanent":true`...)
			}
		}
	}
	if rt := o.Event.ReceiveTime; rt != 0 {
		dst = append(dst, `,"receive_time":"`...)
		dst = time.Unix(0, rt).UTC().AppendFormat(dst, time.RFC3339Nano)
		dst = append(dst, '"')
	}
	// The archive object follows, its opening brace replaced by a comma.
	n := len(dst)
	dst = eventjson.Append(dst, &o.Event)
	dst[n] = ','
	return dst
}
