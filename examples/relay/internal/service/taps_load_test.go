package service

import (
	"bytes"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"
	"github.com/relaykit/relaykit/examples/relay/internal/route"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/tap"
)

// A subscriber that never reads, at the input, the route and the
// destination at once, does not slow a 100 k ev/s load of syslog lines
// over TCP into the archive.
//
// The mechanism is checked, which holds on any machine: the
// data path never waits for the stuck subscriptions (every line is
// archived, within the same deadline) and each one's losses are counted
// exactly (published = delivered into its full buffer + dropped). The
// throughput is measured: runs of a fixed number of lines, sent at 100 k ev/s (1,000
// lines every 10 ms), alternate without and with the subscriptions; the
// median time from the first line sent to the last archived with them is
// logged, beside the median without, for BENCHMARKS.md: a test asserts
// behaviour, and a rate on a shared machine is a measurement. The load is
// paced at the rate the claim is about rather than as fast as the relay
// goes (unpaced, run to run noise here is larger than 5 %).
func TestTapStuckSubscriberNoRace(t *testing.T) {
	const chunk, every = 1000, 10 * time.Millisecond // 100 k ev/s
	n, pairs := 100_000, 3
	if raceEnabled || testing.Short() {
		n, pairs = 20_000, 2 // the mechanism only: -race times its own instrumentation
	}
	cfg := relaytest.TestConfig(t)
	relaytest.ArchiveOf(cfg).Format = "raw"
	tr := startRelay(t, cfg)
	var lines bytes.Buffer
	offsets := make([]int, n+1) // of line i in payload
	for i := range n {
		offsets[i] = lines.Len()
		fmt.Fprintf(&lines, "<13>1 2026-11-27T14:00:00Z web-%d app - - - load line %d of the stuck subscriber test\n", i%16, i)
	}
	offsets[n] = lines.Len()
	payload := lines.Bytes()
	archived := tr.dests["archive"].Stats
	points := []string{"input:tcp", route.TapRoute + cfg.Routes[0].Name, "destination:archive"}

	var sent int64
	run := func() time.Duration {
		sent += int64(n)
		start := time.Now()
		c, err := net.Dial("tcp", tr.addr("tcp"))
		require.NoError(t, err)
		for k := 0; k*chunk < n; k++ {
			time.Sleep(time.Until(start.Add(time.Duration(k) * every))) // pacing, not synchronisation
			_, err = c.Write(payload[offsets[k*chunk]:offsets[min((k+1)*chunk, n)]])
			require.NoError(t, err)
		}
		require.NoError(t, c.Close())
		deadline := time.Now().Add(60 * time.Second)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for archived.Delivered.Load() < sent {
			require.True(t, time.Now().Before(deadline), "archived %d of %d", archived.Delivered.Load(), sent)
			<-tick.C
		}
		return time.Since(start)
	}
	stuck := func() []*tap.Subscription {
		var subs []*tap.Subscription
		for _, p := range points {
			s, err := tr.taps.Lookup(p).Subscribe(tap.SubscribeConfig{}) // DefaultBuffer, never read
			require.NoError(t, err)
			subs = append(subs, s)
		}
		return subs
	}

	run() // warm up: buffers, files, pools
	var without, with []time.Duration
	var subStats []tap.SubscriptionStats
	for range pairs {
		without = append(without, run())
		// The destination point publishes a batch after the archive has
		// counted it: the engine's flush turn is the barrier after which
		// no batch of the run is still being sent, so none of it reaches
		// the subscriptions opened next.
		require.NoError(t, tr.eng.Flush(t.Context()))
		subs := stuck()
		with = append(with, run())
		for _, s := range subs {
			// The destination point publishes after the archive's write
			// has counted the lines: wait for its last batch.
			relaytest.WaitFor(t, 10*time.Second, func() bool { return s.Stats().Matched >= uint64(n) }, "every line offered")
			subStats = append(subStats, s.Stats())
			require.NoError(t, s.Close())
		}
	}
	var pointStats []tap.Stats
	for _, p := range points {
		pointStats = append(pointStats, tr.taps.Lookup(p).Stats())
	}
	checkBalanced(t, tr.stop(t))

	// The mechanism: every line offered to every stuck subscription, its
	// buffer filled once, the rest counted as dropped.
	for i, st := range subStats {
		p := points[i%len(points)]
		assert.Equal(t, uint64(n), st.Matched, p)
		assert.Equal(t, uint64(tap.DefaultBuffer), st.Delivered, p)
		assert.Equal(t, uint64(n-tap.DefaultBuffer), st.Dropped, p)
		assert.Equal(t, st.Matched, st.Delivered+st.Dropped, p)
	}
	for i, p := range points {
		st := pointStats[i]
		assert.Equal(t, uint64(n*pairs), st.Events, p)
		assert.Equal(t, st.Events, st.Delivered+st.Dropped, p)
	}

	// The time each run took is a measurement, not a check (a test
	// asserts no rate): BENCHMARKS.md records it.
	mw, mt := median(without), median(with)
	t.Logf("%d lines per run, %d pairs: median %v (%.0f ev/s) without, %v with a stuck subscriber at %d points (%+.1f %%); runs without %v, with %v",
		n, pairs, mw, float64(n)/mw.Seconds(), mt, len(points), 100*(mt.Seconds()/mw.Seconds()-1), without, with)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
