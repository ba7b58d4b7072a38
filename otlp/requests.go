package otlp

// Requests encoded ahead (relaykit.RequestSink): EncodeRequests packs a
// batch exactly as Send does and keeps each request's
// ExportLogsServiceRequest, marshalled (protobuf, or JSON for HTTPJSON)
// and gzipped unless DisableGzip, as the Request's Body; SendRequests
// posts a stored body as it is (OTLP/HTTP), or passes it to grpc-go as
// the marshalled message (OTLP/gRPC; the exporter's compressor sends a
// body that is gzip already as it is). A request is cut or decoded by
// unmarshalling it with pdata: slow paths.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc/metadata"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/gzipool"
)

// Formats of the requests an exporter encodes (relaykit.Request.Format,
// without "+gzip").
const (
	formatProto = "otlp.proto" // ExportLogsServiceRequest, protobuf (OTLP/HTTP protobuf and gRPC)
	formatJSON  = "otlp.json"  // ExportLogsServiceRequest, OTLP/JSON
	gzipSuffix  = "+gzip"
)

// maxStoredBody bounds a stored request body once decompressed.
const maxStoredBody = 256 << 20

// family returns the format of the bodies x sends, without "+gzip".
func (x *Exporter) family() string {
	if x.cfg.Protocol == HTTPJSON {
		return formatJSON
	}
	return formatProto
}

func splitFormat(f string) (family string, gzip bool) { return strings.CutSuffix(f, gzipSuffix) }

// EncodeRequests appends to dst the requests that carry batch, split as
// Send splits it (MaxRequestBytes), marshalled as the protocol sends them
// and gzipped unless DisableGzip, for a queue to store and send later with
// [Exporter.SendRequests]; see [relaykit.RequestSink]. An event over
// MaxRequestBytes alone is listed in the returned *relaykit.BatchError.
// Their Format is "otlp.proto" (OTLP/HTTP protobuf and OTLP/gRPC) or
// "otlp.json", with "+gzip" when compressed.
func (x *Exporter) EncodeRequests(dst []relaykit.Request, batch []relaykit.Event) ([]relaykit.Request, error) {
	st, _ := x.pool.Get().(*sendState)
	if st == nil {
		st = new(sendState)
	}
	defer func() {
		st.failed = st.failed[:0]
		x.pool.Put(st)
	}()
	format := x.family()
	if !x.cfg.DisableGzip {
		format += gzipSuffix
	}
	x.pack(context.Background(), st, batch, func(ld plog.Logs, start, end int) bool {
		req := plogotlp.NewExportRequestFromLogs(ld)
		var body []byte
		var err error
		if x.cfg.Protocol == HTTPJSON {
			body, err = req.MarshalJSON()
		} else {
			body, err = req.MarshalProto()
		}
		if err != nil {
			x.fail(st, start, end, true, relaykit.ReasonRejected, &ExportError{Destination: x.name, Err: err})
			return true
		}
		if len(dst) < cap(dst) {
			dst = dst[:len(dst)+1]
		} else {
			dst = append(dst, relaykit.Request{})
		}
		q := &dst[len(dst)-1]
		if x.cfg.DisableGzip {
			q.Body = append(q.Body[:0], body...)
		} else {
			q.Body, _ = gzipool.Append(q.Body[:0], body, x.cfg.GzipLevel) // level checked in NewExporter
		}
		q.Format, q.Events, q.Index = format, end-start, q.Index[:0]
		q.OldestReceive, q.NewestReceive = 0, 0
		for i := start; i < end; i++ {
			if rt := batch[i].ReceiveTime; rt != 0 {
				if q.OldestReceive == 0 || rt < q.OldestReceive {
					q.OldestReceive = rt
				}
				q.NewestReceive = max(q.NewestReceive, rt)
			}
		}
		return true
	})
	if len(st.failed) > 0 {
		return dst, &relaykit.BatchError{Failed: append([]relaykit.FailedRange(nil), st.failed...)}
	}
	return dst, nil
}

