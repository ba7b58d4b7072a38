package pipeline

import "github.com/relaykit/relaykit"

// Field names with a special meaning in Route.Field, JSONConfig.Field and the
// built-in functions. Any other name refers to an extracted field of the
// event ([relaykit.Event.Fields]).
const (
	// FieldRaw selects [relaykit.Event.Raw]; the empty name does too.
	FieldRaw = "_raw"
	// FieldHost selects [relaykit.Event.Host].
	FieldHost = "host"
	// FieldSource selects [relaykit.Event.Source].
	FieldSource = "source"
	// FieldSourceType selects [relaykit.Event.SourceType].
	FieldSourceType = "sourcetype"
	// FieldIndex selects [relaykit.Event.Index].
	FieldIndex = "index"
)

type selKind uint8

const (
	selRaw selKind = iota
	selHost
	selSource
	selSourceType
	selIndex
	selField
)

// Selector reads one value of an event by a field name with the meanings
// of [Route.Field]: [FieldRaw] (or ""), [FieldHost], [FieldSource],
// [FieldSourceType], [FieldIndex], or any other name for an extracted
// field. The name is resolved once, so reading does not compare strings
// for the metadata names. The zero Selector reads the raw message. A
// Selector is a small value, safe for concurrent use.
type Selector struct{ s selector }

// NewSelector returns the Selector of a field name.
func NewSelector(name string) Selector { return Selector{newSelector(name)} }

// Value returns the selected value of e, owned by e and valid until e
// changes; a missing field reads as empty.
func (s Selector) Value(e *relaykit.Event) []byte { return s.s.get(e) }

// selector resolves a field name once, so the hot path does not compare
// strings for the metadata names.
type selector struct {
	kind selKind
	key  string
}

func newSelector(name string) selector {
	switch name {
	case "", FieldRaw:
		return selector{kind: selRaw}
	case FieldHost:
		return selector{kind: selHost}
	case FieldSource:
		return selector{kind: selSource}
	case FieldSourceType:
		return selector{kind: selSourceType}
	case FieldIndex:
		return selector{kind: selIndex}
	default:
		return selector{kind: selField, key: name}
	}
}

// get returns the selected value; a missing field reads as empty.
func (s selector) get(e *relaykit.Event) []byte {
	switch s.kind {
	case selRaw:
		return e.Raw
	case selHost:
		return e.Host
	case selSource:
		return e.Source
	case selSourceType:
		return e.SourceType
	case selIndex:
		return e.Index
	default:
		v, _ := e.Field(s.key)
		return v
	}
}

// ptr returns a pointer to the selected metadata slice, or nil for an
// extracted field.
func (s selector) ptr(e *relaykit.Event) *[]byte {
	switch s.kind {
	case selRaw:
		return &e.Raw
	case selHost:
		return &e.Host
	case selSource:
		return &e.Source
	case selSourceType:
		return &e.SourceType
	case selIndex:
		return &e.Index
	default:
		return nil
	}
}

// set replaces the selected value with a copy of v, reusing capacity.
func (s selector) set(e *relaykit.Event, v []byte) {
	if p := s.ptr(e); p != nil {
		*p = append((*p)[:0], v...)
		return
	}
	e.SetField(s.key, v)
}

// remove empties a metadata value or deletes an extracted field.
func (s selector) remove(e *relaykit.Event) {
	if p := s.ptr(e); p != nil {
		*p = (*p)[:0]
		return
	}
	e.DeleteField(s.key)
}
