package tap

import (
	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
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

// selector is the value a filter reads, resolved once from a field name
// with the meanings of pipeline.Route.Field.
type selector struct {
	kind selKind
	key  string
}

func newSelector(name string) selector {
	switch name {
	case "", pipeline.FieldRaw:
		return selector{kind: selRaw}
	case pipeline.FieldHost:
		return selector{kind: selHost}
	case pipeline.FieldSource:
		return selector{kind: selSource}
	case pipeline.FieldSourceType:
		return selector{kind: selSourceType}
	case pipeline.FieldIndex:
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
