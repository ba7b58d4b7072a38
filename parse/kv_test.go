package parse_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/parse"
)

// refKV is the key=value grammar of parse.NewKV written again, plainly,
// with strings: the pairs of s in order (empty keys dropped), and whether a
// quote was left open.
func refKV(s, delims, sep, quotes string) (pairs [][2]string, unterminated bool) {
	if delims == "" {
		delims = " \t"
	}
	if sep == "" {
		sep = "="
	}
	if quotes == "" {
		quotes = `"'`
	}
	isDelim := func(c byte) bool { return strings.IndexByte(delims, c) >= 0 }
	isQuote := func(c byte) bool { return strings.IndexByte(quotes, c) >= 0 }
	// quoted reads quoted text opening at s[i]; it returns the decoded
	// value and the index after the closing quote.
	quoted := func(i int) (string, int) {
		q := s[i]
		var b strings.Builder
		for j := i + 1; j < len(s); j++ {
			switch {
			case s[j] == q:
				return b.String(), j + 1
			case s[j] == '\\' && j+1 < len(s):
				if s[j+1] != q && s[j+1] != '\\' {
					b.WriteByte('\\')
				}
				b.WriteByte(s[j+1])
				j++
			default:
				b.WriteByte(s[j])
			}
		}
		unterminated = true
		return b.String(), len(s)
	}
	// junk skips to the next delimiter outside quoted text.
	junk := func(i int) int {
		for i < len(s) && !isDelim(s[i]) {
			if isQuote(s[i]) {
				_, i = quoted(i)
				continue
			}
			i++
		}
		return i
	}
	for i := 0; i < len(s); {
		switch {
		case isDelim(s[i]):
			i++
			continue
		case isQuote(s[i]):
			i = junk(i)
			continue
		}
		j := i
		for j < len(s) && !isDelim(s[j]) && !isQuote(s[j]) && !strings.HasPrefix(s[j:], sep) {
			j++
		}
		if !strings.HasPrefix(s[j:], sep) {
			i = junk(j)
			continue
		}
		key := s[i:j]
		j += len(sep)
		var val string
		if j < len(s) && isQuote(s[j]) {
			val, j = quoted(j)
			j = junk(j)
		} else {
			k := j
			for k < len(s) && !isDelim(s[k]) {
				k++
			}
			val, j = s[j:k], k
		}
		if key != "" {
			pairs = append(pairs, [2]string{key, val})
		}
		i = j
	}
	return pairs, unterminated
}

// lastWins applies DuplicateLast to pairs: each key once, at its first
// position, with its last value.
func lastWins(pairs [][2]string) [][2]string {
	var out [][2]string
	at := map[string]int{}
	for _, p := range pairs {
		if i, ok := at[p[0]]; ok {
			out[i][1] = p[1]
			continue
		}
		at[p[0]] = len(out)
		out = append(out, p)
	}
	return out
}

func fieldPairs(e *relaykit.Event) [][2]string {
	var out [][2]string
	for _, f := range e.Fields {
		out = append(out, [2]string{string(f.Key), string(f.Value)})
	}
	return out
}

func newKV(t testing.TB, cfg parse.KVConfig) *parse.KV {
	t.Helper()
	k, err := parse.NewKV(cfg)
	require.NoError(t, err)
	return k
}

