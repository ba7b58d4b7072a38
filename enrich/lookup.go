package enrich

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/maypok86/otter/v2"
)

// Lookup maps keys to values in some store: a memcached server
// ([Memcached]), a static table ([Table]), or a [Cache] in front of either.
//
// Get is called from many goroutines at once (every worker's enrichers, a
// Cache's loads), so an implementation must be safe for concurrent use; the
// ones in this package are.
type Lookup interface {
	// Get returns the value stored for key and true, or false when there is
	// none. key is read only during the call. The returned value is
	// read-only: it may be shared with other callers, and the Lookup never
	// modifies it, so it may be kept; copy it before changing it. An error
	// means the store could not answer (unreachable, timed out, ctx done).
	Get(ctx context.Context, key []byte) (value []byte, ok bool, err error)
}

// LookupFunc adapts an ordinary function to a [Lookup].
type LookupFunc func(ctx context.Context, key []byte) ([]byte, bool, error)

// Get calls f(ctx, key).
func (f LookupFunc) Get(ctx context.Context, key []byte) ([]byte, bool, error) { return f(ctx, key) }

var _ Lookup = LookupFunc(nil)

// CacheConfig configures [NewCache].
type CacheConfig struct {
	// MaxEntries is the maximum number of keys the cache holds (found, not
	// found and failed ones alike); the least valuable are evicted
	// (W-TinyLFU). Zero means 100 000.
	MaxEntries int
	// TTL is how long a found value is kept, from when it was fetched.
	// Zero means 5 minutes.
	TTL time.Duration
	// NegativeTTL is how long the answer "no such key" is kept. Zero means
	// 30 seconds; negative disables negative caching (every lookup of a
	// missing key asks the backend).
	NegativeTTL time.Duration
	// ErrorTTL is how long a backend failure is remembered for the key:
	// meanwhile the key yields no data without asking the backend again, so
	// a down or slow backend costs one timeout per key per ErrorTTL instead
	// of one per event. Zero means 1 second; negative disables it.
	ErrorTTL time.Duration
	// ClockResolution is the granularity of the cache's clock, which a
	// goroutine owned by the cache updates (so hits do not read the system
	// time). Expiry may be late or early by up to this much. Zero means
	// 10 ms.
	ClockResolution time.Duration
}

// CacheStats is a snapshot of a [Cache]'s counters.
type CacheStats struct {
	// Hits is the number of lookups answered with a cached value.
	Hits uint64
	// NegativeHits is the number of lookups answered with a cached "no such
	// key" or a remembered failure.
	NegativeHits uint64
	// Misses is the number of lookups that asked the backend (concurrent
	// lookups of one key share one backend call but each counts).
	Misses uint64
	// NotFound is the number of backend calls that found no value.
	NotFound uint64
	// Errors is the number of backend calls that failed; those lookups
	// yielded no data.
	Errors uint64
	// Entries is the approximate number of keys in the cache.
	Entries int
}

// cacheEntry is what the cache holds per key.
type cacheEntry struct {
	value []byte
	state uint8
}

const (
	stateFound uint8 = iota
	stateNotFound
	stateFailed
)

// Cache is a concurrent cache in front of a [Lookup] backend, with a size
// bound, TTLs, negative caching and counters. It is itself a Lookup.
//
// A hit takes no lock and does not allocate, and hits scale with cores. A
// miss asks the backend once per key even when many goroutines miss it at
// the same time. A backend failure is counted and yields "no data" (ok
// false, nil error), so a broken store degrades enrichment instead of
// failing events; it never blocks longer than the backend's own timeout.
//
// Cache is safe for concurrent use by multiple goroutines. It owns a
// goroutine for its clock and otter's periodic clean-up goroutine, which
// [Cache.Close] stops, and runs policy maintenance on short-lived
// goroutines that end on their own.
type Cache struct {
	backend Lookup
	cfg     CacheConfig
	clock   *otter.CoarseClock
	c       *otter.Cache[string, cacheEntry]

	hits, negHits       stripedCounter
	misses              atomic.Uint64
	notFound, errs      atomic.Uint64
	closeOnce           sync.Once
	loader              otter.Loader[string, cacheEntry]
	errorTTL, negTTL    time.Duration
	cacheErr, cacheNegs bool
}

