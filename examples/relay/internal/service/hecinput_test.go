package service

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/dest"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward/forwardtest"
	"github.com/relaykit/relaykit/internal/testtool"
)

const testHECToken = "8b6c5e3a-4c1e-4d3a-9f3e-2d1c0b9a8f7e"

// hecInputConfig adds an HEC input with one token (and more, given) to cfg.
func hecInputConfig(cfg *config.Config, tokens ...config.HECTokenConfig) {
	if len(tokens) == 0 {
		tokens = []config.HECTokenConfig{{Name: "app", Token: testHECToken}}
	}
	cfg.Inputs.HEC = []config.HECInputConfig{{Name: "hec", Listen: "127.0.0.1:0", Tokens: tokens}}
}

// hecPost sends body to the relay's HEC input and returns the status and
// the decoded {"text","code"} answer.
func hecPost(t *testing.T, url, token string, body []byte, gz bool, header ...string) (int, map[string]any) {
	t.Helper()
	if gz {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write(body)
		require.NoError(t, zw.Close())
		body = b.Bytes()
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Splunk "+token)
	}
	if gz {
		req.Header.Set("Content-Encoding", "gzip")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		m = map[string]any{"body": string(b)}
	}
	return resp.StatusCode, m
}

// Splunk's own Node.js HEC client (splunk-logging) sends through the
// relay's HEC input: every event reaches the archive and the Sentinel
// table (forwardtest's DCR server) and the HEC destination, once, with its
// metadata; every request is answered Success only after that.
func TestHECFromSplunkLogging(t *testing.T) {
	node := testtool.Need(t, "node", "apt-get install nodejs")
	dir := os.Getenv("RELAYKIT_SPLUNK_LOGGING")
	if dir == "" {
		testtool.Missing(t, "RELAYKIT_SPLUNK_LOGGING is not set (npm install --prefix DIR splunk-logging@0.11.1; see .ci/run)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "splunk-logging")); err != nil {
		testtool.Missing(t, "splunk-logging is not installed in "+dir)
	}
	script, err := filepath.Abs("../../../../stream/hec/testdata/splunklogging.js")
	require.NoError(t, err)
	hecDest := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	dcr := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	cfg := forwardConfig(t, hecDest, dcr)
	hecInputConfig(&cfg)
	tr := startRelay(t, cfg)

	const n = 300
	cmd := exec.CommandContext(t.Context(), node, script, "http://"+tr.addr("hec"), testHECToken, fmt.Sprint(n))
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, n/10, string(out))
	for _, l := range lines {
		assert.Equal(t, `ok 200 {"text":"Success","code":0}`, l)
	}
	// Answered means finished: the archive has written every event and
	// the network destinations' queues hold them (on disk), before the
	// relay is stopped.
	s := tr.Ledger()
	assert.Equal(t, int64(n), s.Dest["archive"].Delivered, "archived before the answers")
	assert.Equal(t, int64(n), s.Dest["hec"].In)
	assert.Equal(t, int64(n), s.Dest["sentinel"].In)
	relaytest.WaitFor(t, 30*time.Second, func() bool {
		s := tr.Ledger()
		return s.Dest["hec"].Delivered == n && s.Dest["sentinel"].Delivered == n
	}, "every event at HEC and Sentinel")
	s = tr.stop(t)
	checkBalanced(t, s)
	assert.Equal(t, int64(n), s.Input["hec"])
	assert.Zero(t, s.DroppedTotal())

	recs := archivedRecords(t, filepath.Join(relaytest.ArchiveOf(cfg).Dir))
	require.Len(t, recs, n)
	seen := map[string]bool{}
	for _, r := range recs {
		var ev struct{ Message, Severity string }
		require.NoError(t, json.Unmarshal([]byte(r.Message), &ev), r.Message)
		assert.False(t, seen[ev.Message], "%s twice", ev.Message)
		seen[ev.Message] = true
		assert.Equal(t, "node-host", r.Host)
		assert.Equal(t, "node-source", r.Source)
		assert.Equal(t, "node-type", r.SourceType)
		var i int
		_, err := fmt.Sscanf(ev.Message, "node event %d", &i)
		require.NoError(t, err)
		assert.Equal(t, time.Unix(1700000000+int64(i), 5e8).UTC().Format(time.RFC3339Nano), r.Time)
	}
	rows := dcr.Rows()
	require.Len(t, rows, n)
	for _, r := range rows {
		assert.Equal(t, "node-host", r["Computer"])
		assert.Equal(t, "node-source", r["ProcessName"])
		assert.Contains(t, r["RawData"], "node event ")
	}
	assert.Len(t, hecDest.Events(), n)
	for _, e := range hecDest.Events() {
		assert.Equal(t, "node-type", e.SourceType)
		assert.Equal(t, "main", e.Index)
	}
	m := "http://" + tr.addr("metrics") + "/metrics"
	_ = m // the relay is stopped: metrics are checked in TestHECBadInput
}

