package otlp_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/stats"

	"github.com/relaykit/relaykit/otlp"
)

// headerEncodings records the grpc-encoding of the headers a client or
// server receives.
type headerEncodings struct {
	mu   sync.Mutex
	encs []string
}

func (h *headerEncodings) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return ctx
}
func (h *headerEncodings) HandleRPC(_ context.Context, s stats.RPCStats) {
	if in, ok := s.(*stats.InHeader); ok {
		h.mu.Lock()
		h.encs = append(h.encs, in.Compression)
		h.mu.Unlock()
	}
}
func (h *headerEncodings) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (h *headerEncodings) HandleConn(context.Context, stats.ConnStats) {}

// TestReceiverGRPCResponseUncompressed: a gzipped export request is
// answered with an uncompressed response (grpc-go would otherwise gzip
// the few bytes of every response), and the client reads it.
func TestReceiverGRPCResponseUncompressed(t *testing.T) {
	sink := &collectSink{}
	r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink, MaxEventBytes: 200})
	require.NoError(t, err)
	hs := &headerEncodings{}
	conn, err := grpc.NewClient(serveGRPC(t, r), grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithStatsHandler(hs))
	require.NoError(t, err)
	defer conn.Close()
	client := plogotlp.NewGRPCClient(conn)

	ld := testLogs(3)
	ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(1).Body().SetStr(string(make([]byte, 300)))
	resp, err := client.Export(t.Context(), plogotlp.NewExportRequestFromLogs(ld), grpc.UseCompressor("gzip"))
	require.NoError(t, err)
	// A non-empty response (a partial success) still arrives intact.
	assert.Equal(t, int64(1), resp.PartialSuccess().RejectedLogRecords())
	assert.Contains(t, resp.PartialSuccess().ErrorMessage(), "larger than 200 bytes")
	require.Len(t, sink.got(), 2)

	hs.mu.Lock()
	defer hs.mu.Unlock()
	require.Len(t, hs.encs, 1)
	assert.Equal(t, "identity", hs.encs[0])
}

// TestExporterGRPCGzip: the exporter's gRPC requests are gzipped (the
// server sees grpc-encoding gzip and decodes every record) at any
// GzipLevel, and not with DisableGzip.
func TestExporterGRPCGzip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     otlp.ExporterConfig
		wantEnc string
	}{
		{"default", otlp.ExporterConfig{}, "gzip"},
		{"level 9", otlp.ExporterConfig{GzipLevel: 9}, "gzip"},
		{"huffman only", otlp.ExporterConfig{GzipLevel: -2}, "gzip"},
		{"stateless", otlp.ExporterConfig{GzipLevel: -3}, "gzip"},
		{"disabled", otlp.ExporterConfig{DisableGzip: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &collectSink{}
			r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink})
			require.NoError(t, err)
			hs := &headerEncodings{}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			s := grpc.NewServer(append(r.ServerOptions(), grpc.StatsHandler(hs))...)
			r.RegisterGRPC(s)
			done := make(chan struct{})
			go func() { _ = s.Serve(ln); close(done) }()
			defer func() { s.Stop(); <-done }()

			cfg := tc.cfg
			cfg.Endpoint, cfg.Protocol = "http://"+ln.Addr().String(), otlp.GRPC
			x := newExporter(t, cfg)
			in := events(50)
			require.NoError(t, x.Send(t.Context(), in))
			got := sink.got()
			require.Len(t, got, len(in))
			for i := range in {
				assert.Equal(t, string(in[i].Raw), string(got[i].Raw))
			}
			hs.mu.Lock()
			defer hs.mu.Unlock()
			require.Len(t, hs.encs, 1)
			assert.Equal(t, tc.wantEnc, hs.encs[0])
		})
	}
}

// TestExporterGzipLevelInvalid: a level gzip does not have is refused at
// construction, naming the level.
func TestExporterGzipLevelInvalid(t *testing.T) {
	for _, level := range []int{10, -1, -4} {
		_, err := otlp.NewExporter(otlp.ExporterConfig{Endpoint: "http://127.0.0.1:4318", GzipLevel: level})
		require.ErrorIs(t, err, otlp.ErrInvalidConfig, "level %d", level)
		assert.Contains(t, err.Error(), fmt.Sprintf("GzipLevel: %d is not", level))
	}
}