// NewCache returns a Cache in front of backend. The error wraps
// [ErrInvalidConfig]. Close the Cache to stop its goroutines; it does not
// close the backend.
func NewCache(backend Lookup, cfg CacheConfig) (*Cache, error) {
	if backend == nil {
		return nil, fmt.Errorf("%w: cache needs a backend", ErrInvalidConfig)
	}
	if cfg.MaxEntries < 0 || cfg.TTL < 0 || cfg.ClockResolution < 0 {
		return nil, fmt.Errorf("%w: negative cache MaxEntries, TTL or ClockResolution", ErrInvalidConfig)
	}
	if cfg.MaxEntries == 0 {
		cfg.MaxEntries = 100_000
	}
	if cfg.TTL == 0 {
		cfg.TTL = 5 * time.Minute
	}
	if cfg.NegativeTTL == 0 {
		cfg.NegativeTTL = 30 * time.Second
	}
	if cfg.ErrorTTL == 0 {
		cfg.ErrorTTL = time.Second
	}
	if cfg.ClockResolution == 0 {
		cfg.ClockResolution = 10 * time.Millisecond
	}
	c := &Cache{
		backend:   backend,
		cfg:       cfg,
		negTTL:    cfg.NegativeTTL,
		errorTTL:  cfg.ErrorTTL,
		cacheNegs: cfg.NegativeTTL > 0,
		cacheErr:  cfg.ErrorTTL > 0,
	}
	c.clock = otter.NewCoarseClock(cfg.ClockResolution)
	oc, err := otter.New(&otter.Options[string, cacheEntry]{
		MaximumSize: cfg.MaxEntries,
		ExpiryCalculator: otter.ExpiryCreatingFunc(func(e otter.Entry[string, cacheEntry]) time.Duration {
			switch e.Value.state {
			case stateNotFound:
				return c.negTTL
			case stateFailed:
				return c.errorTTL
			}
			return c.cfg.TTL
		}),
		Clock: c.clock,
		// The default executor runs the policy maintenance (draining the
		// read buffers) on a short-lived goroutine: hits then cost ~50 ns
		// instead of ~250 ns when a reader had to drain inline.
	})
	if err != nil {
		c.clock.Stop()
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	c.c = oc
	c.loader = otter.LoaderFunc[string, cacheEntry](c.load)
	return c, nil
}

// load asks the backend; it runs once per key for concurrent misses.
func (c *Cache) load(ctx context.Context, key string) (cacheEntry, error) {
	v, ok, err := c.backend.Get(ctx, unsafe.Slice(unsafe.StringData(key), len(key)))
	switch {
	case err != nil && ctx.Err() != nil:
		// The caller gave up; that says nothing about the backend, so it
		// is neither counted nor remembered for the key.
		return cacheEntry{}, ctx.Err()
	case err != nil:
		c.errs.Add(1)
		if !c.cacheErr {
			return cacheEntry{}, errBackend
		}
		return cacheEntry{state: stateFailed}, nil
	case !ok:
		c.notFound.Add(1)
		if !c.cacheNegs {
			return cacheEntry{}, otter.ErrNotFound
		}
		return cacheEntry{state: stateNotFound}, nil
	}
	return cacheEntry{value: v, state: stateFound}, nil
}

// errBackend marks a failure that is not cached.
var errBackend = errors.New("enrich: backend failed")

// Get returns the value for key from the cache, asking the backend on a
// miss. A backend failure is counted and reported as ok false with a nil
// error; only a ctx that is done before the lookup starts yields an error
// (ctx.Err()). The value is shared and read-only (see [Lookup]).
func (c *Cache) Get(ctx context.Context, key []byte) ([]byte, bool, error) {
	// The key is only compared during the read, never stored, so a
	// zero-copy string is safe here.
	if e, ok := c.c.GetIfPresent(unsafe.String(unsafe.SliceData(key), len(key))); ok {
		if e.state == stateFound {
			c.hits.add()
			return e.value, true, nil
		}
		c.negHits.add()
		return nil, false, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	c.misses.Add(1)
	e, err := c.c.Get(ctx, string(key), c.loader)
	if err != nil || e.state != stateFound {
		return nil, false, nil
	}
	return e.value, true, nil
}

// Invalidate removes key from the cache.
func (c *Cache) Invalidate(key []byte) {
	c.c.Invalidate(string(key))
}

// Stats returns a snapshot of the counters.
func (c *Cache) Stats() CacheStats {
	return CacheStats{
		Hits:         c.hits.load(),
		NegativeHits: c.negHits.load(),
		Misses:       c.misses.Load(),
		NotFound:     c.notFound.Load(),
		Errors:       c.errs.Load(),
		Entries:      c.c.EstimatedSize(),
	}
}

// Close stops the cache's goroutines. The cache keeps answering from its
// entries and the backend, with a precise (slower) clock. Close does not
// close the backend. It is idempotent and returns nil.
func (c *Cache) Close() error {
	c.closeOnce.Do(func() {
		c.c.StopAllGoroutines()
		c.clock.Stop()
	})
	return nil
}

var _ Lookup = (*Cache)(nil)
