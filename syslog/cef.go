package syslog

import (
	"bytes"
	"errors"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/evfield"
)

// Names of the fields [DecodeCEF] sets from the CEF header. Extension keys
// become fields under their own CEF key names ("src", "dst", "spt", "act",
// "suser", "cs1", "cs1Label", ...), unprefixed.
const (
	FieldCEFVersion            = "cef.version"
	FieldCEFDeviceVendor       = "cef.device_vendor"
	FieldCEFDeviceProduct      = "cef.device_product"
	FieldCEFDeviceVersion      = "cef.device_version"
	FieldCEFDeviceEventClassID = "cef.device_event_class_id"
	FieldCEFName               = "cef.name"
	FieldCEFSeverity           = "cef.severity"
)

// SourceTypeCEF is the [relaykit.Event.SourceType] CEF decoding sets.
const SourceTypeCEF = "cef"

// ErrCEFHeader is returned by [DecodeCEF] for a message that starts with
// "CEF:" but has fewer than the seven '|'-terminated header fields.
var ErrCEFHeader = errors.New("syslog: CEF header incomplete")

var cefHeaderFields = [7]string{
	FieldCEFVersion, FieldCEFDeviceVendor, FieldCEFDeviceProduct, FieldCEFDeviceVersion,
	FieldCEFDeviceEventClassID, FieldCEFName, FieldCEFSeverity,
}

// DecodeCEF extracts the fields of the CEF message msg (which starts with
// "CEF:") into e, following the ArcSight Common Event Format implementation
// standard:
//
//	CEF:Version|Device Vendor|Device Product|Device Version|Device Event Class ID|Name|Severity|Extension
//
// The seven header values go to the fields [FieldCEFVersion] to
// [FieldCEFSeverity], with the header escapes \| and \\ decoded. The
// extension is a list of key=value pairs separated by spaces; a value runs
// up to the space before the next key=, so it may contain spaces, and its
// escapes \= \\ \n \r are decoded (a backslash before any other byte is
// kept). Each key becomes a field of that name, unprefixed; a repeated key
// keeps the last value. An unescaped '=' that does not follow a key (as in
// a URL query) stays part of the value. Text before the first key, and
// keys beyond 256, are not extracted.
//
// DecodeCEF never modifies Raw (msg may be e.Raw), so the message is never
// lost. On success it sets SourceType to [SourceTypeCEF] when it is empty or
// [SourceType] (the syslog parser's default), keeping any other value
// the caller set. It returns [ErrCEFHeader], with e unchanged, if the header
// is incomplete, and an error if msg does not start with "CEF:". It does
// not allocate once e's buffers are warm and is safe for concurrent use
// with different events.
func DecodeCEF(e *relaykit.Event, msg []byte) error {
	if !bytes.HasPrefix(msg, cefPrefix) {
		return errNotCEF
	}
	// Header: find the seven unescaped '|' first, so a short header
	// changes nothing.
	var ends [7]int
	start := len(cefPrefix)
	k := 0
	for i := start; i < len(msg) && k < 7; i++ {
		switch msg[i] {
		case '\\':
			i++
		case '|':
			ends[k] = i
			k++
		}
	}
	if k < 7 {
		return ErrCEFHeader
	}
	for j, name := range cefHeaderFields {
		f := evfield.SlotString(e, name)
		f.Value = appendCEFHeader(f.Value, msg[start:ends[j]])
		start = ends[j] + 1
	}
	decodeCEFExtension(e, msg[start:])
	if len(e.SourceType) == 0 || string(e.SourceType) == SourceType {
		e.SourceType = append(e.SourceType[:0], SourceTypeCEF...)
	}
	return nil
}

var errNotCEF = errors.New("syslog: not a CEF message")

// appendCEFHeader appends the header value v with \| and \\ decoded.
func appendCEFHeader(dst, v []byte) []byte {
	if bytes.IndexByte(v, '\\') < 0 {
		return append(dst, v...)
	}
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && (v[i+1] == '|' || v[i+1] == '\\') {
			i++
		}
		dst = append(dst, v[i])
	}
	return dst
}

// appendCEFValue appends the extension value v with \= \\ \n \r decoded.
func appendCEFValue(dst, v []byte) []byte {
	if bytes.IndexByte(v, '\\') < 0 {
		return append(dst, v...)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '=', '\\':
				c = v[i+1]
				i++
			case 'n':
				c = '\n'
				i++
			case 'r':
				c = '\r'
				i++
			}
		}
		dst = append(dst, c)
	}
	return dst
}

func isCEFKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

// cefKeyBefore returns the start of the key that ends at eq (an '=' in
// ext), scanning back to a space or from, or -1 if the bytes there are not
// a key (empty, or a byte a key cannot hold).
func cefKeyBefore(ext []byte, from, eq int) int {
	i := eq
	for i > from && ext[i-1] != ' ' {
		if !isCEFKeyByte(ext[i-1]) {
			return -1
		}
		i--
	}
	if i == eq {
		return -1
	}
	return i
}

// nextCEFKey returns the index of the '=' of the next key=value pair in ext
// at or after from, and the start of its key; -1, -1 if there is none.
// An escaped '=' (after a backslash) is never one: the byte before a key's
// '=' is a key byte, which a backslash is not. It jumps from '=' to '='
// with bytes.IndexByte.
func nextCEFKey(ext []byte, from int) (eq, key int) {
	for i := from; i < len(ext); i++ {
		j := bytes.IndexByte(ext[i:], '=')
		if j < 0 {
			break
		}
		i += j
		if ks := cefKeyBefore(ext, from, i); ks >= 0 && (ks == from || ext[ks-1] == ' ') {
			return i, ks
		}
	}
	return -1, -1
}

// keyFilter is a 512-bit Bloom filter of field keys (one bit per key),
// so that decodeCEFExtension looks for an existing field of a key only
// when the key may be there: CEF keys are seldom repeated, and a linear
// search per key would make decoding quadratic in the number of keys.
type keyFilter [8]uint64

// bit returns the word and mask of key's bit (FNV-1a).
func (*keyFilter) bit(key []byte) (int, uint64) {
	h := uint32(2166136261)
	for _, c := range key {
		h = (h ^ uint32(c)) * 16777619
	}
	h ^= h >> 15
	return int(h>>6) & 7, 1 << (h & 63)
}

func (kf *keyFilter) add(key []byte) {
	w, m := kf.bit(key)
	kf[w] |= m
}

// testAndSet reports whether key's bit was set, and sets it.
func (kf *keyFilter) testAndSet(key []byte) bool {
	w, m := kf.bit(key)
	had := kf[w]&m != 0
	kf[w] |= m
	return had
}

// decodeCEFExtension stores the key=value pairs of ext as fields.
func decodeCEFExtension(e *relaykit.Event, ext []byte) {
	var seen keyFilter
	for i := range e.Fields {
		seen.add(e.Fields[i].Key)
	}
	eq, key := nextCEFKey(ext, 0)
	for n := 0; eq >= 0 && n < maxParsedFields; n++ {
		vstart := eq + 1
		next, nextKey := nextCEFKey(ext, vstart)
		vend := len(ext)
		if next >= 0 {
			vend = nextKey // the space before the next key is a separator
		}
		v := ext[vstart:vend]
		for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
			v = v[:len(v)-1]
		}
		k := ext[key:eq]
		var f *relaykit.Field
		if seen.testAndSet(k) {
			f = evfield.Slot(e, k) // a repeated key keeps the last value
		} else {
			f = evfield.Add(e, k)
		}
		f.Value = appendCEFValue(f.Value, v)
		eq, key = next, nextKey
	}
}

// ParseCEF returns a pipeline step (it satisfies pipeline.Function) named
// "parse_cef" that decodes a raw message
// starting with "CEF:" (after leading spaces) with [DecodeCEF]. Other
// messages are left alone without error, so the step can run over mixed
// streams; an incomplete header is reported as [ErrCEFHeader] and the event
// is kept unchanged. The Function is safe for concurrent use and does not
// allocate once the event's buffers are warm.
func ParseCEF() CEFFunction { return CEFFunction{} }

// CEFFunction is the step [ParseCEF] returns. It has the method set of
// pipeline.Function, which this package does not import.
type CEFFunction struct{}

// Name returns "parse_cef".
func (CEFFunction) Name() string { return "parse_cef" }

// Apply decodes e.Raw as CEF when it starts with "CEF:"; it always keeps
// the event.
func (CEFFunction) Apply(e *relaykit.Event) (bool, error) {
	raw := e.Raw
	for len(raw) > 0 && raw[0] == ' ' {
		raw = raw[1:]
	}
	if !bytes.HasPrefix(raw, cefPrefix) {
		return true, nil
	}
	return true, DecodeCEF(e, raw)
}
