package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/api"
	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/input"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/sources"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testSilentAfter is the silence threshold of the tests: short, so that
// they wait seconds, not minutes.
const testSilentAfter = 2 * time.Second

// sourcesConfig is testConfig with sources tracked, silent after
// testSilentAfter, the rest at the shipped defaults.
func sourcesConfig(t *testing.T) config.Config {
	t.Helper()
	cfg := relaytest.TestConfig(t)
	cfg.Sources = config.SourcesConfig{Enabled: true, SilentAfter: testSilentAfter}
	require.NoError(t, cfg.Validate())
	return cfg
}

// logBuffer keeps what a relay logs, for tests to look for lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// count returns the number of lines holding every one of subs.
func (b *logBuffer) count(subs ...string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
next:
	for line := range strings.Lines(b.buf.String()) {
		for _, s := range subs {
			if !strings.Contains(line, s) {
				continue next
			}
		}
		n++
	}
	return n
}

// startRelayLogged is startRelay with the relay's log also kept in the
// returned buffer.
func startRelayLogged(t *testing.T, cfg config.Config) (*testRelay, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	require.NoError(t, cfg.Validate())
	r, err := NewRelay(cfg, slog.New(slog.NewTextHandler(io.MultiWriter(testWriter{t}, logs), nil)))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	tr := &testRelay{Relay: r, cancel: cancel, done: make(chan error, 1)}
	go func() { tr.done <- r.Run(ctx) }()
	t.Cleanup(func() { tr.stop(t) })
	relaytest.WaitFor(t, 5*time.Second, func() bool { return r.healthy() == nil }, "relay ready")
	return tr, logs
}

// tcpSender sends a syslog line every interval over TCP from a loopback
// address of its own until stopped; it counts what it sent.
type tcpSender struct {
	from string
	stop chan struct{}
	done chan struct{}
	sent int          // read after close
	n    atomic.Int64 // sent, read while it runs
}