// SendRequests sends requests made by EncodeRequests, one after the
// other, their stored bodies as they are, and reports what was not
// delivered as Send does (event positions counting through reqs): a
// retryable failure fails its request and every later one, which are not
// sent. A request of the other encoding (protobuf or JSON) is decoded and
// sent as events. See [relaykit.RequestSink].
func (x *Exporter) SendRequests(ctx context.Context, reqs []relaykit.Request) error {
	total := 0
	for i := range reqs {
		total += reqs[i].Events
	}
	if total == 0 {
		return ctx.Err()
	}
	st, _ := x.pool.Get().(*sendState)
	if st == nil {
		st = new(sendState)
	}
	defer func() {
		st.failed = st.failed[:0]
		x.pool.Put(st)
	}()
	off := 0
	for i := range reqs {
		rq := &reqs[i]
		n := rq.Events
		if n == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			x.fail(st, off, total, false, ReasonUnavailable, &ExportError{Destination: x.name, Retryable: true, Err: err})
			break
		}
		family, gz := splitFormat(rq.Format)
		if family != x.family() {
			if !x.sendForeign(ctx, st, rq, off, total) {
				break
			}
			off += n
			continue
		}
		began := time.Now()
		x.requests.Add(1)
		var xe *ExportError
		var ps plogotlp.ExportPartialSuccess
		wire := 0
		if x.grpcC != nil {
			xe, ps = x.exportStoredGRPC(ctx, rq.Body, gz)
		} else {
			ctype := protoType
			if family == formatJSON {
				ctype = jsonType
			}
			xe, ps, wire = x.postHTTP(ctx, rq.Body, ctype, gz)
		}
		xe, rejected, msg := x.report(xe, ps, n, wire, began)
		if !x.settle(st, off, off+n, total, xe, rejected, msg) {
			break
		}
		off += n
	}
	if len(st.failed) == 0 {
		return nil
	}
	return &relaykit.BatchError{Failed: append([]relaykit.FailedRange(nil), st.failed...)}
}

// sendForeign sends the events of rq, a request of the other encoding,
// decoded; it reports whether later requests are to be sent.
func (x *Exporter) sendForeign(ctx context.Context, st *sendState, rq *relaykit.Request, off, total int) bool {
	evs, err := x.DecodeRequest(nil, rq)
	if err == nil && len(evs) != rq.Events {
		err = fmt.Errorf("request of %d events decodes to %d", rq.Events, len(evs))
	}
	if err != nil {
		x.fail(st, off, off+rq.Events, true, relaykit.ReasonRejected, &ExportError{Destination: x.name, Err: err})
		return true
	}
	err = x.Send(ctx, evs)
	if err == nil {
		return true
	}
	more := true
	for _, f := range relaykit.AsBatchError(err, len(evs)).Failed {
		f.From += off
		f.To += off
		if !f.Permanent && f.To == off+rq.Events {
			f.To = total // Send stops at a retryable failure; so do we
			more = false
		}
		st.failed = append(st.failed, f)
	}
	return more
}

// rawMessage is a marshalled message grpc-go's "proto" codec passes
// through as it is (see rawCodecOK): a stored request body, or the bytes
// of a response.
type rawMessage struct{ b []byte }

func (m *rawMessage) SizeProto() int            { return len(m.b) }
func (m *rawMessage) MarshalProto(b []byte) int { return copy(b, m.b) }
func (m *rawMessage) UnmarshalProto(b []byte) error {
	m.b = append(m.b[:0], b...)
	return nil
}