// The relay's own HEC destination sends into the HEC input of a second
// relay: every event comes out of the second relay's archive as it went
// into the first's, field for field (time, host, source, sourcetype,
// priority, procid, msgid, structured data).
func TestHECRoundTrip(t *testing.T) {
	cfgB := relaytest.TestConfig(t)
	hecInputConfig(&cfgB)
	cfgB.Inputs.SyslogUDP, cfgB.Inputs.SyslogTCP = nil, nil
	b := startRelay(t, cfgB)

	cfgA := relaytest.TestConfig(t)
	cfgA.Inputs.SyslogUDP = nil
	cfgA.Destinations["relay-b"] = config.DestinationConfig{Spec: &dest.HECDestination{URL: "http://" + b.addr("hec"), Token: testHECToken,
		NetworkSettings: dest.NetworkSettings{Retry: config.RetryConfig{MaxElapsed: 20 * time.Second}}}}
	cfgA.Routes = append([]config.RouteConfig{{Name: "to-b", Destinations: []string{"relay-b"}}}, cfgA.Routes...)
	a := startRelay(t, cfgA)

	msgs := []string{
		`<134>1 2026-01-02T03:04:05.678Z web01 nginx 4242 ACCESS [req@32473 id="7" path="/a b"] GET /index.html 200`,
		`<38>1 2026-01-02T03:04:06.001+02:00 auth01 sshd 77 - - Accepted publickey for alice`,
		`<13>Jan  2 03:04:07 legacy01 cron[12]: (root) CMD (run-parts /etc/cron.hourly)`,
		`<165>1 2026-01-02T03:04:08.5Z fw01 - - - - CEF:0|Vendor|FW|1.0|100|Blocked|5|src=10.0.0.1 dst=10.0.0.2 act=deny`,
	}
	c, err := net.Dial("tcp", a.addr("tcp"))
	require.NoError(t, err)
	for _, m := range msgs {
		_, err := fmt.Fprintf(c, "%d %s", len(m), m)
		require.NoError(t, err)
	}
	require.NoError(t, c.Close())
	relaytest.WaitFor(t, 30*time.Second, func() bool { return b.Ledger().Dest["archive"].Delivered == int64(len(msgs)) }, "relay B archived every event")
	sa, sb := a.stop(t), b.stop(t)
	checkBalanced(t, sa)
	checkBalanced(t, sb)

	read := func(dir string) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, l := range archived(t, dir) {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &m), l)
			out[m["message"].(string)] = m
		}
		return out
	}
	ra, rb := read(relaytest.ArchiveOf(cfgA).Dir), read(relaytest.ArchiveOf(cfgB).Dir)
	require.Len(t, ra, len(msgs))
	require.Len(t, rb, len(msgs))
	for msg, ev := range ra {
		assert.Equal(t, ev, rb[msg], "round trip of %q", msg)
	}
}

