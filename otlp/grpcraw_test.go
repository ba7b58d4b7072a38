package otlp_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"

	"github.com/relaykit/relaykit/otlp"
)

// rawCodec sends and receives *[]byte messages as they are, under the
// name "proto", so that a test client can send any bytes as an export
// request.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }

const exportMethod = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"

func rawExport(t *testing.T, addr string, req []byte) ([]byte, error) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	var resp []byte
	err = conn.Invoke(t.Context(), exportMethod, &req, &resp, grpc.ForceCodecV2(rawCodec{}))
	return resp, err
}

func TestGRPCInvalidRequest(t *testing.T) {
	sink := &collectSink{}
	r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink})
	require.NoError(t, err)
	addr := serveGRPC(t, r)

	// A request cut short: INVALID_ARGUMENT, counted, nothing sent.
	good, err := plogotlp.NewExportRequestFromLogs(testLogs(3)).MarshalProto()
	require.NoError(t, err)
	_, err = rawExport(t, addr, good[:len(good)-3])
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	assert.Empty(t, sink.got())
	st := r.Stats()
	assert.Equal(t, int64(1), st.BadRequests)
	assert.Equal(t, int64(1), st.GRPCRequests)
	assert.Zero(t, st.Records)

	// The whole request: the response pdata would send, the records
	// those pdata reads.
	resp, err := rawExport(t, addr, good)
	require.NoError(t, err)
	want, err := plogotlp.NewExportResponse().MarshalProto()
	require.NoError(t, err)
	assert.Equal(t, want, resp)
	assert.Len(t, sink.got(), 3)
}

// TestGRPCInterceptor checks that a unary interceptor sees the Export
// call and can refuse it or let it through.
func TestGRPCInterceptor(t *testing.T) {
	sink := &collectSink{}
	r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink})
	require.NoError(t, err)
	ln, _ := listenGRPC(t)
	var calls atomic.Int32
	var refuse atomic.Bool
	refuse.Store(true)
	s := grpc.NewServer(append(r.ServerOptions(), grpc.UnaryInterceptor(
		func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			calls.Add(1)
			if info.FullMethod != exportMethod || refuse.Load() {
				return nil, status.Error(codes.PermissionDenied, "no")
			}
			return h(ctx, req)
		}))...)
	r.RegisterGRPC(s)
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)

	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	client := plogotlp.NewGRPCClient(conn)
	_, err = client.Export(t.Context(), plogotlp.NewExportRequestFromLogs(testLogs(2)))
	require.Equal(t, codes.PermissionDenied, status.Code(err))
	assert.Empty(t, sink.got())
	refuse.Store(false)
	_, err = client.Export(t.Context(), plogotlp.NewExportRequestFromLogs(testLogs(2)))
	require.NoError(t, err)
	assert.Len(t, sink.got(), 2)
	assert.Equal(t, int32(2), calls.Load())
}
