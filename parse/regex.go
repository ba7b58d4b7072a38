package parse

import (
	"fmt"
	"regexp"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
)

// RegexConfig configures [NewRegex].
type RegexConfig struct {
	// Field names the value to match, as in [KVConfig.Field]; "" is the
	// raw message.
	Field string
	// Pattern is a Go regular expression (RE2 syntax, package regexp)
	// with named groups, (?P<name>...) or (?<name>...); each named group
	// that takes part in the match becomes a field of that name. Unnamed
	// groups are only grouping. Required.
	Pattern string
	// Prefix is prepended to every name stored. Empty means none.
	Prefix string
}

// RegexStats is a snapshot of a [Regex] or [Grok] step's counters.
type RegexStats struct {
	// Events is the number of events the step processed.
	Events uint64
	// Matched is the number of events whose value matched.
	Matched uint64
	// NoMatch is the number of events whose value did not match
	// (ErrNoMatch).
	NoMatch uint64
}

// Regex is the step [NewRegex] returns. It is safe for concurrent use by
// multiple goroutines.
type Regex struct {
	name string
	src  source
	flt  *pipeline.Filter
	re   *regexp.Regexp
	// keys are the field keys (prefix+name) of the distinct group names,
	// in order of first appearance; idx[k] lists the submatch indexes of
	// keys[k].
	keys []string
	idx  [][]int
	// grok selects go-grok's rules: among groups of one name the
	// rightmost with non-empty text wins, and empty text sets nothing.
	grok bool

	events, matched, noMatch counter
}

// NewRegex returns a step named "parse_regex" that matches a regular
// expression against a value (leftmost match, as regexp.Regexp.Match)
// and stores each named group that took part in the match as a field:
// Prefix+name, set to the group's text (possibly empty). A group that
// did not take part (an optional group that was skipped) sets nothing. When
// two groups share a name, the leftmost that took part is stored. A
// field that existed before the step ran is replaced in place.
//
// A value that does not match is left alone and reported as ErrNoMatch.
// Before running the expression, the step searches the value for the
// literal strings every match must contain (pipeline.Filter.MayMatch, the
// route filters' prefilter), so a value that cannot match costs a
// bytes.Index and no allocation; a value that matches costs the regexp package's match and
// one allocation, the submatch index slice it returns.
//
// It returns an error wrapping [ErrInvalidConfig] for a pattern that does
// not compile or has no named group.
func NewRegex(cfg RegexConfig) (*Regex, error) {
	re, err := regexp.Compile(cfg.Pattern)
	if err != nil {
		return nil, fmt.Errorf("%w: parse_regex: %w", ErrInvalidConfig, err)
	}
	r, err := newRegex("parse_regex", cfg.Field, cfg.Prefix, cfg.Pattern, re, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: parse_regex: %w", ErrInvalidConfig, err)
	}
	return r, nil
}

// newRegex builds the step for the compiled re; rename, if not nil, maps a
// group name to the field name (grok's dotted names).
func newRegex(name, field, prefix, pattern string, re *regexp.Regexp, rename func(string) string) (*Regex, error) {
	flt, err := pipeline.CompileFilter(pattern)
	if err != nil {
		return nil, err
	}
	r := &Regex{name: name, src: newSource(field), flt: flt, re: re}
	pos := map[string]int{}
	for i, g := range re.SubexpNames() {
		if g == "" {
			continue
		}
		if rename != nil {
			g = rename(g)
		}
		k, ok := pos[g]
		if !ok {
			k = len(r.keys)
			pos[g] = k
			r.keys = append(r.keys, prefix+g)
			r.idx = append(r.idx, nil)
		}
		r.idx[k] = append(r.idx[k], i)
	}
	if len(r.keys) == 0 {
		return nil, fmt.Errorf("pattern %q has no named group", pattern)
	}
	return r, nil
}

// Name returns "parse_regex" ("parse_grok" for a [Grok] step).
func (r *Regex) Name() string { return r.name }

// Apply matches the configured value of e and stores the named groups; it
// always keeps the event. The error is nil or ErrNoMatch.
func (r *Regex) Apply(e *relaykit.Event) (bool, error) {
	r.events.add()
	text, sc := r.src.read(e)
	defer release(sc)
	if !r.flt.MayMatch(text) {
		r.noMatch.add()
		return true, ErrNoMatch
	}
	m := r.re.FindSubmatchIndex(text)
	if m == nil {
		r.noMatch.add()
		return true, ErrNoMatch
	}
	r.matched.add()
	for k, key := range r.keys {
		i := r.pick(m, r.idx[k])
		if i < 0 {
			continue
		}
		setBytes(e, key, text[m[2*i]:m[2*i+1]])
	}
	return true, nil
}

// pick returns the submatch of one name whose text is stored, or -1: the
// leftmost that took part; with grok, the rightmost with non-empty text.
func (r *Regex) pick(m []int, idx []int) int {
	if !r.grok {
		for _, i := range idx {
			if m[2*i] >= 0 {
				return i
			}
		}
		return -1
	}
	for j := len(idx) - 1; j >= 0; j-- {
		if i := idx[j]; m[2*i] >= 0 && m[2*i+1] > m[2*i] {
			return i
		}
	}
	return -1
}

// Stats returns a snapshot of the step's counters.
func (r *Regex) Stats() RegexStats {
	return RegexStats{Events: r.events.load(), Matched: r.matched.load(), NoMatch: r.noMatch.load()}
}
