package pipeline_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
)

func newEvent(raw string, kv ...string) relaykit.Event {
	e := relaykit.Event{Raw: []byte(raw), Host: []byte("h1"), Source: []byte("src"), SourceType: []byte("st"), Index: []byte("main")}
	for i := 0; i+1 < len(kv); i += 2 {
		e.SetFieldString(kv[i], kv[i+1])
	}
	return e
}

// fieldMap returns the extracted fields of e as a map (values as strings).
func fieldMap(e *relaykit.Event) map[string]string {
	m := map[string]string{}
	for _, f := range e.Fields {
		m[string(f.Key)] = string(f.Value)
	}
	return m
}

func fieldKeys(e *relaykit.Event) []string {
	var ks []string
	for _, f := range e.Fields {
		ks = append(ks, string(f.Key))
	}
	return ks
}

// must returns f, panicking on err (for constructors in test setup).
func must(f pipeline.Function, err error) pipeline.Function {
	if err != nil {
		panic(err)
	}
	return f
}

func TestSet(t *testing.T) {
	tests := []struct {
		field string
		check func(e *relaykit.Event) string
	}{
		{"index", func(e *relaykit.Event) string { return string(e.Index) }},
		{"host", func(e *relaykit.Event) string { return string(e.Host) }},
		{"source", func(e *relaykit.Event) string { return string(e.Source) }},
		{"sourcetype", func(e *relaykit.Event) string { return string(e.SourceType) }},
		{"_raw", func(e *relaykit.Event) string { return string(e.Raw) }},
		{"", func(e *relaykit.Event) string { return string(e.Raw) }},
		{"env", func(e *relaykit.Event) string { v, _ := e.Field("env"); return string(v) }},
		{"a", func(e *relaykit.Event) string { v, _ := e.Field("a"); return string(v) }},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			e := newEvent("msg", "a", "1", "b", "2")
			keep, err := pipeline.Set(tt.field, "new").Apply(&e)
			require.NoError(t, err)
			assert.True(t, keep)
			assert.Equal(t, "new", tt.check(&e))
		})
	}
	e := newEvent("msg", "a", "1", "b", "2")
	_, _ = pipeline.Set("a", "x").Apply(&e)
	assert.Equal(t, []string{"a", "b"}, fieldKeys(&e), "existing field replaced in place")
}

func TestRenameRemove(t *testing.T) {
	e := newEvent("msg", "a", "1", "b", "2", "c", "3")
	keep, err := pipeline.Rename("b", "c").Apply(&e)
	require.NoError(t, err)
	assert.True(t, keep)
	assert.Equal(t, []string{"a", "c"}, fieldKeys(&e))
	assert.Equal(t, map[string]string{"a": "1", "c": "2"}, fieldMap(&e))

	keep, err = pipeline.Rename("missing", "x").Apply(&e)
	require.NoError(t, err)
	assert.True(t, keep)
	assert.Equal(t, []string{"a", "c"}, fieldKeys(&e))

	keep, err = pipeline.Remove("a", "missing", "index").Apply(&e)
	require.NoError(t, err)
	assert.True(t, keep)
	assert.Equal(t, []string{"c"}, fieldKeys(&e))
	assert.Empty(t, e.Index)
	assert.Equal(t, "h1", string(e.Host))
}

