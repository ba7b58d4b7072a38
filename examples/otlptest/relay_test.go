package otlptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/otlp"
)

// The example relay (examples/relay) runs here as a process of its own:
// it is another module (the examples module stays at go 1.25.9, which the
// OpenTelemetry SDK and Collector modules this module requires do not
// allow), so the tests build its binary and drive it through its config
// file, its OTLP listeners and its archive.

const relayToken = "relay-s3cret"

// buildRelay builds the relay binary into a test directory.
func buildRelay(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "relay")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("..", "relay")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build examples/relay: %s", out)
	return bin
}

// relayProc is a relay process with an OTLP input (HTTP and gRPC, bearer
// token), routing every event to a JSON archive and to an OTLP destination
// (the Collector at collector, over gRPC).
type relayProc struct {
	bin, dir, cfg            string
	httpAddr, grpcAddr, mtrc string
	cmd                      *exec.Cmd
	stderr                   *os.File
}

func newRelayProc(t *testing.T, bin, collector string) *relayProc {
	t.Helper()
	p := &relayProc{bin: bin, dir: t.TempDir(), httpAddr: freeAddr(t), grpcAddr: freeAddr(t), mtrc: freeAddr(t)}
	p.cfg = filepath.Join(p.dir, "relay.yaml")
	yml := fmt.Sprintf(`
inputs:
  otlp:
    - name: otlp
      http_listen: %s
      grpc_listen: %s
      token: %s
workers: {count: 2, batch_max_wait: 20ms}
timezone: UTC
routes:
  - name: all
    destinations: [archive, collector]
destinations:
  archive: {type: archive, dir: %s, format: json}
  collector: {type: otlp, endpoint: "http://%s", protocol: grpc}
spool: {dir: %s}
dead_letter: {dir: %s}
metrics: {listen: %s}
shutdown_timeout: 20s
`, p.httpAddr, p.grpcAddr, relayToken, filepath.Join(p.dir, "archive"), collector,
		filepath.Join(p.dir, "spool"), filepath.Join(p.dir, "deadletter"), p.mtrc)
	require.NoError(t, os.WriteFile(p.cfg, []byte(yml), 0o600))
	return p
}

// start runs the relay and waits until its health endpoint answers 200.
func (p *relayProc) start(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(p.dir, "stderr"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	p.stderr = f
	p.cmd = exec.Command(p.bin, "-config", p.cfg)
	p.cmd.Stderr, p.cmd.Stdout = f, f
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
		_ = f.Close()
		if t.Failed() {
			b, _ := os.ReadFile(f.Name())
			t.Logf("relay stderr:\n%s", b)
		}
	})
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + p.mtrc + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 20*time.Millisecond, "relay healthy")
}

// stop ends the relay with SIGTERM (a clean shutdown) and requires exit 0.
func (p *relayProc) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, p.cmd.Wait())
}

// kill ends the relay with SIGKILL.
func (p *relayProc) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Kill())
	err := p.cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
}

// archiveLine is one line of the relay's JSON archive.
type archiveLine struct {
	Host    string            `json:"host"`
	Source  string            `json:"source"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields"`
}

func (p *relayProc) archive(t *testing.T) []archiveLine {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(p.dir, "archive", "*"))
	require.NoError(t, err)
	var out []archiveLine
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l archiveLine
			require.NoError(t, json.Unmarshal(sc.Bytes(), &l), sc.Text())
			out = append(out, l)
		}
	}
	return out
}

// collectorEvents decodes what the Collector received into events.
func collectorEvents(sink *consumertest.LogsSink) []relaykit.Event {
	var evs []relaykit.Event
	for _, ld := range sink.AllLogs() {
		evs = otlp.Mapping{}.AppendEvents(evs, ld, 0)
	}
	return evs
}

