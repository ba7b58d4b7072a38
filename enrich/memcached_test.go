package enrich_test

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relaykit/relaykit/internal/testtool"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/enrich"
)

const memcachedBin = "/usr/bin/memcached"

// startMemcached starts a memcached of its own on a free 127.0.0.1 port and
// stops it when the test ends. Without the binary the test is skipped,
// unless CI is set: then it fails.
func startMemcached(t testing.TB) string {
	t.Helper()
	bin := testtool.Need(t, "memcached", "apt-get install memcached", memcachedBin)
	// Reserve a free port, then hand it to memcached.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))

	cmd := exec.Command(bin, "-u", "nobody", "-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-m", "16", "-t", "1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})

	// Wait until it accepts connections (or exits).
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			return addr
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("memcached exited: %v: %s", err, stderr.String())
		case <-deadline:
			t.Fatalf("memcached did not listen on %s: %s", addr, stderr.String())
		case <-tick.C:
		}
	}
}

func newMemcached(t *testing.T, cfg enrich.MemcachedConfig) *enrich.Memcached {
	t.Helper()
	m, err := enrich.NewMemcached(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func TestMemcached(t *testing.T) {
	addr := startMemcached(t)
	seed := memcache.New(addr)
	defer seed.Close()
	require.NoError(t, seed.Set(&memcache.Item{Key: "user:alice", Value: []byte("admin")}))
	require.NoError(t, seed.Set(&memcache.Item{Key: "user:bob", Value: []byte("dev")}))

	m := newMemcached(t, enrich.MemcachedConfig{Servers: []string{addr}, KeyPrefix: "user:"})
	v, ok := get(t, m, "alice")
	assert.True(t, ok)
	assert.Equal(t, "admin", v)
	_, ok = get(t, m, "carol")
	assert.False(t, ok)
	_, ok = get(t, m, "has space")
	assert.False(t, ok, "illegal key")
	_, ok = get(t, m, strings.Repeat("k", 300))
	assert.False(t, ok, "key too long")

	st := m.Stats()
	assert.Equal(t, enrich.MemcachedStats{Requests: 2, Hits: 1, Misses: 1, BadKeys: 2}, st)

	// Behind a cache: one request per key.
	c := newCache(t, m, enrich.CacheConfig{})
	for range 5 {
		v, ok = get(t, c, "bob")
		assert.True(t, ok)
		assert.Equal(t, "dev", v)
	}
	assert.Equal(t, uint64(3), m.Stats().Requests)
	assert.Equal(t, uint64(4), c.Stats().Hits)

	// Cancelled before the request: no network call.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, err := m.Get(ctx, []byte("alice"))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, uint64(3), m.Stats().Requests)
}

// TestMemcachedDown: nothing listens on the port; the error is counted and
// the cache turns it into "no data".
func TestMemcachedDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	m := newMemcached(t, enrich.MemcachedConfig{Servers: []string{addr}, Timeout: time.Second})
	_, ok, err := m.Get(t.Context(), []byte("k"))
	assert.Error(t, err)
	assert.False(t, ok)
	assert.Equal(t, uint64(1), m.Stats().Errors)

	c := newCache(t, m, enrich.CacheConfig{})
	v, ok, err := c.Get(t.Context(), []byte("k"))
	assert.NoError(t, err)
	assert.False(t, ok)
	assert.Nil(t, v)
	assert.Equal(t, uint64(1), c.Stats().Errors)
}

// TestMemcachedSlow: the server accepts and never answers; Get returns
// after the timeout, counted as a timeout.
func TestMemcachedSlow(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c // hold it open, never answer
		}
	}()
	defer func() {
		_ = ln.Close()
		for c := range accepted {
			_ = c.Close()
		}
	}()

	const timeout = 150 * time.Millisecond
	m := newMemcached(t, enrich.MemcachedConfig{Servers: []string{ln.Addr().String()}, Timeout: timeout})
	for range 2 { // a new connection, then a fresh one after the failed one was dropped
		start := time.Now()
		_, ok, err := m.Get(t.Context(), []byte("k"))
		took := time.Since(start)
		assert.Error(t, err)
		assert.False(t, ok)
		assert.GreaterOrEqual(t, took, timeout-10*time.Millisecond)
	}
	st := m.Stats()
	assert.Equal(t, uint64(2), st.Errors)
	assert.Equal(t, uint64(2), st.Timeouts)

	// A cache in front remembers the failure: the next lookups of the key
	// return at once without waiting for another timeout.
	c := newCache(t, m, enrich.CacheConfig{ErrorTTL: time.Hour})
	_, ok, _ := c.Get(t.Context(), []byte("k"))
	assert.False(t, ok)
	for range 100 {
		_, ok, _ = c.Get(t.Context(), []byte("k"))
		assert.False(t, ok)
	}
	assert.Equal(t, uint64(3), m.Stats().Timeouts, "no lookup reached the backend: no wait for a timeout")
	assert.Equal(t, uint64(100), c.Stats().NegativeHits)
}

func TestNewMemcachedErrors(t *testing.T) {
	for _, cfg := range []enrich.MemcachedConfig{
		{},
		{Servers: []string{"127.0.0.1:1"}, Timeout: -1},
		{Servers: []string{"127.0.0.1:1"}, MaxIdleConns: -1},
	} {
		_, err := enrich.NewMemcached(cfg)
		assert.ErrorIs(t, err, enrich.ErrInvalidConfig)
	}
}
