package forward

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// cefLookup finds every column's key at the index the map gives, and
// nothing for keys that are not columns (prefixes, suffixes, other case).
func TestCEFLookup(t *testing.T) {
	for k, want := range cefIndex {
		got, ok := cefLookup([]byte(k))
		assert.True(t, ok, k)
		assert.Equal(t, want, got, k)
		for _, other := range []string{k[:len(k)-1], k + "x", "X" + k[1:], ""} {
			if _, isKey := cefIndex[other]; isKey {
				continue
			}
			_, ok := cefLookup([]byte(other))
			assert.False(t, ok, "%q is not a column key", other)
		}
	}
	for _, k := range []string{"PanOSPacketsReceived", "cef.version", "msgid", "sd.meta.env"} {
		_, ok := cefLookup([]byte(k))
		assert.False(t, ok, k)
	}
}

// TestCEFLayout: the per-position memory of keys answers exactly what
// cefLookup answers, whatever the keys at each position do from one
// lookup to the next (the same key, another of the same length, a key too
// long to remember, an empty one, an unknown one).
func TestCEFLayout(t *testing.T) {
	keys := []string{"src", "dst", "spt", "dpt", "act", "cs1", "cs2", "cs1Label", "unknownKey", "", "x",
		"deviceCustomDate1Label", "aVeryLongVendorSpecificKeyOverThirtyTwoBytes", "cef.name", "FTNTFGTpolicyid"}
	var l cefLayout
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		i := rng.IntN(70)
		k := []byte(keys[rng.IntN(len(keys))])
		c, ok := l.lookup(i, k)
		wc, wok := cefLookup(k)
		if ok != wok || ok && c != wc {
			t.Fatalf("position %d key %q: layout says %d %v, cefLookup %d %v", i, k, c, ok, wc, wok)
		}
	}
}
