package enrich

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
)

// MemcachedConfig configures [NewMemcached].
type MemcachedConfig struct {
	// Servers are the memcached addresses ("host:port", or a Unix socket
	// path); keys are spread over them by hash. At least one is required.
	Servers []string
	// Timeout bounds one Get, connecting included, in time. Zero means
	// 100 ms.
	Timeout time.Duration
	// MaxIdleConns is the number of idle connections kept per server; set
	// it to at least the number of goroutines that look up at the same
	// time. Zero means 8.
	MaxIdleConns int
	// KeyPrefix is prepended to every key. Empty means none.
	KeyPrefix string
}

// MemcachedStats is a snapshot of a [Memcached]'s counters.
type MemcachedStats struct {
	// Requests is the number of Get calls that reached the network.
	Requests uint64
	// Hits and Misses count the requests that found a value and those
	// that did not.
	Hits, Misses uint64
	// Errors is the number of requests that failed, timeouts included.
	Errors uint64
	// Timeouts is the number of requests that failed because Timeout
	// passed.
	Timeouts uint64
	// BadKeys is the number of keys memcached cannot store (longer than
	// 250 bytes with the prefix, or holding spaces or control characters);
	// they yield no data without a request.
	BadKeys uint64
}

// Memcached is a [Lookup] backed by memcached servers (text protocol,
// github.com/bradfitz/gomemcache). Put a [Cache] in front of it: every Get
// is a network round trip.
//
// A Get never blocks longer than Timeout: a server that is down, or that
// accepts and never answers, yields an error that callers (the Cache)
// count as "no data". Memcached is safe for concurrent use by multiple
// goroutines; it keeps a pool of idle connections, closed by Close.
type Memcached struct {
	c      *memcache.Client
	prefix string

	requests, hits, misses, errs, timeouts, badKeys atomic.Uint64
}

// NewMemcached returns a Memcached client for cfg.Servers. It does not
// connect until the first Get. The error wraps [ErrInvalidConfig].
func NewMemcached(cfg MemcachedConfig) (*Memcached, error) {
	if len(cfg.Servers) == 0 {
		return nil, fmt.Errorf("%w: memcached needs at least one server", ErrInvalidConfig)
	}
	if cfg.Timeout < 0 || cfg.MaxIdleConns < 0 {
		return nil, fmt.Errorf("%w: negative memcached Timeout or MaxIdleConns", ErrInvalidConfig)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 100 * time.Millisecond
	}
	if cfg.MaxIdleConns == 0 {
		cfg.MaxIdleConns = 8
	}
	var sl memcache.ServerList
	if err := sl.SetServers(cfg.Servers...); err != nil {
		return nil, fmt.Errorf("%w: memcached servers: %w", ErrInvalidConfig, err)
	}
	c := memcache.NewFromSelector(&sl)
	c.Timeout = cfg.Timeout
	c.MaxIdleConns = cfg.MaxIdleConns
	timeout := cfg.Timeout
	c.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		start := time.Now()
		var d net.Dialer
		nc, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &firstDeadlineConn{Conn: nc, limit: start.Add(timeout)}, nil
	}
	return &Memcached{c: c, prefix: cfg.KeyPrefix}, nil
}

// firstDeadlineConn caps the first deadline set on a new connection at the
// dial's start plus the timeout: the client sets a full timeout for the
// request after connecting, and the two together must not exceed one
// timeout.
type firstDeadlineConn struct {
	net.Conn
	limit time.Time
}

func (c *firstDeadlineConn) SetDeadline(t time.Time) error {
	if !c.limit.IsZero() {
		if t.After(c.limit) {
			t = c.limit
		}
		c.limit = time.Time{}
	}
	return c.Conn.SetDeadline(t)
}

// Get fetches key (with the prefix) from memcached. It returns ok false and
// a nil error for a miss or a key memcached cannot store, and an error when
// the server cannot answer within the timeout or ctx is already done. The
// returned value is a new slice owned by the caller.
func (m *Memcached) Get(ctx context.Context, key []byte) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	k := m.prefix + string(key)
	if !legalMemcachedKey(k) {
		m.badKeys.Add(1)
		return nil, false, nil
	}
	m.requests.Add(1)
	it, err := m.c.Get(k)
	switch {
	case err == nil:
		m.hits.Add(1)
		return it.Value, true, nil
	case errors.Is(err, memcache.ErrCacheMiss):
		m.misses.Add(1)
		return nil, false, nil
	}
	m.errs.Add(1)
	var ne net.Error
	var cte *memcache.ConnectTimeoutError
	if errors.As(err, &cte) || (errors.As(err, &ne) && ne.Timeout()) {
		m.timeouts.Add(1)
	}
	return nil, false, fmt.Errorf("enrich: memcached get: %w", err)
}

// legalMemcachedKey reports whether memcached's text protocol accepts k.
func legalMemcachedKey(k string) bool {
	if len(k) == 0 || len(k) > 250 {
		return false
	}
	return !strings.ContainsFunc(k, func(r rune) bool { return r <= ' ' || r == 0x7f })
}

// Stats returns a snapshot of the counters.
func (m *Memcached) Stats() MemcachedStats {
	return MemcachedStats{
		Requests: m.requests.Load(),
		Hits:     m.hits.Load(),
		Misses:   m.misses.Load(),
		Errors:   m.errs.Load(),
		Timeouts: m.timeouts.Load(),
		BadKeys:  m.badKeys.Load(),
	}
}

// Close closes the idle connections. It is idempotent and returns nil.
func (m *Memcached) Close() error {
	_ = m.c.Close()
	return nil
}

var _ Lookup = (*Memcached)(nil)
