package pipeline

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Filter is a compiled filter expression: a Go regular expression (RE2
// syntax, package regexp) matched anywhere in a value, or "" / "true", which
// match every value.
//
// Before running the regular expression, a Filter looks for the literal
// strings every match must contain (derived from the parsed pattern with
// regexp/syntax) using bytes.Index, or an ASCII case-insensitive search for
// (?i) literals; when none is present the value cannot match and the regular
// expression is skipped. A pattern that is nothing but a literal, or an
// alternation of literals (with or without (?i)), never runs the regular
// expression at all. The prefilter never changes a result: Match returns
// exactly what regexp.Regexp.Match returns.
//
// A Filter is immutable and safe for concurrent use by multiple goroutines.
// Match does not allocate.
type Filter struct {
	pattern string
	all     bool           // "" or "true": matches everything
	re      *regexp.Regexp // nil when the literal test decides alone
	// lits is the any-of set of required literals; empty means no
	// prefilter. Fold literals are stored in ASCII lower case.
	lits [][]byte
	// anchors holds, per literal, the offset of its rarest byte: the byte
	// the search scans for.
	anchors []int
	fold    bool // lits are searched ASCII case-insensitively
	pure    bool // containing one of lits is equivalent to matching
	// maxLit is the length of the longest literal in lits.
	maxLit int
}

var filterCache struct {
	mu sync.Mutex
	m  map[string]*Filter
}

// CompileFilter returns the Filter for pattern, compiling it on first use:
// Filters are kept in a process-wide cache, so each distinct pattern is
// compiled once however many routes, pipelines or reloads use it. The cache
// is never pruned; it holds one entry per distinct pattern ever compiled.
//
// CompileFilter is safe for concurrent use. The error, if any, comes from
// regexp.Compile.
func CompileFilter(pattern string) (*Filter, error) {
	filterCache.mu.Lock()
	f, ok := filterCache.m[pattern]
	filterCache.mu.Unlock()
	if ok {
		return f, nil
	}
	f, err := compileFilter(pattern)
	if err != nil {
		return nil, err
	}
	filterCache.mu.Lock()
	defer filterCache.mu.Unlock()
	if old, ok := filterCache.m[pattern]; ok {
		return old, nil
	}
	if filterCache.m == nil {
		filterCache.m = make(map[string]*Filter)
	}
	filterCache.m[pattern] = f
	return f, nil
}

// NewFilter compiles pattern into a new Filter, bypassing the process-wide
// cache of [CompileFilter]. It is for patterns that come and go at run time,
// such as the filter an operator types for a live tap, which a cache that is
// never pruned would accumulate. Routes and pipeline functions use
// CompileFilter. The error, if any, comes from regexp.Compile.
func NewFilter(pattern string) (*Filter, error) { return compileFilter(pattern) }

// compileFilter builds a Filter without the cache.
func compileFilter(pattern string) (*Filter, error) {
	f := &Filter{pattern: pattern}
	if pattern == "" || pattern == "true" {
		f.all = true
		return f, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	f.re = re
	// regexp.Compile parses with syntax.Perl; do the same.
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	set, pure := requiredLiterals(parsed.Simplify())
	if set == nil {
		return f, nil
	}
	for _, l := range set.lits {
		if l.s == "" {
			// Every value contains "": no prefilter is possible, but a
			// pure pattern then matches everything.
			if pure {
				f.all = true
				f.re = nil
			}
			return f, nil
		}
	}
	f.fold = set.fold
	for _, l := range set.lits {
		b := []byte(l.s)
		if f.fold {
			lowerASCII(b, b)
		}
		f.lits = append(f.lits, b)
		f.anchors = append(f.anchors, rarest(b))
		f.maxLit = max(f.maxLit, len(b))
	}
	if pure {
		f.pure = true
		f.re = nil
	}
	return f, nil
}

// String returns the pattern the Filter was compiled from.
func (f *Filter) String() string { return f.pattern }

// MatchesAll reports whether the Filter is known to match every value: ""
// and "true", and alternations of literals that include the empty string,
// such as "a?". Other patterns that match everywhere ("a*") still run their
// regular expression.
func (f *Filter) MatchesAll() bool { return f.all }

// Match reports whether b contains a match of the Filter's pattern.
func (f *Filter) Match(b []byte) bool {
	if f.all {
		return true
	}
	if len(f.lits) > 0 {
		if !f.containsLiteral(b) {
			return false
		}
		if f.pure {
			return true
		}
	}
	return f.re.Match(b)
}

// MayMatch reports whether b can contain a match of the Filter's pattern:
// false when b lacks every literal a match requires, true otherwise. It
// never runs the regular expression, so it costs at most the literal
// search; for a caller that needs the match itself (its submatches, from
// its own regexp.Regexp) and would otherwise run the expression twice.
// Where MayMatch is false, Match is false.
func (f *Filter) MayMatch(b []byte) bool {
	if f.all || len(f.lits) == 0 {
		return true
	}
	return f.containsLiteral(b)
}

// containsLiteral reports whether b contains one of f.lits.
func (f *Filter) containsLiteral(b []byte) bool {
	if !f.fold {
		for i, l := range f.lits {
			if index(b, l, f.anchors[i]) {
				return true
			}
		}
		return false
	}
	// Lower-case b window by window into a stack buffer; windows overlap
	// by maxLit-1 bytes so no occurrence is cut in two.
	var buf [512]byte
	step := len(buf) - (f.maxLit - 1)
	for off := 0; off < len(b); off += step {
		end := min(off+len(buf), len(b))
		w := buf[:end-off]
		lowerASCII(w, b[off:end])
		for i, l := range f.lits {
			if index(w, l, f.anchors[i]) {
				return true
			}
		}
		if end == len(b) {
			break
		}
	}
	return false
}

// index reports whether h contains l, scanning with bytes.IndexByte for
// l[a] (chosen as its rarest byte) and comparing around each hit.
func index(h, l []byte, a int) bool {
	n := len(l)
	if n > len(h) {
		return false
	}
	c := l[a]
	last := len(h) - (n - 1 - a) // the anchor cannot sit at or after last
	for i := a; i < last; i++ {
		o := bytes.IndexByte(h[i:last], c)
		if o < 0 {
			return false
		}
		i += o
		if string(h[i-a:i-a+n]) == string(l) {
			return true
		}
	}
	return false
}

// byteRank orders bytes from most to least frequent in typical log text;
// bytes not listed are rarer still.
const byteRank = " etaoinsrlhdcu0123456789.:=-/pmfgwybv,_\"[]()kxjqz"

// rarest returns the offset of the byte of l least frequent in log text,
// the first of equals.
func rarest(l []byte) int {
	best, bestRank := 0, -1
	for i, c := range l {
		r := strings.IndexByte(byteRank, c)
		if r < 0 {
			r = len(byteRank)
		}
		if r > bestRank {
			best, bestRank = i, r
		}
	}
	return best
}

// lowerASCII writes src to dst with ASCII letters A-Z lower-cased; dst must
// be at least as long as src (it may be src). Other bytes are copied as is.
// It converts eight bytes at a time.
func lowerASCII(dst, src []byte) {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	dst = dst[:len(src)]
	for len(src) >= 8 && len(dst) >= 8 {
		w := binary.LittleEndian.Uint64(src)
		h := w &^ high                   // each byte's low 7 bits
		geA := h + ones*(0x80-'A')       // high bit set where byte >= 'A'
		gtZ := h + ones*(0x7f-'Z')       // high bit set where byte > 'Z'
		upper := (geA ^ gtZ) &^ w & high // ASCII and in A..Z
		binary.LittleEndian.PutUint64(dst, w|upper>>2)
		src, dst = src[8:], dst[8:]
	}
	for i, c := range src {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
}

// Literal extraction.
//
// For a node of the parsed, simplified pattern we compute:
//   - exact: when the node matches a finite, small set of strings, that set;
//   - req: a set of literals at least one of which every match contains.
//
// A fold set holds strings compared ASCII case-insensitively; mixing exact
// and fold strings turns the set into a fold set, which is still a valid
// necessary condition (a string containing "ab" also contains it ignoring
// case) but is no longer exact.

const (
	maxSetSize = 16 // literals in one any-of set
	maxLitLen  = 64 // bytes in one literal (bytes.Index's fast path is <= 63)
)

type lit struct {
	s    string
	fold bool
}

type litSet struct {
	lits []lit
	fold bool // some literal is fold
}

func newSet(ls ...lit) *litSet {
	s := &litSet{lits: ls}
	for _, l := range ls {
		s.fold = s.fold || l.fold
	}
	return s
}

// score rates a set as a prefilter: the shortest literal's length (longer is
// more selective), tie-broken by fewer literals.
func (s *litSet) score() int {
	if s == nil || len(s.lits) == 0 {
		return -1
	}
	m := len(s.lits[0].s)
	for _, l := range s.lits[1:] {
		m = min(m, len(l.s))
	}
	return m*64 - len(s.lits)
}

// nodeInfo is the result for one node.
type nodeInfo struct {
	exact *litSet // nil: not a small finite set
	req   *litSet // nil: no required literal
}

// requiredLiterals returns the any-of set of literals every match of re must
// contain (nil if there is none usable), and whether containing one of them
// is also sufficient for a match (the pattern is a literal or an alternation
// of literals). Fold literals are returned in their original case and are
// safe to search ASCII case-insensitively.
func requiredLiterals(re *syntax.Regexp) (*litSet, bool) {
	info := analyze(re)
	if info.exact != nil {
		if set, ok := sanitize(info.exact); ok {
			return set, true
		}
	}
	set := info.req
	if info.exact != nil && (set == nil || info.exact.score() > set.score()) {
		set = info.exact
	}
	if set == nil {
		return nil, false
	}
	set, _ = sanitize(set)
	return set, false
}

// sanitize makes a set safe for bytes.Index and the ASCII case-insensitive
// search. It returns the set (possibly with shortened literals, or nil) and
// whether it is unchanged, so that an exact set stays exact.
//
//   - Fold literals may only contain ASCII runes whose case-fold orbit is
//     ASCII: 'k' also matches U+212A (Kelvin sign) and 's' matches U+017F
//     (long s) under (?i), which an ASCII search would miss.
//   - U+FFFD in a pattern matches any invalid UTF-8 byte of the input, which
//     bytes.Index would not find.
//
// An unsafe literal is cut to its longest safe run; an empty run leaves no
// usable literal, so the whole set is dropped.
func sanitize(set *litSet) (*litSet, bool) {
	out := &litSet{fold: set.fold}
	same := true
	for _, l := range set.lits {
		fold := set.fold // a mixed set is searched case-insensitively
		if fold != l.fold && l.s != "" {
			same = false
		}
		best, start := "", 0
		for i := 0; i < len(l.s); {
			r, w := utf8.DecodeRuneInString(l.s[i:])
			ok := r != utf8.RuneError
			if fold {
				ok = r < utf8.RuneSelf && asciiOrbit(r)
			}
			if !ok {
				same = false
				if i-start > len(best) {
					best = l.s[start:i]
				}
				start = i + w
			}
			i += w
		}
		if start == 0 {
			best = l.s
		} else if len(l.s)-start > len(best) {
			best = l.s[start:]
		}
		if best == "" && l.s != "" {
			return nil, false
		}
		out.lits = append(out.lits, lit{s: best, fold: fold})
	}
	out.lits = dedup(out.lits) // cut literals can repeat
	return out, same
}

// asciiOrbit reports whether every rune that case-folds to r is ASCII.
func asciiOrbit(r rune) bool {
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func analyze(re *syntax.Regexp) nodeInfo {
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		if fold && !hasLetter(re.Rune) {
			fold = false
		}
		s := string(re.Rune)
		if len(s) > maxLitLen {
			return nodeInfo{req: newSet(lit{s: s[:maxLitLen], fold: fold})}
		}
		set := newSet(lit{s: s, fold: fold})
		if fold && !allASCIIOrbit(re.Rune) {
			// The ASCII case-insensitive search cannot take it whole;
			// spell out the case variants if there are few.
			if e := expandSet(set); e != nil {
				return nodeInfo{exact: e, req: e}
			}
		}
		return nodeInfo{exact: set, req: set}
	case syntax.OpEmptyMatch:
		return nodeInfo{exact: newSet(lit{})}
	case syntax.OpCharClass:
		// A small class such as [Dd] or [0-2] is a small exact set.
		n := 0
		for i := 0; i+1 < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
			if n > 4 {
				return nodeInfo{}
			}
		}
		if n == 0 {
			return nodeInfo{}
		}
		set := &litSet{}
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				set.lits = append(set.lits, lit{s: string(r)})
			}
		}
		return nodeInfo{exact: set}
	case syntax.OpCapture:
		return analyze(re.Sub[0])
	case syntax.OpPlus:
		sub := analyze(re.Sub[0])
		return nodeInfo{req: best(sub.req, sub.exact)}
	case syntax.OpRepeat:
		if re.Min < 1 {
			return nodeInfo{}
		}
		sub := analyze(re.Sub[0])
		return nodeInfo{req: best(sub.req, sub.exact)}
	case syntax.OpQuest:
		sub := analyze(re.Sub[0])
		if sub.exact == nil {
			return nodeInfo{}
		}
		ls := append([]lit{{}}, sub.exact.lits...)
		if len(ls) > maxSetSize {
			return nodeInfo{}
		}
		return nodeInfo{exact: newSet(dedup(ls)...)}
	case syntax.OpAlternate:
		var exact, req []lit
		exactOK, reqOK := true, true
		for _, sub := range re.Sub {
			info := analyze(sub)
			if exactOK && info.exact != nil {
				exact = append(exact, info.exact.lits...)
			} else {
				exactOK = false
			}
			r := best(info.req, info.exact)
			if reqOK && r != nil {
				req = append(req, r.lits...)
			} else {
				reqOK = false
			}
		}
		var out nodeInfo
		if exactOK && len(exact) <= maxSetSize {
			out.exact = newSet(dedup(exact)...)
		}
		if reqOK && len(req) <= maxSetSize {
			out.req = newSet(dedup(req)...)
		}
		return out
	case syntax.OpConcat:
		return analyzeConcat(re.Sub)
	default:
		// Anchors, word boundaries, any-char, star: no literal, not exact.
		return nodeInfo{}
	}
}

