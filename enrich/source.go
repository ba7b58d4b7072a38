package enrich

import (
	"net/netip"

	"github.com/relaykit/relaykit"
)

// Source says where an enricher reads its input (an IP address or a key)
// from an event.
type Source struct {
	// Field names the event field to read. Empty means the raw message
	// ([relaykit.Event.Raw]).
	Field string
	// JSONPath, if not empty, treats the input as a JSON document and reads
	// the value at this dot-separated path (see [NewJSONPath]), e.g.
	// "src.ip". Empty means the input is used as it is: for an IP, the
	// first address in it ([FirstIP]); for a key, the whole input.
	JSONPath string
	// MaxJSONBytes caps the size of a JSON document parsed for JSONPath, in
	// bytes; a larger input counts as missing. Zero means
	// [DefaultMaxJSONBytes].
	MaxJSONBytes int
}

// source is a compiled Source.
type source struct {
	field string
	json  JSONPath
}

func (s Source) compile() (source, error) {
	c := source{field: s.Field}
	if s.JSONPath != "" {
		p, err := NewJSONPath(s.JSONPath, s.MaxJSONBytes)
		if err != nil {
			return source{}, err
		}
		c.json = p
	}
	return c, nil
}

// input returns the bytes the source reads from e.
func (s *source) input(e *relaykit.Event) ([]byte, bool) {
	if s.field == "" {
		return e.Raw, len(e.Raw) > 0
	}
	return e.Field(s.field)
}

// ip returns the address the source points at in e.
func (s *source) ip(e *relaykit.Event) (netip.Addr, bool) {
	in, ok := s.input(e)
	if !ok {
		return netip.Addr{}, false
	}
	if s.json.keys != nil {
		return s.json.IP(in)
	}
	return FirstIP(in)
}

// appendKey appends the key the source points at in e to dst.
func (s *source) appendKey(dst []byte, e *relaykit.Event) ([]byte, bool) {
	in, ok := s.input(e)
	if !ok {
		return dst, false
	}
	if s.json.keys != nil {
		return s.json.AppendValue(dst, in)
	}
	return append(dst, in...), true
}

// EventIP returns the first IP address in the event field named field, or
// in the raw message when field is empty, and whether there is one. It does
// not allocate.
func EventIP(e *relaykit.Event, field string) (netip.Addr, bool) {
	s := source{field: field}
	return s.ip(e)
}