func TestKV(t *testing.T) {
	fortigate := parse.KVConfig{}
	checkpoint := parse.KVConfig{Delimiters: "; ", Separator: ":", Quotes: `"`}
	tests := []struct {
		name string
		cfg  parse.KVConfig
		in   string
		want [][2]string
		err  error
	}{
		{"FortiGate pairs, quoted and bare", fortigate,
			`date=2026-11-28 time=12:58:59 devname="FGT-1" srcip=10.1.1.5 srcport=51234 action="deny"`,
			[][2]string{{"date", "2026-11-28"}, {"time", "12:58:59"}, {"devname", "FGT-1"}, {"srcip", "10.1.1.5"},
				{"srcport", "51234"}, {"action", "deny"}}, nil},
		{"quoted value with spaces, = and escaped quotes", fortigate,
			`msg="user \"bob\" set a=b \\ c" k=v`,
			[][2]string{{"msg", `user "bob" set a=b \ c`}, {"k", "v"}}, nil},
		{"no field from inside a quoted value", fortigate,
			`srcip=10.1.1.5 url="/a?srcip=1.2.3.4 dstip=9.9.9.9" dstip=10.0.0.2`,
			[][2]string{{"srcip", "10.1.1.5"}, {"url", "/a?srcip=1.2.3.4 dstip=9.9.9.9"}, {"dstip", "10.0.0.2"}}, nil},
		{"bare value keeps = and quotes after its start", fortigate,
			`url=/a?b=c&d=e x=it"s`,
			[][2]string{{"url", "/a?b=c&d=e"}, {"x", `it"s`}}, nil},
		{"single quotes, other escapes kept", fortigate,
			`path='C:\temp\x' msg='it\'s'`,
			[][2]string{{"path", `C:\temp\x`}, {"msg", "it's"}}, nil},
		{"junk skipped: words, empty keys, text glued to a quote", fortigate,
			`last message repeated =v k="a"b c=d "x=y" z=1`,
			[][2]string{{"k", "a"}, {"c", "d"}, {"z", "1"}}, nil},
		{"empty values", fortigate, `a= b="" c=3`, [][2]string{{"a", ""}, {"b", ""}, {"c", "3"}}, nil},
		{"IPv6 values", fortigate, `srcip=2001:db8::1 dstip=fe80::1%eth0`,
			[][2]string{{"srcip", "2001:db8::1"}, {"dstip", "fe80::1%eth0"}}, nil},
		{"tabs and runs of spaces", fortigate, "a=1\t\tb=2    c=3", [][2]string{{"a", "1"}, {"b", "2"}, {"c", "3"}}, nil},
		{"unterminated quote runs to the end", fortigate, `a=1 msg="cut b=2`,
			[][2]string{{"a", "1"}, {"msg", "cut b=2"}}, parse.ErrUnterminated},
		{"no pair", fortigate, `just some words`, nil, parse.ErrNoMatch},
		{"Check Point pairs", checkpoint,
			`action:"Accept"; flags:"411908"; src:"10.0.0.1"; service:"443";`,
			[][2]string{{"action", "Accept"}, {"flags", "411908"}, {"src", "10.0.0.1"}, {"service", "443"}}, nil},
		{"Check Point value holding ; and :", checkpoint, `msg:"a; b:\"c\""; k:"v"`,
			[][2]string{{"msg", `a; b:"c"`}, {"k", "v"}}, nil},
		{"auditd, nested pairs in single quotes stay one value", fortigate,
			`type=USER_LOGIN msg=audit(1364481363.243:24287): pid=1 res=failed op='login acct="root" exe="/usr/sbin/sshd"'`,
			[][2]string{{"type", "USER_LOGIN"}, {"msg", "audit(1364481363.243:24287):"}, {"pid", "1"}, {"res", "failed"},
				{"op", `login acct="root" exe="/usr/sbin/sshd"`}}, nil},
		{"logfmt", fortigate, `level=info ts=2026-11-28T12:58:59Z caller=main.go:12 msg="listening on :8080"`,
			[][2]string{{"level", "info"}, {"ts", "2026-11-28T12:58:59Z"}, {"caller", "main.go:12"}, {"msg", "listening on :8080"}}, nil},
		{"multi-byte separator", parse.KVConfig{Separator: "=>"}, `a=>1 b=2 c=>x=>y`,
			[][2]string{{"a", "1"}, {"c", "x=>y"}}, nil},
		{"prefix", parse.KVConfig{Prefix: "fgt."}, `a=1 b=2`, [][2]string{{"fgt.a", "1"}, {"fgt.b", "2"}}, nil},
		{"duplicate: last", fortigate, `a=1 b=2 a=3`, [][2]string{{"a", "3"}, {"b", "2"}}, nil},
		{"duplicate: first", parse.KVConfig{Duplicate: parse.DuplicateFirst}, `a=1 b=2 a=3`,
			[][2]string{{"a", "1"}, {"b", "2"}}, nil},
		{"duplicate: join", parse.KVConfig{Duplicate: parse.DuplicateJoin}, `a=1 b=2 a=3 a="x y"`,
			[][2]string{{"a", "1,3,x y"}, {"b", "2"}}, nil},
		{"max fields", parse.KVConfig{MaxFields: 2}, `a=1 b=2 c=3 a=4`,
			[][2]string{{"a", "1"}, {"b", "2"}}, parse.ErrTooManyFields},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKV(t, tt.cfg)
			e := relaykit.Event{Raw: []byte(tt.in)}
			keep, err := k.Apply(&e)
			assert.True(t, keep)
			assert.ErrorIs(t, err, tt.err)
			if tt.err == nil {
				assert.NoError(t, err)
			}
			assert.Equal(t, tt.want, fieldPairs(&e))
			assert.Equal(t, tt.in, string(e.Raw), "the raw message is never modified")
		})
	}
}

