package hecwire

import (
	"math"
	"strconv"

	"github.com/valyala/fastjson"
)

// Field is one indexed field of an [Event]. A multi-value field (a JSON
// array of strings) gives one Field per value, with the same key.
type Field struct {
	Key, Value []byte
	// Multi reports that the value came from an array.
	Multi bool
}

// Event is one event decoded by a [Decoder]. Its slices point into the
// decoder's memory and are valid until the next call of [Decoder.Next] or
// [Decoder.Reset].
type Event struct {
	// Event is the "event" value: the string's bytes, or the compact JSON
	// text of any other value (object, array, number, boolean).
	Event []byte
	// IsString reports whether "event" was a string; IsObject whether it
	// was an object.
	IsString, IsObject bool
	// Time is "time" as sent (the number's text, or the string's
	// contents), nil when absent; Nanos is its value in nanoseconds since
	// the Unix epoch.
	Time  []byte
	Nanos int64
	// Host, Source, SourceType and Index are the metadata strings, nil
	// when absent or null.
	Host, Source, SourceType, Index []byte
	// Fields are the indexed fields ("fields"), in the order sent; null
	// values are left out.
	Fields []Field
}

// Decoder reads the body of /services/collector/event: JSON event objects
// one after another, separated by optional white space ("stacked" events),
// with fastjson. It checks each event as HEC does and reports the code of
// the first bad one. It does not allocate once warm (beyond what the
// errors of bad input cost). A Decoder must not be used from concurrent
// goroutines.
type Decoder struct {
	sc  fastjson.Scanner
	n   int
	ev  Event
	buf []byte // JSON text of non-string values
	bad bool
}

// Reset makes d decode body. The decoder keeps a copy of body.
func (d *Decoder) Reset(body []byte) {
	d.sc.InitBytes(body)
	d.n, d.bad = -1, false
}

// Number returns the 0-based number of the event Next returned last: the
// invalid-event-number when it reported a bad event.
func (d *Decoder) Number() int { return max(d.n, 0) }

// Next decodes the next event. It returns the event and [Success]; nil and
// Success at the end of the body; nil and the code of a bad event
// ([NoData] for a body without events, [InvalidDataFormat],
// [EventRequired], [EventBlank], [IndexedFieldsError]), after which it
// returns that code again.
func (d *Decoder) Next() (*Event, int) {
	if d.bad {
		return nil, InvalidDataFormat
	}
	d.n++
	if !d.sc.Next() {
		switch {
		case d.sc.Error() != nil:
			d.bad = true
			return nil, InvalidDataFormat
		case d.n == 0:
			d.bad = true
			return nil, NoData
		}
		d.n--
		return nil, Success
	}
	if code := d.decode(d.sc.Value()); code != Success {
		d.bad = true
		return nil, code
	}
	return &d.ev, Success
}

func (d *Decoder) decode(v *fastjson.Value) int {
	o, err := v.Object()
	if err != nil {
		return InvalidDataFormat // an array, a string, a number: not an event object
	}
	e := &d.ev
	fields := e.Fields[:0]
	*e = Event{Fields: fields}
	d.buf = d.buf[:0]
	code := Success
	seenEvent := false
	o.Visit(func(key []byte, v *fastjson.Value) {
		if code != Success {
			return
		}
		switch string(key) {
		case "event":
			seenEvent = true
			code = d.event(v)
		case "time":
			code = d.time(v)
		case "host":
			e.Host, code = str(v)
		case "source":
			e.Source, code = str(v)
		case "sourcetype":
			e.SourceType, code = str(v)
		case "index":
			e.Index, code = str(v)
		case "fields":
			code = d.fields(v)
		}
	})
	if code == Success && !seenEvent {
		code = EventRequired
	}
	return code
}

func str(v *fastjson.Value) ([]byte, int) {
	switch v.Type() {
	case fastjson.TypeString:
		b, _ := v.StringBytes()
		return b, Success
	case fastjson.TypeNull:
		return nil, Success
	}
	return nil, InvalidDataFormat
}

