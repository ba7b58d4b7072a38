package parse_test

import (
	"regexp"
	"testing"

	grok "github.com/elastic/go-grok"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/parse"
)

func TestRegex(t *testing.T) {
	tests := []struct {
		name, pattern, in string
		want              [][2]string
		err               error
	}{
		{"named groups", `from (?P<src>\S+)/(?P<spt>\d+) to (?P<dst>\S+)/(?P<dpt>\d+)`,
			"Deny tcp from 203.0.113.5/51234 to 10.0.0.5/443 on outside",
			[][2]string{{"src", "203.0.113.5"}, {"spt", "51234"}, {"dst", "10.0.0.5"}, {"dpt", "443"}}, nil},
		{"unnamed groups are not stored", `(Deny|Allow) (?<proto>\w+)`, "Deny tcp", [][2]string{{"proto", "tcp"}}, nil},
		{"optional group that did not take part", `a(?P<x>b)?c(?P<y>d*)`, "ac", [][2]string{{"y", ""}}, nil},
		{"repeated name: the leftmost that took part", `(?P<n>x\d)|(?P<n>y\d)`, "y7", [][2]string{{"n", "y7"}}, nil},
		{"no match", `(?P<n>\d+)`, "no digits", nil, parse.ErrNoMatch},
		{"prefilter rejects", `user=(?P<user>\w+)`, "nothing here", nil, parse.ErrNoMatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parse.NewRegex(parse.RegexConfig{Pattern: tt.pattern})
			require.NoError(t, err)
			e := relaykit.Event{Raw: []byte(tt.in)}
			keep, err := r.Apply(&e)
			assert.True(t, keep)
			if tt.err == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.err)
			}
			assert.Equal(t, tt.want, fieldPairs(&e))
			assert.Equal(t, tt.in, string(e.Raw))
		})
	}
}

func TestRegexPrefixFieldStats(t *testing.T) {
	r, err := parse.NewRegex(parse.RegexConfig{Field: "msg", Pattern: `user (?P<name>\w+)`, Prefix: "x."})
	require.NoError(t, err)
	var e relaykit.Event
	e.SetFieldString("msg", "login by user bob")
	_, err = r.Apply(&e)
	require.NoError(t, err)
	v, _ := e.Field("x.name")
	assert.Equal(t, "bob", string(v))
	_, err = r.Apply(&relaykit.Event{})
	assert.ErrorIs(t, err, parse.ErrNoMatch)
	assert.Equal(t, parse.RegexStats{Events: 2, Matched: 1, NoMatch: 1}, r.Stats())
	assert.Equal(t, "parse_regex", r.Name())
}

func TestRegexInvalidConfig(t *testing.T) {
	for _, p := range []string{`(`, `no groups`, `(unnamed)`} {
		_, err := parse.NewRegex(parse.RegexConfig{Pattern: p})
		assert.ErrorIs(t, err, parse.ErrInvalidConfig, p)
	}
}

// grokCases are expressions over go-grok's library and the lines they
// read; the step must store what go-grok's own Parse returns.
var grokCases = []struct {
	name, pattern string
	patterns      map[string]string
	in            string
}{
	{"Cisco ASA 302013 (go-grok's firewall patterns)",
		`%{CISCO_ACTION:action} %{CISCO_DIRECTION:direction} %{WORD:protocol} connection %{INT:connection_id} for %{DATA:src_interface}:%{IP:src_ip}/%{INT:src_port}(?: \(%{IP:src_mapped_ip}/%{INT:src_mapped_port}\))? to %{DATA:dst_interface}:%{IP:dst_ip}/%{INT:dst_port}(?: \(%{IP:dst_mapped_ip}/%{INT:dst_mapped_port}\))?`, nil,
		"Built inbound TCP connection 123 for outside:203.0.113.5/51234 (203.0.113.5/51234) to inside:10.0.0.5/443 (198.51.100.10/443)"},
	{"syslog line, dotted names", `%{SYSLOGTIMESTAMP:timestamp} %{SYSLOGHOST:host.name} %{DATA:process.name}(?:\[%{POSINT:process.pid}\])?: %{GREEDYDATA:message}`, nil,
		"Nov 28 12:58:59 web-1 sshd[4242]: Failed password for root from 198.51.100.7 port 52113 ssh2"},
	{"custom pattern, type suffix, optional capture left empty", `%{USER:user} from %{IP:ip} port %{PORTNUM:port:int}(?: %{WORD:extra})?`,
		map[string]string{"PORTNUM": `\d{1,5}`}, "root from 2001:db8::7 port 52113"},
	{"Apache combined log", `%{COMBINEDAPACHELOG}`, nil,
		`203.0.113.9 - frank [28/Nov/2026:12:58:59 +0100] "GET /index.html?a=1 HTTP/1.1" 200 2326 "http://example.com/" "Mozilla/5.0"`},
}

func TestGrokAgainstGoGrok(t *testing.T) {
	for _, tt := range grokCases {
		t.Run(tt.name, func(t *testing.T) {
			g, err := grok.NewComplete(tt.patterns)
			require.NoError(t, err)
			require.NoError(t, g.Compile(tt.pattern, true))
			want, err := g.ParseString(tt.in)
			require.NoError(t, err)
			require.NotEmpty(t, want)

			step, err := parse.NewGrok(parse.GrokConfig{Pattern: tt.pattern, Patterns: tt.patterns})
			require.NoError(t, err)
			e := relaykit.Event{Raw: []byte(tt.in)}
			_, err = step.Apply(&e)
			require.NoError(t, err)
			got := map[string]string{}
			for _, f := range e.Fields {
				got[string(f.Key)] = string(f.Value)
			}
			assert.Equal(t, want, got)
			assert.Equal(t, "parse_grok", step.Name())
		})
	}
}