// TestKVAgainstReference runs the grammar's reference over the table and
// the samples: the step must store what the reference reads.
func TestKVAgainstReference(t *testing.T) {
	inputs := append(kvSeeds, readLines(t, "fortigate.log")...)
	for _, cfg := range []parse.KVConfig{{}, {Delimiters: "; ", Separator: ":", Quotes: `"`}, {Separator: "=>"}} {
		k := newKV(t, cfg)
		for _, in := range inputs {
			e := relaykit.Event{Raw: []byte(in)}
			_, _ = k.Apply(&e)
			want, _ := refKV(in, cfg.Delimiters, cfg.Separator, cfg.Quotes)
			assert.Equal(t, lastWins(want), fieldPairs(&e), "%q", in)
		}
	}
}

var kvSeeds = []string{
	``, `a=1`, `a="b c" d=e`, `url="/a?srcip=1.2.3.4" srcip=10.0.0.1`, `x="unterminated`, `"x=y"`, `a="b"c d=1`,
	`k='v w'`, `k="a\"b\\"`, `=v`, `k=`, `k="\`, `a=1;b:"2";`, `a"b=c d=e`, `a=b=c`, `  a=1  `, "a=\x00\xff",
	`msg="he said \"srcip=1.1.1.1\"" srcip=2.2.2.2`, `a='x"y' b="x'y"`, `a==b`, `a= =b`,
}

// TestKVExistingFields: fields set before the step are replaced in place,
// and a key repeated in the text is still a duplicate of the text's own.
func TestKVExistingFields(t *testing.T) {
	for _, tt := range []struct {
		dup  parse.Duplicate
		want [][2]string
	}{
		{parse.DuplicateLast, [][2]string{{"x", "0"}, {"a", "3"}, {"b", "2"}}},
		{parse.DuplicateFirst, [][2]string{{"x", "0"}, {"a", "1"}, {"b", "2"}}},
		{parse.DuplicateJoin, [][2]string{{"x", "0"}, {"a", "1,3"}, {"b", "2"}}},
	} {
		t.Run(tt.dup.String(), func(t *testing.T) {
			k := newKV(t, parse.KVConfig{Duplicate: tt.dup})
			e := relaykit.Event{Raw: []byte(`a=1 b=2 a=3`)}
			e.SetFieldString("x", "0")
			e.SetFieldString("a", "old")
			_, err := k.Apply(&e)
			require.NoError(t, err)
			assert.ElementsMatch(t, tt.want, fieldPairs(&e))
		})
	}
}

