package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/tap"
)

// tapURL is the relay's /api/tap URL for query.
func tapURL(tr *testRelay, query string) string {
	return "http://" + tr.addr("metrics") + "/api/tap?" + query
}

// waitSubscribed waits until point has n open subscriptions: a tap
// request's response headers are sent once its subscription is open, but
// the client here runs on another goroutine.
func waitSubscribed(t *testing.T, tr *testRelay, point string, n int) {
	t.Helper()
	p := tr.taps.Lookup(point)
	require.NotNil(t, p, point)
	relaytest.WaitFor(t, 10*time.Second, func() bool { return p.Stats().Subscribers == n }, fmt.Sprintf("%d subscriber(s) at %s", n, point))
}

// tailOne reads one record of a tap stream on its own goroutine.
func tailOne(t *testing.T, url, token string) <-chan *tap.Record {
	t.Helper()
	out := make(chan *tap.Record, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	ended := make(chan struct{})
	t.Cleanup(func() {
		cancel() // the test is over: a stream still open ends here
		<-ended
	})
	go func() {
		defer close(ended)
		defer close(out)
		err := tap.Tail(ctx, nil, url, token, func(r *tap.Record) error {
			select {
			case out <- r:
			default: // the test took the one record it waits for
			}
			return nil
		})
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("tail: %v", err)
		}
	}()
	return out
}

func recv(t *testing.T, ch <-chan *tap.Record) *tap.Record {
	t.Helper()
	select {
	case r := <-ch:
		require.NotNil(t, r, "tap stream ended without a record")
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no record from the tap")
		return nil
	}
}

func TestTapDestinationSeesWhatTheArchiveGets(t *testing.T) {
	cfg := relaytest.ConfigWithAPI(t, "")
	tr := startRelay(t, cfg)

	recs := tailOne(t, tapURL(tr, "at=destination:archive&limit=1"), "")
	waitSubscribed(t, tr, "destination:archive", 1)
	relaytest.SendTCP(t, tr.addr("tcp"), relaytest.LoggerLine)
	rec := recv(t, recs)
	_, open := <-recs // limit=1: the server ends the stream
	assert.False(t, open)
	waitSubscribed(t, tr, "destination:archive", 0) // the response's end closed it
	checkBalanced(t, tr.stop(t))

	arch := archivedRecords(t, relaytest.ArchiveOf(cfg).Dir)
	require.Len(t, arch, 1)
	a := arch[0]
	assert.Equal(t, "destination:archive", rec.Point)
	assert.Equal(t, "delivered", rec.Outcome)
	assert.Equal(t, "hello from logger", rec.Message)
	assert.Equal(t, a.Message, rec.Message)
	assert.Equal(t, "web-1", rec.Host)
	assert.Equal(t, a.Host, rec.Host)
	assert.Equal(t, a.Source, rec.Source)
	assert.Equal(t, a.SourceType, rec.SourceType)
	assert.Equal(t, "user", rec.Facility)
	assert.Equal(t, "notice", rec.Severity)
	assert.Equal(t, len(a.Fields), len(rec.Fields))
	for k, v := range a.Fields {
		assert.Equal(t, v, rec.Fields[k], "field %s", k)
	}
	at, err := time.Parse(time.RFC3339Nano, a.Time)
	require.NoError(t, err)
	assert.True(t, at.Equal(rec.Time), "time %s, archive %s", rec.Time, at)
}

// With no subscriber a point publishes nothing: Publish returned at its
// one atomic load (a point counts only what it published to someone).
func TestTapNoSubscriberLeavesTheArchivePathAlone(t *testing.T) {
	cfg := relaytest.ConfigWithAPI(t, "")
	tr := startRelay(t, cfg)
	p := tr.taps.Lookup("destination:archive")
	require.NotNil(t, p)
	relaytest.SendTCP(t, tr.addr("tcp"), relaytest.LoggerLine)
	relaytest.WaitFor(t, 10*time.Second, func() bool { return len(archived(t, relaytest.ArchiveOf(cfg).Dir)) == 1 }, "the line archived")
	checkBalanced(t, tr.stop(t))
	assert.Equal(t, tap.Stats{}, p.Stats())
	assert.False(t, p.Active())
}

