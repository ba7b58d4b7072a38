package parse

import (
	"bytes"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/evfield"
	"github.com/relaykit/relaykit/pipeline"
)

// ErrInvalidConfig is wrapped by every error a constructor of this package
// returns for a Config it cannot use.
var ErrInvalidConfig = errors.New("parse: invalid config")

// Errors the steps return from Apply. A router counts them as function
// errors (see pipeline.Hooks.OnFunctionError) and keeps the event; each
// step also counts them in its Stats. They are values, so returning one
// does not allocate.
var (
	// ErrNoMatch: the value holds nothing the step recognises (no
	// key=value pair, an empty CSV line, a regular expression or grok
	// pattern that does not match, a line that is not the vendor's
	// format). The event is unchanged.
	ErrNoMatch = errors.New("parse: no match")
	// ErrUnterminated: a quoted value has no closing quote. The value
	// runs to the end of the text and is stored; the fields before it are
	// stored too.
	ErrUnterminated = errors.New("parse: unterminated quoted value")
	// ErrTooManyFields: the text holds more fields than the step's
	// MaxFields; the first MaxFields were stored.
	ErrTooManyFields = errors.New("parse: too many fields")
	// ErrTimestamp: a timestamp is missing or does not match its layout;
	// the event keeps its time (the receive time when it had none).
	ErrTimestamp = errors.New("parse: bad timestamp")
	// ErrConvert: a value is not of the type it was to be converted to;
	// it is left as it was.
	ErrConvert = errors.New("parse: conversion failed")
)

// Field names of the CEF header, the same as those the syslog package's
// CEF decoder sets (syslog.FieldCEFDeviceVendor and the others) and the
// forward package's CommonSecurityLog encoder reads. The vendor steps set
// them; this package does not import syslog.
const (
	FieldCEFDeviceVendor       = "cef.device_vendor"
	FieldCEFDeviceProduct      = "cef.device_product"
	FieldCEFDeviceVersion      = "cef.device_version"
	FieldCEFDeviceEventClassID = "cef.device_event_class_id"
	FieldCEFName               = "cef.name"
	FieldCEFSeverity           = "cef.severity"
)

// DefaultMaxFields is the number of fields one event gets from one step
// when the step's MaxFields is zero: the cap the syslog package's CEF and
// structured-data decoders apply, so that a hostile line cannot make field
// lookup quadratic.
const DefaultMaxFields = 256

// source reads the value a step parses: the raw message, a metadata value
// or an extracted field.
type source struct {
	sel   pipeline.Selector
	field bool // an extracted field: copy it before writing fields
}

func newSource(name string) source {
	s := source{sel: pipeline.NewSelector(name)}
	switch name {
	case "", pipeline.FieldRaw, pipeline.FieldHost, pipeline.FieldSource,
		pipeline.FieldSourceType, pipeline.FieldIndex:
	default:
		s.field = true
	}
	return s
}

// scratch is a pooled buffer for the text of a source that is an
// extracted field: writing fields may overwrite that field's buffer (a
// key equal to the source's name), so the text is copied first.
type scratch struct{ b []byte }

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// read returns the text to parse and, for an extracted field, the pooled
// buffer holding a copy of it, which the caller returns with release.
func (s source) read(e *relaykit.Event) ([]byte, *scratch) {
	v := s.sel.Value(e)
	if !s.field || len(v) == 0 {
		return v, nil
	}
	sc := scratchPool.Get().(*scratch)
	sc.b = append(sc.b[:0], v...)
	return sc.b, sc
}

func release(sc *scratch) {
	if sc != nil {
		if cap(sc.b) > 64<<10 {
			sc.b = nil // do not keep a huge buffer alive in the pool
		}
		scratchPool.Put(sc)
	}
}

// keyFilter is a 1024-bit Bloom filter of field keys (one bit per key), so
// that a step looks for an existing field of a key only when the key may
// be there: a linear search per key would make a line of n keys cost n²
// comparisons. The hash is FNV-1a, which can be continued (a prefix, then
// the key).
type keyFilter [16]uint64

const fnvOffset = uint32(2166136261)