// TestKVFromField parses an extracted field that the text itself sets: the
// value is read from a copy, so overwriting the field cannot disturb it.
func TestKVFromField(t *testing.T) {
	k := newKV(t, parse.KVConfig{Field: "kv"})
	var e relaykit.Event
	e.SetFieldString("kv", `kv=replaced a="1 2" b=3`)
	_, err := k.Apply(&e)
	require.NoError(t, err)
	assert.Equal(t, [][2]string{{"kv", "replaced"}, {"a", "1 2"}, {"b", "3"}}, fieldPairs(&e))
	assert.Empty(t, e.Raw)
}

func TestKVStats(t *testing.T) {
	k := newKV(t, parse.KVConfig{MaxFields: 1})
	for _, in := range []string{`a=1`, `nothing`, `a="x`, `a=1 b=2`} {
		e := relaykit.Event{Raw: []byte(in)}
		_, _ = k.Apply(&e)
	}
	assert.Equal(t, parse.KVStats{Events: 4, Parsed: 3, NoMatch: 1, Unterminated: 1, TooManyFields: 1}, k.Stats())
}

func TestKVInvalidConfig(t *testing.T) {
	for name, cfg := range map[string]parse.KVConfig{
		"separator holds a delimiter": {Separator: "= "},
		"quote is a delimiter":        {Delimiters: ` "`, Quotes: `"`},
		"backslash quote":             {Quotes: `\`},
		"negative max":                {MaxFields: -1},
		"unknown duplicate":           {Duplicate: 9},
	} {
		_, err := parse.NewKV(cfg)
		assert.ErrorIs(t, err, parse.ErrInvalidConfig, name)
	}
}

// FuzzKV: no panic, the raw message untouched, the reference's fields
// exactly (so none from inside quoted text), for the FortiGate and the
// Check Point layouts.
func FuzzKV(f *testing.F) {
	for _, s := range kvSeeds {
		f.Add(s, false)
		f.Add(s, true)
	}
	for _, s := range readLines(f, "fortigate.log") {
		f.Add(s, false)
	}
	for _, s := range readLines(f, "checkpoint.log") {
		f.Add(s, true)
	}
	fg := newKV(f, parse.KVConfig{})
	cp := newKV(f, parse.KVConfig{Delimiters: "; ", Separator: ":", Quotes: `"`})
	f.Fuzz(func(t *testing.T, in string, checkpoint bool) {
		k, cfg := fg, parse.KVConfig{}
		if checkpoint {
			k, cfg = cp, parse.KVConfig{Delimiters: "; ", Separator: ":", Quotes: `"`}
		}
		e := relaykit.Event{Raw: []byte(in)}
		keep, _ := k.Apply(&e)
		require.True(t, keep)
		require.Equal(t, in, string(e.Raw))
		want, _ := refKV(in, cfg.Delimiters, cfg.Separator, cfg.Quotes)
		require.Equal(t, lastWins(want), fieldPairs(&e))
	})
}

// FuzzKVQuotedValue puts any text in a quoted value between two pairs:
// whatever it holds, the line has exactly those three fields (the Graylog
// and Elastic bug: srcip= inside a quoted url overwrote srcip).
func FuzzKVQuotedValue(f *testing.F) {
	for _, s := range []string{`/a?srcip=1.2.3.4`, `x" srcip="6.6.6.6`, `\`, `a\"b`, `'`, "\t", ``, `"`} {
		f.Add(s)
	}
	k := newKV(f, parse.KVConfig{})
	f.Fuzz(func(t *testing.T, payload string) {
		esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(payload)
		e := relaykit.Event{Raw: []byte(`srcip=10.0.0.1 url="` + esc + `" dstip=10.0.0.2`)}
		_, err := k.Apply(&e)
		require.NoError(t, err)
		require.Equal(t, [][2]string{{"srcip", "10.0.0.1"}, {"url", payload}, {"dstip", "10.0.0.2"}}, fieldPairs(&e))
	})
}