func startTCPSender(t *testing.T, from, to string, every time.Duration) *tcpSender {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", to)
	require.NoError(t, err, "dial from %s", from)
	s := &tcpSender{from: from, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer c.Close()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			line := fmt.Sprintf("<13>1 2026-11-27T10:00:00Z dev-%s app - - - event %d\n", from, s.sent)
			if _, err := c.Write([]byte(line)); err != nil {
				return
			}
			s.sent++
			s.n.Add(1)
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(s.close)
	return s
}

// count returns the number of lines sent so far.
func (s *tcpSender) count() int { return int(s.n.Load()) }

// close stops the sender and closes its connection (once).
func (s *tcpSender) close() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

// apiSources gets /api/sources with query q.
func apiSources(t *testing.T, tr *testRelay, q string) []api.SourceJSON {
	t.Helper()
	resp, err := http.Get("http://" + tr.addr("metrics") + "/api/sources" + q)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var out []api.SourceJSON
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

// healthEvents returns the source health events archived for source.
func healthEvents(t *testing.T, cfg config.Config, source, state string) []archiveRecord {
	t.Helper()
	var out []archiveRecord
	for _, r := range archivedRecords(t, relaytest.ArchiveOf(cfg).Dir) {
		if r.SourceType == "relay:source_health" && r.Host == source && r.Fields["source_state"] == state {
			out = append(out, r)
		}
	}
	return out
}

// TestSourcesSilentAndActive: three senders from 127.0.0.2-4 over TCP;
// the third stops and is reported silent within silent_after + 1 s by the
// metric, a log line, the API and a health event in the archive; it
// sends again and is reported active the same ways. The ledger balances
// with the health events in it.
func TestSourcesSilentAndActive(t *testing.T) {
	cfg := sourcesConfig(t)
	tr, logs := startRelayLogged(t, cfg)
	to := tr.addr("tcp")
	a := startTCPSender(t, "127.0.0.2", to, 50*time.Millisecond)
	b := startTCPSender(t, "127.0.0.3", to, 50*time.Millisecond)
	c := startTCPSender(t, "127.0.0.4", to, 50*time.Millisecond)
	relaytest.WaitFor(t, 10*time.Second, func() bool {
		active := apiSources(t, tr, "?state=active")
		return len(active) == 3 && slices.IndexFunc(active, func(s api.SourceJSON) bool { return s.Events < 20 }) < 0
	}, "three active sources, 20 events each")
	assert.Zero(t, metricValue(t, tr, "relay_sources_silent"))

	c.close()
	stopped := time.Now()
	relaytest.WaitFor(t, testSilentAfter+10*time.Second, func() bool { return metricValue(t, tr, "relay_sources_silent") == 1 }, "one silent source")
	// Detected at the relay's tick, not before silent_after (how soon after
	// is the sources package's, checked there on a manual clock).
	assert.GreaterOrEqual(t, time.Since(stopped), testSilentAfter-time.Second)
	silent := apiSources(t, tr, "?state=silent")
	require.Len(t, silent, 1)
	assert.Equal(t, "127.0.0.4", silent[0].Source)
	assert.Equal(t, "tcp", silent[0].Input)
	assert.EqualValues(t, c.sent, silent[0].Events)
	require.NotNil(t, silent[0].LastSeen)
	assert.Equal(t, 1.0, metricValue(t, tr, "relay_source_transitions_total", "state", "silent"))
	assert.Equal(t, 1, logs.count("source silent", "source=127.0.0.4"))
	var ev []archiveRecord
	relaytest.WaitFor(t, 10*time.Second, func() bool { ev = healthEvents(t, cfg, "127.0.0.4", "silent"); return len(ev) > 0 }, "silent health event archived")
	require.Len(t, ev, 1)
	assert.Equal(t, "relay", ev[0].Source)
	assert.Equal(t, "tcp", ev[0].Fields["source_input"])
	assert.Equal(t, strconv.Itoa(c.sent), ev[0].Fields["events_before"])
	secs, err := strconv.Atoi(ev[0].Fields["silent_for_seconds"])
	require.NoError(t, err)
	assert.LessOrEqual(t, secs, int((testSilentAfter + time.Second).Seconds()), "silent for at detection")
	assert.GreaterOrEqual(t, secs, int(testSilentAfter.Seconds()))
	assert.Equal(t, silent[0].LastSeen.Format(time.RFC3339Nano), ev[0].Fields["last_seen"])

	// The other two are still active, and the API sorts and cuts.
	top := apiSources(t, tr, "?sort=events&top=2")
	require.Len(t, top, 2)
	assert.GreaterOrEqual(t, top[0].Events, top[1].Events)
	assert.NotEqual(t, "127.0.0.4", top[0].Source)

	c2 := startTCPSender(t, "127.0.0.4", to, 50*time.Millisecond)
	relaytest.WaitFor(t, 10*time.Second, func() bool { return metricValue(t, tr, "relay_sources_silent") == 0 }, "the source active again")
	assert.Equal(t, 1.0, metricValue(t, tr, "relay_source_transitions_total", "state", "active"))
	assert.Equal(t, 1, logs.count("source active again", "source=127.0.0.4"))
	relaytest.WaitFor(t, 10*time.Second, func() bool { return len(healthEvents(t, cfg, "127.0.0.4", "active")) == 1 }, "active health event archived")
	assert.Len(t, apiSources(t, tr, "?state=active"), 3)

	for _, s := range []*tcpSender{a, b, c2} {
		s.close()
	}
	sent := int64(a.sent + b.sent + c.sent + c2.sent)
	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Input["tcp"] == sent }, "every event received")
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.EqualValues(t, 2, s.Input[config.HealthInputName], "two health events")
	assert.Equal(t, s.Received, s.Archived)
}