// analyzeConcat combines the children of a concatenation: runs of adjacent
// exact children are cross-multiplied into longer literals; the node is
// exact when every child is; the required set is the best of the children's
// and the runs'.
func analyzeConcat(subs []*syntax.Regexp) nodeInfo {
	var bestReq *litSet
	var run *litSet // cross product of the current run of exact children
	allExact := true
	flush := func() {
		if run != nil {
			bestReq = best(bestReq, run)
		}
		run = nil
	}
	for _, sub := range subs {
		info := analyze(sub)
		bestReq = best(bestReq, info.req)
		if info.exact == nil {
			allExact = false
			flush()
			continue
		}
		if run == nil {
			run = info.exact
			continue
		}
		next, mixed := cross(run, info.exact)
		if next == nil {
			// Too many or too long: keep what we had, restart the run.
			allExact = false
			flush()
			run = info.exact
			continue
		}
		if mixed {
			// Searched case-insensitively, the run is only necessary.
			allExact = false
		}
		run = next
	}
	out := nodeInfo{}
	if allExact && run != nil {
		out.exact = run
	}
	flush()
	out.req = bestReq
	return out
}

// cross returns every concatenation of a string of a with one of b, or nil
// when the product would exceed the size limits. mixed reports a product of
// exact and fold parts that could not be spelled out: its literals are
// fold, and it is a necessary set only, never exact.
func cross(a, b *litSet) (_ *litSet, mixed bool) {
	if len(a.lits)*len(b.lits) > maxSetSize {
		return nil, false
	}
	var ls []lit
	for _, x := range a.lits {
		for _, y := range b.lits {
			if len(x.s)+len(y.s) > maxLitLen {
				return nil, false
			}
			// A literal mixing exact and fold parts becomes fold when
			// searched; sanitize reports the set as inexact then.
			fold := x.fold || y.fold
			if x.fold != y.fold && x.s != "" && y.s != "" {
				// Exact and case-insensitive parts, as in [Ee]rror:
				// spell out the case variants if there are few,
				// else fall back to a case-insensitive necessary set.
				if ea, eb := expandSet(a), expandSet(b); ea != nil && eb != nil {
					if len(ea.lits)*len(eb.lits) <= maxSetSize {
						return cross(ea, eb)
					}
				}
				return crossMixed(a, b), true
			}
			ls = append(ls, lit{s: x.s + y.s, fold: fold})
		}
	}
	return newSet(dedup(ls)...), false
}

