package service

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/dest"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/relaykit/relaykit/forward/forwardtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forwardConfig adds HEC and Sentinel destinations (the forwardtest
// servers) with non-final routes in front of the final archive route: every
// event goes to all three.
func forwardConfig(t *testing.T, hec *forwardtest.HECServer, dcr *forwardtest.DCRServer) config.Config {
	t.Helper()
	cfg := relaytest.TestConfig(t)
	dc := dcr.Config()
	t.Setenv("TEST_HEC_TOKEN", hec.Token())
	t.Setenv("TEST_SENTINEL_SECRET", dc.ClientSecret)
	// A long budget: these tests are about what arrives, not timing, and
	// run under the race detector on a shared machine, where one request
	// may take seconds (a timed-out attempt is sent again: a duplicate).
	fast := config.RetryConfig{MaxAttempts: 2, MaxElapsed: 20 * time.Second, InitialBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}
	cfg.Destinations["hec"] = config.DestinationConfig{Spec: &dest.HECDestination{URL: hec.URL, Token: "${TEST_HEC_TOKEN}",
		NetworkSettings: dest.NetworkSettings{Retry: fast, Timeout: 5 * time.Second}}}
	cfg.Destinations["sentinel"] = config.DestinationConfig{Spec: &dest.SentinelDestination{
		Endpoint: dcr.URL, AuthorityHost: dcr.AuthorityHost,
		DCRImmutableID: dc.DCRImmutableID, Stream: dc.Stream, TenantID: dc.TenantID, ClientID: dc.ClientID,
		ClientSecret: "${TEST_SENTINEL_SECRET}", NetworkSettings: dest.NetworkSettings{Retry: fast, Timeout: 5 * time.Second},
	}}
	cfg.Routes = append([]config.RouteConfig{
		{Name: "to-hec", Destinations: []string{"hec"}},
		{Name: "to-sentinel", Destinations: []string{"sentinel"}},
	}, cfg.Routes...)
	// The secrets are expanded as a config file would be.
	cfg = expandForTest(t, cfg)
	return cfg
}

// expandForTest applies ${VAR} expansion to the secrets, as LoadConfig does
// for a file.
func expandForTest(t *testing.T, cfg config.Config) config.Config {
	t.Helper()
	for _, d := range cfg.Destinations {
		switch d := d.Spec.(type) {
		case *dest.HECDestination:
			d.Token = config.Secret(expandString(t, string(d.Token)))
		case *dest.SentinelDestination:
			d.ClientSecret = config.Secret(expandString(t, string(d.ClientSecret)))
		}
	}
	return cfg
}

func expandString(t *testing.T, s string) string {
	t.Helper()
	out, missing := config.ExpandValue(s)
	require.Empty(t, missing)
	return out
}

// TestForward: loggen and logger → relay → HEC, Sentinel and archive; every
// event arrives once at each, with the right fields, and the ledger
// balances.
func TestForward(t *testing.T) {
	relaytest.NeedTool(t, "loggen")
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	dcr := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	cfg := forwardConfig(t, hec, dcr)
	tr := startRelay(t, cfg)

	runTool(t, "logger", "-n", "127.0.0.1", "-P", tr.port("tcp"), "-T", "--rfc5424", "-t", "fwdtag", "-p", "auth.err", "forward me")
	out := runTool(t, "loggen", "--inet", "--stream", "--syslog-proto", "--rate", "2000", "--interval", "1", "127.0.0.1", tr.port("tcp"))
	total := loggenCount(t, out) + 1
	relaytest.WaitFor(t, 30*time.Second, func() bool {
		s := tr.Ledger()
		return s.Dest["hec"].Delivered == int64(total) && s.Dest["sentinel"].Delivered == int64(total) && s.Dest["archive"].Delivered == int64(total)
	}, "every event at every destination")
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Equal(t, int64(total), s.Received)
	assert.Equal(t, int64(2*total), s.Delivered)
	assert.Equal(t, int64(total), s.Archived)
	assert.Zero(t, s.DroppedTotal())

	// HEC: each message indexed exactly once, with the syslog metadata.
	counts := hec.Counts()
	assert.Len(t, counts, total)
	for m, n := range counts {
		assert.Equal(t, 1, n, "HEC indexed %q %d times", m, n)
	}
	var found bool
	for _, e := range hec.Events() {
		if e.Message() == "forward me" {
			found = true
			assert.Equal(t, "fwdtag", e.Source)
			assert.Equal(t, "syslog", e.SourceType)
			assert.NotEmpty(t, e.Host)
			assert.NotEmpty(t, e.Time)
		}
	}
	assert.True(t, found, "logger's event reached HEC")

	// Sentinel: each row once, with the mapped columns.
	rows := dcr.Rows()
	require.Len(t, rows, total)
	seen := map[string]int{}
	for _, r := range rows {
		msg, _ := r["RawData"].(string)
		seen[msg]++
		assert.NotEmpty(t, r["TimeGenerated"])
		assert.NotEmpty(t, r["Computer"])
		if msg == "forward me" {
			assert.Equal(t, "fwdtag", r["ProcessName"])
			assert.EqualValues(t, "4", fmt.Sprint(r["Facility"]), "auth")
			assert.EqualValues(t, "3", fmt.Sprint(r["SeverityLevel"]), "err")
		}
	}
	assert.Len(t, seen, total)
	for _, r := range dcr.Requests() {
		assert.True(t, r.Gzip, "Sentinel requests are gzipped")
	}
	assert.Equal(t, counts, seen, "HEC and Sentinel got the same messages")
}

