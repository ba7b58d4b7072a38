package pipeline_test

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/pipeline"
)

func TestFilterPrefilter(t *testing.T) {
	tests := []struct {
		pattern string
		lits    []string
		fold    bool
		pure    bool
		regexp  bool
	}{
		{pattern: "Failed password", lits: []string{"Failed password"}, pure: true},
		{pattern: `sshd\[\d+\]: Failed password for`, lits: []string{"]: Failed password for"}, regexp: true},
		{pattern: "DENY|DROP", lits: []string{"DENY", "DROP"}, pure: true},
		{pattern: "(?i)error|fatal|panic", lits: []string{"error", "fatal", "panic"}, fold: true, pure: true},
		{pattern: "(?i)ERROR", lits: []string{"error"}, fold: true, pure: true},
		{pattern: "colou?r", lits: []string{"color", "colour"}, pure: true},
		{pattern: "[Ee]rror", lits: []string{"Error", "error"}, pure: true},
		{pattern: `kernel: .*(DROP|DENY)`, lits: []string{"kernel: "}, regexp: true},
		{pattern: `^abc$`, lits: []string{"abc"}, regexp: true},
		{pattern: `\babc\b`, lits: []string{"abc"}, regexp: true},
		{pattern: `a\.b`, lits: []string{"a.b"}, pure: true},
		{pattern: `(abc)+`, lits: []string{"abc"}, regexp: true},
		{pattern: `(?i)sshd`, lits: []string{"hd"}, fold: true, regexp: true}, // s folds to U+017F
		{pattern: `(?i)kernel`, lits: []string{"ernel"}, fold: true, regexp: true},
		{pattern: `(?i)é`, lits: []string{"É", "é"}, pure: true},
		{pattern: "a\uFFFDb", lits: []string{"a"}, regexp: true}, // U+FFFD matches invalid UTF-8
		{pattern: `\d+`, regexp: true},
		{pattern: `^$`, regexp: true},
		{pattern: `.*`, regexp: true},
		{pattern: `a*`, regexp: true},
		{pattern: `(?i)k`, lits: []string{"K", "k", "\u212a"}, pure: true},
		{pattern: ``},
		{pattern: `true`},
		{pattern: `x|.*y`, lits: []string{"x", "y"}, regexp: true},
		{pattern: `[a-z]+ing`, lits: []string{"ing"}, regexp: true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			f, err := pipeline.CompileFilterUncached(tt.pattern)
			require.NoError(t, err)
			lits, fold, pure, re := pipeline.FilterInternals(f)
			assert.Equal(t, tt.lits, lits, "literals")
			assert.Equal(t, tt.fold, fold, "fold")
			assert.Equal(t, tt.pure, pure, "pure")
			assert.Equal(t, tt.regexp, re, "runs regexp")
		})
	}
}

func TestFilterCacheShared(t *testing.T) {
	a, err := pipeline.CompileFilter(`cache(d|x)`)
	require.NoError(t, err)
	b, err := pipeline.CompileFilter(`cache(d|x)`)
	require.NoError(t, err)
	assert.Same(t, a, b)
	_, err = pipeline.CompileFilter(`(`)
	require.Error(t, err)
}

func TestNewFilterBypassesCache(t *testing.T) {
	cached, err := pipeline.CompileFilter(`uncached(a|b)`)
	require.NoError(t, err)
	a, err := pipeline.NewFilter(`uncached(a|b)`)
	require.NoError(t, err)
	b, err := pipeline.NewFilter(`uncached(a|b)`)
	require.NoError(t, err)
	assert.NotSame(t, cached, a)
	assert.NotSame(t, a, b)
	assert.True(t, a.Match([]byte("x uncachedb y")))
	assert.False(t, a.Match([]byte("x uncachedc y")))
	_, err = pipeline.NewFilter(`(`)
	require.Error(t, err)
}

func TestLowerASCII(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 100 {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(r.IntN(256))
		}
		want := make([]byte, n)
		for i, c := range src {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			want[i] = c
		}
		got := make([]byte, n)
		pipeline.LowerASCII(got, src)
		require.Equal(t, want, got, "n=%d", n)
	}
}

// Long values are lower-cased in overlapping windows; a literal across a
// window edge must still be found.
func TestFilterFoldAcrossWindows(t *testing.T) {
	f, err := pipeline.CompileFilter(`(?i)needle|haystack`)
	require.NoError(t, err)
	for pos := 480; pos < 1100; pos++ {
		b := bytes.Repeat([]byte{'.'}, 1200)
		copy(b[pos:], "NeEdLe")
		require.True(t, f.Match(b), "pos %d", pos)
		require.False(t, f.Match(b[:pos+5]), "cut at %d", pos)
	}
}