// TestSourcesSilentAfterRestart: a source that sent before a restart and
// is quiet after it is still reported silent, with its last event from
// the previous run, from the state file saved at shutdown.
func TestSourcesSilentAfterRestart(t *testing.T) {
	cfg := sourcesConfig(t)
	tr := startRelay(t, cfg)
	a := startTCPSender(t, "127.0.0.2", tr.addr("tcp"), 50*time.Millisecond)
	b := startTCPSender(t, "127.0.0.3", tr.addr("tcp"), 50*time.Millisecond)
	relaytest.WaitFor(t, 10*time.Second, func() bool { return len(apiSources(t, tr, "?state=active")) == 2 }, "two active sources")
	a.close()
	b.close()
	before := apiSources(t, tr, "?sort=source")
	require.Len(t, before, 2)
	tr.stop(t) // saves the state file

	tr2, logs := startRelayLogged(t, cfg)
	started := time.Now()
	a2 := startTCPSender(t, "127.0.0.2", tr2.addr("tcp"), 50*time.Millisecond)
	restored := apiSources(t, tr2, "?sort=source")
	require.Len(t, restored, 2, "known sources restored")
	assert.Equal(t, "127.0.0.3", restored[1].Source)
	assert.GreaterOrEqual(t, restored[1].Events, before[1].Events)

	relaytest.WaitFor(t, testSilentAfter+10*time.Second, func() bool { return metricValue(t, tr2, "relay_sources_silent") == 1 }, "the quiet source silent")
	assert.GreaterOrEqual(t, time.Since(started), testSilentAfter-time.Second, "a restored source has silent_after from the restart")
	silent := apiSources(t, tr2, "?state=silent")
	require.Len(t, silent, 1)
	assert.Equal(t, "127.0.0.3", silent[0].Source)
	assert.Equal(t, 1, logs.count("source silent", "source=127.0.0.3"))
	var ev []archiveRecord
	relaytest.WaitFor(t, 10*time.Second, func() bool { ev = healthEvents(t, cfg, "127.0.0.3", "silent"); return len(ev) > 0 }, "health event archived")
	require.Len(t, ev, 1)
	assert.Equal(t, before[1].LastSeen.Format(time.RFC3339Nano), ev[0].Fields["last_seen"], "the last event of the previous run")
	assert.Equal(t, strconv.FormatUint(before[1].Events, 10), ev[0].Fields["events_before"])
	a2.close()
	checkBalanced(t, tr2.stop(t))
}

// TestSourcesAPI checks the API's answers to bad queries, and that it is
// there only with sources tracked.
func TestSourcesAPI(t *testing.T) {
	tr := startRelay(t, sourcesConfig(t))
	get := func(tr *testRelay, q string) int {
		resp, err := http.Get("http://" + tr.addr("metrics") + "/api/sources" + q)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, get(tr, "?state=waiting&sort=rate&top=0&input=udp"))
	assert.Equal(t, http.StatusBadRequest, get(tr, "?state=asleep"))
	assert.Equal(t, http.StatusBadRequest, get(tr, "?sort=name"))
	assert.Equal(t, http.StatusBadRequest, get(tr, "?top=-1"))
	assert.Empty(t, apiSources(t, tr, ""))
	off := startRelay(t, relaytest.TestConfig(t))
	assert.Equal(t, http.StatusNotFound, get(off, ""))
}

