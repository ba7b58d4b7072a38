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

// startRun runs tr.Run until the returned stop is called, which checks
// Run's result. For synctest bubbles.
func startRun(t *testing.T, tr *sources.Tracker) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tr.Run(ctx) }()
	synctest.Wait()
	return func() {
		cancel()
		require.NoError(t, <-done)
	}
}

// sleepUntil sleeps until start+d and lets Run catch up.
func sleepUntil(start time.Time, d time.Duration) {
	time.Sleep(time.Until(start.Add(d)))
	synctest.Wait()
}

// TestSilence: a key that sent once, and one that sent a burst, are each
// reported silent once, between SilentAfter and SilentAfter+Resolution
// after their last event; a steady key never is; a silent key that sends
// again is reported active at the next tick.
func TestSilence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		tr := newTracker(t, sources.Config{Clock: clock.New(0), Policy: sources.Policy{SilentAfter: 10 * time.Second},
			Hooks: sources.Hooks{OnTransition: rec.hook}})
		start := time.Now()
		stop := startRun(t, tr)
		defer stop()

		once, burst, steady := addr("192.0.2.1"), addr("192.0.2.2"), addr("192.0.2.3")
		tr.ObserveAddr(once, 1, 100)
		sleepUntil(start, 1500*time.Millisecond)
		tr.ObserveAddr(burst, 10_000, 1_000_000) // one read of a burst
		for range 10_000 {
			tr.ObserveAddr(burst, 1, 100) // and one event at a time
		}
		steadyH := tr.Addr(steady)
		for i := range 15 { // every 2 s for 30 s
			sleepUntil(start, time.Duration(2*i)*time.Second+200*time.Millisecond)
			steadyH.Observe(1, 10)
			if i == 4 {
				assert.Equal(t, sources.StateActive, source(t, tr, sources.AddrKey(once)).State, "not yet silent at 8 s")
			}
		}
		sleepUntil(start, 30*time.Second)
		trs := rec.take()
		require.Len(t, trs, 2)
		byKey := map[sources.Key]sources.Transition{trs[0].Key: trs[0], trs[1].Key: trs[1]}
		for k, last := range map[netip.Addr]time.Duration{once: 0, burst: 1500 * time.Millisecond} {
			tr, ok := byKey[sources.AddrKey(k)]
			require.True(t, ok, "%v not reported", k)
			assert.Equal(t, sources.StateSilent, tr.State)
			assert.Equal(t, start.Add(last).UTC(), tr.LastSeen)
			assert.Equal(t, tr.At.Sub(tr.LastSeen), tr.SilentFor)
			assert.Greater(t, tr.SilentFor, 10*time.Second)
			assert.LessOrEqual(t, tr.SilentFor, 11*time.Second)
		}
		assert.Equal(t, uint64(1), byKey[sources.AddrKey(once)].EventsBefore)
		assert.Equal(t, uint64(20_000), byKey[sources.AddrKey(burst)].EventsBefore)
		assert.Equal(t, sources.StateSilent, source(t, tr, sources.AddrKey(once)).State)
		assert.Equal(t, 2, tr.Stats().Silent)

		// It sends again: active at the next tick, with the silence it ended.
		sleepUntil(start, 30*time.Second+500*time.Millisecond)
		tr.ObserveAddr(once, 3, 30)
		sleepUntil(start, 31*time.Second)
		trs = rec.take()
		require.Len(t, trs, 1)
		a := trs[0]
		assert.Equal(t, sources.AddrKey(once), a.Key)
		assert.Equal(t, sources.StateActive, a.State)
		assert.Equal(t, start.UTC(), a.LastSeen, "the last event before the silence")
		assert.Equal(t, 30*time.Second+500*time.Millisecond, a.SilentFor)
		assert.Equal(t, uint64(1), a.EventsBefore)
		assert.Equal(t, start.Add(31*time.Second).UTC(), a.At)
		st := tr.Stats()
		assert.Equal(t, uint64(2), st.ToSilent)
		assert.Equal(t, uint64(1), st.ToActive)
		assert.Equal(t, 1, st.Silent)
	})
}