// filterPatterns are the patterns of the property tests: (?i), alternations,
// anchors, classes, and patterns with no required literal.
var filterPatterns = []string{
	`sshd\[\d+\]: Failed password for`,
	`Failed password`,
	`DENY|DROP`,
	`(?i)error|fatal|panic`,
	`(?i)sshd`,
	`(?i)kernel:`,
	`(?i)KEEP`,
	`[Ee]rror`,
	`[Ss]shd`,
	`kernel: .*(DROP|DENY)`,
	`^<\d+>`,
	`^sshd`,
	`panic$`,
	`(?m)^error`,
	`\berror\b`,
	`\bGET /api/`,
	`(GET|POST) /[a-z]+ HTTP/1\.[01]" 5\d\d`,
	`SRC=10\.\d+\.\d+\.\d+`,
	`colou?r`,
	`a\.b|c\+d`,
	`(?i)(user|uid)=root`,
	`(?i)x|y`,
	`\d{3,}`,
	`[0-9a-f]{8}-`,
	`^$`,
	`.`,
	`a*`,
	`(?s)x.*y`,
	`[^a-z]`,
	`é|ü`,
	`(?i)é`,
	"\uFFFD",
	"a\uFFFDb",
	`(?i)\x{212A}`,
	`(?i)ſ`,
	`x{2}y`,
	`(ab)+c`,
	`(?U)a+?b`,
	`abc(?i)def`,
	`(?i)k`,
}

// realLines returns lines in the shapes of the benchmark corpus, plus
// variants built to trip a wrong prefilter.
func realLines(r *rand.Rand, n int) [][]byte {
	shapes := []string{
		`<38>Nov 22 02:11:09 web01 sshd[2211]: Failed password for invalid user admin from 203.0.113.9 port 52144 ssh2`,
		`<38>Nov 22 02:11:09 web01 sshd[2211]: Accepted publickey for deploy from 198.51.100.4 port 40022 ssh2`,
		`<4>Nov 22 02:11:10 fw1 kernel: [UFW BLOCK] IN=eth0 OUT= SRC=10.1.2.3 DST=10.9.8.7 LEN=60 PROTO=TCP DROP`,
		`<4>Nov 22 02:11:10 fw1 kernel: action=DENY src=192.0.2.1 dst=198.51.100.2 proto=udp dport=53`,
		`203.0.113.7 - - [22/Nov/2026:02:11:11 +0000] "GET /api/v1/items?id=42 HTTP/1.1" 503 1234 "-" "curl/8.5"`,
		`{"level":"ERROR","msg":"db timeout","color":"red","uid":"root"}`,
		`2026-11-22T02:11:12Z app[99] WARN cache miss key=user:42 took=12ms colour=blue`,
		`2026-11-22T02:11:12Z app[99] Fatal: PANIC in worker 7 a.b c+d xy`,
		`kernel: eth0: link up, 1000 Mbps, full duplex`,
		"SSHD \u212Aernel \u017Fshd ſſhd \uFFFD é É ü",
		"a\xffb \xe2\x82 invalid \xc3\x28 utf8",
		"", "a", "ab", "aab", "\n", "error\npanic", "user=ROOT",
	}
	out := make([][]byte, 0, n)
	for range n {
		b := []byte(shapes[r.IntN(len(shapes))])
		// Mutate: flip case, cut, splice or insert odd runes.
		for range r.IntN(4) {
			if len(b) == 0 {
				break
			}
			i := r.IntN(len(b))
			switch r.IntN(6) {
			case 0:
				b[i] ^= 0x20
			case 1:
				b = b[:i]
			case 2:
				b = append(b[:i:i], append([]byte("\u212A\u017F"), b[i:]...)...)
			case 3:
				b = append(b[:i:i], append([]byte{0xff, 0xef, 0xbf, 0xbd}, b[i:]...)...)
			case 4:
				b = b[i:]
			default:
				b[i] = byte(r.IntN(256))
			}
		}
		out = append(out, b)
	}
	return out
}

func randomLine(r *rand.Rand) []byte {
	alphabet := []string{"a", "b", "c", "d", "e", "E", "k", "K", "s", "S", "x", "y", " ", "\n", ".", "+",
		"0", "7", "error", "ERROR", "panic", "DENY", "DROP", "sshd", "\u212A", "\u017F", "\xff", "\uFFFD", "é", "É", "ü"}
	var b []byte
	for range r.IntN(20) {
		b = append(b, alphabet[r.IntN(len(alphabet))]...)
	}
	return b
}

