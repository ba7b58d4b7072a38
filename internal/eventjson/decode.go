package eventjson

import (
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/valyala/fastjson"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/syslogname"
)

// Errors of Decode that carry no detail; the others are built with it.
var (
	errNotObject = errors.New("value is not a JSON object")
	errNoMessage = errors.New(`value has no "message" string`)
	errBase64    = errors.New(`value has an invalid "message_base64"`)
	errHalfPRI   = errors.New("value has a facility without a severity or the reverse")
)

// maxFacility is the largest facility code Decode takes: 31, what
// [relaykit.Event.Priority] can hold (Priority>>3). RFC 5424 defines 0-23;
// Append writes 24-31 with an empty name, and Decode takes them back.
const maxFacility = 31

// Decode parses data, one JSON object as [Append] writes it, into e. It
// resets e first and reuses e's buffers, and p's: once both are warm it
// does not allocate. p belongs to the caller and must not be used by two
// goroutines at once; e holds copies and does not point into data or p.
//
// It reads:
//
//   - message, required, a string: [relaykit.Event.Raw]; when
//     message_base64 is present, Raw is its decoded bytes instead (the
//     message as received, where it was not valid UTF-8).
//   - host, source, sourcetype, index: strings; missing, empty or not a
//     string leaves the member empty.
//   - time: RFC 3339 (with any fraction and offset): Event.Time, or
//     Event.ReceiveTime when time_is_receive_time is true (the event had
//     no time of its own). Missing or not a string means neither is set.
//   - facility_code and severity_code (0-31, 0-7), else facility and
//     severity as names (kern, auth, err: syslog.conf(5)) or numbers: the
//     priority, with [relaykit.FlagPriority]; priority_assumed (true) adds
//     [relaykit.FlagPriorityAssumed]. With neither member the event has no
//     priority.
//   - fields: an object of strings, in order, duplicate keys kept; one
//     that is not an object is ignored.
//
// Unknown members are ignored. It returns an error, and leaves e partly
// filled, for data that is not a JSON object, has no message string, an
// invalid message_base64 or time (or one outside the years 1678-2262 that
// an int64 of nanoseconds holds), a field value that is not a string, a
// facility without a severity (or the reverse), or one that is neither a
// known name nor a code in range: a consumer dead-letters such a record
// rather than deliver it without what it claims.
//
// # What crosses
//
// Decode(Append(e)) equals e except for what Append does not write:
//
//   - ReceiveTime, when Time is set (the consumer's receive time applies);
//   - Priority and FlagPriorityAssumed of an event without FlagPriority
//     (they mean nothing without it);
//   - FlagParseError and FlagTruncated;
//   - the bytes of Host, Source, SourceType, Index and fields that are not
//     valid UTF-8: each such byte comes back as U+FFFD (only the message
//     carries its bytes as received, in message_base64);
//   - the difference between a nil and an empty slice.
func Decode(p *fastjson.Parser, data []byte, e *relaykit.Event) error {
	e.Reset()
	v, err := p.ParseBytes(data)
	if err != nil {
		return fmt.Errorf("invalid json: %w", err)
	}
	o, err := v.Object()
	if err != nil {
		return errNotObject
	}
	// One pass over the members; the first of a repeated key wins, as
	// with fastjson's Get.
	var m members
	o.Visit(m.take)
	if m.message == nil || m.message.Type() != fastjson.TypeString {
		return errNoMessage
	}
	if m.b64 != nil {
		b, err := m.b64.StringBytes()
		if err == nil {
			e.Raw, err = base64.StdEncoding.AppendDecode(e.Raw[:0], b)
		}
		if err != nil {
			return errBase64
		}
	} else {
		e.Raw = append(e.Raw, m.message.GetStringBytes()...)
	}
	e.Host = append(e.Host, m.host.GetStringBytes()...)
	e.Source = append(e.Source, m.source.GetStringBytes()...)
	e.SourceType = append(e.SourceType, m.sourcetype.GetStringBytes()...)
	e.Index = append(e.Index, m.index.GetStringBytes()...)
	if t := m.time.GetStringBytes(); len(t) > 0 {
		tm, ok := parseRFC3339UTC(t)
		if !ok {
			var err error
			if tm, err = time.Parse(time.RFC3339Nano, string(t)); err != nil {
				return fmt.Errorf("invalid time %q", t)
			}
		}
		ns := tm.UnixNano()
		if !time.Unix(0, ns).Equal(tm) {
			return fmt.Errorf("time %q is outside the years 1678 to 2262 that nanoseconds since 1970 can hold", t)
		}
		if m.receiveTime.GetBool() {
			e.ReceiveTime = ns
		} else {
			e.Time = ns
		}
	}
	if err := m.priority(e); err != nil {
		return err
	}
	if m.fields != nil && m.fields.Type() == fastjson.TypeObject {
		fo, _ := m.fields.Object()
		var bad []byte
		fo.Visit(func(key []byte, fv *fastjson.Value) {
			if bad != nil {
				return
			}
			b, err := fv.StringBytes()
			if err != nil {
				bad = key
				return
			}
			n := len(e.Fields)
			if n < cap(e.Fields) {
				e.Fields = e.Fields[:n+1]
			} else {
				e.Fields = append(e.Fields, relaykit.Field{})
			}
			f := &e.Fields[n]
			f.Key = append(f.Key[:0], key...)
			f.Value = append(f.Value[:0], b...)
		})
		if bad != nil {
			return fmt.Errorf("field %q is not a string", bad)
		}
	}
	return nil
}