// TestRelaySDK: the OpenTelemetry Go SDK's otlploghttp (protobuf, gzip)
// and otlploggrpc exporters send to the relay's OTLP input, with its
// bearer token; the relay archives every record with its attributes and
// sends it on over OTLP/gRPC to the Collector's otlpreceiver, which
// receives every record with its attributes.
func TestRelaySDK(t *testing.T) {
	bin := buildRelay(t)
	sink := new(consumertest.LogsSink)
	collGRPC, _ := startCollector(t, sink)
	p := newRelayProc(t, bin, collGRPC)
	p.start(t)

	httpExp, err := otlploghttp.New(t.Context(),
		otlploghttp.WithEndpointURL("http://"+p.httpAddr+"/v1/logs"),
		otlploghttp.WithCompression(otlploghttp.GzipCompression),
		otlploghttp.WithHeaders(map[string]string{"Authorization": "Bearer " + relayToken}))
	require.NoError(t, err)
	emit(t, httpExp)
	require.Eventually(t, func() bool { return sink.LogRecordCount() >= sdkRecords }, 20*time.Second, 10*time.Millisecond)
	checkSDKRecords(t, collectorEvents(sink))
	sink.Reset()

	grpcExp, err := otlploggrpc.New(t.Context(),
		otlploggrpc.WithEndpoint(p.grpcAddr), otlploggrpc.WithInsecure(), otlploggrpc.WithCompressor("gzip"),
		otlploggrpc.WithHeaders(map[string]string{"authorization": "Bearer " + relayToken}))
	require.NoError(t, err)
	emit(t, grpcExp)
	require.Eventually(t, func() bool { return sink.LogRecordCount() >= sdkRecords }, 20*time.Second, 10*time.Millisecond)
	checkSDKRecords(t, collectorEvents(sink))

	p.stop(t)
	lines := p.archive(t)
	require.Len(t, lines, 2*sdkRecords)
	for _, l := range lines {
		assert.Equal(t, "sdk-host", l.Host)
		assert.Equal(t, "sdk-test", l.Source)
		assert.Equal(t, "record "+l.Fields["n"], l.Message)
		assert.Equal(t, "sdk", l.Fields["kind"])
		assert.Equal(t, "otlptest", l.Fields["scope.name"])
		assert.Equal(t, `{"id":7,"name":"ada"}`, l.Fields["user"])
	}
}

// TestRelayToCollectorFieldForField: records using every part of the log
// data model, posted to the relay over OTLP/HTTP, reach the Collector's
// otlpreceiver through the relay's OTLP destination field for field.
func TestRelayToCollectorFieldForField(t *testing.T) {
	bin := buildRelay(t)
	sink := new(consumertest.LogsSink)
	collGRPC, _ := startCollector(t, sink)
	p := newRelayProc(t, bin, collGRPC)
	p.start(t)

	in := richLogs()
	body, err := plogotlp.NewExportRequestFromLogs(in).MarshalProto()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, postRelay(t, p.httpAddr, body))
	require.Eventually(t, func() bool { return sink.LogRecordCount() >= in.LogRecordCount() }, 20*time.Second, 10*time.Millisecond)
	p.stop(t)

	want, got := flatten(in), flatten(mergeLogs(sink.AllLogs()))
	require.Len(t, got, len(want))
	for i := range want {
		w, g := want[i], got[i]
		assert.True(t, w.res.Attributes().Equal(g.res.Attributes()), "record %d resource", i)
		assert.Equal(t, w.res.DroppedAttributesCount(), g.res.DroppedAttributesCount())
		assert.Equal(t, w.schema, g.schema)
		assert.Equal(t, w.scope.Name(), g.scope.Name())
		assert.Equal(t, w.scope.Version(), g.scope.Version())
		assert.True(t, w.scope.Attributes().Equal(g.scope.Attributes()))
		wr, gr := w.rec, g.rec
		assert.Equal(t, wr.Timestamp(), gr.Timestamp())
		assert.Equal(t, wr.ObservedTimestamp(), gr.ObservedTimestamp())
		assert.Equal(t, wr.SeverityNumber(), gr.SeverityNumber())
		assert.Equal(t, wr.SeverityText(), gr.SeverityText())
		assert.Equal(t, wr.Body().Type(), gr.Body().Type())
		assert.True(t, wr.Body().Equal(gr.Body()), "record %d body", i)
		assert.Equal(t, wr.Attributes().AsRaw(), gr.Attributes().AsRaw(), "record %d", i)
		assert.Equal(t, wr.TraceID(), gr.TraceID())
		assert.Equal(t, wr.SpanID(), gr.SpanID())
		assert.Equal(t, wr.Flags(), gr.Flags())
		assert.Equal(t, wr.EventName(), gr.EventName())
		assert.Equal(t, wr.DroppedAttributesCount(), gr.DroppedAttributesCount())
	}
}

