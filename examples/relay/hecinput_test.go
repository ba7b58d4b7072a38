package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward/forwardtest"
	"github.com/relaykit/relaykit/internal/testtool"
)

const testHECToken = "8b6c5e3a-4c1e-4d3a-9f3e-2d1c0b9a8f7e"

// hecInputConfig adds an HEC input with one token (and more, given) to cfg.
func hecInputConfig(cfg *Config, tokens ...HECTokenConfig) {
	if len(tokens) == 0 {
		tokens = []HECTokenConfig{{Name: "app", Token: testHECToken}}
	}
	cfg.Inputs.HEC = []HECInputConfig{{Name: "hec", Listen: "127.0.0.1:0", Tokens: tokens}}
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
	script, err := filepath.Abs("../../stream/hec/testdata/splunklogging.js")
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
	waitFor(t, 30*time.Second, func() bool {
		s := tr.Ledger()
		return s.Dest["hec"].Delivered == n && s.Dest["sentinel"].Delivered == n
	}, "every event at HEC and Sentinel")
	s = tr.stop(t)
	checkBalanced(t, s)
	assert.Equal(t, int64(n), s.Input["hec"])
	assert.Zero(t, s.DroppedTotal())

	recs := archivedRecords(t, filepath.Join(cfg.Destinations["archive"].Dir))
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
	cfgB := testConfig(t)
	hecInputConfig(&cfgB)
	cfgB.Inputs.SyslogUDP, cfgB.Inputs.SyslogTCP = nil, nil
	b := startRelay(t, cfgB)

	cfgA := testConfig(t)
	cfgA.Inputs.SyslogUDP = nil
	cfgA.Destinations["relay-b"] = DestinationConfig{Type: "hec", URL: "http://" + b.addr("hec"), Token: testHECToken,
		Retry: RetryConfig{MaxElapsed: 20 * time.Second}}
	cfgA.Routes = append([]RouteConfig{{Name: "to-b", Destinations: []string{"relay-b"}}}, cfgA.Routes...)
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
	waitFor(t, 30*time.Second, func() bool { return b.Ledger().Dest["archive"].Delivered == int64(len(msgs)) }, "relay B archived every event")
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
	ra, rb := read(cfgA.Destinations["archive"].Dir), read(cfgB.Destinations["archive"].Dir)
	require.Len(t, ra, len(msgs))
	require.Len(t, rb, len(msgs))
	for msg, ev := range ra {
		assert.Equal(t, ev, rb[msg], "round trip of %q", msg)
	}
}