// hecAckClient sends numbered events with indexer acknowledgement on one
// channel, as Splunk's forwarders do with useACK: each request gets an
// ackId, and a request counts as delivered only once /ack reports it
// true.
type hecAckClient struct {
	url, channel string
	mu           sync.Mutex
	pending      map[int64][]int // ackId -> event numbers
	acked        []int
	next         int
}

// post sends the next n events and records their ackId.
func (c *hecAckClient) post(ctx context.Context, n int) error {
	var body bytes.Buffer
	c.mu.Lock()
	first := c.next
	c.next += n
	c.mu.Unlock()
	for i := range n {
		fmt.Fprintf(&body, `{"event":"ack event %d","host":"h","time":1700000000.25}`, first+i)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(body.Bytes())
	_ = zw.Close()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url+"/services/collector/event", &gz)
	req.Header.Set("Authorization", "Splunk "+testHECToken)
	req.Header.Set("X-Splunk-Request-Channel", c.channel)
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r struct {
		Code  int   `json:"code"`
		AckID int64 `json:"ackId"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return err
	}
	if r.Code != 0 {
		return fmt.Errorf("code %d", r.Code)
	}
	nums := make([]int, n)
	for i := range nums {
		nums[i] = first + i
	}
	c.mu.Lock()
	c.pending[r.AckID] = nums
	c.mu.Unlock()
	return nil
}

// poll asks for every pending ackId and moves those reported true to
// acked.
func (c *hecAckClient) poll(ctx context.Context) error {
	c.mu.Lock()
	ids := make([]int64, 0, len(c.pending))
	for id := range c.pending {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	b, _ := json.Marshal(map[string][]int64{"acks": ids})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url+"/services/collector/ack", bytes.NewReader(b))
	req.Header.Set("Authorization", "Splunk "+testHECToken)
	req.Header.Set("X-Splunk-Request-Channel", c.channel)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r struct {
		Acks map[string]bool `json:"acks"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, ok := range r.Acks {
		if !ok {
			continue
		}
		var id int64
		_, _ = fmt.Sscan(k, &id)
		c.acked = append(c.acked, c.pending[id]...)
		delete(c.pending, id)
	}
	return nil
}

// With useACK, a relay process is killed with SIGKILL while requests are
// between their answer (an ackId) and their acknowledgement, with the HEC
// destination down (everything goes to its spool, mode always, the
// shipped default). Restarted with HEC back, it delivers every event
// whose ackId had been reported true: no acknowledged event is lost.
// Requests not acknowledged at the kill are the sender's to send again.
func TestHECAckKill(t *testing.T) {
	hecDest := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	hecDest.SetDown(true)
	dir := t.TempDir()
	path := crashConfig(t, dir, hecDest)
	conf, err := os.ReadFile(path)
	require.NoError(t, err)
	conf = bytes.Replace(conf, []byte("  syslog_udp: []\n"), []byte(`  syslog_udp: []
  hec:
    - name: hec
      listen: 127.0.0.1:0
      tokens:
        - name: app
          token: `+testHECToken+`
          ack: true
`), 1)
	require.NoError(t, os.WriteFile(path, conf, 0o600))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	child := startChild(t, ctx, path)

	cl := &hecAckClient{url: "http://" + child.addrs["hec"], channel: "0aeeac95-ac74-4aa9-b30d-6c4c0ac581ba", pending: map[int64][]int{}}
	reqCtx, stopReqs := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 4 { // 4 requests of 100 events in flight at once
		wg.Go(func() {
			for reqCtx.Err() == nil && cl.post(reqCtx, 100) == nil {
			}
		})
	}
	wg.Go(func() {
		for reqCtx.Err() == nil {
			if cl.poll(reqCtx) != nil {
				return
			}
		}
	})
	relaytest.WaitFor(t, 30*time.Second, func() bool {
		cl.mu.Lock()
		defer cl.mu.Unlock()
		return len(cl.acked) >= 20000 && len(cl.pending) > 0
	}, "20,000 events acknowledged, requests pending")
	child.kill(t)
	stopReqs()
	wg.Wait()
	cl.mu.Lock()
	acked, sent := slices.Clone(cl.acked), cl.next
	pendingAtKill := len(cl.pending)
	cl.mu.Unlock()

	hecDest.SetDown(false)
	cfg, err := config.LoadConfig(path)
	require.NoError(t, err)
	tr := startRelay(t, cfg)
	relaytest.WaitFor(t, 60*time.Second, func() bool { return tr.Ledger().Dest["hec"].Pending == 0 }, "backlog delivered")
	checkBalanced(t, tr.stop(t))

	counts := hecDest.Counts()
	lost := 0
	for _, n := range acked {
		if counts[fmt.Sprintf("ack event %d", n)] == 0 {
			lost++
		}
	}
	assert.Zero(t, lost, "acknowledged events lost")
	t.Logf("kill -9 with useACK: %d events sent, %d acknowledged before the kill (all delivered after the restart), %d requests unacknowledged at the kill, %d events at HEC",
		sent, len(acked), pendingAtKill, len(hecDest.Events()))
}

// A full spool (destination down, policy block) holds the relay's answers:
// HEC requests are answered 503, code 9, once their ack_timeout passes,
// never Success for what no destination took; when the destination is
// back, the same request is answered Success and every event answered so
// is delivered. The events that were in the pipeline when a wait ended
// are counted as duplicates to come (relay_ack_abandoned_events_total).
func TestHECBackPressure(t *testing.T) {
	hecDest := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	hecDest.SetDown(true)
	cfg := userConfig(t, hecDest)
	cfg.Spool.MaxSize = 256 << 10
	hecInputConfig(&cfg)
	cfg.Inputs.HEC[0].AckTimeout = 3 * time.Second
	tr := startRelay(t, cfg)
	url := "http://" + tr.addr("hec") + "/services/collector/event"

	body := func(req int) []byte {
		var b bytes.Buffer
		for i := range 100 {
			fmt.Fprintf(&b, `{"event":"bp %d-%d %s","sourcetype":"bp"}`, req, i, strings.Repeat("x", 200))
		}
		return b.Bytes()
	}
	// Fill the spool until the relay stops answering Success.
	answered, busy := 0, -1
	for req := 0; req < 2000 && busy < 0; req++ {
		status, m := hecPost(t, url, testHECToken, body(req), true)
		switch {
		case status == http.StatusOK:
			answered++
			// Answered means on disk at the destination (it is down).
			require.GreaterOrEqual(t, tr.Ledger().Dest["hec"].Pending, int64(100*answered), "request %d answered before its events were spooled", req)
		case status == http.StatusServiceUnavailable:
			assert.Equal(t, float64(9), m["code"], "%v", m)
			assert.Equal(t, "Server is busy", m["text"])
			busy = req
		default:
			t.Fatalf("request %d: %d %v", req, status, m)
		}
	}
	require.GreaterOrEqual(t, busy, 0, "the relay went on answering Success with its only destination's spool full")
	metrics := "http://" + tr.addr("metrics") + "/metrics"
	assert.Positive(t, scrapeSample(metrics, `relay_hec_responses_total{code="9",input="hec"}`))
	ab := scrapeSample(metrics, `relay_ack_abandoned_events_total{input="hec"}`)
	hecDest.SetDown(false)
	// The sender retries the refused request: Success once there is room.
	relaytest.WaitFor(t, 60*time.Second, func() bool {
		status, _ := hecPost(t, url, testHECToken, body(busy), true)
		return status == http.StatusOK
	}, "the refused request accepted after the destination came back")
	answered++
	relaytest.WaitFor(t, 60*time.Second, func() bool { return tr.Ledger().Dest["hec"].Pending == 0 }, "backlog delivered")
	s := tr.stop(t)
	checkBalanced(t, s)
	counts := hecDest.Counts()
	for req := 0; req < busy; req++ {
		for i := range 100 {
			assert.Positive(t, counts[fmt.Sprintf("bp %d-%d %s", req, i, strings.Repeat("x", 200))], "answered event %d-%d lost", req, i)
		}
	}
	t.Logf("%d requests answered Success before the spool filled; request %d answered code 9; %v events abandoned (duplicates to come)", answered-1, busy, ab)
}

// Bad HEC input gets HEC's answer and a counter, and costs a good sender
// on the same input nothing: wrong token, no token, invalid JSON, an event
// without "event", an oversized body (as sent and as a gzip bomb), a
// body that is not gzip; all while splunk-style requests go on.
func TestHECBadInput(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	hecInputConfig(&cfg, config.HECTokenConfig{Name: "app", Token: testHECToken, Indexes: []string{"main"}})
	tr := startRelay(t, cfg)
	base := "http://" + tr.addr("hec") + "/services/collector"

	stop := make(chan struct{})
	var good sync.WaitGroup
	var goodSent int
	good.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			status, m := hecPost(t, base+"/event", testHECToken, fmt.Appendf(nil, `{"event":"good %d"}`, i), true)
			if !assert.Equal(t, http.StatusOK, status, "%v", m) {
				return
			}
			goodSent++
		}
	})
	big := bytes.Repeat([]byte(`{"event":"0123456789012345678901234567890123456789"}`), (9<<20)/50)
	for _, tc := range []struct {
		name, path, token string
		body              []byte
		gz                bool
		header            []string
		status, code      int
	}{
		{"wrong token", "/event", "00000000-0000-0000-0000-000000000000", []byte(`{"event":"x"}`), false, nil, 403, 4},
		{"no token", "/event", "", []byte(`{"event":"x"}`), false, nil, 401, 2},
		{"invalid json", "/event", testHECToken, []byte(`{"event":"x"`), false, nil, 400, 6},
		{"no event", "/event", testHECToken, []byte(`{"host":"h"}`), false, nil, 400, 12},
		{"index not allowed", "/event", testHECToken, []byte(`{"event":"x","index":"secret"}`), false, nil, 400, 7},
		{"raw without channel", "/raw", testHECToken, []byte("line\n"), false, nil, 400, 10},
		{"oversized", "/event", testHECToken, big, false, nil, 413, -1},
		{"gzip bomb", "/event", testHECToken, big, true, nil, 413, -1},
		{"not gzip", "/event", testHECToken, []byte(`{"event":"x"}`), false, []string{"Content-Encoding", "gzip"}, 400, 6},
	} {
		status, m := hecPost(t, base+tc.path, tc.token, tc.body, tc.gz, tc.header...)
		assert.Equal(t, tc.status, status, "%s: %v", tc.name, m)
		if tc.code >= 0 {
			assert.Equal(t, float64(tc.code), m["code"], "%s: %v", tc.name, m)
		}
	}
	// The raw endpoint with a channel splits lines.
	status, m := hecPost(t, base+"/raw?sourcetype=rawtype&host=rawhost", testHECToken, []byte("raw one\r\nraw two\n\nraw three"), false,
		"X-Splunk-Request-Channel", "7f3a2b1c-0d4e-4f5a-8b6c-9d0e1f2a3b4c")
	assert.Equal(t, http.StatusOK, status, "%v", m)
	// Health.
	resp, err := http.Get(base + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	metrics := "http://" + tr.addr("metrics") + "/metrics"
	for _, s := range []string{`relay_hec_responses_total{code="4",input="hec"}`, `relay_hec_responses_total{code="2",input="hec"}`,
		`relay_hec_responses_total{code="12",input="hec"}`,
		`relay_hec_responses_total{code="7",input="hec"}`, `relay_hec_responses_total{code="10",input="hec"}`,
		`relay_hec_errors_total{input="hec",reason="bad_encoding"}`} {
		assert.Equal(t, float64(1), scrapeSample(metrics, s), s)
	}
	assert.Equal(t, float64(2), scrapeSample(metrics, `relay_hec_errors_total{input="hec",reason="too_large"}`))
	assert.Equal(t, float64(2), scrapeSample(metrics, `relay_hec_responses_total{code="6",input="hec"}`), "invalid JSON and a body that is not gzip")
	close(stop)
	good.Wait()
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Positive(t, goodSent)
	assert.Equal(t, int64(goodSent+3), s.Input["hec"], "the good sender's events and the three raw lines, nothing of the bad requests")
	assert.Equal(t, int64(goodSent+3), s.Archived)
	var raw []archiveRecord
	for _, r := range archivedRecords(t, relaytest.ArchiveOf(cfg).Dir) {
		if strings.HasPrefix(r.Message, "raw ") {
			raw = append(raw, r)
		}
	}
	require.Len(t, raw, 3)
	for _, r := range raw {
		assert.Equal(t, "rawtype", r.SourceType)
		assert.Equal(t, "rawhost", r.Host)
	}
}

