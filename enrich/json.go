package enrich

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/valyala/fastjson"
)

// DefaultMaxJSONBytes is the input cap of a [JSONPath] whose MaxBytes is
// zero: 1 MiB, the relay's JSON line limit.
const DefaultMaxJSONBytes = 1 << 20

// parsers is shared by every JSONPath; fastjson parsers are reused, so a
// warm parse does not allocate.
var parsers fastjson.ParserPool

// JSONPath is a compiled path to one value inside a JSON document, e.g.
// "src.ip" or "addrs.0" (a numeric segment indexes an array).
//
// A JSONPath is immutable and safe for concurrent use by multiple
// goroutines; documents are parsed with pooled fastjson parsers, so a
// lookup does not allocate once warm.
type JSONPath struct {
	keys     []string
	maxBytes int
}

// NewJSONPath compiles a dot-separated path. Keys cannot contain dots.
// maxBytes caps the size of documents it parses, in bytes; a larger
// document counts as missing the value (it is not parsed). Zero means
// [DefaultMaxJSONBytes]. The error wraps [ErrInvalidConfig].
func NewJSONPath(path string, maxBytes int) (JSONPath, error) {
	if path == "" {
		return JSONPath{}, fmt.Errorf("%w: empty JSON path", ErrInvalidConfig)
	}
	if maxBytes < 0 {
		return JSONPath{}, fmt.Errorf("%w: JSON max bytes %d < 0", ErrInvalidConfig, maxBytes)
	}
	if maxBytes == 0 {
		maxBytes = DefaultMaxJSONBytes
	}
	keys := strings.Split(path, ".")
	for _, k := range keys {
		if k == "" {
			return JSONPath{}, fmt.Errorf("%w: JSON path %q has an empty key", ErrInvalidConfig, path)
		}
	}
	return JSONPath{keys: keys, maxBytes: maxBytes}, nil
}

// String returns the path in dot-separated form.
func (p JSONPath) String() string { return strings.Join(p.keys, ".") }

// errNoPath is returned by visit when the path is the zero JSONPath.
var errNoPath = errors.New("enrich: zero JSONPath")

// visit parses doc and calls f with the value at the path, or reports
// false when doc is too large, not JSON, or lacks the value (JSON null
// counts as missing). The value is valid only during f.
func (p JSONPath) visit(doc []byte, f func(v *fastjson.Value)) (bool, error) {
	if len(p.keys) == 0 {
		return false, errNoPath
	}
	if len(doc) == 0 || len(doc) > p.maxBytes {
		return false, nil
	}
	ps := parsers.Get()
	defer parsers.Put(ps)
	root, err := ps.ParseBytes(doc)
	if err != nil {
		return false, nil
	}
	v := root.Get(p.keys...)
	if v == nil || v.Type() == fastjson.TypeNull {
		return false, nil
	}
	f(v)
	return true, nil
}

// IP returns the IP address at the path in doc: a JSON string that holds an
// address (the first one, as [FirstIP] finds it, so "1.2.3.4:80" works). It
// reports false when doc is too large or not JSON, the value is missing or
// not a string, or the string holds no address.
func (p JSONPath) IP(doc []byte) (netip.Addr, bool) {
	var a netip.Addr
	_, _ = p.visit(doc, func(v *fastjson.Value) {
		if s, err := v.StringBytes(); err == nil {
			a, _ = FirstIP(s)
		}
	})
	return a, a.IsValid()
}

// AppendValue appends the value at the path in doc to dst and returns the
// extended slice and true: a string's unescaped bytes, or the JSON text of
// a number, boolean, object or array. It returns dst unchanged and false
// when doc is too large or not JSON, or the value is missing or null.
func (p JSONPath) AppendValue(dst, doc []byte) ([]byte, bool) {
	ok, _ := p.visit(doc, func(v *fastjson.Value) {
		if v.Type() == fastjson.TypeString {
			s, _ := v.StringBytes()
			dst = append(dst, s...)
			return
		}
		dst = v.MarshalTo(dst)
	})
	return dst, ok
}
