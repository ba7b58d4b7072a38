package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/dest"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward/forwardtest"
)

// TestReduceStepConfig: the reduction steps load from YAML, and a bad value
// is a config error naming the route and the step.
func TestReduceStepConfig(t *testing.T) {
	const head = "routes:\n  - name: fw\n    final: true\n    destinations: [archive]\n    pipeline:\n"
	good := head + `      - {type: suppress, key: [host, source], allow: 1, window: 30s, max_keys: 500}
      - {type: aggregate, key: [src, dst, dpt, act], window: 1m, sum: [bytes], min: [bytes], max: [bytes], sourcetype: fw:agg}
      - {type: sample, n: 10, key: [host]}
      - {type: sample, dynamic: true, key: [host], window: 10s, min_events: 5, max_rate: 100}
      - {type: sample, n: 4}
      - {type: keep, fields: [src, "cef.*"]}
`
	cfg, err := config.LoadConfig(relaytest.WriteConfig(t, good))
	require.NoError(t, err)
	steps := cfg.Routes[0].Pipeline
	require.Len(t, steps, 6)
	assert.Equal(t, []string{"host", "source"}, steps[0].Key)
	assert.Equal(t, 30*time.Second, steps[0].Window)
	assert.Equal(t, 500, steps[0].MaxKeys)
	assert.Equal(t, []string{"bytes"}, steps[1].Sum)
	assert.Equal(t, "fw:agg", steps[1].SourceType)
	assert.True(t, steps[3].Dynamic)
	assert.Equal(t, []string{"src", "cef.*"}, steps[5].Fields.Names)
	for _, sc := range steps {
		fn, err := config.BuiltinStep(sc)
		require.NoError(t, err, sc.Type)
		assert.Equal(t, sc.Type, fn.Name())
	}

	tests := []struct{ name, step, want string }{
		{"negative allow", "{type: suppress, allow: -1}", "suppress: allow -1 is negative"},
		{"window below the tick", "{type: suppress, window: 100ms}", "suppress: window 100ms is shorter than 1s"},
		{"negative window", "{type: aggregate, window: -1m}", "aggregate: window -1m0s is shorter than 1s"},
		{"negative max_keys", "{type: aggregate, max_keys: -5}", "aggregate: max_keys -5 is negative"},
		{"empty key name", "{type: suppress, key: [host, '']}", "suppress: key[1] is empty"},
		{"empty sum name", "{type: aggregate, sum: ['']}", "aggregate: empty sum field name"},
		{"too many key names", "{type: aggregate, key: [a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q]}", "aggregate: 17 key names, more than 16"},
		{"n with dynamic", "{type: sample, n: 10, dynamic: true}", "sample: n is not used with dynamic: true"},
		{"sample without n", "{type: sample, key: [host]}", "sample: n must be at least 1"},
		{"dynamic settings without dynamic", "{type: sample, n: 2, key: [host], max_rate: 5}", "sample: window, min_events and max_rate are for dynamic: true"},
		{"keep without fields", "{type: keep}", "keep: fields is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.LoadConfig(relaytest.WriteConfig(t, head+"      - {type: set, field: x, value: y}\n      - "+tt.step+"\n"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "routes[0].pipeline[1]: line 7: "+tt.want, "the step's line")
			assert.Contains(t, err.Error(), `(route "fw")`)
		})
	}
}

// denyLine and flowLine are CEF events over RFC 5424 syslog, the relay's
// syslog input parsing the CEF extension into fields (src, dst, dpt, act,
// out).
func denyLine() string {
	return "<134>1 2026-11-27T10:00:00.000Z fw01 FW - - - CEF:0|Acme|Firewall|1.0|100|deny|5|" +
		"src=198.51.100.7 dst=10.0.0.2 dpt=22 proto=6 act=deny out=60\n"
}

func flowLine(src string, dpt, out int) string {
	return fmt.Sprintf("<134>1 2026-11-27T10:00:00.000Z fw01 FW - - - CEF:0|Acme|Firewall|1.0|200|accept|3|"+
		"src=%s dst=10.0.0.9 dpt=%d proto=6 act=accept out=%d\n", src, dpt, out)
}

// reduceRoutes puts a suppress route for deny events and an aggregate
// route for accepted flows, both to dest with the summary fields renamed
// to the CommonSecurityLog's keys (cnt: EventCount, out: SentBytes), in
// front of the default archive route.
func reduceRoutes(cfg *config.Config, dest string, window time.Duration) {
	cfg.Routes = append([]config.RouteConfig{
		{Name: "deny", Field: "act", Filter: "^deny$", Final: true, Destinations: []string{dest}, Pipeline: []config.StepConfig{
			{Type: "suppress", Key: []string{"host", "source"}, Allow: 1, Window: window},
			{Type: "rename", Field: "suppressed_count", To: "cnt"},
		}},
		{Name: "flows", Field: "act", Filter: "^accept$", Final: true, Destinations: []string{dest}, Pipeline: []config.StepConfig{
			{Type: "aggregate", Key: []string{"src", "dst", "dpt", "act"}, Window: window, Sum: []string{"out"}},
			{Type: "rename", Field: "count", To: "cnt"},
			{Type: "rename", Field: "sum_out", To: "out"},
		}},
	}, cfg.Routes...)
}

