package main

import (
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/valyala/fastjson"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/syslogname"
)

// decode fills ev from a record: the archive JSON object (eventjson.Append:
// time, host, source, sourcetype, index, the syslog priority, message, or
// message_base64 when the message was not UTF-8, and fields), or the raw
// value with host, source and sourcetype from the headers. What it reads
// is what the edge would have sent its own destinations, with
// FlagPriorityAssumed; only the receive time (the record's time is the
// event time) and the parse-error and truncation flags stay behind.
func (k *kafkaInput) decode(r *kgo.Record, ev *relaykit.Event) error {
	if k.cfg.Format == "raw" {
		ev.Raw = append(ev.Raw, r.Value...)
		for _, h := range r.Headers {
			switch h.Key {
			case "host":
				ev.Host = append(ev.Host, h.Value...)
			case "source":
				ev.Source = append(ev.Source, h.Value...)
			case "sourcetype":
				ev.SourceType = append(ev.SourceType, h.Value...)
			}
		}
		return nil
	}
	v, err := k.parser.ParseBytes(r.Value)
	if err != nil {
		return fmt.Errorf("invalid json: %w", err)
	}
	if v.Type() != fastjson.TypeObject {
		return errors.New("record value is not a JSON object")
	}
	msg := v.Get("message")
	if msg == nil || msg.Type() != fastjson.TypeString {
		return errors.New(`record value has no "message" string`)
	}
	if b64 := v.Get("message_base64"); b64 != nil {
		// The message as received, where it was not valid UTF-8 (message
		// has U+FFFD in place of those bytes).
		b, err := b64.StringBytes()
		if err == nil {
			ev.Raw, err = base64.StdEncoding.AppendDecode(ev.Raw[:0], b)
		}
		if err != nil {
			return errors.New(`record value has an invalid "message_base64"`)
		}
	} else {
		ev.Raw = append(ev.Raw, msg.GetStringBytes()...)
	}
	ev.Host = append(ev.Host, v.GetStringBytes("host")...)
	ev.Source = append(ev.Source, v.GetStringBytes("source")...)
	ev.SourceType = append(ev.SourceType, v.GetStringBytes("sourcetype")...)
	ev.Index = append(ev.Index, v.GetStringBytes("index")...)
	if t := v.GetStringBytes("time"); len(t) > 0 {
		ns, ok := parseRFC3339UTC(t)
		if !ok {
			tm, err := time.Parse(time.RFC3339Nano, string(t))
			if err != nil {
				return fmt.Errorf("invalid time %q", t)
			}
			ns = tm.UnixNano()
		}
		if v.GetBool("time_is_receive_time") {
			// The edge's receive time: kept as such (PushOwned does not
			// stamp over it), so destinations that tell the event's own
			// time from the receive time (Sentinel's EventTime) see what
			// the edge would have sent.
			ev.ReceiveTime = ns
		} else {
			ev.Time = ns
		}
	}
	if err := decodePriority(v, ev); err != nil {
		return err
	}
	if o := v.GetObject("fields"); o != nil {
		var bad error
		o.Visit(func(key []byte, fv *fastjson.Value) {
			b, err := fv.StringBytes()
			if err != nil {
				bad = fmt.Errorf("field %q is not a string", key)
				return
			}
			n := len(ev.Fields)
			if n < cap(ev.Fields) {
				ev.Fields = ev.Fields[:n+1]
			} else {
				ev.Fields = append(ev.Fields, relaykit.Field{})
			}
			f := &ev.Fields[n]
			f.Key = append(f.Key[:0], key...)
			f.Value = append(f.Value[:0], b...)
		})
		if bad != nil {
			return bad
		}
	}
	return nil
}

// decodePriority sets ev's syslog priority from the archive JSON object v:
// "facility_code" and "severity_code" (0-23, 0-7), which the archive and
// the kafka destination write next to the names; without them, "facility"
// and "severity" as names (auth, err: internal/syslogname) or as numbers;
// "priority_assumed" (true) sets [relaykit.FlagPriorityAssumed] with them.
// An object with neither leaves the event without a priority; one with a
// member that is neither a known name nor a code in range is an error, so
// the record is dead-lettered rather than delivered without the priority
// it claims.
func decodePriority(v *fastjson.Value, ev *relaykit.Event) error {
	f, fok, err := priorityPart(v, "facility_code", "facility", 23, syslogname.FacilityCode)
	if err != nil {
		return err
	}
	s, sok, err := priorityPart(v, "severity_code", "severity", 7, syslogname.SeverityCode)
	if err != nil {
		return err
	}
	switch {
	case fok && sok:
		ev.SetPriority(f, s)
		if v.GetBool("priority_assumed") {
			// The edge assumed user.notice for a message without PRI.
			ev.Flags |= relaykit.FlagPriorityAssumed
		}
	case fok || sok:
		return errors.New(`record value has a facility without a severity or the reverse`)
	}
	return nil
}

// priorityPart reads one half of the priority: the code member, else the
// name member (a name or a number), at most max.
func priorityPart(v *fastjson.Value, codeKey, nameKey string, max int, byName func([]byte) (uint8, bool)) (uint8, bool, error) {
	m, key := v.Get(codeKey), codeKey
	if m == nil {
		m, key = v.Get(nameKey), nameKey
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
	if err != nil || n < 0 || n > max {
		return 0, false, fmt.Errorf("%s is not a code 0-%d", key, max)
	}
	return uint8(n), true, nil
}

// parseRFC3339UTC parses the time layout the archive JSON writes,
// "2006-01-02T15:04:05[.fraction]Z", without allocating.
func parseRFC3339UTC(b []byte) (int64, bool) {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' || b[len(b)-1] != 'Z' {
		return 0, false
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
		return 0, false
	}
	frac := 0
	rest := b[19 : len(b)-1]
	if len(rest) > 0 {
		if rest[0] != '.' || len(rest) < 2 || len(rest) > 10 {
			return 0, false
		}
		f, ok := num(rest[1:])
		if !ok {
			return 0, false
		}
		for range 10 - len(rest) {
			f *= 10
		}
		frac = f
	}
	return time.Date(y, time.Month(mo), d, h, mi, s, frac, time.UTC).UnixNano(), true
}
