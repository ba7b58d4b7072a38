// Package evfield holds the allocation-free field helpers that the parsers
// (syslog, CEF, JSON) share: find-or-add a field of an event reusing the
// buffers Reset left as spare capacity.
package evfield

import (
	"bytes"

	"github.com/relaykit/relaykit"
)

// Slot returns the field of e whose key is key, adding it at the end
// (reusing spare capacity left by Reset) when it does not exist. The
// returned field's Value is emptied. It does not allocate once warm.
func Slot(e *relaykit.Event, key []byte) *relaykit.Field {
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
	return Add(e, key)
}

// Add appends a field named key to e, reusing the buffers of spare
// capacity left by Reset, and returns it with an empty Value.
func Add[K string | []byte](e *relaykit.Event, key K) *relaykit.Field {
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

// SlotString is Slot with a string key.
func SlotString(e *relaykit.Event, key string) *relaykit.Field {
	for i := range e.Fields {
		if string(e.Fields[i].Key) == key {
			f := &e.Fields[i]
			f.Value = f.Value[:0]
			return f
		}
	}
	return Add(e, key)
}

// Truncate drops the fields from index n on, keeping their buffers as
// spare capacity.
func Truncate(e *relaykit.Event, n int) {
	for i := n; i < len(e.Fields); i++ {
		e.Fields[i].Key = e.Fields[i].Key[:0]
		e.Fields[i].Value = e.Fields[i].Value[:0]
	}
	e.Fields = e.Fields[:n]
}
