package otlp

import (
	"bytes"
	"encoding/base64"
	"math"
	"strconv"

	"github.com/valyala/fastjson"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/relaykit/relaykit/internal/jsonenc"
)

// Type tags of the [FieldTypes] field: how the text of a field (or of Raw,
// for the body) encodes an OTLP value that is not a string.
const (
	typeInt      = "int"      // decimal int64
	typeDouble   = "double"   // strconv 'g' form: shortest exact; NaN, +Inf, -Inf
	typeBool     = "bool"     // true or false
	typeBytes    = "bytes"    // standard base64 with padding
	typeEmpty    = "empty"    // no value: empty text
	typeJSON     = "json"     // array or key/value list as plain JSON (see package doc)
	typeOTLPJSON = "otlpjson" // array or key/value list as OTLP/JSON AnyValue
)

// bodyTypeKey names the body (Raw) in the [FieldTypes] list.
const bodyTypeKey = "otel.body"

// appendValue appends the text of v to dst and returns it with v's type
// tag ("" for a string).
func appendValue(dst []byte, v pcommon.Value) ([]byte, string) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return append(dst, v.Str()...), ""
	case pcommon.ValueTypeInt:
		return strconv.AppendInt(dst, v.Int(), 10), typeInt
	case pcommon.ValueTypeDouble:
		return strconv.AppendFloat(dst, v.Double(), 'g', -1, 64), typeDouble
	case pcommon.ValueTypeBool:
		return strconv.AppendBool(dst, v.Bool()), typeBool
	case pcommon.ValueTypeBytes:
		return base64.StdEncoding.AppendEncode(dst, v.Bytes().AsRaw()), typeBytes
	case pcommon.ValueTypeMap, pcommon.ValueTypeSlice:
		if plainJSONable(v) {
			return appendPlainJSON(dst, v), typeJSON
		}
		return appendOTLPJSON(dst, v), typeOTLPJSON
	default:
		return dst, typeEmpty
	}
}

// setValue sets v from text as typed by tag. Text that does not parse as
// its tag says (a pipeline step changed it) is set as a string.
func setValue(v pcommon.Value, tag string, text []byte, a *strArena) {
	switch tag {
	case "":
	case typeInt:
		if n, err := strconv.ParseInt(string(text), 10, 64); err == nil {
			v.SetInt(n)
			return
		}
	case typeDouble:
		if f, err := strconv.ParseFloat(string(text), 64); err == nil {
			v.SetDouble(f)
			return
		}
	case typeBool:
		if b, err := strconv.ParseBool(string(text)); err == nil {
			v.SetBool(b)
			return
		}
	case typeBytes:
		if b, err := base64.StdEncoding.AppendDecode(nil, text); err == nil {
			v.SetEmptyBytes().FromRaw(b)
			return
		}
	case typeEmpty:
		if len(text) == 0 {
			return // v is empty already
		}
	case typeJSON, typeOTLPJSON:
		var p fastjson.Parser
		if jv, err := p.ParseBytes(text); err == nil {
			ok := false
			if tag == typeJSON {
				ok = fromPlainJSON(v, jv)
			} else {
				ok = fromOTLPJSON(v, jv)
			}
			if ok {
				return
			}
		}
	}
	v.SetStr(a.str(text))
}

// plainJSONable reports whether plain JSON says everything about v: no
// bytes, no empty values and no NaN or infinite doubles inside.
func plainJSONable(v pcommon.Value) bool {
	switch v.Type() {
	case pcommon.ValueTypeStr, pcommon.ValueTypeInt, pcommon.ValueTypeBool:
		return true
	case pcommon.ValueTypeDouble:
		f := v.Double()
		return !math.IsNaN(f) && !math.IsInf(f, 0)
	case pcommon.ValueTypeMap:
		for _, e := range v.Map().All() {
			if !plainJSONable(e) {
				return false
			}
		}
		return true
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		for i := range s.Len() {
			if !plainJSONable(s.At(i)) {
				return false
			}
		}
		return true
	default:
		return false
	}
}

