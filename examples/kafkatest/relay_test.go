package kafkatest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward/forwardtest"
	"github.com/relaykit/relaykit/forward/kafka"
	"github.com/relaykit/relaykit/internal/testtool"
)

var (
	relayOnce sync.Once
	relayBin  string
	relayErr  error
)

// buildRelay builds examples/relay once per test binary.
func buildRelay(t testing.TB) string {
	t.Helper()
	relayOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kafkatest-relay")
		if err != nil {
			relayErr = err
			return
		}
		relayBin = filepath.Join(dir, "relay")
		cmd := exec.Command("go", "build", "-o", relayBin, "./relay")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			relayErr = fmt.Errorf("go build ./relay: %v\n%s", err, out)
		}
	})
	require.NoError(t, relayErr)
	return relayBin
}

// freePort returns a loopback address whose port was free a moment ago.
func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// relayProc is a relay running as a child process.
type relayProc struct {
	name    string
	cmd     *exec.Cmd
	metrics string
	done    chan error
	log     *syncBuf
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startRelay runs the relay with the YAML config yaml (metrics on
// metricsAddr) and waits until it reports healthy. It is stopped (SIGTERM)
// when the test ends, if it still runs.
func startRelay(t testing.TB, name, yaml, metricsAddr string) *relayProc {
	t.Helper()
	bin := buildRelay(t)
	cfgPath := filepath.Join(t.TempDir(), name+".yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(yaml), 0o600))
	p := &relayProc{name: name, metrics: metricsAddr, done: make(chan error, 1), log: &syncBuf{}}
	p.cmd = exec.Command(bin, "-config", cfgPath)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	require.NoError(t, p.cmd.Start())
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("%s log:\n%s", name, p.log.String())
		}
	})
	require.Eventually(t, func() bool {
		select {
		case err := <-p.done:
			p.done <- err
			return true // exited: reported below
		default:
		}
		resp, err := http.Get("http://" + metricsAddr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 20*time.Second, 20*time.Millisecond, "%s did not become healthy", name)
	select {
	case err := <-p.done:
		t.Fatalf("%s exited: %v\n%s", name, err, p.log.String())
	default:
	}
	return p
}

// stop ends the relay with SIGTERM (a graceful drain) and waits for it.
func (p *relayProc) stop(t testing.TB) {
	select {
	case err := <-p.done: // exited already (ProcessState is Wait's to write)
		p.done <- err
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Errorf("%s did not stop within 30 s", p.name)
	}
}

// kill ends the relay with SIGKILL: no drain, no commit, no goodbye.
func (p *relayProc) kill(t testing.TB) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Kill())
	err := <-p.done
	p.done <- err
}

// metric returns the sum of the samples of the metric name whose labels
// contain every label given (e.g. `input="kafka"`).
func (p *relayProc) metric(t testing.TB, name string, labels ...string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `(\{[^}]*\})? (\S+)$`)
	var sum float64
	for _, m := range re.FindAllStringSubmatch(string(body), -1) {
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(m[1], l)
		}
		if ok {
			v, _ := strconv.ParseFloat(m[2], 64)
			sum += v
		}
	}
	return sum
}

// edgeYAML is an edge relay: syslog over TCP in, Kafka out.
func edgeYAML(tcp, metrics, broker, dir string) string {
	return fmt.Sprintf(`
inputs:
  syslog_tcp:
    - name: tcp
      listen: %s
workers:
  count: 2
routes:
  - name: to-kafka
    final: true
    destinations: [kafka]
destinations:
  kafka:
    type: kafka
    brokers: [%s]
    topic: syslog
    key: host
    compression: zstd
spool:
  dir: %s/spool
dead_letter:
  dir: %s/deadletter
metrics:
  listen: %s
timezone: UTC
`, tcp, broker, dir, dir, metrics)
}

// siemYAML is a SIEM-tier relay: Kafka in (group siem), HEC out.
func siemYAML(name, metrics, broker, hecURL, token, dir, format string) string {
	return fmt.Sprintf(`
inputs:
  kafka:
    - name: %s
      brokers: [%s]
      topics: [syslog]
      group: siem
      format: %s
workers:
  count: 2
routes:
  - name: to-hec
    final: true
    destinations: [splunk]
destinations:
  splunk:
    type: hec
    url: %s
    token: %s
spool:
  dir: %s/spool
dead_letter:
  dir: %s/deadletter
metrics:
  listen: %s
timezone: UTC
`, name, broker, format, hecURL, token, dir, dir, metrics)
}