func TestMask(t *testing.T) {
	tests := []struct {
		name, field, pattern, repl, in, want string
	}{
		{"card", "", `\b(\d{4})-\d{4}-\d{4}-(\d{4})\b`, "$1-XXXX-XXXX-$2", "pay 1234-5678-9012-3456 ok 1111-2222-3333-4444", "pay 1234-XXXX-XXXX-3456 ok 1111-XXXX-XXXX-4444"},
		{"literal", "", `secret`, "******", "a secret and secret", "a ****** and ******"},
		{"fold", "", `(?i)token=\w+`, "token=<redacted>", "TOKEN=abc x", "token=<redacted> x"},
		{"no match", "", `\d{16}`, "X", "nothing here", "nothing here"},
		{"field", "auth", `Bearer \S+`, "Bearer ***", "", "Bearer ***"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fn := must(pipeline.Mask(tt.field, tt.pattern, tt.repl))
			e := newEvent(tt.in, "auth", "Bearer abc.def")
			keep, err := fn.Apply(&e)
			require.NoError(t, err)
			assert.True(t, keep)
			if tt.field == "" {
				assert.Equal(t, tt.want, string(e.Raw))
			} else {
				v, _ := e.Field(tt.field)
				assert.Equal(t, tt.want, string(v))
			}
		})
	}
	_, err := pipeline.Mask("", "(", "x")
	require.ErrorIs(t, err, pipeline.ErrInvalidConfig)
	assert.Contains(t, err.Error(), `"("`)
}

func TestMaskNoMatchDoesNotAllocate(t *testing.T) {
	skipIfRace(t)
	fn := must(pipeline.Mask("", `\b\d{4}-\d{4}-\d{4}-\d{4}\b`, "X"))
	e := newEvent(`<38>Nov 22 02:11:09 web01 sshd[2211]: Failed password for invalid user admin`)
	allocs := testing.AllocsPerRun(100, func() { _, _ = fn.Apply(&e) })
	assert.Zero(t, allocs)
}

func TestDrop(t *testing.T) {
	fn := must(pipeline.Drop("", `(?i)debug`))
	for _, tc := range []struct {
		raw  string
		keep bool
	}{{"DEBUG x", false}, {"info x", true}, {"a debug", false}} {
		e := newEvent(tc.raw)
		keep, err := fn.Apply(&e)
		require.NoError(t, err)
		assert.Equal(t, tc.keep, keep, tc.raw)
	}
	fn = must(pipeline.Drop("level", `^trace$`))
	e := newEvent("x", "level", "trace")
	keep, _ := fn.Apply(&e)
	assert.False(t, keep)
	all := must(pipeline.Drop("", ""))
	keep, _ = all.Apply(&e)
	assert.False(t, keep)
	_, err := pipeline.Drop("", "a(")
	require.ErrorIs(t, err, pipeline.ErrInvalidConfig)
}

func TestSample(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 3, 10} {
		fn := pipeline.Sample(n)
		var kept []int
		for i := range 30 {
			e := newEvent("x")
			keep, err := fn.Apply(&e)
			require.NoError(t, err)
			if keep {
				kept = append(kept, i)
			}
		}
		every := max(n, 1)
		var want []int
		for i := 0; i < 30; i += every {
			want = append(want, i)
		}
		assert.Equal(t, want, kept, "n=%d", n)
	}
}

func TestFuncAndPipelineRun(t *testing.T) {
	boom := errors.New("boom")
	var calls []string
	p := pipeline.NewPipeline(
		pipeline.Func(func(e *relaykit.Event) (bool, error) { calls = append(calls, "a"); return true, boom }),
		pipeline.Set("x", "1"),
		pipeline.Func(func(e *relaykit.Event) (bool, error) { calls = append(calls, "b"); return false, nil }),
		pipeline.Func(func(e *relaykit.Event) (bool, error) { calls = append(calls, "c"); return true, nil }),
	)
	assert.Equal(t, 4, p.Len())
	e := newEvent("x")
	keep, err := p.Run(&e)
	assert.False(t, keep)
	require.ErrorIs(t, err, boom)
	assert.Equal(t, []string{"a", "b"}, calls, "an error does not stop the pipeline; a drop does")
	assert.Equal(t, map[string]string{"x": "1"}, fieldMap(&e))
	assert.Equal(t, "func", pipeline.Func(nil).Name())

	var nilP *pipeline.Pipeline
	keep, err = nilP.Run(&e)
	assert.True(t, keep)
	require.NoError(t, err)
	assert.Panics(t, func() { pipeline.NewPipeline(nil) })
}