// exportStoredGRPC calls Export with a stored request body. A gzipped
// body goes out as it is, with grpc-encoding gzip (the connection's
// compressor passes it through); with DisableGzip, or a "proto" codec that
// does not pass bodies through, it is decompressed (and decoded) first.
func (x *Exporter) exportStoredGRPC(ctx context.Context, body []byte, gz bool) (*ExportError, plogotlp.ExportPartialSuccess) {
	if gz && x.cfg.DisableGzip || !x.rawGRPC {
		if gz {
			var err error
			if body, err = gzipool.Decompress(nil, body, maxStoredBody); err != nil {
				return &ExportError{Destination: x.name, Err: fmt.Errorf("stored request: %w", err)}, noPartial()
			}
		}
		if !x.rawGRPC {
			req := plogotlp.NewExportRequest()
			if err := req.UnmarshalProto(body); err != nil {
				return &ExportError{Destination: x.name, Err: fmt.Errorf("stored request: %w", err)}, noPartial()
			}
			return x.exportGRPC(ctx, req)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, x.cfg.Timeout)
	defer cancel()
	if len(x.md) > 0 {
		ctx = metadata.NewOutgoingContext(ctx, x.md)
	}
	var resp rawMessage
	if err := x.conn.Invoke(ctx, exportMethod, &rawMessage{b: body}, &resp); err != nil {
		return x.grpcError(ctx, err), noPartial()
	}
	er := plogotlp.NewExportResponse()
	if len(resp.b) > 0 && er.UnmarshalProto(resp.b) != nil {
		return nil, noPartial()
	}
	return nil, er.PartialSuccess()
}

// unmarshal returns the logs of a stored request.
func unmarshalRequest(rq *relaykit.Request) (plog.Logs, error) {
	family, gz := splitFormat(rq.Format)
	if family != formatProto && family != formatJSON {
		return plog.Logs{}, fmt.Errorf("request of format %q: not an OTLP request", rq.Format)
	}
	body := rq.Body
	if gz {
		var err error
		if body, err = gzipool.Decompress(nil, body, maxStoredBody); err != nil {
			return plog.Logs{}, fmt.Errorf("request body: %w", err)
		}
	}
	req := plogotlp.NewExportRequest()
	var err error
	if family == formatJSON {
		err = req.UnmarshalJSON(body)
	} else {
		err = req.UnmarshalProto(body)
	}
	if err != nil {
		return plog.Logs{}, fmt.Errorf("request body: %w", err)
	}
	return req.Logs(), nil
}

var errCut = errors.New("otlp: cut out of the request's range")

// CutRequest returns a request of the log records [from, to) of r (in the
// order of its resources, scopes and records), with their resources and
// scopes, marshalled and compressed as r is; see [relaykit.RequestSink].
func (x *Exporter) CutRequest(r *relaykit.Request, from, to int) (relaykit.Request, error) {
	if from < 0 || to > r.Events || from >= to {
		return relaykit.Request{}, errCut
	}
	ld, err := unmarshalRequest(r)
	if err != nil {
		return relaykit.Request{}, err
	}
	if ld.LogRecordCount() != r.Events {
		return relaykit.Request{}, fmt.Errorf("request of %d events holds %d log records", r.Events, ld.LogRecordCount())
	}
	out := plog.NewLogs()
	idx := 0
	for _, rl := range ld.ResourceLogs().All() {
		var orl plog.ResourceLogs
		haveRL := false
		for _, sl := range rl.ScopeLogs().All() {
			var osl plog.ScopeLogs
			haveSL := false
			for _, lr := range sl.LogRecords().All() {
				if idx >= from && idx < to {
					if !haveRL {
						orl = out.ResourceLogs().AppendEmpty()
						rl.Resource().CopyTo(orl.Resource())
						orl.SetSchemaUrl(rl.SchemaUrl())
						haveRL = true
					}
					if !haveSL {
						osl = orl.ScopeLogs().AppendEmpty()
						sl.Scope().CopyTo(osl.Scope())
						osl.SetSchemaUrl(sl.SchemaUrl())
						haveSL = true
					}
					lr.CopyTo(osl.LogRecords().AppendEmpty())
				}
				idx++
			}
		}
	}
	family, gz := splitFormat(r.Format)
	req := plogotlp.NewExportRequestFromLogs(out)
	var body []byte
	if family == formatJSON {
		body, err = req.MarshalJSON()
	} else {
		body, err = req.MarshalProto()
	}
	if err != nil {
		return relaykit.Request{}, err
	}
	if gz {
		body, _ = gzipool.Append(nil, body, x.cfg.GzipLevel)
	}
	return relaykit.Request{Format: r.Format, Events: to - from, OldestReceive: r.OldestReceive, NewestReceive: r.NewestReceive, Body: body}, nil
}

// DecodeRequest appends the events of r's log records to dst, mapped back
// as the receiver maps records (Config.Mapping); see
// [relaykit.RequestSink].
func (x *Exporter) DecodeRequest(dst []relaykit.Event, r *relaykit.Request) ([]relaykit.Event, error) {
	ld, err := unmarshalRequest(r)
	if err != nil {
		return dst, err
	}
	return x.cfg.Mapping.AppendEvents(dst, ld, time.Now().UnixNano()), nil
}