// appendPlainJSON appends v as plain JSON: strings, booleans, objects in
// order, arrays; an int as an integer literal and a double always with a
// fraction or exponent ("1.0"), so that reading it back tells them apart.
// v must be plainJSONable.
func appendPlainJSON(dst []byte, v pcommon.Value) []byte {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return jsonenc.AppendString(dst, []byte(v.Str()))
	case pcommon.ValueTypeInt:
		return strconv.AppendInt(dst, v.Int(), 10)
	case pcommon.ValueTypeDouble:
		return appendJSONDouble(dst, v.Double())
	case pcommon.ValueTypeBool:
		return strconv.AppendBool(dst, v.Bool())
	case pcommon.ValueTypeMap:
		dst = append(dst, '{')
		first := true
		for k, e := range v.Map().All() {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = jsonenc.AppendString(dst, []byte(k))
			dst = append(dst, ':')
			dst = appendPlainJSON(dst, e)
		}
		return append(dst, '}')
	case pcommon.ValueTypeSlice:
		dst = append(dst, '[')
		s := v.Slice()
		for i := range s.Len() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendPlainJSON(dst, s.At(i))
		}
		return append(dst, ']')
	}
	return append(dst, "null"...)
}

// appendJSONDouble appends a finite f as a JSON number with a fraction or
// an exponent.
func appendJSONDouble(dst []byte, f float64) []byte {
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'g', -1, 64)
	if !bytes.ContainsAny(dst[start:], ".e") {
		dst = append(dst, ".0"...)
	}
	return dst
}

// fromPlainJSON sets v from plain JSON written by appendPlainJSON.
func fromPlainJSON(v pcommon.Value, jv *fastjson.Value) bool {
	switch jv.Type() {
	case fastjson.TypeString:
		b, _ := jv.StringBytes()
		v.SetStr(string(b))
	case fastjson.TypeTrue:
		v.SetBool(true)
	case fastjson.TypeFalse:
		v.SetBool(false)
	case fastjson.TypeNumber:
		raw := jv.MarshalTo(nil)
		if bytes.ContainsAny(raw, ".eE") {
			f, err := strconv.ParseFloat(string(raw), 64)
			if err != nil {
				return false
			}
			v.SetDouble(f)
			return true
		}
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return false
		}
		v.SetInt(n)
	case fastjson.TypeObject:
		o, _ := jv.Object()
		m := v.SetEmptyMap()
		m.EnsureCapacity(o.Len())
		ok := true
		o.Visit(func(k []byte, e *fastjson.Value) {
			// PutEmpty would replace a repeated key; OTLP maps have none.
			ok = ok && fromPlainJSON(m.PutEmpty(string(k)), e)
		})
		return ok
	case fastjson.TypeArray:
		a, _ := jv.Array()
		s := v.SetEmptySlice()
		s.EnsureCapacity(len(a))
		for _, e := range a {
			if !fromPlainJSON(s.AppendEmpty(), e) {
				return false
			}
		}
	default:
		return false
	}
	return true
}