// The prefilter never changes a result: Filter.Match equals regexp.Match
// on real-shaped and random lines.
func TestFilterMatchesRegexp(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	lines := realLines(r, 2000)
	for range 2000 {
		lines = append(lines, randomLine(r))
	}
	for _, p := range filterPatterns {
		f, err := pipeline.CompileFilter(p)
		require.NoError(t, err, p)
		re := regexp.MustCompile(p)
		for _, l := range lines {
			if f.Match(l) != re.Match(l) {
				t.Fatalf("pattern %q line %q: filter %v, regexp %v", p, l, f.Match(l), re.Match(l))
			}
			if re.Match(l) && !f.MayMatch(l) {
				t.Fatalf("pattern %q line %q: MayMatch false on a match", p, l)
			}
		}
	}
}

// randomPattern builds a pattern from a small grammar rich in literals,
// folding, alternation and repetition.
func randomPattern(r *rand.Rand, depth int) string {
	atoms := []string{"a", "b", "k", "s", "E", "e", "x", "ab", "err", "DENY", "\u212A", "ſ", "é", "\uFFFD",
		".", `\d`, "[Ee]", "[ks]", "[^a]", `\.`, "^", "$", `\b`, "(?i:k)", "(?i:ab)", "(?i:se)"}
	if depth <= 0 || r.IntN(3) == 0 {
		return atoms[r.IntN(len(atoms))]
	}
	switch r.IntN(7) {
	case 0:
		return randomPattern(r, depth-1) + "|" + randomPattern(r, depth-1)
	case 1:
		return "(" + randomPattern(r, depth-1) + ")?"
	case 2:
		return "(?:" + randomPattern(r, depth-1) + ")+"
	case 3:
		return "(" + randomPattern(r, depth-1) + ")*"
	case 4:
		return "(?i)" + randomPattern(r, depth-1)
	case 5:
		return "(" + randomPattern(r, depth-1) + "){2}"
	default:
		return randomPattern(r, depth-1) + randomPattern(r, depth-1)
	}
}

// A product of exact and case-insensitive parts that is too large to
// spell out is searched case-insensitively. It stays so when an
// alternation or a later product takes it in: these patterns lost the
// case-insensitivity there, and their filters refused lines the regexp
// matched.
func TestFilterFoldKeptThroughAlternation(t *testing.T) {
	for _, c := range []struct{ pattern, line string }{
		{"(?:ka|(?i)ab(s){2})+", "é\xffsshdabsshd"},
		{"a(?i:k)(?i)DENY(K)?", "KERRORa\u212aDENY 7panic"},
		{"a(?i:k)(?i)DENY(K)?", "xakdenyk"},
		{"s|((DENY){2})?(?i)DENYs", "É\xff0a0ERROR.axDENYſK"},
	} {
		re := regexp.MustCompile(c.pattern)
		require.True(t, re.MatchString(c.line), "the case is a match: %q %q", c.pattern, c.line)
		f, err := pipeline.CompileFilterUncached(c.pattern)
		require.NoError(t, err)
		assert.True(t, f.Match([]byte(c.line)), "%q on %q", c.pattern, c.line)
		assert.True(t, f.MayMatch([]byte(c.line)), "%q on %q: the prefilter refused a match", c.pattern, c.line)
	}
}

func TestFilterRandomPatternsNoRace(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n := 3000
	if testing.Short() || raceEnabled {
		n = 600
	}
	for range n {
		p := randomPattern(r, 4)
		re, err := regexp.Compile(p)
		if err != nil {
			continue
		}
		f, err := pipeline.CompileFilterUncached(p)
		require.NoError(t, err, p)
		for range 50 {
			l := randomLine(r)
			if f.Match(l) != re.Match(l) {
				lits, fold, pure, _ := pipeline.FilterInternals(f)
				t.Fatalf("pattern %q line %q: filter %v, regexp %v (lits %q fold %v pure %v)",
					p, l, f.Match(l), re.Match(l), lits, fold, pure)
			}
		}
	}
}

func FuzzFilter(f *testing.F) {
	for _, p := range filterPatterns {
		f.Add(p, "Failed password for root; ERROR \u212A ſ \xff")
	}
	f.Add("(?i)k", "\u212A")
	f.Add("(?i)ss", "ſS")
	f.Add("\uFFFD", "\xff")
	f.Fuzz(func(t *testing.T, pattern, line string) {
		if len(pattern) > 200 || !utf8.ValidString(pattern) || strings.Contains(pattern, "{1000") {
			return
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return
		}
		flt, err := pipeline.CompileFilterUncached(pattern)
		if err != nil {
			t.Fatalf("regexp compiles %q but filter fails: %v", pattern, err)
		}
		if got, want := flt.Match([]byte(line)), re.MatchString(line); got != want {
			lits, fold, pure, _ := pipeline.FilterInternals(flt)
			t.Fatalf("pattern %q line %q: filter %v, regexp %v (lits %q fold %v pure %v)",
				pattern, line, got, want, lits, fold, pure)
		}
	})
}
