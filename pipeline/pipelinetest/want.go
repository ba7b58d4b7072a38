package pipelinetest

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
)

type wantKind uint8

const (
	wantEqual wantKind = iota
	wantMatch
	wantAbsent
)

// Want is a condition on one value: equal to a string ([Equal]), matched
// by a regular expression ([Match]), or absent ([Absent]). The zero Want
// is Equal(""). A Want is an immutable value, safe for concurrent use.
type Want struct {
	kind  wantKind
	value string
	re    *regexp.Regexp
}

// Equal wants the value present and equal to v, byte for byte.
func Equal(v string) Want { return Want{kind: wantEqual, value: v} }

// Match wants the value present and matched by the regular expression
// pattern (RE2 syntax, unanchored: use ^ and $ to match all of it). It
// returns an error for a pattern that does not compile.
func Match(pattern string) (Want, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return Want{}, fmt.Errorf("pipelinetest: regex %q: %w", pattern, err)
	}
	return Want{kind: wantMatch, value: pattern, re: re}, nil
}

// Absent wants no value.
func Absent() Want { return Want{kind: wantAbsent} }

// Check reports whether got (present tells whether there is a value at
// all) satisfies w.
func (w Want) Check(got string, present bool) bool {
	switch w.kind {
	case wantAbsent:
		return !present
	case wantMatch:
		return present && w.re.MatchString(got)
	}
	return present && got == w.value
}

// String describes w: a quoted string, /pattern/ or "absent".
func (w Want) String() string {
	switch w.kind {
	case wantAbsent:
		return "absent"
	case wantMatch:
		return "/" + w.value + "/"
	}
	return strconv.Quote(w.value)
}

// Mismatch is one value that did not satisfy its Want.
type Mismatch struct {
	// Name names the value: a field, a column, a member.
	Name string
	// Want is the condition it failed.
	Want Want
	// Got is the value; meaningful only when Present.
	Got string
	// Present reports whether there was a value.
	Present bool
}

// String describes the mismatch on one line:
//
//	DeviceVendor: want "Fortinet", got "Palo Alto Networks"
//	msg: want /denied/, got absent
func (m Mismatch) String() string {
	got := "absent"
	if m.Present {
		got = strconv.Quote(m.Got)
	}
	return m.Name + ": want " + m.Want.String() + ", got " + got
}

// Compare checks each entry of want against the value get returns for
// its name, and returns the mismatches in name order (nil when there are
// none). get reports whether the name has a value at all.
func Compare(want map[string]Want, get func(name string) (value string, present bool)) []Mismatch {
	var out []Mismatch
	for name, w := range want {
		if v, ok := get(name); !w.Check(v, ok) {
			out = append(out, Mismatch{Name: name, Want: w, Got: v, Present: ok})
		}
	}
	slices.SortFunc(out, func(a, b Mismatch) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// CompareEvent is [Compare] over the values of e, read with [EventValue].
func CompareEvent(e *relaykit.Event, want map[string]Want) []Mismatch {
	return Compare(want, func(name string) (string, bool) { return EventValue(e, name) })
}

// EventValue returns the value of e that name selects, with the names of
// [pipeline.Route.Field]: "_raw" or "" the message, "host", "source",
// "sourcetype" and "index" the metadata (present when not empty), any
// other name the extracted field (present when e has it, even empty).
func EventValue(e *relaykit.Event, name string) (string, bool) {
	switch name {
	case pipeline.FieldRaw, "", pipeline.FieldHost, pipeline.FieldSource, pipeline.FieldSourceType, pipeline.FieldIndex:
		v := pipeline.NewSelector(name).Value(e)
		return string(v), len(v) > 0
	}
	v, ok := e.Field(name)
	return string(v), ok
}