// TestSourcesConfig checks the section's defaults and errors.
func TestSourcesConfig(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	assert.False(t, cfg.Sources.Enabled, "off by default")
	cfg.Sources = config.SourcesConfig{Enabled: true}
	require.NoError(t, cfg.Validate())
	assert.Equal(t, 10_000, cfg.Sources.MaxSources)
	assert.Equal(t, 5*time.Minute, cfg.Sources.SilentAfter)
	assert.Equal(t, config.RateModePace, cfg.Sources.RateLimit.Mode)
	assert.Equal(t, cfg.Spool.Dir+"/sources.state", cfg.Sources.StateFile)

	for _, tc := range []struct {
		name  string
		set   func(*config.SourcesConfig)
		field string
	}{
		{"mode", func(s *config.SourcesConfig) { s.RateLimit.Mode = "block" }, "sources.rate_limit.mode"},
		{"max", func(s *config.SourcesConfig) { s.MaxSources = 1; s.Expected = []string{"192.0.2.1"} }, "sources.max_sources"},
		{"key", func(s *config.SourcesConfig) { s.Keys = map[string]string{"udp": "mac"} }, "sources.keys.udp"},
		{"input", func(s *config.SourcesConfig) { s.Keys = map[string]string{"nope": "host"} }, "sources.keys.nope"},
		{"override", func(s *config.SourcesConfig) { s.Overrides = []config.SourceOverride{{Match: "~("}} }, "sources: sources: invalid config"},
		{"limit", func(s *config.SourcesConfig) { s.RateLimit.EventsPerSecond = 1e12 }, "sources: sources: invalid config"},
		{"name", func(s *config.SourcesConfig) {}, "sources: an input is named"},
		{"kafka", func(s *config.SourcesConfig) { s.Keys = map[string]string{"k": "address"} }, "sources.keys.k: kafka inputs are keyed by host only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := relaytest.TestConfig(t)
			cfg.Sources = config.SourcesConfig{Enabled: true}
			tc.set(&cfg.Sources)
			if tc.name == "name" {
				cfg.Inputs.SyslogUDP[0].Name = config.HealthInputName
			}
			cfg.Inputs.Kafka = []config.KafkaInputConfig{{Name: "k", Brokers: []string{"127.0.0.1:9092"}, Topics: []string{"t"}, Group: "g"}}
			err := cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
		})
	}
}

// TestSourcesReload: a reload replaces the policy, and refuses what needs
// a restart.
func TestSourcesReload(t *testing.T) {
	cfg := sourcesConfig(t)
	tr := startRelay(t, cfg)
	tr2, err := net.DialTCP("tcp", &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, tr.Addrs()["tcp"].(*net.TCPAddr))
	require.NoError(t, err)
	_, err = tr2.Write([]byte("<13>1 2026-11-27T10:00:00Z dev app - - - one\n"))
	require.NoError(t, err)
	require.NoError(t, tr2.Close())
	// Seen and counted: a connection's source is known from its accept,
	// its event once read (until then it waits, as an expected one).
	relaytest.WaitFor(t, 10*time.Second, func() bool { s := apiSources(t, tr, ""); return len(s) == 1 && s[0].Events == 1 }, "the source seen")

	nc := cfg.Sources
	nc.SilentAfter = time.Hour
	nc.Expected = []string{"192.0.2.9"}
	require.NoError(t, tr.ReloadSources(nc))
	waiting := apiSources(t, tr, "?state=waiting")
	require.Len(t, waiting, 1)
	assert.Equal(t, "192.0.2.9", waiting[0].Source)
	assert.True(t, waiting[0].Expected)
	src, ok := tr.sources.Tracker.Source(sources.ParseKey("127.0.0.2"))
	require.True(t, ok)
	assert.Equal(t, time.Hour, src.SilentAfter, "the known source's threshold replaced")

	bad := nc
	bad.RateLimit.Mode = config.RateModeDrop
	require.ErrorContains(t, tr.ReloadSources(bad), "restart")
	bad = nc
	bad.Enabled = false
	require.ErrorContains(t, tr.ReloadSources(bad), "restart")
	bad = nc
	bad.Overrides = []config.SourceOverride{{Match: "~("}}
	require.ErrorIs(t, tr.ReloadSources(bad), sources.ErrInvalidConfig)
}

