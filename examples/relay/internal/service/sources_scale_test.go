package service

import (
	"fmt"
	"net/netip"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/relaykit/relaykit/sources"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scaleAddr is the i-th sender of TestSourcesManyUDPSenders: a loopback
// address of 127.1.1.1 and up (Linux routes all of 127/8 to lo, so a
// socket binds any of them without configuration), host parts 0 and 255
// left out.
func scaleAddr(i int) [4]byte {
	return [4]byte{127, byte(1 + i/(254*254)), byte(1 + i/254%254), byte(1 + i%254)}
}

// TestSourcesManyUDPSenders: 100,000 distinct UDP senders, each a socket
// bound to its own loopback address that sends one datagram, into a relay
// with max_sources 10,000. The tracker never holds more than 10,000 keys,
// counts the 90,000 evictions (metric and stats), and once silent_after
// has passed for every sender, the silent alerts (metric, log lines,
// health events) name only sources still tracked: none for an evicted
// one. silent_after is an hour while the senders send (a sender kept
// longer than silent_after before its eviction would rightly be reported
// silent while still tracked, and under the race detector sending takes
// tens of seconds), then reloaded to 2 s, which every sender, evicted or
// not, is past. Every datagram is received and archived, and the ledger balances
// with the health events in it. (The heap per key is measured at the
// library, sources.TestMemoryBoundedNoRace.)
func TestSourcesManyUDPSenders(t *testing.T) {
	const (
		distinct = 100_000
		maxKeys  = 10_000
		chunk    = 1000 // datagrams sent before waiting for the relay to take them (no rcvbuf drop)
	)
	cfg := sourcesConfig(t)
	cfg.Sources.MaxSources = maxKeys
	cfg.Sources.SilentAfter = time.Hour
	tr, logs := startRelayLogged(t, cfg)
	udpAddr := netip.MustParseAddrPort(tr.addr("udp"))
	to := &syscall.SockaddrInet4{Port: int(udpAddr.Port()), Addr: udpAddr.Addr().As4()}

	send := func(i int) {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
		require.NoError(t, err)
		defer syscall.Close(fd)
		require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: scaleAddr(i)}), "bind %v", scaleAddr(i))
		msg := fmt.Appendf(nil, "<13>1 2026-11-27T10:00:00Z scale app - - - sender %d", i)
		require.NoError(t, syscall.Sendto(fd, msg, 0, to))
	}
	start := time.Now()
	maxTracked := 0
	for i := range distinct {
		send(i)
		if (i+1)%chunk == 0 {
			relaytest.WaitFor(t, 20*time.Second, func() bool { return tr.Ledger().Input["udp"] >= int64(i+1) }, "the chunk received")
			maxTracked = max(maxTracked, tr.sources.Tracker.Stats().Keys)
			if (i+1)%(20*chunk) == 0 {
				assert.LessOrEqual(t, metricValue(t, tr, "relay_sources_tracked"), float64(maxKeys))
			}
		}
	}
	sent := time.Now()
	t.Logf("%d senders sent and received in %s", distinct, sent.Sub(start).Round(time.Millisecond))
	assert.LessOrEqual(t, maxTracked, maxKeys, "keys tracked at most max_sources")

	st := tr.sources.Tracker.Stats()
	assert.Equal(t, maxKeys, st.Keys)
	assert.EqualValues(t, distinct-maxKeys, st.Evictions, "evictions = distinct - max_sources")
	assert.EqualValues(t, distinct-maxKeys, metricValue(t, tr, "relay_sources_evictions_total"))
	assert.EqualValues(t, maxKeys, metricValue(t, tr, "relay_sources_tracked"))
	kept := map[string]bool{}
	for _, s := range tr.sources.Tracker.Sources(nil, sources.Query{}) {
		kept[s.Key.String()] = true
	}
	require.Len(t, kept, maxKeys)
	// The most recent senders are among those kept (eviction takes the
	// least recently seen, to within the clock's resolution and the
	// readers' interleaving).
	for i := distinct - 100; i < distinct; i++ {
		a := scaleAddr(i)
		assert.True(t, kept[netip.AddrFrom4(a).String()], "recent sender %v evicted", a)
	}

	// Every sender, the first ones sent included, is past the reloaded
	// silent_after: wait for the tracker to report at least three ticks'
	// worth of silent sources (100 a tick), then check that each one
	// reported is a kept one.
	assert.Zero(t, st.ToSilent, "none silent before the reload")
	nc := cfg.Sources
	nc.SilentAfter = testSilentAfter
	require.NoError(t, tr.ReloadSources(nc))
	relaytest.WaitFor(t, testSilentAfter+20*time.Second, func() bool {
		return metricValue(t, tr, "relay_source_transitions_total", "state", "silent") >= 300
	}, "silent sources reported")
	assert.GreaterOrEqual(t, time.Since(sent), testSilentAfter)
	silentAPI := apiSources(t, tr, "?state=silent")
	require.NotEmpty(t, silentAPI)
	for _, s := range silentAPI {
		assert.True(t, kept[s.Source], "evicted source %s reported silent (API)", s.Source)
	}
	s := tr.stop(t)
	checkBalanced(t, s)
	final := tr.sources.Tracker.Stats()
	assert.Zero(t, s.Dropped[ledger.DropRcvbuf])
	assert.EqualValues(t, distinct, s.Input["udp"])
	assert.EqualValues(t, final.ToSilent, s.Input[config.HealthInputName], "one health event per transition")
	assert.Zero(t, final.ToActive)
	assert.EqualValues(t, distinct-maxKeys, final.Evictions, "no more evictions after the senders stopped")

	logged := 0
	sourceAttr := regexp.MustCompile(`msg="source silent" source=(\S+)`)
	for _, m := range sourceAttr.FindAllStringSubmatch(logs.String(), -1) {
		logged++
		assert.True(t, kept[m[1]], "evicted source %s reported silent (log)", m[1])
	}
	assert.EqualValues(t, final.ToSilent, logged, "one log line per transition")
	health, scale := 0, 0
	for _, r := range archivedRecords(t, relaytest.ArchiveOf(cfg).Dir) {
		switch {
		case r.SourceType == "relay:source_health":
			health++
			assert.Equal(t, "silent", r.Fields["source_state"])
			assert.True(t, kept[r.Host], "evicted source %s reported silent (health event)", r.Host)
		case r.Host == "scale":
			scale++
		}
	}
	assert.EqualValues(t, final.ToSilent, health, "every health event archived")
	assert.Equal(t, distinct, scale, "every datagram archived")
}

// String returns everything logged so far.
func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
