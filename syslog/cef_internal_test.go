package syslog

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
)

// refNextCEFKey is the byte-at-a-time scan nextCEFKey replaced: the
// reference its IndexByte jumps must agree with.
func refNextCEFKey(ext []byte, from int) (eq, key int) {
	for i := from; i < len(ext); i++ {
		switch ext[i] {
		case '\\':
			i++
		case '=':
			if ks := cefKeyBefore(ext, from, i); ks >= 0 && (ks == from || ext[ks-1] == ' ') {
				return i, ks
			}
		}
	}
	return -1, -1
}

// refDecodeCEFExtension decodes with a linear search for every key, the
// behaviour the key filter must keep (a repeated key keeps the last value,
// in the place of its first occurrence).
func refDecodeCEFExtension(e *relaykit.Event, ext []byte) {
	eq, key := refNextCEFKey(ext, 0)
	for n := 0; eq >= 0 && n < maxParsedFields; n++ {
		vstart := eq + 1
		next, nextKey := refNextCEFKey(ext, vstart)
		vend := len(ext)
		if next >= 0 {
			vend = nextKey
		}
		v := ext[vstart:vend]
		for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
			v = v[:len(v)-1]
		}
		var f *relaykit.Field
		for i := range e.Fields {
			if bytes.Equal(e.Fields[i].Key, ext[key:eq]) {
				f = &e.Fields[i]
				f.Value = f.Value[:0]
				break
			}
		}
		if f == nil {
			e.Fields = append(e.Fields, relaykit.Field{Key: append([]byte(nil), ext[key:eq]...)})
			f = &e.Fields[len(e.Fields)-1]
		}
		f.Value = appendCEFValue(f.Value, v)
		eq, key = next, nextKey
	}
}

// Random extensions over an alphabet dense in '=', '\\' and spaces, and
// few distinct keys (so keys repeat and the filter's positives are
// exercised), decode to the same fields as the reference, from every
// starting offset of the key scan.
func TestCEFExtensionMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab1.= =\\\\ x")
	for range 20000 {
		ext := make([]byte, r.IntN(60))
		for i := range ext {
			ext[i] = alphabet[r.IntN(len(alphabet))]
		}
		for from := 0; from <= len(ext); from++ {
			eq, key := nextCEFKey(ext, from)
			weq, wkey := refNextCEFKey(ext, from)
			require.Equal(t, [2]int{weq, wkey}, [2]int{eq, key}, "ext %q from %d", ext, from)
		}
		var got, want relaykit.Event
		got.SetFieldString("a", "header") // a field before the extension, as the CEF header's
		want.SetFieldString("a", "header")
		decodeCEFExtension(&got, ext)
		refDecodeCEFExtension(&want, ext)
		require.Equal(t, len(want.Fields), len(got.Fields), "ext %q", ext)
		for i := range want.Fields {
			require.Equal(t, string(want.Fields[i].Key), string(got.Fields[i].Key), "ext %q field %d", ext, i)
			require.Equal(t, string(want.Fields[i].Value), string(got.Fields[i].Value), "ext %q field %d", ext, i)
		}
	}
}
