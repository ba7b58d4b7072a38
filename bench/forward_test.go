package bench

import (
	"bytes"
	stdgzip "compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
)

// hecEvent returns a realistic syslog-derived event (~200 bytes encoded).
func hecEvent(i int) relaykit.Event {
	var e relaykit.Event
	e.Time = 1_700_000_000_000_000_000 + int64(i)*1_000_000
	e.Host = []byte("web-01.prod.example.com")
	e.Source = []byte("sshd")
	e.SourceType = []byte("syslog")
	e.Raw = fmt.Appendf(nil, "Failed password for invalid user admin from 203.0.113.%d port %d ssh2", i%250, 40000+i%20000)
	e.SetFieldString("src_ip", fmt.Sprintf("203.0.113.%d", i%250))
	e.SetFieldString("user", "admin")
	return e
}

func newBenchHEC(b *testing.B, url string, cfg forward.HECConfig) *forward.HEC {
	b.Helper()
	cfg.URL, cfg.Token = url, "bench-token"
	h, err := forward.NewHEC(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close() })
	return h
}

// BenchmarkHECEncode: one op = one event encoded in the HEC event format
// into a reused buffer.
func BenchmarkHECEncode(b *testing.B) {
	h := newBenchHEC(b, "http://127.0.0.1:1", forward.HECConfig{Index: "main"})
	evs := make([]relaykit.Event, 64)
	for i := range evs {
		evs[i] = hecEvent(i)
	}
	buf := make([]byte, 0, 64<<10)
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		if len(buf) > 60<<10 {
			buf = buf[:0]
		}
		var err error
		buf, err = h.AppendEvent(buf, &evs[n%len(evs)])
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.StopTimer()
	// Check: the buffer holds stacked, valid HEC event objects.
	dec := json.NewDecoder(bytes.NewReader(buf))
	for dec.More() {
		var ev struct {
			Event string `json:"event"`
		}
		if err := dec.Decode(&ev); err != nil || ev.Event == "" {
			b.Fatalf("invalid HEC output: %v", err)
		}
	}
}

// gzipInput returns about size bytes of HEC-encoded events.
func gzipInput(b *testing.B, size int) []byte {
	h := newBenchHEC(b, "http://127.0.0.1:1", forward.HECConfig{})
	var out []byte
	for i := 0; len(out) < size; i++ {
		e := hecEvent(i)
		out, _ = h.AppendEvent(out, &e)
	}
	return out
}

// BenchmarkGzip: one op = one request body compressed. impl=pooled is
// forward.AppendGzip (pooled klauspost writer, Reset per request);
// impl=stdlib-new creates a compress/gzip writer per request, as the seed
// relay did. Both at level 1 (BestSpeed), the sinks' default.
func BenchmarkGzip(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"10KB", 10 << 10}, {"1MB", 1 << 20}} {
		src := gzipInput(b, size.n)
		b.Run("size="+size.name+"/impl=pooled", func(b *testing.B) {
			dst := make([]byte, 0, len(src))
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				dst, err = forward.AppendGzip(dst[:0], src, 1)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			checkGunzip(b, dst, src)
		})
		b.Run("size="+size.name+"/impl=stdlib-new", func(b *testing.B) {
			var out bytes.Buffer
			out.Grow(len(src))
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				out.Reset()
				zw, err := stdgzip.NewWriterLevel(&out, stdgzip.BestSpeed)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = zw.Write(src)
				if err := zw.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			checkGunzip(b, out.Bytes(), src)
		})
	}
}

func checkGunzip(b *testing.B, z, want []byte) {
	b.Helper()
	zr, err := stdgzip.NewReader(bytes.NewReader(z))
	if err != nil {
		b.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(got, want) {
		b.Fatalf("gzip round trip failed: %v", err)
	}
}

// countingHEC is a minimal HEC endpoint for benchmarks: it decompresses
// with pooled readers into pooled buffers, counts events and answers
// Success, so that its own allocations stay small and equal for both
// variants.
type countingHEC struct {
	events atomic.Int64
	bufs   sync.Pool
	zrs    sync.Pool
}

var success = []byte(`{"text":"Success","code":0}`)

func (c *countingHEC) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/services/collector/health" {
		_, _ = w.Write([]byte(`{"text":"HEC is healthy","code":17}`))
		return
	}
	buf, _ := c.bufs.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, _ := c.zrs.Get().(*kgzip.Reader)
		var err error
		if zr == nil {
			zr, err = kgzip.NewReader(r.Body)
		} else {
			err = zr.Reset(r.Body)
		}
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		defer c.zrs.Put(zr)
		body = zr
	}
	if _, err := buf.ReadFrom(body); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	c.events.Add(int64(bytes.Count(buf.Bytes(), []byte(`"event":`))))
	c.bufs.Put(buf)
	_, _ = w.Write(success)
}

// BenchmarkHECForward: one op = one event sent through forward.HEC to a
// local HTTP server, in batches of 100 (about 20 KB of JSON per request).
func BenchmarkHECForward(b *testing.B) {
	const batchSize = 100
	for _, gz := range []struct {
		name    string
		disable bool
	}{{"on", false}, {"off", true}} {
		b.Run("gzip="+gz.name, func(b *testing.B) {
			srv := &countingHEC{}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			h := newBenchHEC(b, ts.URL, forward.HECConfig{HTTP: forward.HTTPConfig{DisableGzip: gz.disable}})
			pool := make([]relaykit.Event, 1000)
			for i := range pool {
				pool[i] = hecEvent(i)
			}
			batch := make([]relaykit.Event, 0, batchSize)
			sent := 0
			flush := func() {
				if err := h.Send(b.Context(), batch); err != nil {
					b.Fatal(err)
				}
				sent += len(batch)
				batch = batch[:0]
			}
			b.ReportAllocs()
			for b.Loop() {
				batch = append(batch, pool[sent%len(pool)+len(batch)%10])
				if len(batch) == batchSize {
					flush()
				}
			}
			if len(batch) > 0 {
				flush()
			}
			b.StopTimer()
			if got := srv.events.Load(); got != int64(sent) {
				b.Fatalf("server counted %d events, sent %d", got, sent)
			}
			if st := h.Stats(); st.EventsSent != int64(sent) {
				b.Fatalf("Stats.EventsSent %d, sent %d", st.EventsSent, sent)
			}
		})
	}
}
