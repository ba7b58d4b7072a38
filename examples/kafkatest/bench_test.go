package kafkatest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// countingHEC is a light HEC endpoint for throughput runs: it gunzips the
// body, counts the event objects and answers Success, so the benchmark
// measures the relays rather than forwardtest's strict decoding.
type countingHEC struct{ events atomic.Int64 }

func (c *countingHEC) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/services/collector/health" {
		_, _ = w.Write([]byte(`{"text":"HEC is healthy","code":17}`))
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	c.events.Add(int64(bytes.Count(b, []byte(`"event":`))))
	_, _ = w.Write([]byte(`{"text":"Success","code":0}`))
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// directYAML is one relay: syslog over TCP in, HEC out.
func directYAML(tcp, metrics, hecURL, token, dir string) string {
	return fmt.Sprintf(`
inputs:
  syslog_tcp:
    - name: tcp
      listen: %s
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
`, tcp, hecURL, token, dir, dir, metrics)
}

// BenchmarkTwoTier: one op = one syslog event sent over TCP as fast as the
// relay takes it and counted at the HEC test server, either through one
// relay (path=direct) or through edge relay → Kafka (kfake, 6 partitions,
// zstd, keyed by host) → SIEM relay (path=two-tier). Every process runs on
// this machine. events/cpu-s divides by the CPU time of the relays (child
// processes) and of the test process (sender, HEC server, kfake broker).
func BenchmarkTwoTier(b *testing.B) {
	for _, path := range []string{"direct", "two-tier"} {
		b.Run("path="+path, func(b *testing.B) {
			hec := &countingHEC{}
			srv := httptest.NewServer(hec)
			defer srv.Close()
			tcp := freePort(b)
			var procs []*relayProc
			if path == "direct" {
				m := freePort(b)
				procs = append(procs, startRelay(b, "direct", directYAML(tcp, m, srv.URL, "bench-token", b.TempDir()), m))
			} else {
				c := newCluster(b, 1, 6, "syslog")
				broker := c.ListenAddrs()[0]
				em, sm := freePort(b), freePort(b)
				procs = append(procs, startRelay(b, "edge", edgeYAML(tcp, em, broker, b.TempDir()), em))
				procs = append(procs, startRelay(b, "siem", siemYAML("kafka", sm, broker, srv.URL, "bench-token", b.TempDir(), "json"), sm))
			}
			n := b.N
			b.ResetTimer()
			cpu0 := selfCPU()
			start := time.Now()
			sendSyslog(b, tcp, "bench", n, 1<<30, nil)
			for hec.events.Load() < int64(n) {
				if time.Since(start) > 5*time.Minute {
					b.Fatalf("HEC got %d of %d events", hec.events.Load(), n)
				}
				time.Sleep(10 * time.Millisecond) // polling a counter, not synchronising
			}
			elapsed := time.Since(start)
			b.StopTimer()
			cpu := selfCPU() - cpu0
			for _, p := range procs {
				p.stop(b)
				cpu += p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
			}
			if got := hec.events.Load(); got != int64(n) {
				b.Fatalf("HEC got %d events, sent %d", got, n)
			}
			b.ReportMetric(float64(n)/elapsed.Seconds(), "events/s")
			b.ReportMetric(float64(n)/cpu.Seconds(), "events/cpu-s")
		})
	}
}