// TestOutageSpoolReplay: HEC answers 503 (server busy) and Sentinel 503 for
// a while; the failed batches are spooled and replayed when they recover.
// Nothing is lost or duplicated.
func TestOutageSpoolReplay(t *testing.T) {
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	dcr := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	cfg := forwardConfig(t, hec, dcr)
	tr := startRelay(t, cfg)
	const outage = 8 // failed requests: 4 batches × 2 attempts
	hec.Busy(outage)
	faults := make([]forwardtest.DCRFault, outage)
	for i := range faults {
		faults[i] = forwardtest.DCRFault{Status: 503}
	}
	dcr.Inject(faults...)

	conn, err := net.Dial("tcp", tr.addr("tcp"))
	require.NoError(t, err)
	const total = 3000
	var b strings.Builder
	for i := range total {
		fmt.Fprintf(&b, "<14>1 2026-11-22T01:00:00Z h app - - - outage event %d\n", i)
	}
	_, err = conn.Write([]byte(b.String()))
	require.NoError(t, err)
	require.NoError(t, conn.Close())

	// Wait on the relay's own ledger: a destination may hold every event
	// while the response to the last replayed request is still on its way,
	// and stopping then would (correctly) spool that request again.
	relaytest.WaitFor(t, 30*time.Second, func() bool {
		s := tr.Ledger()
		return s.Dest["hec"].Delivered == total && s.Dest["sentinel"].Delivered == total &&
			s.Dest["archive"].Delivered == total && s.Spooled == 0
	}, "all events delivered after the outage")
	s := tr.stop(t)
	checkBalanced(t, s)
	for _, name := range []string{"hec", "sentinel"} {
		d := s.Dest[name]
		assert.Positive(t, d.Spooled, "%s: events were spooled during the outage", name)
		assert.Zero(t, d.Pending, "%s: every spooled event was delivered", name)
		assert.Equal(t, int64(total), d.Delivered, name)
		assert.Zero(t, d.Dropped, name)
	}
	for m, n := range hec.Counts() {
		require.Equal(t, 1, n, "HEC indexed %q %d times", m, n)
	}
	seen := map[any]int{}
	for _, r := range dcr.Rows() {
		seen[r["RawData"]]++
	}
	assert.Len(t, seen, total)
}

// TestShutdownSpoolsAndRestartReplays: HEC hangs while the relay stops; at
// the shutdown deadline the undelivered events are spooled (nothing is
// dropped), and the next run, with a healthy HEC, replays them once.
func TestShutdownSpoolsAndRestartReplays(t *testing.T) {
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	hec.Slow(1000, time.Minute)
	cfg := relaytest.TestConfig(t)
	cfg.ShutdownTimeout = time.Second
	cfg.Destinations["hec"] = config.DestinationConfig{Spec: &dest.HECDestination{URL: hec.URL, Token: config.Secret(hec.Token()),
		NetworkSettings: dest.NetworkSettings{Timeout: time.Minute}}}
	cfg.Routes = append([]config.RouteConfig{{Name: "to-hec", Destinations: []string{"hec"}}}, cfg.Routes...)
	tr := startRelay(t, cfg)
	const total = 500
	var b strings.Builder
	for i := range total {
		fmt.Fprintf(&b, "<14>1 2026-11-22T01:00:00Z h app - - - spooled at shutdown %d\n", i)
	}
	relaytest.Send(t, "tcp", tr.addr("tcp"), []byte(b.String()))
	// Sinks of a batch are sent to in turn: the hanging HEC holds up the
	// archive too, until the shutdown deadline.
	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Received == total && hec.Requests() > 0 },
		"events received and HEC busy")
	s := tr.stop(t)
	checkBalanced(t, s)
	h := s.Dest["hec"]
	assert.Equal(t, int64(total), h.In)
	assert.Equal(t, int64(total), h.Backlog, "every HEC event in the spool, none dropped")
	assert.Equal(t, int64(total), h.Pending)
	assert.Zero(t, h.Delivered+h.Dropped+h.Memory)
	assert.Equal(t, int64(total), s.Archived)
	assert.Zero(t, s.DroppedTotal())
	assert.Empty(t, hec.Counts())

	// Restart with the same spool and a healthy HEC: the spool is replayed.
	hec2 := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	d := relaytest.SpecOf[*dest.HECDestination](cfg, "hec")
	d.URL, d.Token = hec2.URL, config.Secret(hec2.Token())
	cfg.Destinations["archive"] = config.DestinationConfig{Spec: &dest.ArchiveDestination{Dir: t.TempDir(), Format: "json"}}
	tr2 := startRelay(t, cfg)
	relaytest.WaitFor(t, 20*time.Second, func() bool { return tr2.Ledger().Dest["hec"].Delivered == total }, "spool replayed after restart")
	s2 := tr2.stop(t)
	checkBalanced(t, s2)
	h = s2.Dest["hec"]
	assert.Equal(t, int64(total), h.Recovered, "the restarted relay knows the backlog it found")
	assert.Equal(t, int64(total), h.Delivered)
	assert.Zero(t, h.In+h.Dropped+h.Backlog+h.Pending)
	for m, n := range hec2.Counts() {
		assert.Equal(t, 1, n, "%q indexed %d times", m, n)
	}
}
