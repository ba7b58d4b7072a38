package parse

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"

	"github.com/relaykit/relaykit"
)

// Type is a type [NewConvert] converts a field's text to.
type Type string

// The types of [ConvertConfig.Fields].
const (
	// TypeInt: a decimal integer with an optional sign, or hexadecimal
	// after "0x", within int64; written in decimal without leading zeros
	// ("+0443" → "443", "0x400000" → "4194304"): the text the int and
	// long columns of Sentinel's tables take.
	TypeInt Type = "int"
	// TypeFloat: a number strconv.ParseFloat reads, finite; written in
	// the shortest form that reads back the same ("1.50" → "1.5",
	// "1e3" → "1000"), which is a JSON number: what real columns take.
	TypeFloat Type = "float"
	// TypeBool: true, false, yes, no, on, off, t, f, y, n, 1 or 0, in any
	// case; written as "true" or "false".
	TypeBool Type = "bool"
	// TypeIP: an IPv4 or IPv6 address (netip.ParseAddr), optionally in
	// brackets; written in its canonical form (IPv6 compressed and in
	// lower case, an IPv4-mapped IPv6 address as IPv4).
	TypeIP Type = "ip"
)

// ConvertConfig configures [NewConvert].
type ConvertConfig struct {
	// Fields maps extracted field names to the type their text is
	// converted to. Required.
	Fields map[string]Type
	// RemoveInvalid deletes a field whose text is not of its type. By
	// default it is left as it was (a typed column of Sentinel's
	// CommonSecurityLog then sends it to AdditionalExtensions).
	RemoveInvalid bool
}

// ConvertStats is a snapshot of a [Convert] step's counters, per value:
// every configured field of every event is in Converted, Failed or
// Missing.
type ConvertStats struct {
	// Events is the number of events the step processed.
	Events uint64
	// Converted is the number of values converted (including those
	// already in canonical form).
	Converted uint64
	// Failed is the number of values that were not of their type.
	Failed uint64
	// Missing is the number of configured fields an event did not have.
	Missing uint64
}

// Convert is the step [NewConvert] returns. It is safe for concurrent use
// by multiple goroutines.
type Convert struct {
	names  []string
	types  []Type
	remove bool

	events, converted, failed, missing counter
}

// NewConvert returns a step named "convert" that rewrites the text of
// fields into the canonical form of a type, so that typed columns take
// them: fields hold text, and Sentinel's CommonSecurityLog encoder places
// a value in an int, long or real column only when it reads as one (see
// [TypeInt] and the others for what each type accepts and writes). A value
// that is not of its type is left alone (or removed, with RemoveInvalid)
// and reported as ErrConvert; a missing field is counted and is no error.
// Fields are converted in name order. Once the event's buffers are warm
// the step does not allocate, except to report a float or IP address that
// does not parse (the standard library's error).
//
// It returns an error wrapping [ErrInvalidConfig] for an empty Fields or
// an unknown type.
func NewConvert(cfg ConvertConfig) (*Convert, error) {
	if len(cfg.Fields) == 0 {
		return nil, fmt.Errorf("%w: convert: no Fields", ErrInvalidConfig)
	}
	c := &Convert{remove: cfg.RemoveInvalid}
	for name := range cfg.Fields {
		c.names = append(c.names, name)
	}
	slices.Sort(c.names)
	for _, name := range c.names {
		switch t := cfg.Fields[name]; t {
		case TypeInt, TypeFloat, TypeBool, TypeIP:
			c.types = append(c.types, t)
		default:
			return nil, fmt.Errorf("%w: convert: field %q: unknown type %q", ErrInvalidConfig, name, t)
		}
	}
	return c, nil
}

// Name returns "convert".
func (*Convert) Name() string { return "convert" }

// Apply converts the configured fields of e; it always keeps the event.
// The error is nil or ErrConvert.
func (c *Convert) Apply(e *relaykit.Event) (bool, error) {
	c.events.add()
	var err error
	for k, name := range c.names {
		i := -1
		for j := range e.Fields {
			if string(e.Fields[j].Key) == name {
				i = j
				break
			}
		}
		if i < 0 {
			c.missing.add()
			continue
		}
		f := &e.Fields[i]
		var buf [64]byte
		out, ok := convertValue(buf[:0], f.Value, c.types[k])
		if !ok {
			c.failed.add()
			err = ErrConvert
			if c.remove {
				evfieldDelete(e, i)
			}
			continue
		}
		c.converted.add()
		f.Value = append(f.Value[:0], out...)
	}
	return true, err
}

// Stats returns a snapshot of the step's counters.
func (c *Convert) Stats() ConvertStats {
	return ConvertStats{Events: c.events.load(), Converted: c.converted.load(), Failed: c.failed.load(), Missing: c.missing.load()}
}

// evfieldDelete removes the field at index i, keeping the order of the
// others and its buffers as spare capacity.
func evfieldDelete(e *relaykit.Event, i int) {
	f := moveToEnd(e, i)
	f.Key, f.Value = f.Key[:0], f.Value[:0]
	e.Fields = e.Fields[:len(e.Fields)-1]
}

func trimSpace(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// convertValue appends the canonical text of v as type t to dst.
func convertValue(dst, v []byte, t Type) ([]byte, bool) {
	v = trimSpace(v)
	switch t {
	case TypeInt:
		n, ok := parseInteger(v)
		if !ok {
			return dst, false
		}
		return strconv.AppendInt(dst, n, 10), true
	case TypeFloat:
		if len(v) == 0 {
			return dst, false
		}
		f, err := strconv.ParseFloat(str(v), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return dst, false
		}
		return strconv.AppendFloat(dst, f, 'g', -1, 64), true
	case TypeBool:
		b, ok := parseBool(v)
		if !ok {
			return dst, false
		}
		return strconv.AppendBool(dst, b), true
	case TypeIP:
		if len(v) > 2 && v[0] == '[' && v[len(v)-1] == ']' {
			v = v[1 : len(v)-1]
		}
		if len(v) == 0 {
			return dst, false
		}
		a, err := netip.ParseAddr(str(v))
		if err != nil {
			return dst, false
		}
		return a.Unmap().AppendTo(dst), true
	}
	return dst, false
}

// parseInteger reads a decimal integer with an optional sign, or a
// hexadecimal one after "0x" or "0X", within int64.
func parseInteger(v []byte) (int64, bool) {
	neg := false
	if len(v) > 0 && (v[0] == '+' || v[0] == '-') {
		neg = v[0] == '-'
		v = v[1:]
	}
	base := uint64(10)
	if len(v) > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X') {
		base, v = 16, v[2:]
	}
	if len(v) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range v {
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if n > (1<<64-1-d)/base {
			return 0, false
		}
		n = n*base + d
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true
	}
	if n > 1<<63-1 {
		return 0, false
	}
	return int64(n), true
}

func parseBool(v []byte) (bool, bool) {
	if len(v) > 5 {
		return false, false
	}
	var lower [5]byte
	for i, c := range v {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	switch string(lower[:len(v)]) {
	case "true", "t", "yes", "y", "on", "1":
		return true, true
	case "false", "f", "no", "n", "off", "0":
		return false, true
	}
	return false, false
}