// sendSyslog writes n RFC 5424 messages with octet counting to addr at
// about rate events per second, from hosts host-0..host-7. It calls
// between(i) before message i.
func sendSyslog(t testing.TB, addr, tag string, n, rate int, between func(i int)) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	w := bufio.NewWriter(c)
	start := time.Now()
	for i := range n {
		if between != nil {
			between(i)
		}
		msg := fmt.Sprintf("<134>1 2026-11-23T10:00:00.000Z host-%d app - - - %s", i%8, seqMsg(tag, i))
		fmt.Fprintf(w, "%d %s", len(msg), msg)
		if i%100 == 99 {
			require.NoError(t, w.Flush())
			// Pace the stream: the next 100 are due at (i+1)/rate.
			if d := time.Until(start.Add(time.Duration(i+1) * time.Second / time.Duration(rate))); d > 0 {
				time.Sleep(d) // pacing a load generator, not synchronisation
			}
		}
	}
	require.NoError(t, w.Flush())
}

// hecCounts returns how often each tagged message reached the HEC server.
func tagged(counts map[string]int, tag string) (distinct, dups int) {
	for m, n := range counts {
		if strings.HasPrefix(m, tag+" ") {
			distinct++
			dups += n - 1
		}
	}
	return distinct, dups
}

// TestTwoTier: syslog → edge relay → Kafka (3 brokers) → two SIEM relays in
// one consumer group → HEC. Midway one SIEM relay is killed with SIGKILL:
// the other takes its partitions after the session timeout; no event is
// lost, and the duplicates (records the dead relay delivered after its last
// commit) are counted and stay within its uncommitted window.
func TestTwoTier(t *testing.T) {
	if testing.Short() {
		t.Skip("two-tier runs of about 10-20 s: skipped in -short mode (the -race run has them)")
	}
	c := newCluster(t, 3, 6, "syslog")
	broker := strings.Join(c.ListenAddrs(), ", ")
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	edgeTCP, edgeM := freePort(t), freePort(t)
	edge := startRelay(t, "edge", edgeYAML(edgeTCP, edgeM, broker, t.TempDir()), edgeM)
	var siem [2]*relayProc
	for i := range siem {
		m := freePort(t)
		siem[i] = startRelay(t, fmt.Sprintf("siem-%d", i), siemYAML("kafka", m, broker, hec.URL, hec.Token(), t.TempDir(), "json"), m)
	}
	require.Eventually(t, func() bool {
		a, b := siem[0].metric(t, "relay_kafka_assigned_partitions"), siem[1].metric(t, "relay_kafka_assigned_partitions")
		return a > 0 && b > 0 && a+b == 6
	}, 30*time.Second, 50*time.Millisecond, "both SIEM relays own partitions")

	const n, rate = 20000, 4000
	var beforeKill float64
	sendSyslog(t, edgeTCP, "tier", n, rate, func(i int) {
		if i == n/2 {
			beforeKill = siem[0].metric(t, "relay_kafka_records_total")
			siem[0].kill(t)
		}
	})
	require.Greater(t, beforeKill, 0.0, "the killed relay was consuming")
	require.Eventually(t, func() bool {
		d, _ := tagged(hec.Counts(), "tier")
		return d == n
	}, 45*time.Second, 100*time.Millisecond, "every event reaches HEC")
	distinct, dups := tagged(hec.Counts(), "tier")
	assert.Equal(t, n, distinct)
	// The killed relay's uncommitted window: what it finished in the last
	// commit interval (1 s) at its share of the rate, plus batches in
	// flight. Bound it by one second of the whole stream.
	assert.LessOrEqual(t, dups, rate, "duplicates bounded by the uncommitted window")
	t.Logf("events %d, duplicates %d (killed relay had polled %.0f records)", n, dups, beforeKill)

	assert.Equal(t, float64(n), edge.metric(t, "relay_destination_delivered_events_total", `destination="kafka"`))
	assert.Zero(t, edge.metric(t, "relay_dropped_events_total"))
	assert.Zero(t, siem[1].metric(t, "relay_dropped_events_total"))
	assert.Equal(t, 6.0, siem[1].metric(t, "relay_kafka_assigned_partitions"), "the survivor owns every partition")
	assert.Greater(t, siem[1].metric(t, "relay_kafka_commits_total"), 0.0)
	require.Eventually(t, func() bool {
		return siem[1].metric(t, "relay_kafka_consumer_lag") == 0
	}, 10*time.Second, 50*time.Millisecond, "the survivor commits everything: lag 0")
}