// noWindowEnd is a window that does not end while a test runs (windows
// are aligned to the Unix epoch: this one ends once a year), so that only
// the shutdown or a reload can end it.
const noWindowEnd = 8760 * time.Hour

// TestReduceSuppressAggregateSentinel: 10,000 identical deny lines from one
// host in a burst reach the CommonSecurityLog stand-in as the one allowed
// event plus one summary whose count adds up; accepted flows arrive as one
// summary per (src, dst, dpt, act) with count and sum in the table's int
// and long columns (the stand-in refuses a row whose values do not fit the
// schema); the windows are still open when the relay stops, and the
// shutdown sends their summaries; the ledger counts reduced and produced.
func TestReduceSuppressAggregateSentinel(t *testing.T) {
	dcr := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{Stream: "Microsoft-CommonSecurityLog"})
	cfg := relaytest.TestConfig(t)
	c := dcr.Config()
	cfg.Destinations["sentinel"] = config.DestinationConfig{Spec: &dest.SentinelDestination{
		Table: "common_security_log", Endpoint: dcr.URL, AuthorityHost: dcr.AuthorityHost,
		DCRImmutableID: c.DCRImmutableID, TenantID: c.TenantID, ClientID: c.ClientID, ClientSecret: config.Secret(c.ClientSecret),
		NetworkSettings: dest.NetworkSettings{Timeout: 5 * time.Second},
	}}
	reduceRoutes(&cfg, "sentinel", noWindowEnd)
	tr := startRelay(t, cfg)

	const denies = 10000
	var burst bytes.Buffer
	for range denies {
		burst.WriteString(denyLine())
	}
	// Accepted flows: three groups, reference counts and sums.
	type group struct {
		src  string
		dpt  int
		n    int
		sent int64
	}
	groups := []*group{{src: "192.0.2.1", dpt: 443}, {src: "192.0.2.2", dpt: 443}, {src: "192.0.2.1", dpt: 53}}
	flows := 0
	for i := range 600 {
		g := groups[i%len(groups)]
		if i%7 == 0 {
			g = groups[0] // skew
		}
		out := 1000 + i*37
		g.n++
		g.sent += int64(out)
		flows++
		burst.WriteString(flowLine(g.src, g.dpt, out))
	}
	relaytest.Send(t, "tcp", tr.addr("tcp"), burst.Bytes())

	// The router counts a batch's reduced events when the batch's Route
	// call returns, after the engine counted it routed.
	relaytest.WaitFor(t, 30*time.Second, func() bool {
		s := tr.Ledger()
		return s.Routed == denies+int64(flows) && s.ReducedTotal() == denies-1+int64(flows) && s.Dest["sentinel"].Delivered == 1
	}, "every line routed: the first deny delivered, the rest absorbed")
	s := tr.Ledger()
	require.Equal(t, map[string]int64{"suppress": denies - 1, "aggregate": int64(flows)}, s.Reduced, "%s", s)
	require.Empty(t, s.Produced, "windows still open: no summary yet")
	assert.Equal(t, float64(denies-1), metricValue(t, tr, "relay_reduced_events_total", "step", "suppress"))
	assert.Equal(t, float64(flows), metricValue(t, tr, "relay_reduced_events_total", "step", "aggregate"))
	assert.Zero(t, metricValue(t, tr, "relay_produced_events_total", "step", "suppress"))

	s = tr.stop(t)
	checkBalanced(t, s)
	assert.Zero(t, s.DroppedTotal(), "no row refused by the table schema: %s", s)
	assert.Equal(t, map[string]int64{"suppress": 1, "aggregate": int64(len(groups))}, s.Produced)
	assert.Equal(t, int64(2+len(groups)), s.Dest["sentinel"].Delivered)
	assert.Contains(t, s.String(), fmt.Sprintf("reduced=%d{aggregate=%d,suppress=%d} produced=%d{aggregate=%d,suppress=1}",
		denies-1+flows, flows, denies-1, len(groups)+1, len(groups)))

	rows := dcr.Rows()
	require.Len(t, rows, 2+len(groups))
	var allowed, summaries int
	seen := map[string]bool{}
	for _, r := range rows {
		switch {
		case r["DeviceAction"] == "deny" && r["EventCount"] == nil:
			allowed++
			assert.Equal(t, "198.51.100.7", r["SourceIP"])
		case r["DeviceAction"] == "deny":
			summaries++
			assert.Equal(t, json.Number(strconv.Itoa(denies-1)), r["EventCount"], "suppressed_count in the int column")
			assert.Equal(t, "fw01", r["Computer"])
			assert.Contains(t, r["AdditionalExtensions"], "first_seen=")
			assert.Contains(t, r["AdditionalExtensions"], "last_seen=")
		default:
			require.Equal(t, "accept", r["DeviceAction"], "%v", r)
			key := fmt.Sprintf("%v/%v", r["SourceIP"], r["DestinationPort"])
			var g *group
			for _, c := range groups {
				if key == fmt.Sprintf("%s/%d", c.src, c.dpt) {
					g = c
				}
			}
			require.NotNil(t, g, "summary of an unknown group: %v", r)
			require.False(t, seen[key], "one summary per group and window: %v", r)
			seen[key] = true
			assert.Equal(t, "10.0.0.9", r["DestinationIP"])
			assert.Equal(t, json.Number(strconv.Itoa(g.dpt)), r["DestinationPort"], "int column")
			assert.Equal(t, json.Number(strconv.Itoa(g.n)), r["EventCount"], "count in the int column")
			assert.Equal(t, json.Number(strconv.FormatInt(g.sent, 10)), r["SentBytes"], "sum in the long column")
		}
	}
	assert.Equal(t, 1, allowed, "allow: 1 lets the first deny through")
	assert.Equal(t, 1, summaries, "one summary for the 9,999 suppressed")
	assert.Len(t, seen, len(groups))
}

