package sources_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/sources"
)

// TestAllowFlood: over 20 simulated seconds, a sender flooding at 10× its
// limit of 1,000 events/s gets 1,000 events/s ± 10 % plus its burst, the
// rest counted as dropped; a polite sender at 500 events/s beside it loses
// nothing.
func TestAllowFlood(t *testing.T) {
	const limit, burst, seconds = 1000, 100, 20
	clk := newManualClock()
	tr := newTracker(t, sources.Config{Clock: clk.c, Policy: sources.Policy{RateLimit: sources.Limit{EventsPerSecond: limit, Burst: burst}}})
	flood, polite := addr("127.0.0.2"), addr("127.0.0.3")
	var floodSent, floodAllowed, politeSent, politeAllowed int
	for ms := range seconds * 1000 {
		clk.Advance(time.Millisecond)
		for range 10 { // 10,000 events/s, one datagram at a time
			floodSent++
			floodAllowed += tr.AllowAddr(flood, 1, 100)
		}
		if ms%2 == 0 { // 500 events/s
			politeSent++
			politeAllowed += tr.AllowAddr(polite, 1, 100)
		}
	}
	want := float64(limit*seconds + burst)
	assert.InDelta(t, want, floodAllowed, 0.1*limit*seconds, "flood allowed")
	t.Logf("flood: sent %d, allowed %d (limit×time+burst = %.0f)", floodSent, floodAllowed, want)
	assert.Equal(t, politeSent, politeAllowed, "the polite sender loses nothing")

	fs := source(t, tr, sources.AddrKey(flood))
	assert.Equal(t, uint64(floodSent), fs.Events, "every event counted, dropped ones included")
	assert.Equal(t, uint64(floodSent-floodAllowed), fs.Dropped)
	assert.Zero(t, source(t, tr, sources.AddrKey(polite)).Dropped)
	assert.Equal(t, uint64(floodSent-floodAllowed), tr.Stats().Dropped)
	top := tr.Sources(nil, sources.Query{By: sources.ByLimited, Top: 10})
	require.Len(t, top, 1)
	assert.Equal(t, sources.AddrKey(flood), top[0].Key)
}

// TestAllowPartial: a read of many events is allowed in part: the burst,
// then what the rate has refilled.
func TestAllowPartial(t *testing.T) {
	clk := newManualClock()
	tr := newTracker(t, sources.Config{Clock: clk.c, Policy: sources.Policy{RateLimit: sources.Limit{EventsPerSecond: 10, Burst: 10}}})
	h := tr.Host([]byte("fw-1"))
	assert.Equal(t, 10, h.Allow(50, 5000))
	assert.Zero(t, h.Allow(1, 100))
	clk.Advance(500 * time.Millisecond)
	assert.Equal(t, 5, h.Allow(50, 5000))
	clk.Advance(time.Hour)
	assert.Equal(t, 10, h.Allow(50, 5000), "never more than the burst after a pause")
	assert.Equal(t, uint64(40+1+45+40), source(t, tr, h.Key()).Dropped)
	assert.Equal(t, 0, h.Allow(0, 0))
}

// TestLimitOverrides: limits by CIDR, exact address (none) and host glob;
// the default elsewhere.
func TestLimitOverrides(t *testing.T) {
	clk := newManualClock()
	tr := newTracker(t, sources.Config{Clock: clk.c, Policy: sources.Policy{
		RateLimit: sources.Limit{EventsPerSecond: 10},
		Overrides: []sources.Override{
			{Match: "10.9.9.9", RateLimit: sources.Limit{EventsPerSecond: -1}},
			{Match: "10.9.0.0/16", RateLimit: sources.Limit{EventsPerSecond: 100, Burst: 50}},
			{Match: "edge-*", RateLimit: sources.Limit{EventsPerSecond: 2}},
			{Match: "edge-*", SilentAfter: time.Hour}, // the other setting, from a later override
		},
	}})
	assert.Equal(t, 10, tr.AllowAddr(addr("10.1.0.1"), 1000, 1), "default: one second's worth")
	assert.Equal(t, 50, tr.AllowAddr(addr("10.9.0.1"), 1000, 1))
	assert.Equal(t, 1000, tr.AllowAddr(addr("10.9.9.9"), 1000, 1), "no limit")
	assert.Equal(t, 2, tr.AllowHost([]byte("edge-7"), 1000, 1))
	s := source(t, tr, sources.HostKey("edge-7"))
	assert.Equal(t, time.Hour, s.SilentAfter)
	assert.InDelta(t, 2.0, s.LimitEventsPerSecond, 1e-9)
}

// TestPace: in pace mode a reader that waits what Pace returns converges
// to the limit and loses nothing; a reader below its limit never waits.
func TestPace(t *testing.T) {
	const limit, burst, seconds = 1000, 100, 20
	clk := newManualClock()
	tr := newTracker(t, sources.Config{Clock: clk.c, Policy: sources.Policy{RateLimit: sources.Limit{EventsPerSecond: limit, Burst: burst}}})
	flood := tr.Addr(addr("127.0.0.2"))
	start := clk.Time()
	read, waits := 0, 0
	var lastRates []float64
	for sec := 1; clk.Since(start) < seconds; {
		read += 64 // a read of 64 events, taking 10 µs: 6.4 million events/s unpaced
		clk.Advance(10 * time.Microsecond)
		if w := flood.Pace(64, 64*100); w > 0 {
			waits++
			clk.Advance(w)
		}
		if clk.Since(start) >= float64(sec) {
			lastRates = append(lastRates, float64(read)/clk.Since(start))
			sec++
		}
	}
	rate := float64(read) / clk.Since(start)
	t.Logf("paced: %d events in %.1f s = %.0f events/s, %d waits", read, clk.Since(start), rate, waits)
	assert.InDelta(t, limit, rate, 0.1*limit)
	for i, r := range lastRates[2:] { // converged after the burst
		assert.InDelta(t, limit, r, 0.1*limit, "second %d", i+3)
	}
	s := source(t, tr, flood.Key())
	assert.Zero(t, s.Dropped, "pace mode drops nothing")
	assert.Equal(t, uint64(read), s.Events)
	assert.Positive(t, s.Paced)
	assert.InDelta(t, seconds, s.PacedFor.Seconds(), 1, "almost all the time was spent waiting")

	polite := tr.Addr(addr("127.0.0.3"))
	for range 10_000 { // 500 events/s in reads of 5
		clk.Advance(10 * time.Millisecond)
		require.Zero(t, polite.Pace(5, 500))
	}
	assert.Zero(t, source(t, tr, polite.Key()).Paced)

	tr.Tick()
	assert.Equal(t, sources.StateLimited, source(t, tr, flood.Key()).State)
	assert.Equal(t, sources.StateActive, source(t, tr, polite.Key()).State)
}
