package forward

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/syslogname"
)

// Decoders of the bodies this package sends, for RequestSink.DecodeRequest
// (dead letters of a stored request the destination refused, and requests
// of a format the sink no longer sends). They are slow paths: they
// allocate, and recover the event as the destination would have received
// it, not every field it had.

// sentinelNames are the columns a Sentinel row's parts are read from.
type sentinelNames struct {
	time, msg, host, source, sourceType, facility, severity, fields string
}

// defaultSentinelNames are those of the built-in tables and the defaults of
// a custom one.
var defaultSentinelNames = sentinelNames{time: "TimeGenerated", msg: "RawData", host: "Computer"}

// decodeRow decodes one row of a body of family (Sentinel's
// protocol.decode).
func (st *Sentinel) decodeRow(dst []relaykit.Event, family string, row []byte) ([]relaykit.Event, bool, error) {
	if family != "sentinel."+st.table.String() {
		return dst, false, nil
	}
	names := st.names
	if st.table == SentinelCommonSecurityLog {
		names.msg = "" // Message is a CEF column; the row is the message
	}
	dst, err := decodeSentinelRow(dst, row, names)
	return dst, true, err
}

var errNotObject = errors.New("not a JSON object")

// decodeSentinelRow appends the event of one row (a JSON object) to dst.
// Without a message column (names.msg), Raw is the row's JSON text.
func decodeSentinelRow(dst []relaykit.Event, row []byte, names sentinelNames) ([]relaykit.Event, error) {
	dec := json.NewDecoder(bytes.NewReader(row))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return dst, errNotObject
	}
	var e relaykit.Event
	var generated, eventTime int64
	var fac, sev []byte
	msg := false
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return dst, err
		}
		key, _ := kt.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return dst, err
		}
		if obj, ok := v.(map[string]any); ok && key == names.fields && names.fields != "" {
			for k, fv := range obj {
				e.Fields = append(e.Fields, relaykit.Field{Key: []byte(k), Value: jsonText(fv)})
			}
			continue
		}
		val := jsonText(v)
		switch {
		case key == names.time || key == "TimeGenerated":
			generated = parseRFC3339(val)
		case key == "EventTime":
			eventTime = parseRFC3339(val)
		case key == names.host || key == "HostName" || key == "HostIP":
			if len(e.Host) == 0 {
				e.Host = val
			}
		case names.msg != "" && (key == names.msg || key == "SyslogMessage"):
			e.Raw, msg = val, true
		case key == names.source && names.source != "" || key == "ProcessName" && names.msg != "":
			e.Source = val
		case key == names.sourceType && names.sourceType != "":
			e.SourceType = val
		case key == "Facility" || key == names.facility && names.facility != "":
			fac = val
		case key == "SeverityLevel" || key == names.severity && names.severity != "":
			sev = val
		default:
			e.Fields = append(e.Fields, relaykit.Field{Key: []byte(key), Value: val})
		}
	}
	if _, err := dec.Token(); err != nil {
		return dst, err
	}
	e.Time = eventTime
	if e.Time == 0 {
		e.Time = generated
	}
	if f, ok := priorityPart(fac, syslogname.FacilityCode, 23); ok {
		if s, ok := priorityPart(sev, syslogname.SeverityCode, 7); ok {
			e.Priority, e.Flags = f<<3|s, relaykit.FlagPriority
		}
	}
	if !msg {
		e.Raw = append([]byte(nil), row...)
	}
	return append(dst, e), nil
}

// priorityPart reads a facility or severity written by name or as a
// number.
func priorityPart(v []byte, byName func([]byte) (uint8, bool), maxCode uint64) (uint8, bool) {
	if len(v) == 0 {
		return 0, false
	}
	if c, ok := byName(v); ok {
		return c, true
	}
	n, err := strconv.ParseUint(string(v), 10, 8)
	if err != nil || n > maxCode {
		return 0, false
	}
	return uint8(n), true
}

// jsonText returns a decoded JSON value as bytes: a string's text, a
// number's digits, anything else's JSON.
func jsonText(v any) []byte {
	switch v := v.(type) {
	case string:
		return []byte(v)
	case json.Number:
		return []byte(v)
	case nil:
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

// parseRFC3339 returns the time of an RFC 3339 timestamp in ns, or 0.
func parseRFC3339(b []byte) int64 {
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return 0
	}
	return t.UnixNano()
}

// decodeHECEvent appends the event of one HEC event object to dst. An
// event sent as a string is Raw; one sent as an object has the value of
// messageKey (zero: "message") as Raw and its other members as fields,
// after those of "fields".
func decodeHECEvent(dst []relaykit.Event, obj []byte, messageKey string) ([]relaykit.Event, error) {
	if messageKey == "" {
		messageKey = "message"
	}
	var e relaykit.Event
	seenEvent := false
	err := eachMember(obj, func(key string, v json.RawMessage) error {
		var s string
		if len(v) > 0 && v[0] == '"' {
			if err := json.Unmarshal(v, &s); err != nil {
				return err
			}
		}
		switch key {
		case "time":
			e.Time = parseEpochSeconds(string(v))
		case "host":
			e.Host = nonEmpty(s)
		case "source":
			e.Source = nonEmpty(s)
		case "sourcetype":
			e.SourceType = nonEmpty(s)
		case "index":
			e.Index = nonEmpty(s)
		case "fields":
			return eachMember(v, func(k string, fv json.RawMessage) error {
				e.Fields = append(e.Fields, relaykit.Field{Key: []byte(k), Value: rawText(fv)})
				return nil
			})
		case "event":
			seenEvent = true
			if len(v) > 0 && v[0] == '{' {
				return eachMember(v, func(k string, fv json.RawMessage) error {
					if k == messageKey && e.Raw == nil {
						e.Raw = rawText(fv)
						return nil
					}
					e.Fields = append(e.Fields, relaykit.Field{Key: []byte(k), Value: rawText(fv)})
					return nil
				})
			}
			e.Raw = rawText(v)
		}
		return nil
	})
	if err != nil {
		return dst, err
	}
	if !seenEvent {
		return dst, errors.New("HEC event object without an event member")
	}
	return append(dst, e), nil
}

// eachMember calls fn with each member of the JSON object obj, in order.
func eachMember(obj []byte, fn func(key string, v json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errNotObject
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		k, _ := kt.(string)
		if err := fn(k, v); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}

// rawText returns a JSON value as bytes: a string's text, anything else's
// JSON.
func rawText(v json.RawMessage) []byte {
	if len(v) > 0 && v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return []byte(s)
		}
	}
	if string(v) == "null" {
		return nil
	}
	return append([]byte(nil), v...)
}

// parseEpochSeconds returns the time of "1700000000.123" (HEC's time) in
// ns, or 0.
func parseEpochSeconds(s string) int64 {
	sec, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || n < 0 || len(frac) > 9 {
		return 0
	}
	ns := int64(0)
	if frac != "" {
		f, err := strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
		if err != nil {
			return 0
		}
		ns = f
	}
	return n*int64(time.Second) + ns
}

func nonEmpty(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}