func TestParseJSON(t *testing.T) {
	tests := []struct {
		name   string
		cfg    pipeline.JSONConfig
		in     string
		keys   []string
		fields map[string]string
		err    error
	}{
		{
			name: "flat and nested", in: `{"a":"x","n":1.5e3,"b":true,"z":null,"o":{"p":{"q":"deep"},"r":[1,"two",{"s":3}]}}`,
			keys:   []string{"a", "n", "b", "z", "o.p.q", "o.r"},
			fields: map[string]string{"a": "x", "n": "1.5e3", "b": "true", "z": "null", "o.p.q": "deep", "o.r": `[1,"two",{"s":3}]`},
		},
		{
			name: "escapes", in: ` {"m":"line\n\"q\" \u00e9 \ud83d\ude00","k\u0041":"v"}`,
			keys: []string{"m", "kA"}, fields: map[string]string{"m": "line\n\"q\" é 😀", "kA": "v"},
		},
		{
			name: "prefix and depth", cfg: pipeline.JSONConfig{Prefix: "j.", MaxDepth: 1}, in: `{"a":{"b":1},"e":{}}`,
			keys: []string{"j.a", "j.e"}, fields: map[string]string{"j.a": `{"b":1}`, "j.e": "{}"},
		},
		{
			name: "duplicates last wins", in: `{"a":1,"a":2,"x":{"y":1},"x.y":2}`,
			keys: []string{"a", "x.y"}, fields: map[string]string{"a": "2", "x.y": "2"},
		},
		{
			name: "existing field overwritten", in: `{"pre":"new"}`,
			keys: []string{"pre"}, fields: map[string]string{"pre": "new"},
		},
		{name: "not JSON", in: `plain text {"a":1}`},
		{name: "array", in: `[1,2]`},
		{name: "empty", in: ``},
		{name: "invalid", in: `{"a":`, err: errAny},
		{name: "too large", cfg: pipeline.JSONConfig{MaxBytes: 8}, in: `{"a":"0123456789"}`, err: pipeline.ErrJSONTooLarge},
		{
			name: "too many fields", cfg: pipeline.JSONConfig{MaxFields: 2}, in: `{"a":1,"b":2,"c":3,"a":4}`,
			keys: []string{"a", "b"}, fields: map[string]string{"a": "4", "b": "2"}, err: pipeline.ErrJSONTooManyFields,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fn := must(pipeline.ParseJSON(tt.cfg))
			e := newEvent(tt.in)
			if tt.name == "existing field overwritten" {
				e.SetFieldString("pre", "old")
			}
			keep, err := fn.Apply(&e)
			assert.True(t, keep, "parse_json never drops")
			switch {
			case tt.err == errAny:
				require.Error(t, err)
			case tt.err != nil:
				require.ErrorIs(t, err, tt.err)
			default:
				require.NoError(t, err)
			}
			assert.Equal(t, tt.keys, fieldKeys(&e))
			if tt.fields != nil {
				assert.Equal(t, tt.fields, fieldMap(&e))
			}
			assert.Equal(t, tt.in, string(e.Raw), "raw unchanged")
		})
	}
	_, err := pipeline.ParseJSON(pipeline.JSONConfig{MaxBytes: -1})
	require.ErrorIs(t, err, pipeline.ErrInvalidConfig)
}

var errAny = errors.New("any error")

func TestParseJSONFromField(t *testing.T) {
	fn := must(pipeline.ParseJSON(pipeline.JSONConfig{Field: "payload"}))
	e := newEvent("x", "payload", `{"payload":"replaced","b":{"c":"d"}}`)
	_, err := fn.Apply(&e)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"payload": "replaced", "b.c": "d"}, fieldMap(&e))
}

func TestParseJSONDoesNotAllocate(t *testing.T) {
	skipIfRace(t)
	fn := must(pipeline.ParseJSON(pipeline.JSONConfig{}))
	e := newEvent(`{"level":"error","msg":"db \"timeout\"","ctx":{"user":"ann","ids":[1,2]},"took":12.5}`)
	_, err := fn.Apply(&e)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(100, func() {
		e.Fields = e.Fields[:0]
		_, _ = fn.Apply(&e)
	})
	assert.Zero(t, allocs)
	assert.Len(t, e.Fields, 5)
}

