package enrich_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/enrich"
)

// fakeBackend is a Lookup over a map that counts calls and can fail or
// block.
type fakeBackend struct {
	mu    sync.Mutex
	data  map[string]string
	fail  bool
	calls atomic.Int64
	gate  chan struct{} // if not nil, Get waits for it
}

func (f *fakeBackend) Get(ctx context.Context, key []byte) ([]byte, bool, error) {
	f.calls.Add(1)
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		return nil, false, errors.New("backend down")
	}
	v, ok := f.data[string(key)]
	if !ok {
		return nil, false, nil
	}
	return []byte(v), true, nil
}

func (f *fakeBackend) set(k, v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.data[k] = v
}

func (f *fakeBackend) setFail(b bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = b
}

func newCache(t *testing.T, b enrich.Lookup, cfg enrich.CacheConfig) *enrich.Cache {
	t.Helper()
	c, err := enrich.NewCache(b, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func get(t *testing.T, l enrich.Lookup, key string) (string, bool) {
	t.Helper()
	v, ok, err := l.Get(t.Context(), []byte(key))
	require.NoError(t, err)
	return string(v), ok
}

func TestCacheHitMissNegative(t *testing.T) {
	b := &fakeBackend{data: map[string]string{"alice": "admin"}}
	c := newCache(t, b, enrich.CacheConfig{})

	v, ok := get(t, c, "alice")
	assert.True(t, ok)
	assert.Equal(t, "admin", v)
	v, ok = get(t, c, "alice")
	assert.True(t, ok)
	assert.Equal(t, "admin", v)
	assert.Equal(t, int64(1), b.calls.Load(), "second get is a hit")

	_, ok = get(t, c, "bob")
	assert.False(t, ok)
	_, ok = get(t, c, "bob")
	assert.False(t, ok)
	assert.Equal(t, int64(2), b.calls.Load(), "missing key cached")

	st := c.Stats()
	assert.Equal(t, uint64(1), st.Hits)
	assert.Equal(t, uint64(1), st.NegativeHits)
	assert.Equal(t, uint64(2), st.Misses)
	assert.Equal(t, uint64(1), st.NotFound)
	assert.Zero(t, st.Errors)
	assert.Equal(t, 2, st.Entries)
}

func TestCacheTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &fakeBackend{data: map[string]string{"k": "v1"}}
		c, err := enrich.NewCache(b, enrich.CacheConfig{TTL: time.Minute, NegativeTTL: 10 * time.Second, ErrorTTL: 2 * time.Second})
		require.NoError(t, err)
		defer c.Close()

		v, _ := get(t, c, "k")
		assert.Equal(t, "v1", v)
		b.set("k", "v2")
		time.Sleep(30 * time.Second)
		v, _ = get(t, c, "k")
		assert.Equal(t, "v1", v, "still fresh")
		time.Sleep(31 * time.Second)
		v, _ = get(t, c, "k")
		assert.Equal(t, "v2", v, "expired after TTL, fetched again")
		assert.Equal(t, int64(2), b.calls.Load())

		// Negative caching.
		_, ok := get(t, c, "new")
		assert.False(t, ok)
		b.set("new", "here")
		time.Sleep(5 * time.Second)
		_, ok = get(t, c, "new")
		assert.False(t, ok, "not found is remembered for NegativeTTL")
		time.Sleep(6 * time.Second)
		v, ok = get(t, c, "new")
		assert.True(t, ok)
		assert.Equal(t, "here", v)

		// Failures are remembered for ErrorTTL.
		b.setFail(true)
		before := b.calls.Load()
		_, ok = get(t, c, "down")
		assert.False(t, ok)
		_, ok = get(t, c, "down")
		assert.False(t, ok)
		assert.Equal(t, before+1, b.calls.Load(), "one backend call per ErrorTTL")
		b.setFail(false)
		b.set("down", "up")
		time.Sleep(3 * time.Second)
		v, ok = get(t, c, "down")
		assert.True(t, ok)
		assert.Equal(t, "up", v)
		assert.Equal(t, uint64(1), c.Stats().Errors)
	})
}

func TestCacheNegativeCachingOff(t *testing.T) {
	b := &fakeBackend{data: map[string]string{}}
	c := newCache(t, b, enrich.CacheConfig{NegativeTTL: -1, ErrorTTL: -1})
	for range 3 {
		_, ok := get(t, c, "missing")
		assert.False(t, ok)
	}
	assert.Equal(t, int64(3), b.calls.Load())
	b.setFail(true)
	for range 2 {
		_, ok := get(t, c, "x")
		assert.False(t, ok)
	}
	assert.Equal(t, int64(5), b.calls.Load())
	st := c.Stats()
	assert.Equal(t, uint64(2), st.Errors)
	assert.Equal(t, uint64(3), st.NotFound)
	assert.Zero(t, st.Entries)
}

func TestCacheMaxEntries(t *testing.T) {
	b := &fakeBackend{data: map[string]string{}}
	for i := range 500 {
		b.data["k"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26))] = "v"
	}
	c := newCache(t, b, enrich.CacheConfig{MaxEntries: 50})
	for k := range b.data {
		get(t, c, k)
	}
	c.CleanUpForTest()
	assert.LessOrEqual(t, c.Stats().Entries, 50)
}

func TestCacheSingleFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &fakeBackend{data: map[string]string{"k": "v"}, gate: make(chan struct{})}
		c, err := enrich.NewCache(b, enrich.CacheConfig{})
		require.NoError(t, err)
		defer c.Close()
		var wg sync.WaitGroup
		results := make(chan string, 8)
		for range 8 {
			wg.Go(func() {
				v, _, err := c.Get(context.Background(), []byte("k"))
				assert.NoError(t, err)
				results <- string(v)
			})
		}
		synctest.Wait() // one caller in the backend, the others waiting for it
		assert.Equal(t, int64(1), b.calls.Load())
		close(b.gate)
		wg.Wait()
		close(results)
		n := 0
		for v := range results {
			assert.Equal(t, "v", v)
			n++
		}
		assert.Equal(t, 8, n)
		assert.Equal(t, int64(1), b.calls.Load())
		assert.Equal(t, uint64(8), c.Stats().Misses)
	})
}

func TestCacheCancelledContext(t *testing.T) {
	b := &fakeBackend{data: map[string]string{"k": "v"}}
	c := newCache(t, b, enrich.CacheConfig{})
	get(t, c, "k")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v, ok, err := c.Get(ctx, []byte("k"))
	assert.NoError(t, err, "hits do not need the context")
	assert.True(t, ok)
	assert.Equal(t, "v", string(v))
	_, _, err = c.Get(ctx, []byte("other"))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, int64(1), b.calls.Load())
}

func TestCacheHitAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	b := &fakeBackend{data: map[string]string{"alice": "admin"}}
	c := newCache(t, b, enrich.CacheConfig{})
	key := []byte("alice")
	missing := []byte("nobody")
	get(t, c, "alice")
	get(t, c, "nobody")
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		_, _, _ = c.Get(ctx, key)
		_, _, _ = c.Get(ctx, missing)
	})
	assert.Zero(t, allocs)
}

func TestNewCacheErrors(t *testing.T) {
	_, err := enrich.NewCache(nil, enrich.CacheConfig{})
	assert.ErrorIs(t, err, enrich.ErrInvalidConfig)
	_, err = enrich.NewCache(enrich.NewTable(nil), enrich.CacheConfig{MaxEntries: -1})
	assert.ErrorIs(t, err, enrich.ErrInvalidConfig)
	_, err = enrich.NewCache(enrich.NewTable(nil), enrich.CacheConfig{TTL: -time.Second})
	assert.ErrorIs(t, err, enrich.ErrInvalidConfig)
}

func TestTableAndCSV(t *testing.T) {
	tbl := enrich.NewTable(map[string]string{"a": "1"})
	v, ok := get(t, tbl, "a")
	assert.True(t, ok)
	assert.Equal(t, "1", v)
	_, ok = get(t, tbl, "b")
	assert.False(t, ok)

	tests := []struct {
		name string
		csv  string
		cfg  enrich.CSVConfig
		want map[string]string
		err  string
	}{
		{name: "plain", csv: "alice,admin\nbob,dev\n", want: map[string]string{"alice": "admin", "bob": "dev"}},
		{name: "header by name", csv: "team,user,extra\nops,alice,x\n\"dev, web\",bob,y\n",
			cfg: enrich.CSVConfig{Header: true, KeyColumn: "user", ValueColumn: "team"}, want: map[string]string{"alice": "ops", "bob": "dev, web"}},
		{name: "semicolon, last wins", csv: "k;1\nk;2\n", cfg: enrich.CSVConfig{Comma: ';'}, want: map[string]string{"k": "2"}},
		{name: "short line", csv: "a,1\nb\n", err: "line 2 has 1 fields"},
		{name: "unknown column", csv: "a,b\n", cfg: enrich.CSVConfig{Header: true, KeyColumn: "x"}, err: `no column "x"`},
		{name: "names without header", csv: "a,b\n", cfg: enrich.CSVConfig{KeyColumn: "a"}, err: "need Header"},
		{name: "bad quoting", csv: "a,\"b\n", err: "read CSV"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl, err := enrich.LoadCSV(strings.NewReader(tt.csv), tt.cfg)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, len(tt.want), tbl.Len())
			for k, want := range tt.want {
				v, ok := get(t, tbl, k)
				assert.True(t, ok, k)
				assert.Equal(t, want, v)
			}
		})
	}
}

// TestCacheCallerGivesUp: a caller whose ctx ends during the backend call
// gets no data, and the key is not remembered as failed.
func TestCacheCallerGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		backend := enrich.LookupFunc(func(ctx context.Context, key []byte) ([]byte, bool, error) {
			if calls.Add(1) == 1 {
				<-ctx.Done() // the first call hangs until the caller gives up
				return nil, false, ctx.Err()
			}
			return []byte("v"), true, nil
		})
		c, err := enrich.NewCache(backend, enrich.CacheConfig{ErrorTTL: time.Hour})
		require.NoError(t, err)
		defer c.Close()

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, ok, err := c.Get(ctx, []byte("k"))
		assert.NoError(t, err)
		assert.False(t, ok)

		v, ok := get(t, c, "k")
		assert.True(t, ok, "the give-up was not cached as a failure")
		assert.Equal(t, "v", v)
		assert.Equal(t, int64(2), calls.Load())
		assert.Zero(t, c.Stats().Errors)
	})
}