// dedupConfig is the default config with a suppress route in front of the
// archive.
func dedupRoutes(window time.Duration) []config.RouteConfig {
	return []config.RouteConfig{
		{Name: "dedup", Final: true, Destinations: []string{"archive"}, Pipeline: []config.StepConfig{
			{Type: "suppress", Window: window},
		}},
	}
}

// suppressedIn reads the archive: the events let through and the sum of
// the summaries' suppressed_count.
func suppressedIn(t *testing.T, dir string) (passed, summaries int, suppressed int64) {
	t.Helper()
	for _, r := range archivedRecords(t, dir) {
		v, ok := r.Fields["suppressed_count"]
		if !ok {
			passed++
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		require.NoError(t, err)
		summaries++
		suppressed += n
	}
	return
}

// TestReduceWindowEndsOnTimer: a key that goes quiet gets its summary when
// its window ends, from the relay's ticker, not when its next event comes
// or at shutdown.
func TestReduceWindowEndsOnTimer(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	cfg.Routes = dedupRoutes(time.Second)
	tr := startRelay(t, cfg)
	const n = 200
	var burst bytes.Buffer
	for range n {
		burst.WriteString("<13>1 - h app - - - link down on port 7\n")
	}
	relaytest.Send(t, "tcp", tr.addr("tcp"), burst.Bytes())
	// The burst may straddle a window boundary: each window has its
	// allowed event and, if it absorbed any, its summary.
	relaytest.WaitFor(t, 30*time.Second, func() bool {
		s := tr.Ledger()
		return s.Routed == n && s.ReducedTotal() > 0 && s.ProducedTotal() > 0 &&
			s.Dest["archive"].Delivered == n-s.ReducedTotal()+s.ProducedTotal()
	}, "the summary delivered while the relay runs, nothing left in the window")
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Equal(t, n-s.ReducedTotal()+s.ProducedTotal(), s.Dest["archive"].Delivered)
	passed, summaries, suppressed := suppressedIn(t, relaytest.ArchiveOf(cfg).Dir)
	assert.Equal(t, n, passed+int(suppressed), "events let through + suppressed_count = input")
	assert.Equal(t, int(s.Produced["suppress"]), summaries)
	assert.Equal(t, s.Reduced["suppress"], suppressed)
}

// TestReduceReloadFlushesOldRoutes: a reload ends the windows of the
// previous route table at once, its summaries delivered while the relay
// runs; the new table starts afresh, and its state is flushed at shutdown.
func TestReduceReloadFlushesOldRoutes(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	cfg.Routes = dedupRoutes(noWindowEnd)
	tr := startRelay(t, cfg)
	line := []byte("<13>1 - h app - - - disk almost full\n")
	burst := bytes.Repeat(line, 50)
	relaytest.Send(t, "tcp", tr.addr("tcp"), burst)
	relaytest.WaitFor(t, 30*time.Second, func() bool {
		s := tr.Ledger()
		return s.Routed == 50 && s.Reduced["suppress"] == 49 && s.Dest["archive"].Delivered == 1
	}, "the first event delivered, 49 absorbed")
	require.Equal(t, int64(49), tr.Ledger().Reduced["suppress"])
	require.Zero(t, tr.Ledger().ProducedTotal())

	require.NoError(t, tr.ReloadRoutes(dedupRoutes(noWindowEnd)))
	s := tr.Ledger()
	assert.Equal(t, int64(1), s.Produced["suppress"], "the old table's summary produced by the reload")
	relaytest.WaitFor(t, 30*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == 2 }, "the old table's summary delivered")

	relaytest.Send(t, "tcp", tr.addr("tcp"), burst)
	relaytest.WaitFor(t, 30*time.Second, func() bool {
		s := tr.Ledger()
		return s.Routed == 100 && s.Reduced["suppress"] == 98 && s.Dest["archive"].Delivered == 3
	}, "the new table lets the key's first event through again, absorbs the rest")
	s = tr.stop(t)
	checkBalanced(t, s)
	assert.Equal(t, map[string]int64{"suppress": 98}, s.Reduced)
	assert.Equal(t, map[string]int64{"suppress": 2}, s.Produced)
	assert.Equal(t, int64(4), s.Dest["archive"].Delivered)
	passed, summaries, suppressed := suppressedIn(t, relaytest.ArchiveOf(cfg).Dir)
	assert.Equal(t, 2, passed)
	assert.Equal(t, 2, summaries)
	assert.Equal(t, int64(98), suppressed)
}

