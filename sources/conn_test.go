package sources_test

import (
	"context"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/sources"
)

// TestConnPace: a connection keyed by its address, over its limit of 100
// events/s (burst 10), is held back before each read as long as its rate
// asks: 500 events in reads of 10 take (500 − 10) / 100 s; nothing is
// refused, and the events are counted when they are charged.
func TestConnPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTracker(t, sources.Config{Clock: clock.New(0), Policy: sources.Policy{RateLimit: sources.Limit{EventsPerSecond: 100, Burst: 10}}})
		c := tr.Input("tcp").Conn(addr("127.0.0.2"), sources.ConnConfig{})
		defer c.Close()
		start := time.Now()
		for range 50 {
			require.NoError(t, c.BeforeRead(t.Context()))
			for range 10 {
				require.True(t, c.Event(nil, 100))
			}
		}
		c.Close() // charges the last read's events, without a wait
		elapsed := time.Since(start)
		assert.InDelta(t, 4.8, elapsed.Seconds(), 0.1, "the first read's events are charged before the second read")
		s := source(t, tr, sources.AddrKey(addr("127.0.0.2")))
		assert.EqualValues(t, 500, s.Events)
		assert.EqualValues(t, 50_000, s.Bytes)
		assert.Zero(t, s.Dropped)
		assert.Positive(t, s.Paced)
		assert.Equal(t, "tcp", s.Input)
	})
}

// TestConnPaceCanceled: a wait owed to the limit ends with the context,
// and BeforeRead says so.
func TestConnPaceCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTracker(t, sources.Config{Clock: clock.New(0), Policy: sources.Policy{RateLimit: sources.Limit{EventsPerSecond: 1, Burst: 1}}})
		c := tr.Input("tcp").Conn(addr("127.0.0.2"), sources.ConnConfig{})
		defer c.Close()
		for range 100 {
			c.Event(nil, 10)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		assert.ErrorIs(t, c.BeforeRead(ctx), context.DeadlineExceeded)
		assert.Equal(t, time.Second, time.Since(start), "not the 99 s the limit asked")
	})
}

// TestConnDrop: in drop mode each event is weighed as it comes: the burst
// passes, the rest of a burst is refused and counted as dropped for the
// key; BeforeRead never waits.
func TestConnDrop(t *testing.T) {
	clk := newManualClock()
	tr := newTracker(t, sources.Config{Clock: clk.c, Policy: sources.Policy{RateLimit: sources.Limit{EventsPerSecond: 10, Burst: 10}}})
	c := tr.Input("tcp").Conn(addr("127.0.0.2"), sources.ConnConfig{Drop: true})
	defer c.Close()
	passed := 0
	for range 50 {
		if c.Event(nil, 100) {
			passed++
		}
	}
	assert.Equal(t, 10, passed)
	require.NoError(t, c.BeforeRead(t.Context()))
	clk.Advance(time.Second)
	for range 50 {
		if c.Event(nil, 100) {
			passed++
		}
	}
	assert.Equal(t, 20, passed, "a second's worth more")
	s := source(t, tr, sources.AddrKey(addr("127.0.0.2")))
	assert.EqualValues(t, 100, s.Events)
	assert.EqualValues(t, 80, s.Dropped)
}

// TestConnByHost: keyed by host, one connection (a relay in front of many
// devices) charges each event to the host it names, and only the flooding
// host's events are refused.
func TestConnByHost(t *testing.T) {
	clk := newManualClock()
	tr := newTracker(t, sources.Config{Clock: clk.c, Policy: sources.Policy{RateLimit: sources.Limit{EventsPerSecond: 10, Burst: 10}}})
	c := tr.Input("tcp").Conn(addr("127.0.0.2"), sources.ConnConfig{ByHost: true, Drop: true})
	defer c.Close()
	noisy, quiet := []byte("fw-noisy"), []byte("db-quiet")
	var noisyPassed, quietPassed int
	for i := range 100 {
		if c.Event(noisy, 50) {
			noisyPassed++
		}
		if i%10 == 0 && c.Event(quiet, 50) {
			quietPassed++
		}
	}
	assert.Equal(t, 10, noisyPassed)
	assert.Equal(t, 10, quietPassed, "the quiet host loses nothing")
	assert.EqualValues(t, 90, source(t, tr, sources.HostKey("fw-noisy")).Dropped)
	assert.Zero(t, source(t, tr, sources.HostKey("db-quiet")).Dropped)
	_, ok := tr.Source(sources.AddrKey(addr("127.0.0.2")))
	assert.False(t, ok, "keyed by host, the connection's address is not a source")
}

// TestConnNil: with tracking off (a nil Tracker) the Conn is nil, allows
// everything and never waits.
func TestConnNil(t *testing.T) {
	var tr *sources.Tracker
	c := tr.Input("tcp").Conn(netip.MustParseAddr("127.0.0.2"), sources.ConnConfig{Drop: true})
	require.Nil(t, c)
	assert.True(t, c.Event([]byte("h"), 1))
	assert.NoError(t, c.BeforeRead(t.Context()))
	c.Close()
}

// TestConnAllocs: counting a connection's events and charging them at
// each read allocates nothing, keyed by address or by host.
func TestConnAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	tr := newTracker(t, sources.Config{Clock: clock.New(0), Policy: sources.Policy{RateLimit: sources.Limit{EventsPerSecond: 1e9}}})
	for _, cfg := range []sources.ConnConfig{{}, {Drop: true}, {ByHost: true}, {ByHost: true, Drop: true}} {
		c := tr.Input("tcp").Conn(addr("127.0.0.2"), cfg)
		host := []byte("a-host-name-of-some-length")
		allocs := testing.AllocsPerRun(1000, func() {
			for range 10 {
				c.Event(host, 100)
			}
			_ = c.BeforeRead(t.Context())
		})
		c.Close()
		assert.Zero(t, allocs, "%+v", cfg)
	}
}
