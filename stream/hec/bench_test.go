package hec_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"syscall"
	"testing"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/stream/hec"
)

// discardWriter is a reusable http.ResponseWriter that keeps the status.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(s int)           { w.status = s }

// rewindBody is a request body that can be read again.
type rewindBody struct{ bytes.Reader }

func (*rewindBody) Close() error { return nil }

// gzipBody returns n forward.HEC-like events (200-byte messages, host,
// source, sourcetype, index, two fields), gzipped.
func gzipBody(n int) []byte {
	var plain bytes.Buffer
	for i := range n {
		fmt.Fprintf(&plain, `{"time":1700000000.%03d,"host":"web-%02d.example.com","source":"nginx","sourcetype":"access_combined","index":"web","event":"%s %06d","fields":{"facility":"local0","severity":"info","src_ip":"192.0.2.%d"}}`,
			i%1000, i%50, bytes.Repeat([]byte("x"), 180), i, i%250)
	}
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, 1)
	_, _ = zw.Write(plain.Bytes())
	_ = zw.Close()
	return b.Bytes()
}

type benchReq struct {
	h    *hec.Handler
	r    *http.Request
	body *rewindBody
	data []byte
	w    *discardWriter
}

func newBenchReq(tb testing.TB, events int) *benchReq {
	sink := relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error {
		if len(batch) != events {
			return fmt.Errorf("batch of %d events, want %d", len(batch), events)
		}
		return nil
	})
	h, err := hec.New(hec.Config{Tokens: []hec.Token{{Token: secret}}, Sink: sink})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = h.Close() })
	br := &benchReq{h: h, body: &rewindBody{}, data: gzipBody(events), w: &discardWriter{h: http.Header{}}}
	br.r, _ = http.NewRequest(http.MethodPost, "http://x/services/collector/event", br.body)
	br.r.Header.Set("Authorization", "Splunk "+secret)
	br.r.Header.Set("Content-Encoding", "gzip")
	br.r.Body = br.body
	return br
}

func (br *benchReq) serve(tb testing.TB) {
	br.body.Reset(br.data)
	br.w.status = 0
	br.h.ServeHTTP(br.w, br.r)
	if br.w.status != http.StatusOK {
		tb.Fatalf("status %d", br.w.status)
	}
}

// Once warm, a request costs the same allocations whatever its number of
// events: decoding allocates nothing per event.
func TestNoAllocationPerEvent(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	allocs := func(events int) float64 {
		br := newBenchReq(t, events)
		for range 3 {
			br.serve(t)
		}
		return testing.AllocsPerRun(50, func() { br.serve(t) })
	}
	one, hundred := allocs(1), allocs(100)
	t.Logf("allocations per request: %.0f with 1 event, %.0f with 100", one, hundred)
	if hundred > one {
		t.Fatalf("%.0f allocations for 100 events, %.0f for 1: an allocation per event", hundred, one)
	}
	if one > 10 {
		t.Fatalf("%.0f allocations per request, want at most 10", one)
	}
}

// BenchmarkHandler measures the handler in process, one op per event
// (ns/op reads as ns/event), with gzipped requests of 100 forward.HEC-like
// events of about 400 bytes each, decoded into a batch for a Sink that
// keeps nothing.
func BenchmarkHandler(b *testing.B) {
	const events = 100
	br := newBenchReq(b, events)
	b.SetBytes(int64(len(gzipBody(events)) / events))
	b.ReportAllocs()
	n := 0
	cpu0 := cpuTime()
	defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
	for b.Loop() {
		if n%events == 0 {
			br.serve(b)
		}
		n++
	}
}

// BenchmarkHandlerLoopback measures the handler behind net/http on a
// loopback server, with Go clients (RunParallel, keep-alive) posting
// gzipped requests of 100 events: one op is one event. Client and server
// share the machine's CPUs.
func BenchmarkHandlerLoopback(b *testing.B) {
	const events = 100
	sink := relaykit.SinkFunc(func(context.Context, []relaykit.Event) error { return nil })
	h, err := hec.New(hec.Config{Tokens: []hec.Token{{Token: secret}}, Sink: sink})
	if err != nil {
		b.Fatal(err)
	}
	srv := newHTTPServer(b, h)
	b.Cleanup(func() { _ = h.Close() })
	data := gzipBody(events)
	client := srv.Client()
	b.SetBytes(int64(len(data) / events))
	b.ReportAllocs()
	b.SetParallelism(2)
	cpu0 := cpuTime()
	defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
	b.RunParallel(func(pb *testing.PB) {
		n := 0
		for pb.Next() {
			if n%events == 0 {
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/services/collector/event", bytes.NewReader(data))
				req.Header.Set("Authorization", "Splunk "+secret)
				req.Header.Set("Content-Encoding", "gzip")
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
			}
			n++
		}
	})
}

// cpuTime returns the process's CPU time (user and system), in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