// TestReduceHECAnswerBeforeSummary pins the acknowledgement contract of
// the README's Reduction section: an HEC request whose events a suppress
// step absorbed is answered Success once they are routed, while their
// summary is still in memory (its window open); the summary is delivered
// at shutdown.
func TestReduceHECAnswerBeforeSummary(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	hecInputConfig(&cfg)
	cfg.Routes = dedupRoutes(noWindowEnd)
	tr := startRelay(t, cfg)
	url := "http://" + tr.addr("hec") + "/services/collector/event"
	body := bytes.Repeat([]byte(`{"event":"same message","host":"h1"}`), 20)
	status, m := hecPost(t, url, testHECToken, body, false)
	require.Equal(t, http.StatusOK, status, "%v", m)
	s := tr.Ledger()
	assert.Equal(t, int64(1), s.Archived, "the allowed event archived before the answer")
	assert.Equal(t, int64(19), s.Reduced["suppress"], "the others absorbed before the answer")
	assert.Zero(t, s.ProducedTotal(), "answered while the summary is still in memory")

	s = tr.stop(t)
	checkBalanced(t, s)
	assert.Equal(t, int64(2), s.Archived, "the summary delivered at shutdown")
	passed, summaries, suppressed := suppressedIn(t, relaytest.ArchiveOf(cfg).Dir)
	assert.Equal(t, []int64{1, 1, 19}, []int64{int64(passed), int64(summaries), suppressed})
}

// TestReduceUnseenKeyField: a suppress step whose key names a field no
// event carries (a misspelt name) counts every event as a key miss, in
// relay_step_key_misses_total, names the field in
// relay_step_unseen_key_fields, and is logged once, as a warning, after
// 1,000 events.
func TestReduceUnseenKeyField(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	cfg.Inputs.Generator = config.GeneratorConfig{Rate: 20000, Shape: "sshd", Count: 2000}
	cfg.Routes[0].Pipeline = []config.StepConfig{{Type: "suppress", Key: []string{"host", "usr"}, Allow: 1000000}}
	require.NoError(t, cfg.Validate())
	var log lockedBuffer
	r, err := NewRelay(cfg, slog.New(slog.NewTextHandler(&log, nil)))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
		checkBalanced(t, r.Ledger())
	}()
	const warning = "a step's key names fields no event has carried"
	relaytest.WaitFor(t, 20*time.Second, func() bool { return strings.Contains(log.String(), warning) }, "the unseen key field's warning")
	relaytest.WaitFor(t, 20*time.Second, func() bool { return r.Ledger().Input["generator"] == 2000 }, "every event generated")
	line := log.String()[strings.Index(log.String(), warning):]
	line = line[:strings.IndexByte(line, '\n')]
	assert.Contains(t, line, "route="+cfg.Routes[0].Name+" step=suppress position=0 fields=usr")
	metrics := "http://" + r.metrics.Addr() + "/metrics"
	route := cfg.Routes[0].Name
	assert.Equal(t, float64(1), scrapeSample(metrics, `relay_step_unseen_key_fields{field="usr",position="0",route="`+route+`",step="suppress"}`))
	assert.GreaterOrEqual(t, scrapeSample(metrics, `relay_step_key_misses_total{position="0",route="`+route+`",step="suppress"}`), float64(1000))
	// Once per step, however many ticks see it still unseen.
	r.ledger.CheckKeys(slog.New(slog.NewTextHandler(&log, nil)))
	assert.Equal(t, 1, strings.Count(log.String(), warning))
}
