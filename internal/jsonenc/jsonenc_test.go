package jsonenc_test

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/internal/jsonenc"
)

func TestAppendString(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", `""`},
		{"plain", "hello world", `"hello world"`},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`},
		{"whitespace escapes", "a\nb\rc\td", `"a\nb\rc\td"`},
		{"control", "\x00\x1f", `"\u0000\u001f"`},
		{"utf8 kept", "grüße ✓", `"grüße ✓"`},
		{"invalid utf8", "a\xffb", `"a\ufffdb"`},
		{"line separators", "a\u2028b\u2029", `"a\u2028b\u2029"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := jsonenc.AppendString([]byte("x"), []byte(tt.in))
			assert.Equal(t, "x"+tt.want, string(got))
		})
	}
}

func TestAppendStringNoAlloc(t *testing.T) {
	dst := make([]byte, 0, 256)
	in := []byte("Failed password for \"root\" from 192.0.2.7\n")
	allocs := testing.AllocsPerRun(100, func() { dst = jsonenc.AppendString(dst[:0], in) })
	assert.Zero(t, allocs)
}

// FuzzAppendString checks that the output is valid JSON and valid UTF-8
// and decodes to what encoding/json makes of the same bytes.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\", "\x00\n\u2028", "\xff\xfe", "日本\xe6\x97"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := jsonenc.AppendString(nil, in)
		require.True(t, utf8.Valid(out))
		var got string
		require.NoError(t, json.Unmarshal(out, &got), "%q", out)
		ref, err := json.Marshal(string(in))
		require.NoError(t, err)
		var want string
		require.NoError(t, json.Unmarshal(ref, &want))
		assert.Equal(t, want, got)
	})
}
