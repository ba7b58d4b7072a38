package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/evfield"
	"github.com/valyala/fastjson"
)

// Errors returned by the JSON parsing function; the router counts them as
// function errors and keeps the event.
var (
	// ErrJSONTooLarge: the value exceeds JSONConfig.MaxBytes and was not
	// parsed.
	ErrJSONTooLarge = errors.New("pipeline: JSON value too large")
	// ErrJSONTooManyFields: the object has more than JSONConfig.MaxFields
	// leaves; the first MaxFields were extracted.
	ErrJSONTooManyFields = errors.New("pipeline: too many JSON fields")
)

// JSONConfig configures [ParseJSON]. The zero value parses the raw message
// with the defaults below.
type JSONConfig struct {
	// Field names the value holding the JSON text: "" or [FieldRaw] is the
	// raw message; see [FieldHost] for the other names.
	Field string
	// Prefix is prepended to every extracted key, e.g. "json.". Empty means
	// none.
	Prefix string
	// MaxBytes is the largest value parsed, in bytes; a larger value is left
	// alone and reported as [ErrJSONTooLarge]. Zero means 64 KiB.
	MaxBytes int
	// MaxDepth is how many levels of nested objects are flattened into
	// dotted keys; an object deeper than that is stored as its JSON text.
	// Zero means 8; 1 flattens only the top level.
	MaxDepth int
	// MaxFields caps the fields one event gets from the JSON text; the rest
	// are skipped and reported as [ErrJSONTooManyFields]. Zero means 256.
	MaxFields int
}

// ParseJSON returns a Function named "parse_json" that parses a JSON object
// (github.com/valyala/fastjson) and stores its members as extracted fields,
// in document order:
//
//   - a string member is stored unescaped;
//   - a number, true, false or null keeps its JSON text ("1.5e3", "null");
//   - an array is stored as its compact JSON text;
//   - a nested object is flattened: {"a":{"b":1}} gives the field "a.b"
//     with value "1", up to MaxDepth levels; deeper objects, and empty
//     objects, are stored as their JSON text.
//
// A key that is already a field (including one produced earlier from the
// same text) is overwritten in place, so the last duplicate wins.
//
// A value whose first non-space byte is not '{' is not JSON of interest and
// is left alone without error, so the function can run over mixed streams.
// A value starting with '{' that is too large or not valid JSON is left
// alone and reported as an error; the event is kept either way.
//
// Parsers are pooled: once warm, parsing allocates nothing. It returns an
// error wrapping [ErrInvalidConfig] if a limit is negative.
func ParseJSON(cfg JSONConfig) (Function, error) {
	if cfg.MaxBytes < 0 || cfg.MaxDepth < 0 || cfg.MaxFields < 0 {
		return nil, fmt.Errorf("%w: parse_json: negative limit in %+v", ErrInvalidConfig, cfg)
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = 64 << 10
	}
	if cfg.MaxDepth == 0 {
		cfg.MaxDepth = 8
	}
	if cfg.MaxFields == 0 {
		cfg.MaxFields = 256
	}
	return &jsonFn{cfg: cfg, sel: newSelector(cfg.Field)}, nil
}

type jsonFn struct {
	cfg JSONConfig
	sel selector
}

// jsonState is the pooled per-call state: the parser and the key buffer.
type jsonState struct {
	p      fastjson.Parser
	key    []byte
	e      *relaykit.Event
	fn     *jsonFn
	fields int
	over   bool
}

var jsonPool = sync.Pool{New: func() any { return new(jsonState) }}

func (f *jsonFn) Name() string { return "parse_json" }

func (f *jsonFn) Apply(e *relaykit.Event) (bool, error) {
	src := f.sel.get(e)
	i := 0
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\r' || src[i] == '\n') {
		i++
	}
	if i == len(src) || src[i] != '{' {
		return true, nil
	}
	if len(src) > f.cfg.MaxBytes {
		return true, ErrJSONTooLarge
	}
	st := jsonPool.Get().(*jsonState)
	defer jsonPool.Put(st)
	// ParseBytes copies src into the parser, so writing fields below
	// cannot disturb the text being walked (src may itself be a field).
	v, err := st.p.ParseBytes(src)
	if err != nil {
		return true, fmt.Errorf("pipeline: parse_json: %w", err)
	}
	o, err := v.Object()
	if err != nil {
		return true, fmt.Errorf("pipeline: parse_json: %w", err)
	}
	st.e, st.fn, st.fields, st.over = e, f, 0, false
	st.key = append(st.key[:0], f.cfg.Prefix...)
	st.object(o, 1)
	st.e, st.fn = nil, nil
	if st.over {
		return true, ErrJSONTooManyFields
	}
	return true, nil
}

// object stores the members of o with keys under st.key.
func (st *jsonState) object(o *fastjson.Object, depth int) {
	base := len(st.key)
	o.Visit(func(k []byte, v *fastjson.Value) {
		st.key = append(st.key[:base], k...)
		st.member(v, depth)
	})
	st.key = st.key[:base]
}

func (st *jsonState) member(v *fastjson.Value, depth int) {
	if v.Type() == fastjson.TypeObject && depth < st.fn.cfg.MaxDepth {
		o, _ := v.Object()
		if o.Len() > 0 {
			st.key = append(st.key, '.')
			st.object(o, depth+1)
			return
		}
	}
	if st.fields >= st.fn.cfg.MaxFields {
		if _, ok := fieldIndex(st.e, st.key); !ok {
			st.over = true
			return
		}
	}
	f, added := fieldSlotBytes(st.e, st.key)
	if added {
		st.fields++
	}
	if v.Type() == fastjson.TypeString {
		s, _ := v.StringBytes()
		f.Value = append(f.Value[:0], s...)
		return
	}
	f.Value = v.MarshalTo(f.Value[:0])
}

// fieldIndex finds the extracted field named key.
func fieldIndex(e *relaykit.Event, key []byte) (int, bool) {
	for i := range e.Fields {
		if bytes.Equal(e.Fields[i].Key, key) {
			return i, true
		}
	}
	return -1, false
}

// fieldSlotBytes returns the field named key, adding it at the end (reusing
// spare capacity) if it is missing, and whether it was added.
func fieldSlotBytes(e *relaykit.Event, key []byte) (*relaykit.Field, bool) {
	if i, ok := fieldIndex(e, key); ok {
		return &e.Fields[i], false
	}
	return evfield.Add(e, key), true
}