func TestAPIDisabledIs404(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	require.False(t, cfg.API.Enabled, "the API is off by default")
	tr := startRelay(t, cfg)
	for _, path := range []string{"/api/tap?at=destination:archive", "/api/", "/api/sources"} {
		resp, err := http.Get("http://" + tr.addr("metrics") + path)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}
	// The points exist all the same (they cost nothing), without metrics.
	assert.NotNil(t, tr.taps.Lookup("destination:archive"))
	resp, err := http.Get("http://" + tr.addr("metrics") + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.NotContains(t, string(body), "relay_tap_")
}

func TestAPITokenRequired(t *testing.T) {
	const token = "tap-token-7f3a"
	cfg := relaytest.ConfigWithAPI(t, token)
	cfg.Sources.Enabled = true // /api/sources is behind the token too
	tr := startRelay(t, cfg)
	base := "http://" + tr.addr("metrics")

	get := func(path, auth string) int {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.NotContains(t, string(body), "hello", path)
		return resp.StatusCode
	}
	for _, path := range []string{"/api/tap?at=destination:archive&limit=1", "/api/sources", "/api/"} {
		assert.Equal(t, http.StatusUnauthorized, get(path, ""), path)
		assert.Equal(t, http.StatusUnauthorized, get(path, "Bearer wrong"), path)
		assert.Equal(t, http.StatusUnauthorized, get(path, token), path) // no "Bearer "
	}
	assert.Equal(t, http.StatusOK, get("/api/sources", "Bearer "+token))
	// Metrics and health stay open.
	assert.Equal(t, http.StatusOK, get("/metrics", ""))

	err := tap.Tail(t.Context(), nil, tapURL(tr, "at=destination:archive&limit=1"), "", func(*tap.Record) error { return nil })
	require.ErrorIs(t, err, tap.ErrUnauthorized)

	recs := tailOne(t, tapURL(tr, "at=destination:archive&limit=1"), token)
	waitSubscribed(t, tr, "destination:archive", 1)
	relaytest.SendTCP(t, tr.addr("tcp"), relaytest.LoggerLine)
	rec := recv(t, recs)
	assert.Equal(t, "hello from logger", rec.Message)
	assert.Equal(t, "delivered", rec.Outcome)
}

func TestAPIConfig(t *testing.T) {
	t.Setenv("TEST_RELAY_API_TOKEN", "from-env")
	cfg, err := config.LoadConfig(relaytest.WriteConfig(t, "api:\n  enabled: true\n  token: ${TEST_RELAY_API_TOKEN}\n"))
	require.NoError(t, err)
	assert.True(t, cfg.API.Enabled)
	assert.Equal(t, config.Secret("from-env"), cfg.API.Token)
	assert.NotContains(t, cfg.Summary(), "from-env")

	_, err = config.LoadConfig(relaytest.WriteConfig(t, "api:\n  enabled: true\nmetrics:\n  listen: \"\"\n"))
	require.ErrorContains(t, err, "api.enabled")
}

// The inputs with a batch at hand publish it after parsing, before the
// engine: an HEC request's events and a RELP window (the tap's 400 lists
// the points there are).
func TestTapInputPoints(t *testing.T) {
	cfg := relaytest.ConfigWithAPI(t, "")
	relpInputConfig(&cfg, nil)
	hecInputConfig(&cfg)
	tr := startRelay(t, cfg)

	hecRecs := tailOne(t, tapURL(tr, "at=input:hec&limit=1"), "")
	relpRecs := tailOne(t, tapURL(tr, "at=input:relp&limit=1"), "")
	waitSubscribed(t, tr, "input:hec", 1)
	waitSubscribed(t, tr, "input:relp", 1)

	code, _ := hecPost(t, "http://"+tr.addr("hec")+"/services/collector/event", testHECToken,
		[]byte(`{"event":"hello over hec","host":"app-1","sourcetype":"app:log"}`), false)
	require.Equal(t, http.StatusOK, code)
	rec := recv(t, hecRecs)
	assert.Equal(t, "input:hec", rec.Point)
	assert.Equal(t, "hello over hec", rec.Message)
	assert.Equal(t, "app-1", rec.Host)
	assert.Equal(t, "app:log", rec.SourceType)
	assert.Empty(t, rec.Outcome, "an input point has no outcome")

	rc := dialRELP(t, tr.addr("relp"))
	rc.send(t, "syslog", "<13>1 2026-01-02T03:04:05Z relp-host app - - - hello over relp")
	require.Contains(t, rc.read(t), " rsp 200 OK")
	rec = recv(t, relpRecs)
	assert.Equal(t, "input:relp", rec.Point)
	assert.Equal(t, "hello over relp", rec.Message)
	assert.Equal(t, "relp-host", rec.Host)

	resp, err := http.Get(tapURL(tr, "at=input:nope"))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), "destination:archive")
	assert.Contains(t, string(body), "input:relp")
}

