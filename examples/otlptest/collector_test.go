package otlptest

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/otlp"
	"github.com/relaykit/relaykit/syslog"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// startCollector runs the Collector's OTLP receiver in-process with
// consumer next, and returns its gRPC and HTTP addresses.
func startCollector(t *testing.T, next consumer.Logs) (grpcAddr, httpAddr string) {
	t.Helper()
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	grpcAddr, httpAddr = freeAddr(t), freeAddr(t)
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = grpcAddr
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = httpAddr
	rcv, err := f.CreateLogs(t.Context(), receivertest.NewNopSettings(f.Type()), cfg, next)
	require.NoError(t, err)
	require.NoError(t, rcv.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, rcv.Shutdown(context.Background())) })
	return grpcAddr, httpAddr
}

// richLogs returns records using every part of the log data model:
// resource and scope with attributes and schema URLs, every value type,
// trace context, flags, event name, dropped counts.
func richLogs() plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
	ra := rl.Resource().Attributes()
	ra.PutStr("host.name", "web-1")
	ra.PutStr("service.name", "checkout")
	ra.PutInt("process.pid", 4242)
	rl.Resource().SetDroppedAttributesCount(1)
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("app")
	sl.Scope().SetVersion("1.0")
	sl.Scope().Attributes().PutStr("team", "payments")
	for i := range 50 {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)))
		lr.SetObservedTimestamp(pcommon.Timestamp(1_700_000_000_500_000_000 + int64(i)))
		lr.SetSeverityNumber(plog.SeverityNumberError)
		lr.SetSeverityText("ERROR")
		lr.Body().SetStr("payment failed")
		lr.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, byte(i)})
		lr.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, byte(i)})
		lr.SetFlags(1)
		lr.SetEventName("payment.failed")
		lr.SetDroppedAttributesCount(2)
		a := lr.Attributes()
		a.PutInt("i", int64(i))
		a.PutDouble("amount", 12.5)
		a.PutBool("retry", true)
		a.PutEmptyBytes("digest").FromRaw([]byte{0, 1, 2})
		a.PutEmptySlice("tags").FromRaw([]any{"x", int64(1)})
		a.PutEmptyMap("card").FromRaw(map[string]any{"brand": "visa", "last4": "4242"})
	}
	lr := sl.LogRecords().AppendEmpty()
	lr.SetObservedTimestamp(1)
	lr.Body().SetEmptyMap().FromRaw(map[string]any{"msg": "structured", "n": 1.5})
	return ld
}

// TestExporterToCollector: the exporter sends over OTLP/HTTP (protobuf,
// JSON) and OTLP/gRPC to the Collector's otlpreceiver; the Collector
// receives every record field for field, as the receiver of a relay had
// decoded it.
func TestExporterToCollector(t *testing.T) {
	in := richLogs()
	events := otlp.Mapping{}.AppendEvents(nil, in, 1)
	for _, tc := range []struct {
		name  string
		proto otlp.Protocol
	}{{"http-protobuf", otlp.HTTPProtobuf}, {"http-json", otlp.HTTPJSON}, {"grpc", otlp.GRPC}} {
		t.Run(tc.name, func(t *testing.T) {
			sink := new(consumertest.LogsSink)
			grpcAddr, httpAddr := startCollector(t, sink)
			endpoint := "http://" + httpAddr
			if tc.proto == otlp.GRPC {
				endpoint = "http://" + grpcAddr
			}
			x, err := otlp.NewExporter(otlp.ExporterConfig{Endpoint: endpoint, Protocol: tc.proto})
			require.NoError(t, err)
			defer x.Close()
			require.NoError(t, x.Send(t.Context(), events))
			all := sink.AllLogs()
			require.Len(t, all, 1)
			requireLogsEqual(t, in, all[0])
		})
	}
}

// TestSyslogThroughCollector: events parsed from syslog, sent to the
// Collector and decoded from what it received, are the events parsed.
func TestSyslogThroughCollector(t *testing.T) {
	p := syslog.NewParser(syslog.Config{CEF: true, Location: time.UTC})
	var in []relaykit.Event
	for i, m := range []string{
		`<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog 1370 ID47 [exampleSDID@32473 iut="3" eventSource="Application"] An application event`,
		`<34>1 2026-01-02T03:04:05Z fw1 CEF - - CEF:0|Security|threatmanager|1.0|100|worm stopped|10|src=10.0.0.1 dst=2.1.2.2`,
	} {
		var e relaykit.Event
		p.Parse(&e, []byte(m))
		e.ReceiveTime = int64(1_800_000_000_000_000_000 + i)
		in = append(in, e)
	}
	for _, names := range []otlp.SyslogNames{otlp.SpecNames, otlp.CollectorNames} {
		sink := new(consumertest.LogsSink)
		_, httpAddr := startCollector(t, sink)
		m := otlp.Mapping{Names: names}
		x, err := otlp.NewExporter(otlp.ExporterConfig{Endpoint: "http://" + httpAddr, Mapping: m})
		require.NoError(t, err)
		require.NoError(t, x.Send(t.Context(), in))
		require.NoError(t, x.Close())
		require.Len(t, sink.AllLogs(), 1)
		out := m.AppendEvents(nil, sink.AllLogs()[0], 0)
		require.Len(t, out, len(in))
		for i := range in {
			assert.Equal(t, view(&in[i]), view(&out[i]), "names %d event %d", names, i)
		}
	}
}