// TestSilenceOverrides: thresholds by exact address, CIDR, glob and
// regular expression, first match per setting, default otherwise.
func TestSilenceOverrides(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		tr := newTracker(t, sources.Config{Clock: clock.New(0), Hooks: sources.Hooks{OnTransition: rec.hook}, Policy: sources.Policy{
			SilentAfter: 60 * time.Second,
			Overrides: []sources.Override{
				{Match: "10.1.0.9", SilentAfter: 20 * time.Second},
				{Match: "10.1.0.0/16", SilentAfter: 5 * time.Second},
				{Match: "fw-*.corp", SilentAfter: 7 * time.Second},
				{Match: "~^db[0-9]+$", SilentAfter: -1},
				{Match: "db*", SilentAfter: time.Second}, // too late: db1 matched the regexp
			},
		}})
		start := time.Now()
		stop := startRun(t, tr)
		defer stop()
		want := map[sources.Key]time.Duration{
			sources.ParseKey("10.1.0.1"): 5 * time.Second,
			sources.ParseKey("10.1.0.9"): 20 * time.Second,
			sources.HostKey("fw-1.corp"): 7 * time.Second,
			sources.ParseKey("10.2.0.1"): 60 * time.Second,
			sources.HostKey("10.1.0.77"): 5 * time.Second, // a host that is an address in the prefix
		}
		for k := range want {
			if a, ok := k.Addr(); ok {
				tr.ObserveAddr(a, 1, 1)
			} else {
				h, _ := k.Host()
				tr.ObserveHost([]byte(h), 1, 1)
			}
		}
		tr.ObserveHost([]byte("db1"), 1, 1)
		assert.Zero(t, source(t, tr, sources.HostKey("db1")).SilentAfter, "never silent")
		sleepUntil(start, 2*time.Minute)
		got := map[sources.Key]time.Duration{}
		for _, tr := range rec.take() {
			require.Equal(t, sources.StateSilent, tr.State)
			got[tr.Key] = tr.SilentFor
		}
		require.Len(t, got, len(want), "db1 is never silent")
		for k, after := range want {
			assert.Greater(t, got[k], after, "%v", k)
			assert.LessOrEqual(t, got[k], after+time.Second, "%v", k)
		}
	})
}

// TestExpected: an expected key that never sends is waiting, then silent
// SilentAfter after Run started (with no last seen), and active when it
// sends; one that sends in time is never reported.
func TestExpected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		never, late := sources.HostKey("fw-never"), sources.ParseKey("192.0.2.5")
		tr := newTracker(t, sources.Config{Clock: clock.New(0), Hooks: sources.Hooks{OnTransition: rec.hook}, Policy: sources.Policy{
			SilentAfter: 10 * time.Second,
			Expected:    []sources.Key{never, late},
		}})
		assert.Equal(t, 2, tr.Stats().Keys)
		s := source(t, tr, never)
		assert.Equal(t, sources.StateWaiting, s.State)
		assert.True(t, s.Expected)
		start := time.Now()
		stop := startRun(t, tr)
		defer stop()

		sleepUntil(start, 3*time.Second)
		a, _ := late.Addr()
		tr.ObserveAddr(a, 1, 1)
		assert.Equal(t, sources.StateActive, source(t, tr, late).State)
		sleepUntil(start, 10*time.Second)
		assert.Empty(t, rec.take(), "not before SilentAfter")
		assert.Equal(t, sources.StateWaiting, source(t, tr, never).State)
		sleepUntil(start, 11*time.Second)
		trs := rec.take()
		require.Len(t, trs, 1)
		assert.Equal(t, never, trs[0].Key)
		assert.Equal(t, sources.StateSilent, trs[0].State)
		assert.True(t, trs[0].LastSeen.IsZero(), "never sent")
		assert.True(t, trs[0].Expected)
		assert.Equal(t, 11*time.Second, trs[0].SilentFor)
		assert.Equal(t, sources.StateSilent, source(t, tr, never).State)

		sleepUntil(start, 20*time.Second+100*time.Millisecond)
		tr.ObserveHost([]byte("fw-never"), 1, 1)
		sleepUntil(start, 21*time.Second)
		trs = rec.take()
		require.Len(t, trs, 2) // fw-never active; 192.0.2.5 silent (quiet since 3 s)
		states := map[sources.Key]sources.State{trs[0].Key: trs[0].State, trs[1].Key: trs[1].State}
		assert.Equal(t, map[sources.Key]sources.State{never: sources.StateActive, late: sources.StateSilent}, states)
	})
}

// TestMaxTransitions: a mass silence is reported at most MaxTransitions
// per tick, and none is lost.
func TestMaxTransitions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		tr := newTracker(t, sources.Config{Clock: clock.New(0), MaxTransitions: 3, Hooks: sources.Hooks{OnTransition: rec.hook},
			Policy: sources.Policy{SilentAfter: 5 * time.Second}})
		start := time.Now()
		stop := startRun(t, tr)
		defer stop()
		for i := range 10 {
			tr.ObserveAddr(addrN(i), 1, 1)
		}
		var perTick []int
		for s := 6; s <= 10; s++ {
			sleepUntil(start, time.Duration(s)*time.Second)
			perTick = append(perTick, len(rec.take()))
		}
		assert.Equal(t, []int{3, 3, 3, 1, 0}, perTick)
		assert.Equal(t, 10, tr.Stats().Silent)
	})
}