// expandSet returns s with every fold literal replaced by its exact case
// variants (all strings it matches under Unicode simple folding), or nil if
// there would be more than maxSetSize.
func expandSet(s *litSet) *litSet {
	if !s.fold {
		return s
	}
	var out []lit
	for _, l := range s.lits {
		if !l.fold {
			out = append(out, l)
			continue
		}
		vs := []string{""}
		for _, r := range l.s {
			var next []string
			for _, v := range vs {
				next = append(next, v+string(r))
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					next = append(next, v+string(f))
				}
			}
			if len(out)+len(next) > maxSetSize {
				return nil
			}
			vs = next
		}
		for _, v := range vs {
			out = append(out, lit{s: v})
		}
	}
	return newSet(dedup(out)...)
}

// crossMixed handles a product mixing exact and fold literals: every match
// contains one of the concatenations up to case, so they are fold
// literals. The set is only a necessary condition: the caller must not
// take it as exact (cross reports it as mixed). Each literal carries the
// fold itself, so that the set stays fold when it is merged into others
// (an alternation, a later product) that rebuild sets from literals.
func crossMixed(a, b *litSet) *litSet {
	var ls []lit
	for _, x := range a.lits {
		for _, y := range b.lits {
			ls = append(ls, lit{s: x.s + y.s, fold: true})
		}
	}
	return newSet(dedup(ls)...)
}

func best(a, b *litSet) *litSet {
	if b.score() > a.score() {
		return b
	}
	return a
}

func dedup(ls []lit) []lit {
	sort.Slice(ls, func(i, j int) bool {
		if ls[i].s != ls[j].s {
			return ls[i].s < ls[j].s
		}
		return !ls[i].fold && ls[j].fold
	})
	out := ls[:0]
	for i, l := range ls {
		if i > 0 && l == ls[i-1] {
			continue
		}
		out = append(out, l)
	}
	return out
}

func allASCIIOrbit(rs []rune) bool {
	for _, r := range rs {
		if r >= utf8.RuneSelf || !asciiOrbit(r) {
			return false
		}
	}
	return true
}

func hasLetter(rs []rune) bool {
	for _, r := range rs {
		if unicode.SimpleFold(r) != r {
			return true
		}
	}
	return false
}

// errFilter describes a bad filter pattern.
func errFilter(where, pattern string, err error) error {
	return fmt.Errorf("%w: %s: filter %q: %w", ErrInvalidConfig, where, pattern, err)
}