// members holds the top-level members Decode reads.
type members struct {
	message, b64, host, source, sourcetype, index, time, receiveTime *fastjson.Value
	facCode, fac, sevCode, sev, assumed, fields                      *fastjson.Value
}

func (m *members) take(key []byte, v *fastjson.Value) {
	var slot **fastjson.Value
	switch string(key) {
	case "message":
		slot = &m.message
	case "message_base64":
		slot = &m.b64
	case "host":
		slot = &m.host
	case "source":
		slot = &m.source
	case "sourcetype":
		slot = &m.sourcetype
	case "index":
		slot = &m.index
	case "time":
		slot = &m.time
	case "time_is_receive_time":
		slot = &m.receiveTime
	case "facility_code":
		slot = &m.facCode
	case "facility":
		slot = &m.fac
	case "severity_code":
		slot = &m.sevCode
	case "severity":
		slot = &m.sev
	case "priority_assumed":
		slot = &m.assumed
	case "fields":
		slot = &m.fields
	default:
		return
	}
	if *slot == nil {
		*slot = v
	}
}

// priority sets e's syslog priority from the members: the codes, else the
// names (see Decode).
func (m *members) priority(e *relaykit.Event) error {
	f, fok, err := priorityPart(m.facCode, "facility_code", m.fac, "facility", maxFacility, syslogname.FacilityCode)
	if err != nil {
		return err
	}
	s, sok, err := priorityPart(m.sevCode, "severity_code", m.sev, "severity", 7, syslogname.SeverityCode)
	if err != nil {
		return err
	}
	switch {
	case fok && sok:
		e.SetPriority(f, s)
		if m.assumed.GetBool() {
			e.Flags |= relaykit.FlagPriorityAssumed
		}
	case fok || sok:
		return errHalfPRI
	}
	return nil
}

// priorityPart reads one half of the priority: the code member, else the
// name member (a name or a number), at most limit.
func priorityPart(code *fastjson.Value, codeKey string, name *fastjson.Value, nameKey string, limit int, byName func([]byte) (uint8, bool)) (uint8, bool, error) {
	m, key := code, codeKey
	if m == nil {
		m, key = name, nameKey
	}
	if m == nil {
		return 0, false, nil
	}
	if m.Type() == fastjson.TypeString && key == nameKey {
		if c, ok := byName(m.GetStringBytes()); ok {
			return c, true, nil
		}
		return 0, false, fmt.Errorf("unknown %s %q", nameKey, m.GetStringBytes())
	}
	n, err := m.Int()
	if err != nil || n < 0 || n > limit {
		return 0, false, fmt.Errorf("%s is not a code 0-%d", key, limit)
	}
	return uint8(n), true, nil
}

// parseRFC3339UTC parses the time layout Append writes,
// "2006-01-02T15:04:05[.fraction]Z", without allocating.
func parseRFC3339UTC(b []byte) (time.Time, bool) {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' || b[len(b)-1] != 'Z' {
		return time.Time{}, false
	}
	num := func(s []byte) (int, bool) {
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	y, ok1 := num(b[0:4])
	mo, ok2 := num(b[5:7])
	d, ok3 := num(b[8:10])
	h, ok4 := num(b[11:13])
	mi, ok5 := num(b[14:16])
	s, ok6 := num(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 {
		return time.Time{}, false
	}
	frac := 0
	rest := b[19 : len(b)-1]
	if len(rest) > 0 {
		if rest[0] != '.' || len(rest) < 2 || len(rest) > 10 {
			return time.Time{}, false
		}
		f, ok := num(rest[1:])
		if !ok {
			return time.Time{}, false
		}
		for range 10 - len(rest) {
			f *= 10
		}
		frac = f
	}
	return time.Date(y, time.Month(mo), d, h, mi, s, frac, time.UTC), true
}