// appendOTLPJSON appends v as an OTLP/JSON AnyValue (the protobuf JSON
// mapping with OTLP's rules: int64 as a decimal string, bytes as base64,
// lowerCamelCase names).
func appendOTLPJSON(dst []byte, v pcommon.Value) []byte {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		dst = append(dst, `{"stringValue":`...)
		dst = jsonenc.AppendString(dst, []byte(v.Str()))
	case pcommon.ValueTypeInt:
		dst = append(dst, `{"intValue":"`...)
		dst = strconv.AppendInt(dst, v.Int(), 10)
		dst = append(dst, '"')
	case pcommon.ValueTypeDouble:
		dst = append(dst, `{"doubleValue":`...)
		switch f := v.Double(); {
		case math.IsNaN(f):
			dst = append(dst, `"NaN"`...)
		case math.IsInf(f, 1):
			dst = append(dst, `"Infinity"`...)
		case math.IsInf(f, -1):
			dst = append(dst, `"-Infinity"`...)
		default:
			dst = appendJSONDouble(dst, f)
		}
	case pcommon.ValueTypeBool:
		dst = append(dst, `{"boolValue":`...)
		dst = strconv.AppendBool(dst, v.Bool())
	case pcommon.ValueTypeBytes:
		dst = append(dst, `{"bytesValue":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, v.Bytes().AsRaw())
		dst = append(dst, '"')
	case pcommon.ValueTypeMap:
		dst = append(dst, `{"kvlistValue":{"values":[`...)
		first := true
		for k, e := range v.Map().All() {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, `{"key":`...)
			dst = jsonenc.AppendString(dst, []byte(k))
			dst = append(dst, `,"value":`...)
			dst = appendOTLPJSON(dst, e)
			dst = append(dst, '}')
		}
		dst = append(dst, "]}"...)
	case pcommon.ValueTypeSlice:
		dst = append(dst, `{"arrayValue":{"values":[`...)
		s := v.Slice()
		for i := range s.Len() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendOTLPJSON(dst, s.At(i))
		}
		dst = append(dst, "]}"...)
	default:
		return append(dst, "{}"...)
	}
	return append(dst, '}')
}

// fromOTLPJSON sets v from an OTLP/JSON AnyValue written by
// appendOTLPJSON.
func fromOTLPJSON(v pcommon.Value, jv *fastjson.Value) bool {
	o, err := jv.Object()
	if err != nil {
		return false
	}
	switch o.Len() {
	case 0:
		return true // empty value
	case 1:
	default:
		return false
	}
	ok := false
	o.Visit(func(k []byte, e *fastjson.Value) {
		switch string(k) {
		case "stringValue":
			b, err := e.StringBytes()
			if ok = err == nil; ok {
				v.SetStr(string(b))
			}
		case "boolValue":
			b, err := e.Bool()
			if ok = err == nil; ok {
				v.SetBool(b)
			}
		case "intValue":
			var n int64
			if s, err := e.StringBytes(); err == nil {
				n, err = strconv.ParseInt(string(s), 10, 64)
				ok = err == nil
			} else {
				n, err = e.Int64()
				ok = err == nil
			}
			if ok {
				v.SetInt(n)
			}
		case "doubleValue":
			var f float64
			if s, err := e.StringBytes(); err == nil {
				switch string(s) {
				case "NaN":
					f, ok = math.NaN(), true
				case "Infinity":
					f, ok = math.Inf(1), true
				case "-Infinity":
					f, ok = math.Inf(-1), true
				}
			} else {
				f, err = e.Float64()
				ok = err == nil
			}
			if ok {
				v.SetDouble(f)
			}
		case "bytesValue":
			s, err := e.StringBytes()
			if err != nil {
				return
			}
			b, err := base64.StdEncoding.AppendDecode(nil, s)
			if ok = err == nil; ok {
				v.SetEmptyBytes().FromRaw(b)
			}
		case "kvlistValue":
			m := v.SetEmptyMap()
			vals := e.GetArray("values")
			m.EnsureCapacity(len(vals))
			ok = true
			for _, kv := range vals {
				key := kv.GetStringBytes("key")
				val := kv.Get("value")
				if key == nil || val == nil || !fromOTLPJSON(m.PutEmpty(string(key)), val) {
					ok = false
					return
				}
			}
		case "arrayValue":
			s := v.SetEmptySlice()
			vals := e.GetArray("values")
			s.EnsureCapacity(len(vals))
			ok = true
			for _, ev := range vals {
				if !fromOTLPJSON(s.AppendEmpty(), ev) {
					ok = false
					return
				}
			}
		}
	})
	return ok
}

// appendTypeEntry appends one entry "<tag>:<key>" to a [FieldTypes] list,
// with '%' and ';' in key escaped as %25 and %3B.
func appendTypeEntry[K string | []byte](dst []byte, tag string, prefix string, key K) []byte {
	if len(dst) > 0 {
		dst = append(dst, ';')
	}
	dst = append(dst, tag...)
	dst = append(dst, ':')
	dst = append(dst, prefix...)
	for i := 0; i < len(key); i++ {
		switch c := key[i]; c {
		case '%':
			dst = append(dst, "%25"...)
		case ';':
			dst = append(dst, "%3B"...)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// typeOf returns the tag the [FieldTypes] list types gives key, or "" (a
// string). It does not allocate.
func typeOf(types, key []byte) string {
	for len(types) > 0 {
		var entry []byte
		if i := bytes.IndexByte(types, ';'); i >= 0 {
			entry, types = types[:i], types[i+1:]
		} else {
			entry, types = types, nil
		}
		colon := bytes.IndexByte(entry, ':')
		if colon < 0 || !escapedEqual(entry[colon+1:], key) {
			continue
		}
		switch string(entry[:colon]) {
		case typeInt:
			return typeInt
		case typeDouble:
			return typeDouble
		case typeBool:
			return typeBool
		case typeBytes:
			return typeBytes
		case typeEmpty:
			return typeEmpty
		case typeJSON:
			return typeJSON
		case typeOTLPJSON:
			return typeOTLPJSON
		}
		return ""
	}
	return ""
}

// escapedEqual reports whether esc, with %25 and %3B unescaped, equals key.
func escapedEqual(esc, key []byte) bool {
	if bytes.IndexByte(esc, '%') < 0 {
		return bytes.Equal(esc, key)
	}
	j := 0
	for i := 0; i < len(esc); i++ {
		c := esc[i]
		if c == '%' && i+2 < len(esc) {
			switch string(esc[i+1 : i+3]) {
			case "25":
				c = '%'
				i += 2
			case "3B":
				c = ';'
				i += 2
			}
		}
		if j >= len(key) || key[j] != c {
			return false
		}
		j++
	}
	return j == len(key)
}
