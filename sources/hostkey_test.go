package sources_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/sources"
)

// TestHashText: a host's hash is the same whether the host is given as
// bytes (an event's host) or as a string (a Key), for every length's
// tail; texts that differ only in length or in one byte, and 200,000
// host names, do not collide.
func TestHashText(t *testing.T) {
	const k0, k1 = 0x0123456789abcdef, 0xfedcba9876543211
	seen := map[uint64]string{}
	add := func(s string) {
		hs, hb := sources.HashText(k0, k1, s)
		require.Equal(t, hs, hb, "%q", s)
		if prev, ok := seen[hs]; ok && prev != s {
			t.Fatalf("%q and %q collide", prev, s)
		}
		seen[hs] = s
	}
	for n := range 70 {
		add(strings.Repeat("a", n))
		add(strings.Repeat("\x00", n))
		for i := range n {
			b := []byte(strings.Repeat("a", n))
			b[i] = 'b'
			add(string(b))
		}
	}
	for i := range 200_000 {
		add(fmt.Sprintf("host-%d.example.net", i))
	}
	// Other keys give other hashes.
	hs, _ := sources.HashText(k0+1, k1, "host-1.example.net")
	assert.NotEqual(t, seen[hs], "host-1.example.net")
}

// TestHostKeyLengths: hosts of every length up to MaxHostLen and beyond,
// on both sides of the length kept inside the entry's allocation, are
// tracked as one key each, found again by bytes and by Key, and keep
// their text; a longer host is cut to MaxHostLen.
func TestHostKeyLengths(t *testing.T) {
	tr := newTracker(t, sources.Config{Clock: newManualClock().c})
	host := func(n int) []byte { return []byte(strings.Repeat("h", n)) }
	for n := range sources.MaxHostLen + 1 {
		tr.ObserveHost(host(n), 1, n)
		tr.ObserveHost(host(n), 1, n)
	}
	tr.ObserveHost(host(sources.MaxHostLen+10), 1, 0)
	assert.Equal(t, sources.MaxHostLen+1, tr.Stats().Keys)
	for n := range sources.MaxHostLen + 1 {
		s := source(t, tr, sources.HostKey(string(host(n))))
		h, ok := s.Key.Host()
		require.True(t, ok)
		assert.Equal(t, string(host(n)), h)
		want := uint64(2)
		if n == sources.MaxHostLen {
			want = 3
		}
		assert.Equal(t, want, s.Events, "host of %d bytes", n)
	}
}

// TestMemoryBoundedHostsNoRace is TestMemoryBoundedNoRace for host keys of 20 bytes
// (kept in their entry's allocation): the heap per key the package
// documentation states for them.
func TestMemoryBoundedHostsNoRace(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("measures the heap over 100,000 keys; not with -short or -race")
	}
	clk := newManualClock()
	hosts := make([][]byte, 100_000)
	for i := range hosts {
		hosts[i] = fmt.Appendf(nil, "host-%06d.example", i)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tr := newTracker(t, sources.Config{MaxSources: 10_000, Clock: clk.c})
	for i := range hosts {
		if i%100 == 0 {
			clk.Advance(1e6)
		}
		tr.ObserveHost(hosts[i], 1, 100)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	st := tr.Stats()
	assert.Equal(t, 10_000, st.Keys)
	assert.Equal(t, uint64(90_000), st.Evictions)
	perKey := float64(after.HeapAlloc-before.HeapAlloc) / 10_000
	t.Logf("heap per host key at MaxSources 10,000: %.0f bytes", perKey)
	assert.Less(t, perKey, 400.0, "bytes per key")
	runtime.KeepAlive(tr)
	runtime.KeepAlive(hosts)
}
