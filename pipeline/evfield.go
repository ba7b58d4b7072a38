package pipeline

import (
	"bytes"

	"github.com/relaykit/relaykit"
)

// fieldSlot returns the field of e whose key is key, adding it at the end
// (reusing spare capacity left by Reset) when it does not exist. The
// returned field's Value is emptied. It does not allocate once warm.
func fieldSlot(e *relaykit.Event, key []byte) *relaykit.Field {
	for i := range e.Fields {
		// Length and first byte first: most keys differ there, and the
		// comparison then costs no call.
		k := e.Fields[i].Key
		if len(k) == len(key) && len(k) > 0 && k[0] == key[0] && bytes.Equal(k, key) {
			f := &e.Fields[i]
			f.Value = f.Value[:0]
			return f
		}
	}
	return addField(e, key)
}

// addField appends a field named key to e, reusing the buffers of spare
// capacity left by Reset, and returns it with an empty Value.
func addField[K string | []byte](e *relaykit.Event, key K) *relaykit.Field {
	n := len(e.Fields)
	if n < cap(e.Fields) {
		e.Fields = e.Fields[:n+1]
	} else {
		e.Fields = append(e.Fields, relaykit.Field{})
	}
	f := &e.Fields[n]
	f.Key = append(f.Key[:0], key...)
	f.Value = f.Value[:0]
	return f
}

// fieldSlotString is fieldSlot with a string key.
func fieldSlotString(e *relaykit.Event, key string) *relaykit.Field {
	for i := range e.Fields {
		if string(e.Fields[i].Key) == key {
			f := &e.Fields[i]
			f.Value = f.Value[:0]
			return f
		}
	}
	return addField(e, key)
}

// truncateFields drops the fields from index n on, keeping their buffers as
// spare capacity.
func truncateFields(e *relaykit.Event, n int) {
	for i := n; i < len(e.Fields); i++ {
		e.Fields[i].Key = e.Fields[i].Key[:0]
		e.Fields[i].Value = e.Fields[i].Value[:0]
	}
	e.Fields = e.Fields[:n]
}
