package delivery

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/relaykit/relaykit"
)

// TestJoinRest: the undelivered events come out in order, and no two
// events share a buffer afterwards (the pool reuses them).
func TestJoinRest(t *testing.T) {
	for _, tc := range []struct{ n, k, size int }{{1, 0, 5}, {1, 1, 5}, {3, 1, 6}, {3, 0, 3}, {2, 2, 2}, {4, 0, 4}} {
		evs := make([]relaykit.Event, tc.size)
		for i := range evs {
			evs[i].Raw = []byte(strconv.Itoa(i))
		}
		all := evs[:tc.size:tc.size]
		got := joinRest(evs, tc.k, tc.n)
		var want []string
		for i := range tc.k {
			want = append(want, strconv.Itoa(i))
		}
		for i := tc.n; i < tc.size; i++ {
			want = append(want, strconv.Itoa(i))
		}
		var out []string
		for _, e := range got {
			out = append(out, string(e.Raw))
		}
		assert.Equal(t, want, out, "%+v", tc)
		seen := map[*byte]bool{}
		for _, e := range all {
			assert.False(t, seen[&e.Raw[0]], "%+v: a buffer owned twice", tc)
			seen[&e.Raw[0]] = true
		}
	}
}