func fnvAdd(h uint32, b []byte) uint32 {
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

func fnvString(h uint32, s string) uint32 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

func (*keyFilter) bit(h uint32) (int, uint64) {
	h *= 0x9E3779B1 // spread the hash into the top bits
	return int(h >> 28), 1 << (h >> 22 & 63)
}

func (kf *keyFilter) add(h uint32) {
	w, m := kf.bit(h)
	kf[w] |= m
}

func (kf *keyFilter) has(h uint32) bool {
	w, m := kf.bit(h)
	return kf[w]&m != 0
}

// fill adds the keys of e's fields, hashed with FNV-1a.
func (kf *keyFilter) fill(e *relaykit.Event) {
	for i := range e.Fields {
		kf.add(fnvAdd(fnvOffset, e.Fields[i].Key))
	}
}

// fillSuffix adds, hashed with hashKey, what follows prefix in the keys of
// e's fields that start with it: a step storing prefix+key looks keys up
// by hashKey(key) alone.
func (kf *keyFilter) fillSuffix(e *relaykit.Event, prefix string) {
	for i := range e.Fields {
		k := e.Fields[i].Key
		if len(k) >= len(prefix) && string(k[:len(prefix)]) == prefix {
			kf.add(hashKey(k[len(prefix):]))
		}
	}
}

// hashKey is a cheap hash of a key for keyFilter: eight bytes at a time
// rather than FNV-1a's multiply per byte.
func hashKey(b []byte) uint32 {
	h := uint64(len(b)) * 0x9E3779B97F4A7C15
	for len(b) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(b)) * 0xFF51AFD7ED558CCD
		b = b[8:]
	}
	if len(b) > 0 {
		var x uint64
		for i, c := range b {
			x |= uint64(c) << (8 * i)
		}
		h = (h ^ x) * 0xFF51AFD7ED558CCD
	}
	return uint32(h ^ h>>32)
}

// findKey returns the index of the field whose key is prefix+key, or -1.
func findKey(e *relaykit.Event, prefix string, key []byte) int {
	n := len(prefix) + len(key)
	for i := range e.Fields {
		k := e.Fields[i].Key
		if len(k) == n && string(k[:len(prefix)]) == prefix && bytes.Equal(k[len(prefix):], key) {
			return i
		}
	}
	return -1
}

// addKey appends a field named prefix+key (reusing spare capacity) with an
// empty value.
func addKey(e *relaykit.Event, prefix string, key []byte) *relaykit.Field {
	switch {
	case prefix == "":
		return evfield.Add(e, key)
	case len(key) == 0:
		return evfield.Add(e, prefix)
	}
	f := evfield.Add(e, prefix)
	f.Key = append(f.Key, key...)
	return f
}

// setBytes sets the field named key to value, replacing it in place.
func setBytes(e *relaykit.Event, key string, value []byte) {
	f := evfield.SlotString(e, key)
	f.Value = append(f.Value, value...)
}

// str views b as a string without copying, for standard library calls
// that neither retain nor modify their argument once they return (the
// callers drop every value derived from it).
func str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// counter is an atomic event counter on its own cache line, so that steps
// shared by the goroutines of several workers do not bounce one line
// between cores for every event.
type counter struct {
	n atomic.Uint64
	_ [56]byte
}

func (c *counter) add()         { c.n.Add(1) }
func (c *counter) load() uint64 { return c.n.Load() }

// moveToEnd moves the field at index i to the end of e's fields, keeping
// the order of the others, and returns it.
func moveToEnd(e *relaykit.Event, i int) *relaykit.Field {
	f := e.Fields[i]
	copy(e.Fields[i:], e.Fields[i+1:])
	last := len(e.Fields) - 1
	e.Fields[last] = f
	return &e.Fields[last]
}

// Every step is a pipeline.Function.
var (
	_ pipeline.Function = (*KV)(nil)
	_ pipeline.Function = (*CSV)(nil)
	_ pipeline.Function = (*Regex)(nil)
	_ pipeline.Function = (*Grok)(nil)
	_ pipeline.Function = (*Timestamp)(nil)
	_ pipeline.Function = (*Convert)(nil)
	_ pipeline.Function = (*Vendor)(nil)
)
