package otlp

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
)

// The receiver's own OTLP/gRPC LogsService: the request message goes
// from grpc-go's buffers straight into the direct decoder (protodec.go),
// with no pdata in between.
//
// grpc-go unmarshals a request with the codec registered for its content
// subtype, "proto" for OTLP. pdata (imported by this package) registers
// the "proto" codec: it hands any message with the methods SizeProto,
// MarshalProto and UnmarshalProto the plain bytes (without a copy when
// they are in one buffer, as a message up to a few KiB or one gathered by
// the transport is), and falls back to the standard protobuf codec for
// others. grpcRequest and grpcResponse have those methods. RegisterGRPC
// checks that the codec registered does call them (rawCodecOK); should a
// program register another "proto" codec, it registers pdata's service
// instead, which works with any.

// exportMethod's service.
var logsServiceDesc = grpc.ServiceDesc{
	ServiceName: "opentelemetry.proto.collector.logs.v1.LogsService",
	HandlerType: (*rawLogsServer)(nil),
	Methods:     []grpc.MethodDesc{{MethodName: "Export", Handler: exportHandler}},
	Streams:     []grpc.StreamDesc{},
	Metadata:    "opentelemetry/proto/collector/logs/v1/logs_service.proto",
}

type rawLogsServer interface {
	exportRaw(ctx context.Context, q *grpcRequest) (*grpcResponse, error)
}

var _ rawLogsServer = (*grpcLogs)(nil)

// exportHandler is the method handler of Export, as protoc-gen-go-grpc
// writes one, but with a pooled request state for the message.
func exportHandler(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	g := srv.(*grpcLogs)
	st := g.r.get()
	defer g.r.put(st)
	st.grpc = grpcRequest{st: st}
	if err := dec(&st.grpc); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return g.exportRaw(ctx, &st.grpc)
	}
	info := &grpc.UnaryServerInfo{Server: srv, FullMethod: exportMethod}
	return interceptor(ctx, &st.grpc, info, func(ctx context.Context, req any) (any, error) {
		return g.exportRaw(ctx, req.(*grpcRequest))
	})
}

var errNotDecoded = errors.New("otlp: the gRPC codec did not pass the request message on")

func (g *grpcLogs) exportRaw(ctx context.Context, q *grpcRequest) (*grpcResponse, error) {
	start := time.Now()
	if !q.decoded {
		q.err = errNotDecoded
	}
	refused, err := g.answer(ctx, q.st, q.err, start)
	if err != nil {
		return nil, err
	}
	if refused == 0 {
		return &emptyResponse, nil
	}
	b, err := g.r.response(refused).MarshalProto()
	if err != nil { // cannot happen for this message
		return nil, err
	}
	return &grpcResponse{b: b}, nil
}

// grpcRequest is the request message of Export: unmarshalling it
// decodes the bytes into its request state's batch.
type grpcRequest struct {
	st      *reqState
	err     error // the decoding's
	decoded bool
}

// UnmarshalProto decodes b into the batch of q's request state. It
// returns nil: a decoding error is q's, answered INVALID_ARGUMENT (an
// error from the codec would be answered INTERNAL). b is not retained.
func (q *grpcRequest) UnmarshalProto(b []byte) error {
	st := q.st
	st.batch, q.err = st.dec.appendEventsProto(st.batch[:0], b, st.clock.Nano())
	q.decoded = true
	return nil
}

// SizeProto and MarshalProto complete the codec's interface; a request
// is never marshalled.
func (q *grpcRequest) SizeProto() int            { return 0 }
func (q *grpcRequest) MarshalProto(b []byte) int { return 0 }

// grpcResponse is an encoded ExportLogsServiceResponse.
type grpcResponse struct {
	b []byte
}

// emptyResponse is the response without partial success, as pdata
// encodes it (an empty partial_success field). Read only.
var emptyResponse = grpcResponse{b: []byte{0x0a, 0x00}}

func (p *grpcResponse) SizeProto() int            { return len(p.b) }
func (p *grpcResponse) MarshalProto(b []byte) int { return copy(b, p.b) }
func (p *grpcResponse) UnmarshalProto(b []byte) error {
	p.b = append(p.b[:0], b...)
	return nil
}

// codecProbe records what the "proto" codec did with it.
type codecProbe struct{ got []byte }

func (p *codecProbe) SizeProto() int            { return 3 }
func (p *codecProbe) MarshalProto(b []byte) int { return copy(b, "abc") }
func (p *codecProbe) UnmarshalProto(b []byte) error {
	p.got = append(p.got[:0], b...)
	return nil
}

// rawCodecOK reports whether grpc-go's "proto" codec passes messages
// with the methods of grpcRequest and grpcResponse through them, both
// ways.
func rawCodecOK() bool {
	c := encoding.GetCodecV2("proto")
	if c == nil {
		return false
	}
	var p codecProbe
	if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer("xyz")}, &p); err != nil || string(p.got) != "xyz" {
		return false
	}
	out, err := c.Marshal(&p)
	if err != nil {
		return false
	}
	defer out.Free()
	return string(out.Materialize()) == "abc"
}
