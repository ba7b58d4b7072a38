package sources_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/sources"
)

// FuzzLoad: Load never panics on any file; what it accepts, Save writes
// back and Load reads again with the same keys.
func FuzzLoad(f *testing.F) {
	clk := newManualClock()
	tr, err := sources.New(sources.Config{Clock: clk.c})
	require.NoError(f, err)
	tr.ObserveAddr(addr("192.0.2.1"), 3, 30)
	tr.ObserveAddr(addr("2001:db8::1"), 1, 10)
	tr.ObserveHost([]byte("fw \"1\"\n"), 2, 20)
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed")
	require.NoError(f, tr.Save(seed))
	data, err := os.ReadFile(seed)
	require.NoError(f, err)
	f.Add(data)
	f.Add([]byte(stateHeader + "end -5 00000000\n"))
	f.Add([]byte(stateHeader + "a 1.2.3.4 1 2 0 3 4\nend 1 00000000\n"))
	f.Add([]byte{})

	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "state")
		require.NoError(t, os.WriteFile(p, b, 0o600))
		tr, err := sources.New(sources.Config{Clock: clk.c})
		require.NoError(t, err)
		n, err := tr.Load(p)
		if err != nil {
			assert.ErrorIs(t, err, sources.ErrCorrupt)
			assert.Zero(t, n)
			return
		}
		require.NoError(t, tr.Save(p))
		again, err := sources.New(sources.Config{Clock: clk.c})
		require.NoError(t, err)
		m, err := again.Load(p)
		require.NoError(t, err)
		assert.Equal(t, n, m)
		assert.Equal(t, keysOf(tr.Sources(nil, sources.Query{})), keysOf(again.Sources(nil, sources.Query{})))
	})
}