// A sender's request is answered once its events are finished, not after
// batch_max_wait: the worker cuts its open batch for a waiting input.
func TestHECAnswerDoesNotWaitForBatchMaxWait(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	cfg.Workers.BatchMaxWait = 10 * time.Minute
	hecInputConfig(&cfg)
	tr := startRelay(t, cfg)
	url := "http://" + tr.addr("hec") + "/services/collector/event"
	for i := range 5 {
		began := time.Now()
		status, m := hecPost(t, url, testHECToken, fmt.Appendf(nil, `{"event":"quick %d"}`, i), false)
		require.Equal(t, http.StatusOK, status, "%v", m)
		assert.Less(t, time.Since(began), time.Minute, "answered, not after batch_max_wait (10 minutes)")
		assert.Equal(t, int64(i+1), tr.Ledger().Archived, "answered once archived")
	}
}

// A graceful shutdown while HEC senders are sending: the requests being
// served are finished and answered, later ones refused; every event
// answered Success is in the archive and the ledger balances.
func TestHECShutdownUnderLoad(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	hecInputConfig(&cfg)
	tr := startRelay(t, cfg)
	url := "http://" + tr.addr("hec") + "/services/collector/event"
	var mu sync.Mutex
	var answered []string
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Go(func() {
			cl := &http.Client{Timeout: 60 * time.Second}
			for n := 0; ; n++ {
				var b bytes.Buffer
				for i := range 100 {
					fmt.Fprintf(&b, `{"event":"sd %d-%d-%d"}`, c, n, i)
				}
				req, _ := http.NewRequest(http.MethodPost, url, &b) //nolint:noctx // bounded by the client's timeout
				req.Header.Set("Authorization", "Splunk "+testHECToken)
				resp, err := cl.Do(req)
				if err != nil {
					return // the relay stopped listening
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "only refused while stopping")
					continue // the sender keeps them
				}
				mu.Lock()
				for i := range 100 {
					answered = append(answered, fmt.Sprintf("sd %d-%d-%d", c, n, i))
				}
				mu.Unlock()
			}
		})
	}
	relaytest.WaitFor(t, 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(answered) >= 20000
	}, "20,000 events answered")
	s := tr.stop(t)
	wg.Wait()
	checkBalanced(t, s)
	arch := map[string]bool{}
	for _, r := range archivedRecords(t, relaytest.ArchiveOf(cfg).Dir) {
		arch[r.Message] = true
	}
	lost := 0
	for _, m := range answered {
		if !arch[m] {
			lost++
		}
	}
	assert.Zero(t, lost, "events answered Success and not archived")
	assert.Equal(t, s.Received, s.Archived, "what was taken in was archived")
}