// An open tap stream does not hold the shutdown: the points close, the
// stream ends (EOF, not the client's timeout), and the relay stops.
func TestTapStreamEndsAtShutdown(t *testing.T) {
	tr := startRelay(t, relaytest.ConfigWithAPI(t, ""))
	recs := tailOne(t, tapURL(tr, "at=destination:archive"), "")
	waitSubscribed(t, tr, "destination:archive", 1)
	relaytest.SendTCP(t, tr.addr("tcp"), relaytest.LoggerLine)
	assert.Equal(t, "hello from logger", recv(t, recs).Message)
	checkBalanced(t, tr.stop(t))
	select {
	case r, open := <-recs:
		assert.False(t, open, "record after shutdown: %+v", r)
	case <-time.After(10 * time.Second):
		t.Fatal("the tap stream outlived the relay")
	}
}

// A subscriber that never reads costs the archive nothing: every line is
// archived, and what its buffer could not take is counted as dropped.
func TestTapStuckSubscriberDoesNotHoldTheArchive(t *testing.T) {
	cfg := relaytest.ConfigWithAPI(t, "")
	tr := startRelay(t, cfg)
	sub, err := tr.taps.Lookup("destination:archive").Subscribe(tap.SubscribeConfig{Buffer: 1})
	require.NoError(t, err)
	defer sub.Close()
	const n = 50
	var lines bytes.Buffer
	for i := range n {
		fmt.Fprintf(&lines, "<13>1 2026-11-27T14:00:00Z web-1 alice - - - line %d\n", i)
	}
	relaytest.SendTCP(t, tr.addr("tcp"), lines.String())
	p := tr.taps.Lookup("destination:archive")
	// The point publishes after the archive's write returns, and a
	// subscription's counters are added after its hand-off: wait for them.
	relaytest.WaitFor(t, 10*time.Second, func() bool {
		st := p.Stats()
		return st.Delivered+st.Dropped == n
	}, "every line offered")
	assert.Len(t, archived(t, relaytest.ArchiveOf(cfg).Dir), n)
	assert.Equal(t, float64(n), metricValue(t, tr, "relay_tap_published_events_total", "point", "destination:archive"))
	assert.Equal(t, float64(n-1), metricValue(t, tr, "relay_tap_dropped_events_total", "point", "destination:archive"))
	assert.Equal(t, 1.0, metricValue(t, tr, "relay_tap_delivered_events_total", "point", "destination:archive"))
	assert.Equal(t, 1.0, metricValue(t, tr, "relay_tap_subscribers", "point", "destination:archive"))
	assert.Len(t, sub.C(), 1)
	checkBalanced(t, tr.stop(t))
}