// TestEvictedNeverSilentNoRace: 100,000 one-off senders through a table of
// 10,000 keys: the 90,000 evicted are never reported silent; the 10,000
// kept are, each once.
func TestEvictedNeverSilentNoRace(t *testing.T) {
	senders, maxKeys := 100_000, 10_000
	if raceEnabled || testing.Short() {
		senders, maxKeys = 20_000, 2_000 // the same check, at a fifth of the size
	}
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		tr := newTracker(t, sources.Config{Clock: clock.New(0), MaxSources: maxKeys, MaxTransitions: senders,
			Hooks: sources.Hooks{OnTransition: rec.hook}, Policy: sources.Policy{SilentAfter: 5 * time.Second}})
		start := time.Now()
		stop := startRun(t, tr)
		defer stop()
		for i := range senders {
			if i%(senders/10) == 0 { // over 1 s, so evictions and ticks interleave
				sleepUntil(start, time.Duration(i/(senders/10))*100*time.Millisecond)
			}
			tr.ObserveAddr(addrN(i), 1, 100)
		}
		sleepUntil(start, 10*time.Second)
		trs := rec.take()
		assert.Len(t, trs, maxKeys)
		for _, tr := range trs {
			a, _ := tr.Key.Addr()
			b := a.As4()
			n := int(b[1])<<16 | int(b[2])<<8 | int(b[3])
			require.GreaterOrEqual(t, n, senders-maxKeys, "evicted key %v reported silent", a)
		}
		st := tr.Stats()
		assert.Equal(t, uint64(senders-maxKeys), st.Evictions)
		assert.Equal(t, maxKeys, st.Silent)
	})
}

// TestSetPolicy: a reload changes thresholds at the next tick, adds
// expected keys (watched from the reload) and removes the ones no longer
// expected that never sent.
func TestSetPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		old := sources.HostKey("old-expected")
		tr := newTracker(t, sources.Config{Clock: clock.New(0), Hooks: sources.Hooks{OnTransition: rec.hook},
			Policy: sources.Policy{SilentAfter: time.Minute, Expected: []sources.Key{old}}})
		start := time.Now()
		stop := startRun(t, tr)
		defer stop()
		tr.ObserveAddr(addrN(1), 1, 1)
		sleepUntil(start, 10*time.Second)
		assert.Empty(t, rec.take())

		added := sources.HostKey("new-expected")
		require.NoError(t, tr.SetPolicy(sources.Policy{SilentAfter: 5 * time.Second, Expected: []sources.Key{added},
			RateLimit: sources.Limit{EventsPerSecond: 10}}))
		_, ok := tr.Source(old)
		assert.False(t, ok, "no longer expected and never sent: removed")
		s := source(t, tr, added)
		assert.Equal(t, sources.StateWaiting, s.State)
		assert.InDelta(t, 10.0, source(t, tr, sources.AddrKey(addrN(1))).LimitEventsPerSecond, 1e-9, "limits resolved again")
		sleepUntil(start, 11*time.Second)
		trs := rec.take()
		require.Len(t, trs, 1)
		assert.Equal(t, sources.AddrKey(addrN(1)), trs[0].Key, "quiet for 10 s > 5 s")
		sleepUntil(start, 16*time.Second)
		trs = rec.take()
		require.Len(t, trs, 1)
		assert.Equal(t, added, trs[0].Key, "watched from the reload at 10 s")
		assert.Equal(t, 6*time.Second, trs[0].SilentFor)

		err := tr.SetPolicy(sources.Policy{Overrides: []sources.Override{{Match: "~("}}})
		require.ErrorIs(t, err, sources.ErrInvalidConfig)
		assert.Equal(t, 5*time.Second, source(t, tr, added).SilentAfter, "a bad policy changes nothing")
	})
}

// TestDefaultClock: without Config.Clock, the tracker reads the process's
// clock, which is current without Run.
func TestDefaultClock(t *testing.T) {
	tr := newTracker(t, sources.Config{})
	before := time.Now().Truncate(time.Millisecond).Add(-time.Millisecond)
	tr.ObserveAddr(addrN(1), 1, 1)
	after := time.Now()
	seen := source(t, tr, sources.AddrKey(addrN(1))).LastSeen
	assert.False(t, seen.Before(before), "last seen %v before the observation at %v", seen, before)
	assert.False(t, seen.After(after), "last seen %v after the observation", seen)
}
