package bench

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/otlp"
)

// countingOTLP is a minimal OTLP/HTTP logs endpoint for benchmarks, the
// counterpart of countingHEC: it decompresses with pooled readers into
// pooled buffers, counts the log records without decoding them (a
// protobuf wire scan, or the "timeUnixNano" keys of OTLP/JSON) and
// answers an empty ExportLogsServiceResponse, so that its own cost stays
// small and about equal for every variant.
type countingOTLP struct {
	events atomic.Int64
	bufs   sync.Pool
	zrs    sync.Pool
}

func (c *countingOTLP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	buf, _ := c.bufs.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	defer c.bufs.Put(buf)
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
	ct := r.Header.Get("Content-Type")
	w.Header()["Content-Type"] = []string{ct}
	if ct == "application/json" {
		c.events.Add(int64(bytes.Count(buf.Bytes(), []byte(`"timeUnixNano":`))))
		_, _ = w.Write([]byte("{}"))
		return
	}
	n, ok := countRecords(buf.Bytes())
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	c.events.Add(int64(n))
}

// countRecords counts the log records of a serialised
// ExportLogsServiceRequest: field 1 resource_logs, in it field 2
// scope_logs, in it field 2 log_records.
func countRecords(b []byte) (int, bool) {
	return countNested(b, []protowire.Number{1, 2, 2})
}

func countNested(b []byte, path []protowire.Number) (int, bool) {
	n := 0
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return 0, false
		}
		b = b[l:]
		l = protowire.ConsumeFieldValue(num, typ, b)
		if l < 0 {
			return 0, false
		}
		if num == path[0] && typ == protowire.BytesType {
			if len(path) == 1 {
				n++
			} else {
				v, _ := protowire.ConsumeBytes(b)
				k, ok := countNested(v, path[1:])
				if !ok {
					return 0, false
				}
				n += k
			}
		}
		b = b[l:]
	}
	return n, true
}

// rawCodec passes gRPC messages through as bytes (*[]byte), so that the
// benchmark's gRPC server counts records without decoding them.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	p := v.(*[]byte)
	*p = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }

// serveCountingGRPC serves LogsService/Export on 127.0.0.1, counting
// records into events, and returns its address.
func serveCountingGRPC(b *testing.B, events *atomic.Int64) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := grpc.NewServer(grpc.ForceServerCodecV2(rawCodec{}), grpc.UnknownServiceHandler(func(_ any, st grpc.ServerStream) error {
		var req []byte
		if err := st.RecvMsg(&req); err != nil {
			return err
		}
		n, _ := countRecords(req)
		events.Add(int64(n))
		empty := []byte{}
		return st.SendMsg(&empty)
	}))
	done := make(chan struct{})
	go func() { _ = s.Serve(ln); close(done) }()
	b.Cleanup(func() { s.Stop(); <-done })
	return ln.Addr().String()
}

// BenchmarkOTLPExport: one op = one event sent through otlp.Exporter to
// a local server, in batches of 100, the events of BenchmarkHECForward;
// run it beside that benchmark for the exporter's cost per event against
// the HEC sink's. As there, the local server's work (decompression and a
// count of the records) is included.
func BenchmarkOTLPExport(b *testing.B) {
	const batchSize = 100
	for _, proto := range []struct {
		name string
		p    otlp.Protocol
	}{{"http-protobuf", otlp.HTTPProtobuf}, {"http-json", otlp.HTTPJSON}, {"grpc", otlp.GRPC}} {
		for _, gz := range []struct {
			name    string
			disable bool
		}{{"on", false}, {"off", true}} {
			b.Run("proto="+proto.name+"/gzip="+gz.name, func(b *testing.B) {
				var events *atomic.Int64
				cfg := otlp.ExporterConfig{Protocol: proto.p, DisableGzip: gz.disable}
				if proto.p == otlp.GRPC {
					events = new(atomic.Int64)
					cfg.Endpoint = "http://" + serveCountingGRPC(b, events)
				} else {
					srv := &countingOTLP{}
					ts := httptest.NewServer(srv)
					defer ts.Close()
					events, cfg.Endpoint = &srv.events, ts.URL
				}
				x, err := otlp.NewExporter(cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer x.Close()
				pool := make([]relaykit.Event, 1000)
				for i := range pool {
					pool[i] = hecEvent(i)
				}
				batch := make([]relaykit.Event, 0, batchSize)
				sent := 0
				flush := func() {
					if err := x.Send(context.Background(), batch); err != nil {
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
				if got := events.Load(); got != int64(sent) {
					b.Fatalf("server counted %d records, sent %d", got, sent)
				}
				if st := x.Stats(); st.Delivered != int64(sent) {
					b.Fatalf("Stats.Delivered %d, sent %d", st.Delivered, sent)
				}
			})
		}
	}
}
