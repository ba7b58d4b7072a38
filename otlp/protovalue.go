package otlp

import (
	"encoding/base64"
	"math"
	"strconv"

	"github.com/relaykit/relaykit/internal/jsonenc"
)

// appendWireValue is appendValue for an encoded value.
func appendWireValue(dst []byte, v anyVal) ([]byte, string) {
	switch v.kind {
	case anyString:
		return append(dst, v.data...), ""
	case anyInt:
		return strconv.AppendInt(dst, int64(v.num), 10), typeInt
	case anyDouble:
		return strconv.AppendFloat(dst, math.Float64frombits(v.num), 'g', -1, 64), typeDouble
	case anyBool:
		return strconv.AppendBool(dst, v.num != 0), typeBool
	case anyBytes:
		return base64.StdEncoding.AppendEncode(dst, v.data), typeBytes
	case anyKvlist, anyArray:
		if plainJSONableWire(v) {
			return appendPlainJSONWire(dst, v), typeJSON
		}
		return appendOTLPJSONWire(dst, v), typeOTLPJSON
	default:
		return dst, typeEmpty
	}
}

// plainJSONableWire is plainJSONable for an encoded value.
func plainJSONableWire(v anyVal) bool {
	switch v.kind {
	case anyString, anyInt, anyBool:
		return true
	case anyDouble:
		f := math.Float64frombits(v.num)
		return !math.IsNaN(f) && !math.IsInf(f, 0)
	case anyKvlist, anyArray:
		kv := v.kind == anyKvlist
		it := listIter{b: v.data}
		for x, ok := it.next(kv); ok; x, ok = it.next(kv) {
			if !plainJSONableWire(x.val) {
				return false
			}
		}
		return true
	default:
		return false
	}
}

// appendPlainJSONWire is appendPlainJSON for an encoded value.
func appendPlainJSONWire(dst []byte, v anyVal) []byte {
	switch v.kind {
	case anyString:
		return jsonenc.AppendString(dst, v.data)
	case anyInt:
		return strconv.AppendInt(dst, int64(v.num), 10)
	case anyDouble:
		return appendJSONDouble(dst, math.Float64frombits(v.num))
	case anyBool:
		return strconv.AppendBool(dst, v.num != 0)
	case anyKvlist:
		dst = append(dst, '{')
		it := listIter{b: v.data}
		first := true
		for x, ok := it.next(true); ok; x, ok = it.next(true) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = jsonenc.AppendString(dst, x.key)
			dst = append(dst, ':')
			dst = appendPlainJSONWire(dst, x.val)
		}
		return append(dst, '}')
	case anyArray:
		dst = append(dst, '[')
		it := listIter{b: v.data}
		first := true
		for x, ok := it.next(false); ok; x, ok = it.next(false) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendPlainJSONWire(dst, x.val)
		}
		return append(dst, ']')
	}
	return append(dst, "null"...)
}

// appendOTLPJSONWire is appendOTLPJSON for an encoded value.
func appendOTLPJSONWire(dst []byte, v anyVal) []byte {
	switch v.kind {
	case anyString:
		dst = append(dst, `{"stringValue":`...)
		dst = jsonenc.AppendString(dst, v.data)
	case anyInt:
		dst = append(dst, `{"intValue":"`...)
		dst = strconv.AppendInt(dst, int64(v.num), 10)
		dst = append(dst, '"')
	case anyDouble:
		dst = append(dst, `{"doubleValue":`...)
		switch f := math.Float64frombits(v.num); {
		case math.IsNaN(f):
			dst = append(dst, `"NaN"`...)
		case math.IsInf(f, 1):
			dst = append(dst, `"Infinity"`...)
		case math.IsInf(f, -1):
			dst = append(dst, `"-Infinity"`...)
		default:
			dst = appendJSONDouble(dst, f)
		}
	case anyBool:
		dst = append(dst, `{"boolValue":`...)
		dst = strconv.AppendBool(dst, v.num != 0)
	case anyBytes:
		dst = append(dst, `{"bytesValue":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, v.data)
		dst = append(dst, '"')
	case anyKvlist:
		dst = append(dst, `{"kvlistValue":{"values":[`...)
		it := listIter{b: v.data}
		first := true
		for x, ok := it.next(true); ok; x, ok = it.next(true) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, `{"key":`...)
			dst = jsonenc.AppendString(dst, x.key)
			dst = append(dst, `,"value":`...)
			dst = appendOTLPJSONWire(dst, x.val)
			dst = append(dst, '}')
		}
		dst = append(dst, "]}"...)
	case anyArray:
		dst = append(dst, `{"arrayValue":{"values":[`...)
		it := listIter{b: v.data}
		first := true
		for x, ok := it.next(false); ok; x, ok = it.next(false) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendOTLPJSONWire(dst, x.val)
		}
		dst = append(dst, "]}"...)
	default:
		return append(dst, "{}"...)
	}
	return append(dst, '}')
}
