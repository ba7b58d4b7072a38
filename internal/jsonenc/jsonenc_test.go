package jsonenc_test

import (
	"bytes"
	"encoding/json"
	"strings"
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
		{"control", "\x00\x1f\x7f", "\"\\u0000\\u001f\x7f\""},
		{"named controls", "\b\f", `"\b\f"`},
		{"html kept", "<a href='x'>&</a>", `"<a href='x'>&</a>"`},
		{"escape after 8 safe bytes", "abcdefgh\"ij", `"abcdefgh\"ij"`},
		{"escape at word end", "abcdefg\n", `"abcdefg\n"`},
		{"utf8 after a long ascii run", "0123456789abcdef\u00e9xyz", `"0123456789abcdeféxyz"`},
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

// encodingJSON is the oracle: encoding/json's bytes for string(s), HTML
// escaping off (the sinks write JSON for machines, not for HTML pages).
func encodingJSON(t testing.TB, s []byte) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(string(s)))
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// TestAppendStringEveryByte compares with encoding/json for every byte
// value and pair of byte values at every position of an eight-byte word
// and around it, the cases where the word-at-a-time scan could misplace
// the first byte to escape.
func TestAppendStringEveryByte(t *testing.T) {
	var dst []byte
	in := make([]byte, 11)
	for c1 := range 256 {
		for c2 := 0; c2 < 256; c2 += 7 {
			for p1 := range 9 {
				for _, p2 := range []int{p1 + 1, p1 + 2, 9, 10} {
					if p2 >= len(in) {
						continue
					}
					copy(in, "abcdefghijk")
					in[p1], in[p2] = byte(c1), byte(c2)
					var valid bool
					dst, valid = jsonenc.AppendStringChecked(dst[:0], in)
					if want := encodingJSON(t, in); !bytes.Equal(dst, want) {
						t.Fatalf("%q: got %s, want %s", in, dst, want)
					}
					if valid != utf8.Valid(in) {
						t.Fatalf("%q: valid %t", in, valid)
					}
				}
			}
		}
	}
}

// FuzzAppendString checks that the output is byte for byte what
// encoding/json writes for the same string (HTML escaping off), which is
// valid JSON and valid UTF-8.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\", "\x00\n\u2028", "\xff\xfe", "日本\xe6\x97",
		"0123456789abcdef\b\f", strings.Repeat("x", 17) + "\xc3"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := jsonenc.AppendString(nil, in)
		checked, valid := jsonenc.AppendStringChecked(nil, in)
		assert.Equal(t, out, checked)
		assert.Equal(t, utf8.Valid(in), valid, "valid reports whether the input was valid UTF-8")
		require.True(t, utf8.Valid(out))
		assert.Equal(t, string(encodingJSON(t, in)), string(out))
		var got string
		require.NoError(t, json.Unmarshal(out, &got), "%q", out)
	})
}