type flatRecord struct {
	res    pcommon.Resource
	schema string
	scope  pcommon.InstrumentationScope
	rec    plog.LogRecord
}

func flatten(ld plog.Logs) []flatRecord {
	var out []flatRecord
	for i := range ld.ResourceLogs().Len() {
		rl := ld.ResourceLogs().At(i)
		for j := range rl.ScopeLogs().Len() {
			sl := rl.ScopeLogs().At(j)
			for k := range sl.LogRecords().Len() {
				out = append(out, flatRecord{rl.Resource(), rl.SchemaUrl(), sl.Scope(), sl.LogRecords().At(k)})
			}
		}
	}
	return out
}

func mergeLogs(all []plog.Logs) plog.Logs {
	out := plog.NewLogs()
	for _, ld := range all {
		ld.ResourceLogs().MoveAndAppendTo(out.ResourceLogs())
	}
	return out
}

func postRelay(t *testing.T, addr string, body []byte) int {
	t.Helper()
	code, err := tryPost(addr, body)
	require.NoError(t, err)
	return code
}

func tryPost(addr string, body []byte) (int, error) {
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/logs", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Authorization", "Bearer "+relayToken)
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestRelayKill9: three senders post requests of 50 records to the relay
// process; the relay is killed with SIGKILL while the sender is sending,
// and started again; the sender resends what was not answered 200. Every
// record answered 200 is in the archive after the restart, and reaches the
// Collector (spooled by the relay, replayed after the restart).
func TestRelayKill9(t *testing.T) {
	bin := buildRelay(t)
	sink := new(consumertest.LogsSink)
	collGRPC, _ := startCollector(t, sink)
	p := newRelayProc(t, bin, collGRPC)
	p.start(t)

	const senders, requests, per = 3, 20, 50 // requests per sender
	var mu sync.Mutex
	acked := map[string]bool{}
	ackedReqs := 0
	killAt := make(chan struct{})
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for r := range requests {
				ld := plog.NewLogs()
				rl := ld.ResourceLogs().AppendEmpty()
				rl.Resource().Attributes().PutStr("service.name", "killtest")
				sl := rl.ScopeLogs().AppendEmpty()
				for i := range per {
					sl.LogRecords().AppendEmpty().Body().SetStr(fmt.Sprintf("sender %d req %d rec %d", s, r, i))
				}
				body, _ := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
				for {
					code, err := tryPost(p.httpAddr, body)
					if err == nil && code == http.StatusOK {
						break
					}
					if err == nil && code != http.StatusServiceUnavailable {
						t.Errorf("sender %d request %d answered %d", s, r, code)
						return
					}
					// Refused, or the relay is down: resend after a
					// pause, as an OTLP sender's retry does.
					select {
					case <-time.After(20 * time.Millisecond):
					case <-t.Context().Done():
						return
					}
				}
				mu.Lock()
				for i := range per {
					acked[fmt.Sprintf("sender %d req %d rec %d", s, r, i)] = true
				}
				ackedReqs++
				if ackedReqs == senders*requests/2 {
					close(killAt)
				}
				mu.Unlock()
			}
		})
	}
	<-killAt // the senders go on sending while the relay dies
	p.kill(t)
	p.start(t)
	wg.Wait()
	mu.Lock()
	require.Len(t, acked, senders*requests*per)
	mu.Unlock()
	require.Eventually(t, func() bool {
		got := map[string]bool{}
		for _, e := range collectorEvents(sink) {
			got[string(e.Raw)] = true
		}
		for k := range acked {
			if !got[k] {
				return false
			}
		}
		return true
	}, 30*time.Second, 50*time.Millisecond, "every answered record at the Collector")
	p.stop(t)
	inArchive := map[string]bool{}
	for _, l := range p.archive(t) {
		inArchive[l.Message] = true
	}
	missing := 0
	for k := range acked {
		if !inArchive[k] {
			missing++
		}
	}
	assert.Zero(t, missing, "records answered 200 and missing from the archive")
	t.Logf("archive lines %d (answered %d; the rest are resends of requests the kill cut), collector records %d",
		len(p.archive(t)), len(acked), sink.LogRecordCount())
}