// TestRebalanceGraceful: a second SIEM relay joins midway, then the first
// leaves with SIGTERM. Each revoke waits for the records already taken to
// be delivered and commits them before the partitions move, so the new
// owner starts exactly where the old one stopped: no event lost, none
// duplicated.
func TestRebalanceGraceful(t *testing.T) {
	if testing.Short() {
		t.Skip("two-tier runs of about 10-20 s: skipped in -short mode (the -race run has them)")
	}
	c := newCluster(t, 1, 6, "syslog")
	broker := c.ListenAddrs()[0]
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	edgeTCP, edgeM := freePort(t), freePort(t)
	startRelay(t, "edge", edgeYAML(edgeTCP, edgeM, broker, t.TempDir()), edgeM)
	am := freePort(t)
	a := startRelay(t, "siem-a", siemYAML("kafka", am, broker, hec.URL, hec.Token(), t.TempDir(), "json"), am)
	require.Eventually(t, func() bool { return a.metric(t, "relay_kafka_assigned_partitions") == 6 }, 30*time.Second, 50*time.Millisecond)

	const n, rate = 12000, 4000
	var b *relayProc
	var aRevokes, aCommits float64
	sendSyslog(t, edgeTCP, "graceful", n, rate, func(i int) {
		switch i {
		case n / 4:
			bm := freePort(t)
			b = startRelay(t, "siem-b", siemYAML("kafka", bm, broker, hec.URL, hec.Token(), t.TempDir(), "json"), bm)
		case n / 2:
			// The join was a rebalance: a gave up (revoked, after
			// committing) some of its partitions, and the two share all six.
			require.Eventually(t, func() bool {
				pa, pb := a.metric(t, "relay_kafka_assigned_partitions"), b.metric(t, "relay_kafka_assigned_partitions")
				return pa > 0 && pb > 0 && pa+pb == 6 && a.metric(t, "relay_kafka_revocations_total") >= 1
			}, 30*time.Second, 50*time.Millisecond, "the join moved partitions from a to b through a revoke")
		case 3 * n / 4:
			aRevokes = a.metric(t, "relay_kafka_revocations_total")
			aCommits = a.metric(t, "relay_kafka_commits_total")
			a.stop(t)
		}
	})
	assert.GreaterOrEqual(t, aRevokes, 1.0, "a revoked partitions when b joined")
	assert.Positive(t, aCommits, "a committed what it finished")
	require.Eventually(t, func() bool {
		d, _ := tagged(hec.Counts(), "graceful")
		return d == n
	}, 30*time.Second, 100*time.Millisecond, "every event reaches HEC")
	_, dups := tagged(hec.Counts(), "graceful")
	assert.Zero(t, dups, "graceful rebalances duplicate nothing")
	assert.Equal(t, 6.0, b.metric(t, "relay_kafka_assigned_partitions"), "the leave moved every partition to b")
	assert.Zero(t, b.metric(t, "relay_kafka_partitions_lost_total"), "no partition was lost without a revoke")
	assert.Contains(t, a.log.String(), "relay stopped")
}

// TestKafkaInputKcat: records produced by librdkafka's kcat, in the
// archive JSON format, reach HEC through a SIEM relay; a record that is
// not JSON goes to the dead-letter file and is counted.
func TestKafkaInputKcat(t *testing.T) {
	kcat := testtool.Need(t, "kcat", "apt-get install kcat")
	c := newCluster(t, 1, 2, "syslog")
	broker := c.ListenAddrs()[0]
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	dir := t.TempDir()
	m := freePort(t)
	r := startRelay(t, "siem", siemYAML("kafka", m, broker, hec.URL, hec.Token(), dir, "json"), m)

	var in strings.Builder
	const n = 50
	for _, e := range testEvents("kcat-in", n) {
		fmt.Fprintf(&in, "%s|%s\n", e.Host, kafka.AppendJSON(nil, &e))
	}
	in.WriteString("host-9|this is not json\n")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, "-P", "-b", broker, "-t", "syslog", "-K", "|", "-z", "lz4")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "kcat: %s", out)

	require.Eventually(t, func() bool {
		d, _ := tagged(hec.Counts(), "kcat-in")
		return d == n && r.metric(t, "relay_kafka_decode_errors_total") == 1
	}, 20*time.Second, 50*time.Millisecond)
	evs := hec.Events()
	require.NotEmpty(t, evs)
	assert.Equal(t, 1.0, r.metric(t, "relay_dropped_events_total", `reason="invalid_json"`))
	require.Eventually(t, func() bool {
		files, _ := filepath.Glob(filepath.Join(dir, "deadletter", "*"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if strings.Contains(string(b), "this is not json") {
				return true
			}
		}
		return false
	}, 10*time.Second, 50*time.Millisecond, "the bad record is dead-lettered")
}
