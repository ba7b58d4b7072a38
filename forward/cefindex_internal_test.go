package forward

import (
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