func (d *Decoder) event(v *fastjson.Value) int {
	e := &d.ev
	switch v.Type() {
	case fastjson.TypeString:
		b, _ := v.StringBytes()
		if len(b) == 0 {
			return EventBlank
		}
		e.Event, e.IsString = b, true
	case fastjson.TypeNull:
		return EventBlank
	default:
		e.IsObject = v.Type() == fastjson.TypeObject
		e.Event = d.text(v)
		// fastjson's parser takes some malformed numbers ("." "1e")
		// that HEC refuses: check the text strictly.
		if fastjson.ValidateBytes(e.Event) != nil {
			return InvalidDataFormat
		}
	}
	return Success
}

// text appends the JSON text of v to the scratch buffer and returns it.
// Earlier results stay valid: the buffer is grown by copying, never
// overwritten, within one event.
func (d *Decoder) text(v *fastjson.Value) []byte {
	start := len(d.buf)
	d.buf = v.MarshalTo(d.buf)
	return d.buf[start:len(d.buf):len(d.buf)]
}

func (d *Decoder) time(v *fastjson.Value) int {
	e := &d.ev
	var t []byte
	switch v.Type() {
	case fastjson.TypeNumber:
		t = d.text(v)
	case fastjson.TypeString:
		t, _ = v.StringBytes()
		if len(t) == 0 {
			return Success // an empty time is no time
		}
	case fastjson.TypeNull:
		return Success
	default:
		return InvalidDataFormat
	}
	ns, ok := ParseTime(t)
	if !ok {
		return InvalidDataFormat
	}
	e.Time, e.Nanos = t, ns
	return Success
}

func (d *Decoder) fields(v *fastjson.Value) int {
	switch v.Type() {
	case fastjson.TypeNull:
		return Success
	case fastjson.TypeObject:
	default:
		return IndexedFieldsError
	}
	o, _ := v.Object()
	code := Success
	o.Visit(func(key []byte, v *fastjson.Value) {
		if code != Success {
			return
		}
		switch v.Type() {
		case fastjson.TypeNull:
		case fastjson.TypeObject:
			code = IndexedFieldsError // indexed fields are flat
		case fastjson.TypeArray:
			for _, el := range v.GetArray() {
				val, ok := d.scalar(el)
				if !ok {
					code = IndexedFieldsError
					return
				}
				d.add(key, val, true)
			}
		default:
			val, ok := d.scalar(v)
			if !ok {
				code = IndexedFieldsError
				return
			}
			d.add(key, val, false)
		}
	})
	return code
}

// scalar returns the value of a string, number or boolean field value.
func (d *Decoder) scalar(v *fastjson.Value) ([]byte, bool) {
	switch v.Type() {
	case fastjson.TypeString:
		b, _ := v.StringBytes()
		return b, true
	case fastjson.TypeNumber:
		t := d.text(v)
		return t, fastjson.ValidateBytes(t) == nil
	case fastjson.TypeTrue, fastjson.TypeFalse:
		return d.text(v), true
	}
	return nil, false
}

func (d *Decoder) add(key, val []byte, multi bool) {
	e := &d.ev
	e.Fields = append(e.Fields, Field{Key: key, Value: val, Multi: multi})
}

// ParseTime parses an HEC time, epoch seconds with an optional fraction
// ("1700000000", "1700000000.123", or any JSON number such as 1.7e9), into
// nanoseconds since the Unix epoch. Decimal fractions are exact to the
// nanosecond; digits beyond are cut. Negative times and times past the
// year 2262 (int64 nanoseconds) are refused.
func ParseTime(b []byte) (int64, bool) {
	var sec, frac int64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if sec > math.MaxInt64/10_000_000_000 {
			return 0, false
		}
		sec = sec*10 + int64(b[i]-'0')
	}
	if i == 0 {
		return parseTimeFloat(b)
	}
	if i < len(b) && b[i] == '.' {
		i++
		scale := int64(1e8)
		start := i
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			frac += int64(b[i]-'0') * scale
			scale /= 10
		}
		if i == start {
			return 0, false
		}
	}
	if i != len(b) {
		return parseTimeFloat(b)
	}
	if sec >= math.MaxInt64/1_000_000_000 {
		return 0, false
	}
	return sec*1e9 + frac, true
}

func parseTimeFloat(b []byte) (int64, bool) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || f < 0 || f >= math.MaxInt64/1e9 || math.IsNaN(f) {
		return 0, false
	}
	return int64(f * 1e9), true
}