type kv struct{ K, V string }

type eventView struct {
	ReceiveTime, Time                    int64
	Host, Source, SourceType, Index, Raw string
	Fields                               []kv
	Priority                             uint8
	Flags                                relaykit.Flags
}

func view(e *relaykit.Event) eventView {
	v := eventView{ReceiveTime: e.ReceiveTime, Time: e.Time, Host: string(e.Host), Source: string(e.Source),
		SourceType: string(e.SourceType), Index: string(e.Index), Raw: string(e.Raw), Priority: e.Priority, Flags: e.Flags}
	for _, f := range e.Fields {
		v.Fields = append(v.Fields, kv{string(f.Key), string(f.Value)})
	}
	return v
}

// TestExporterCollectorRefusals: the Collector answers a consumer's
// retryable error with 503 / UNAVAILABLE and a permanent one with 400 /
// INVALID_ARGUMENT; the exporter reports the first retryable and the
// second permanent, in one attempt each.
func TestExporterCollectorRefusals(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		permanent bool
	}{
		{"retryable", errors.New("queue full"), false},
		{"permanent", consumererror.NewPermanent(errors.New("bad data")), true},
	} {
		for _, proto := range []otlp.Protocol{otlp.HTTPProtobuf, otlp.GRPC} {
			grpcAddr, httpAddr := startCollector(t, consumertest.NewErr(tc.err))
			endpoint := "http://" + httpAddr
			if proto == otlp.GRPC {
				endpoint = "http://" + grpcAddr
			}
			x, err := otlp.NewExporter(otlp.ExporterConfig{Endpoint: endpoint, Protocol: proto})
			require.NoError(t, err)
			err = x.Send(t.Context(), []relaykit.Event{{Raw: []byte("a")}, {Raw: []byte("b")}})
			require.NoError(t, x.Close())
			var be *relaykit.BatchError
			require.ErrorAs(t, err, &be, "%s %d", tc.name, proto)
			require.Len(t, be.Failed, 1)
			assert.Equal(t, 0, be.Failed[0].From)
			assert.Equal(t, 2, be.Failed[0].To)
			assert.Equal(t, tc.permanent, be.Failed[0].Permanent, "%s %d: %v", tc.name, proto, be.Failed[0].Err)
			assert.Equal(t, int64(1), x.Stats().Requests)
		}
	}
}

func requireLogsEqual(t *testing.T, want, got plog.Logs) {
	t.Helper()
	require.Equal(t, want.LogRecordCount(), got.LogRecordCount())
	require.Equal(t, want.ResourceLogs().Len(), got.ResourceLogs().Len())
	for i := range want.ResourceLogs().Len() {
		wr, gr := want.ResourceLogs().At(i), got.ResourceLogs().At(i)
		assert.Equal(t, wr.SchemaUrl(), gr.SchemaUrl())
		assert.True(t, wr.Resource().Attributes().Equal(gr.Resource().Attributes()))
		assert.Equal(t, wr.Resource().DroppedAttributesCount(), gr.Resource().DroppedAttributesCount())
		require.Equal(t, wr.ScopeLogs().Len(), gr.ScopeLogs().Len())
		for j := range wr.ScopeLogs().Len() {
			ws, gs := wr.ScopeLogs().At(j), gr.ScopeLogs().At(j)
			assert.Equal(t, ws.Scope().Name(), gs.Scope().Name())
			assert.Equal(t, ws.Scope().Version(), gs.Scope().Version())
			assert.True(t, ws.Scope().Attributes().Equal(gs.Scope().Attributes()))
			require.Equal(t, ws.LogRecords().Len(), gs.LogRecords().Len())
			for k := range ws.LogRecords().Len() {
				w, g := ws.LogRecords().At(k), gs.LogRecords().At(k)
				assert.Equal(t, w.Timestamp(), g.Timestamp())
				assert.Equal(t, w.ObservedTimestamp(), g.ObservedTimestamp())
				assert.Equal(t, w.SeverityNumber(), g.SeverityNumber())
				assert.Equal(t, w.SeverityText(), g.SeverityText())
				assert.True(t, w.Body().Equal(g.Body()), "record %d body", k)
				assert.Equal(t, w.Body().Type(), g.Body().Type())
				assert.Equal(t, w.Attributes().AsRaw(), g.Attributes().AsRaw(), "record %d", k)
				assert.True(t, w.Attributes().Equal(g.Attributes()), "record %d attributes", k)
				assert.Equal(t, w.TraceID(), g.TraceID())
				assert.Equal(t, w.SpanID(), g.SpanID())
				assert.Equal(t, w.Flags(), g.Flags())
				assert.Equal(t, w.EventName(), g.EventName())
				assert.Equal(t, w.DroppedAttributesCount(), g.DroppedAttributesCount())
			}
		}
	}
}
