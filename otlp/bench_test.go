package otlp_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/otlp"
)

// sdkLogs returns n records shaped as an SDK sends them: a resource with
// a few attributes, a scope, and per record a timestamp, severity, a
// string body, trace context and four attributes.
func sdkLogs(n int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	ra := rl.Resource().Attributes()
	ra.PutStr("service.name", "checkout")
	ra.PutStr("host.name", "web-1")
	ra.PutStr("telemetry.sdk.language", "go")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("app")
	for i := range n {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)))
		lr.SetObservedTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)))
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
		lr.Body().SetStr("GET /api/orders/12345 200 in 12ms for user ada@example.com " + strings.Repeat("x", 60))
		lr.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
		lr.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
		a := lr.Attributes()
		a.PutStr("http.method", "GET")
		a.PutInt("http.status_code", 200)
		a.PutStr("http.route", "/api/orders/{id}")
		a.PutStr("user.id", "ada")
	}
	return ld
}

// BenchmarkReceiverHTTP measures the receiver's handler with 100-record
// OTLP/HTTP protobuf requests (gzipped or not), called directly (no
// sockets); one op is one record.
func BenchmarkReceiverHTTP(b *testing.B) {
	for _, gzipped := range []bool{false, true} {
		name := "records=100/gzip=false"
		if gzipped {
			name = "records=100/gzip=true"
		}
		b.Run(name, func(b *testing.B) {
			var got int
			sink := relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error { got += len(batch); return nil })
			r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink})
			require.NoError(b, err)
			body, err := plogotlp.NewExportRequestFromLogs(sdkLogs(100)).MarshalProto()
			require.NoError(b, err)
			if gzipped {
				body = gz(b, body)
			}
			w := &discardWriter{h: http.Header{}}
			req := httptest.NewRequest(http.MethodPost, "/v1/logs", nil)
			req.Header.Set("Content-Type", "application/x-protobuf")
			if gzipped {
				req.Header.Set("Content-Encoding", "gzip")
			}
			rd := bytes.NewReader(body)
			req.Body = io.NopCloser(rd)
			b.ReportAllocs()
			b.SetBytes(int64(len(body)) / 100)
			n := 0
			for b.Loop() {
				if n%100 == 0 {
					rd.Reset(body)
					clear(w.h)
					w.status = 0
					r.ServeHTTP(w, req)
					if w.status != http.StatusOK {
						b.Fatalf("status %d", w.status)
					}
				}
				n++
			}
			if got < n {
				b.Fatalf("%d records accepted for %d ops", got, n)
			}
		})
	}
}

type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(s int)           { w.status = s }

// BenchmarkExporter measures the exporter's cost per event sending
// 100-event batches to an OTLP/HTTP receiver in the same process (the
// receiver's cost included), protobuf and gzip level 1; and the mapping
// alone (events to a protobuf request body).
func BenchmarkExporter(b *testing.B) {
	evs := otlp.Mapping{}.AppendEvents(nil, sdkLogs(100), 1)
	b.Run("http/batch=100", func(b *testing.B) {
		r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: relaykit.SinkFunc(func(context.Context, []relaykit.Event) error { return nil })})
		require.NoError(b, err)
		srv := httptest.NewServer(r)
		defer srv.Close()
		x, err := otlp.NewExporter(otlp.ExporterConfig{Endpoint: srv.URL})
		require.NoError(b, err)
		defer x.Close()
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			if n%100 == 0 {
				if err := x.Send(context.Background(), evs); err != nil {
					b.Fatal(err)
				}
			}
			n++
		}
	})
	b.Run("encode/batch=100", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			if n%100 == 0 {
				ld := plog.NewLogs()
				otlp.Mapping{}.AppendLogs(ld, evs)
				if _, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto(); err != nil {
					b.Fatal(err)
				}
			}
			n++
		}
	})
}

// BenchmarkReceiverGRPC measures the receiver over OTLP/gRPC on a
// 127.0.0.1 socket with 100-record gzipped requests from one client, the
// client's cost (marshalling, compress/gzip) included; one op is one
// record.
func BenchmarkReceiverGRPC(b *testing.B) {
	var got int
	sink := relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error { got += len(batch); return nil })
	r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink})
	require.NoError(b, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	s := grpc.NewServer(r.ServerOptions()...)
	r.RegisterGRPC(s)
	done := make(chan struct{})
	go func() { _ = s.Serve(ln); close(done) }()
	defer func() { s.Stop(); <-done }()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(b, err)
	defer conn.Close()
	client := plogotlp.NewGRPCClient(conn)
	req := plogotlp.NewExportRequestFromLogs(sdkLogs(100))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n%100 == 0 {
			if _, err := client.Export(context.Background(), req, grpc.UseCompressor("gzip")); err != nil {
				b.Fatal(err)
			}
		}
		n++
	}
	if got < n {
		b.Fatalf("%d records accepted for %d ops", got, n)
	}
}