// TestSourcesStreamAllocs: counting a stream connection's events and
// charging them at each read allocates nothing.
func TestSourcesStreamAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	cfg := sourcesConfig(t)
	cfg.Sources.RateLimit.EventsPerSecond = 1e9
	eng, err := engine.New(engine.Config{Sink: sinkFunc(func(context.Context, []relaykit.Event) error { return nil }), Workers: 1})
	require.NoError(t, err)
	st, err := input.NewSourceTracker(cfg.Sources, &ledger.Ledger{Engine: eng}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	cs := st.StreamConn("tcp", netip.MustParseAddr("127.0.0.2"))
	var ev relaykit.Event
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		for range 10 {
			cs.Event(ev.Host, 100)
		}
		_ = cs.BeforeRead(ctx)
	})
	assert.Zero(t, allocs)
	src, ok := st.Tracker.Source(sources.ParseKey("127.0.0.2"))
	require.True(t, ok)
	assert.EqualValues(t, 10*1001, src.Events)
}

// TestSourcesRELP: a RELP sender is tracked, and one over its limit has
// its windows answered late (held back), none dropped, each answered only
// once archived.
func TestSourcesRELP(t *testing.T) {
	cfg := sourcesConfig(t)
	relpInputConfig(&cfg, nil)
	cfg.Sources.RateLimit = config.SourceRateLimit{SourceLimit: config.SourceLimit{EventsPerSecond: 100, Burst: 50}, Mode: config.RateModeDrop}
	require.NoError(t, cfg.Validate())
	tr := startRelay(t, cfg)
	rc := dialRELP(t, tr.addr("relp"))
	const n = 200
	start := time.Now()
	for i := range n {
		rc.send(t, "syslog", fmt.Sprintf("<13>1 2026-11-27T10:00:00Z relp app - - - frame %d", i))
		require.Contains(t, rc.read(t), "200 OK")
	}
	elapsed := time.Since(start)
	// 50 at once, the other 150 at 100/s.
	assert.GreaterOrEqual(t, elapsed, 1400*time.Millisecond, "held back to its rate")
	src := apiSources(t, tr, "")
	require.Len(t, src, 1)
	assert.Equal(t, "127.0.0.1", src[0].Source)
	assert.Equal(t, "relp", src[0].Input)
	assert.EqualValues(t, n, src[0].Events)
	assert.Positive(t, src[0].Paced)
	assert.Zero(t, src[0].Dropped)
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Zero(t, s.Dropped[ledger.DropRateLimit])
	assert.EqualValues(t, n, s.Archived)
}

// TestSourcesHEC: in drop mode an HEC sender over its limit is answered
// 503 code 9 and its events are not taken in (it sends them again), never
// answered as delivered; what was answered Success is archived.
func TestSourcesHEC(t *testing.T) {
	cfg := sourcesConfig(t)
	hecInputConfig(&cfg)
	cfg.Sources.RateLimit = config.SourceRateLimit{SourceLimit: config.SourceLimit{EventsPerSecond: 1, Burst: 5}, Mode: config.RateModeDrop}
	require.NoError(t, cfg.Validate())
	tr := startRelay(t, cfg)
	url := "http://" + tr.addr("hec") + "/services/collector/event"
	var ok, busy int
	for i := range 10 {
		status, m := hecPost(t, url, testHECToken, fmt.Appendf(nil, `{"event":"e %d"}`, i), false)
		switch status {
		case http.StatusOK:
			ok++
		case http.StatusServiceUnavailable:
			assert.EqualValues(t, 9, m["code"], "%v", m)
			busy++
		default:
			t.Fatalf("status %d: %v", status, m)
		}
	}
	// 5 at once, then one a second: 5 or 6 of the 10 answered Success.
	assert.GreaterOrEqual(t, ok, 5)
	assert.LessOrEqual(t, ok, 6)
	assert.Equal(t, 10, ok+busy)
	src := apiSources(t, tr, "")
	require.Len(t, src, 1)
	assert.Equal(t, "hec", src[0].Input)
	assert.EqualValues(t, busy, src[0].Dropped)
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.EqualValues(t, ok, s.Archived, "what was answered Success, and nothing else")
	assert.EqualValues(t, ok, s.Received)
}