func TestGrok(t *testing.T) {
	step, err := parse.NewGrok(parse.GrokConfig{Pattern: `%{IP:src} %{WORD}`, Prefix: "g.", CaptureUnnamed: true})
	require.NoError(t, err)
	e := relaykit.Event{Raw: []byte("10.0.0.1 hello")}
	_, err = step.Apply(&e)
	require.NoError(t, err)
	// Unnamed sub-patterns, nested ones too (IP is IPV6|IPV4), are
	// captured under their own names, as go-grok does.
	assert.Equal(t, [][2]string{{"g.src", "10.0.0.1"}, {"g.IPV4", "10.0.0.1"}, {"g.WORD", "hello"}}, fieldPairs(&e))

	e = relaykit.Event{Raw: []byte("no address")}
	_, err = step.Apply(&e)
	assert.ErrorIs(t, err, parse.ErrNoMatch)
	assert.Empty(t, e.Fields)

	for _, bad := range []parse.GrokConfig{
		{Pattern: `%{NO_SUCH_PATTERN:x}`},
		{Pattern: `%{IP}`}, // captures nothing by default
		{Pattern: `%{IP:x}`, Patterns: map[string]string{"a:b": "x"}},
		{Pattern: `%{BAD:x}`, Patterns: map[string]string{"BAD": "("}},
	} {
		_, err := parse.NewGrok(bad)
		assert.ErrorIs(t, err, parse.ErrInvalidConfig, bad.Pattern)
	}
}

// refRegex is the regex step's rule over regexp.FindSubmatch: each name
// once, from the leftmost group of that name that took part.
func refRegex(re *regexp.Regexp, in []byte) [][2]string {
	m := re.FindSubmatchIndex(in)
	if m == nil {
		return nil
	}
	var out [][2]string
	done := map[string]bool{}
	for i, name := range re.SubexpNames() {
		if name == "" || done[name] || m[2*i] < 0 {
			continue
		}
		done[name] = true
		out = append(out, [2]string{name, string(in[m[2*i]:m[2*i+1]])})
	}
	return sortedPairs(out, re.SubexpNames())
}

// sortedPairs orders pairs by the first appearance of their name among
// names, the order the step stores them in.
func sortedPairs(pairs [][2]string, names []string) [][2]string {
	var out [][2]string
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		for _, p := range pairs {
			if p[0] == n {
				out = append(out, p)
			}
		}
	}
	return out
}

// FuzzRegex compares the regex step with regexp on any text: the same
// match, the same groups, the raw message untouched.
func FuzzRegex(f *testing.F) {
	patterns := []string{
		`from (?P<src>\S+)/(?P<spt>\d+) to (?P<dst>\S+)/(?P<dpt>\d+)`,
		`(?P<n>x\d)|(?P<n>y\d)|(?P<m>z)`,
		`(?i)user=(?P<user>\w*)(?: (?P<opt>[a-z]+))?`,
		`^(?P<all>.*)$`,
	}
	for _, s := range []string{"Deny from 10.0.0.1/5 to 10.0.0.2/443", "y7", "USER=bob x", "", "a\nb", "\xff"} {
		f.Add(s)
	}
	var steps []*parse.Regex
	var res []*regexp.Regexp
	for _, p := range patterns {
		r, err := parse.NewRegex(parse.RegexConfig{Pattern: p})
		require.NoError(f, err)
		steps = append(steps, r)
		res = append(res, regexp.MustCompile(p))
	}
	f.Fuzz(func(t *testing.T, in string) {
		for i, r := range steps {
			e := relaykit.Event{Raw: []byte(in)}
			_, err := r.Apply(&e)
			want := refRegex(res[i], []byte(in))
			if res[i].MatchString(in) {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, parse.ErrNoMatch)
			}
			require.Equal(t, want, fieldPairs(&e), "%q on %q", patterns[i], in)
			require.Equal(t, in, string(e.Raw))
		}
	})
}

// FuzzGrok compares the grok step with go-grok's own Parse on any text.
func FuzzGrok(f *testing.F) {
	for _, c := range grokCases {
		f.Add(c.in)
	}
	type pair struct {
		step *parse.Grok
		g    *grok.Grok
	}
	var pairs []pair
	for _, c := range grokCases {
		s, err := parse.NewGrok(parse.GrokConfig{Pattern: c.pattern, Patterns: c.patterns})
		require.NoError(f, err)
		g, err := grok.NewComplete(c.patterns)
		require.NoError(f, err)
		require.NoError(f, g.Compile(c.pattern, true))
		pairs = append(pairs, pair{s, g})
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, p := range pairs {
			want, err := p.g.ParseString(in)
			require.NoError(t, err)
			e := relaykit.Event{Raw: []byte(in)}
			_, _ = p.step.Apply(&e)
			got := map[string]string{}
			for _, f := range e.Fields {
				got[string(f.Key)] = string(f.Value)
			}
			require.Equal(t, want, got, "%q", in)
		}
	})
}