// refFlatten flattens a JSON object with encoding/json, following the
// documented ParseJSON rules, as the oracle of the fuzz test.
func refFlatten(t *testing.T, data []byte, maxDepth int) map[string]string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	out := map[string]string{}
	var walk func(prefix string, depth int)
	value := func(key string, depth int) {
		var raw json.RawMessage
		require.NoError(t, dec.Decode(&raw))
		trimmed := bytes.TrimSpace(raw)
		switch {
		case trimmed[0] == '{' && depth < maxDepth && !isEmptyObject(trimmed):
			sub := json.NewDecoder(bytes.NewReader(trimmed))
			sub.UseNumber()
			saved := dec
			dec = sub
			walk(key+".", depth+1)
			dec = saved
		case trimmed[0] == '"':
			var s string
			require.NoError(t, json.Unmarshal(trimmed, &s))
			out[key] = s
		default:
			out[key] = string(trimmed)
		}
	}
	walk = func(prefix string, depth int) {
		tok, err := dec.Token()
		require.NoError(t, err)
		require.Equal(t, json.Delim('{'), tok)
		for dec.More() {
			k, err := dec.Token()
			require.NoError(t, err)
			value(prefix+k.(string), depth)
		}
		_, err = dec.Token()
		require.NoError(t, err)
	}
	walk("", 1)
	return out
}

func isEmptyObject(b []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && len(m) == 0
}

// semantic compares JSON texts by value, and other strings exactly.
func semanticEqual(a, b string) bool {
	if a == b {
		return true
	}
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":"x","n":1.5e3,"b":true,"z":null,"o":{"p":{"q":"deep"},"r":[1,"two",{"s":3}]}}`,
		`{"m":"line\n\"q\" \u00e9 \ud83d\ude00"}`,
		`{"a":1,"a":2,"x":{"y":1},"x.y":2}`,
		`{"e":{},"l":[],"s":""}`,
		`{"deep":{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":1}}}}}}}}}}`,
		`{"a":`, `[1]`, `{"\u0000":"\u001f"}`, `{"x":-0.0e-0}`, "{\"a\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	fn, err := pipeline.ParseJSON(pipeline.JSONConfig{MaxFields: 1 << 20})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, data []byte) {
		e := relaykit.Event{Raw: data}
		keep, err := fn.Apply(&e)
		require.True(t, keep)
		keys := map[string]bool{}
		for _, fl := range e.Fields {
			require.False(t, keys[string(fl.Key)], "duplicate key %q", fl.Key)
			keys[string(fl.Key)] = true
		}
		trimmed := bytes.TrimLeft(data, " \t\r\n")
		if !json.Valid(data) || !utf8.Valid(data) || len(trimmed) == 0 || trimmed[0] != '{' ||
			bytes.Contains(data, []byte(`\ud`)) || bytes.Contains(data, []byte(`\uD`)) {
			return // lone surrogates and invalid UTF-8 are unescaped best effort
		}
		require.NoError(t, err, "valid JSON object %q", data)
		want := refFlatten(t, data, 8)
		got := fieldMap(&e)
		require.Len(t, got, len(want), "%q: got %q want %q", data, got, want)
		for k, w := range want {
			g, ok := got[k]
			require.True(t, ok, "missing key %q in %q", k, got)
			require.True(t, semanticEqual(g, w), "key %q: got %q want %q", k, g, w)
		}
	})
}

func TestJSONErrorsAreWrapped(t *testing.T) {
	fn := must(pipeline.ParseJSON(pipeline.JSONConfig{}))
	e := newEvent(`{"a" 1}`)
	_, err := fn.Apply(&e)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "pipeline: parse_json: "), err.Error())
	assert.NotErrorIs(t, err, io.EOF)
}

// skipIfRace skips allocation checks: the race detector makes sync.Pool
// drop items at random, which allocates.
func skipIfRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
}
