package otlp_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/otlp"
	"github.com/relaykit/relaykit/syslog"
)

// richLogs returns logs that use every part of the OTLP log data model
// this package carries: two resources, scopes with attributes, every
// value type (nested ones with bytes and infinities inside), record
// properties, and attribute keys that collide with the mapping's names.
func richLogs(names otlp.SyslogNames) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
	ra := rl.Resource().Attributes()
	ra.PutStr("host.name", "web-1")
	ra.PutStr("service.name", "checkout")
	ra.PutInt("process.pid", 4242)
	ra.PutEmptySlice("process.command_args").FromRaw([]any{"/bin/app", "-v"})
	rl.Resource().SetDroppedAttributesCount(2)
	sl := rl.ScopeLogs().AppendEmpty()
	sl.SetSchemaUrl("https://example.com/scope")
	sl.Scope().SetName("go.opentelemetry.io/contrib/bridges/otelslog")
	sl.Scope().SetVersion("0.9.0")
	sl.Scope().Attributes().PutBool("scope.flag", true)
	sl.Scope().SetDroppedAttributesCount(1)

	lr := sl.LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.Timestamp(1_700_000_000_123_456_789))
	lr.SetObservedTimestamp(pcommon.Timestamp(1_700_000_001_000_000_000))
	lr.SetSeverityNumber(plog.SeverityNumberInfo)
	lr.SetSeverityText("INFO")
	lr.Body().SetStr("order placed")
	lr.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	lr.SetSpanID(pcommon.SpanID{8, 7, 6, 5, 4, 3, 2, 1})
	lr.SetFlags(plog.DefaultLogRecordFlags.WithIsSampled(true))
	lr.SetEventName("order.placed")
	lr.SetDroppedAttributesCount(3)
	a := lr.Attributes()
	a.PutStr("http.method", "POST")
	a.PutInt("http.status_code", 201)
	a.PutDouble("duration", 1.0)
	a.PutDouble("ratio", math.Inf(-1))
	a.PutBool("cached", false)
	a.PutEmptyBytes("digest").FromRaw([]byte{0, 1, 2, 0xff})
	a.PutEmpty("nothing")
	a.PutEmptyMap("user").FromRaw(map[string]any{"id": int64(7), "name": "ada", "score": 2.5, "tags": []any{"a", true}})
	nested := a.PutEmptySlice("odd")
	nested.AppendEmpty().SetEmptyBytes().FromRaw([]byte("raw"))
	nested.AppendEmpty().SetDouble(math.Inf(1))
	nested.AppendEmpty() // empty
	a.PutInt("weird;key%", 1)
	// Keys that collide with the mapping's own names.
	a.PutStr("procid", "not syslog")
	a.PutStr("resource.thing", "log attribute")
	a.PutStr("attr.x", "y")
	a.PutStr("otel.severity_text", "fake")
	a.PutStr("sd.a.b", "c")
	a.PutStr("relaykit.index", "main")  // consumed as Event.Index
	a.PutInt("relaykit.source_type", 1) // wrong type: escaped
	if names == otlp.CollectorNames {
		a.PutStr("hostname", "web-1-attr")
		a.PutInt("facility", 99) // not a facility: escaped
	} else {
		a.PutStr("syslog.facility", "mail") // not an int: escaped
	}

	// A second record with a map body and no severity, same scope.
	lr2 := sl.LogRecords().AppendEmpty()
	lr2.SetTimestamp(pcommon.Timestamp(1_700_000_002_000_000_000))
	lr2.SetObservedTimestamp(pcommon.Timestamp(1_700_000_002_000_000_001))
	lr2.Body().SetEmptyMap().FromRaw(map[string]any{"msg": "hello", "n": int64(1)})

	// A second resource with a record whose body is an int, and one with
	// an empty body.
	rl2 := ld.ResourceLogs().AppendEmpty()
	rl2.Resource().Attributes().PutStr("service.name", "batch")
	sl2 := rl2.ScopeLogs().AppendEmpty()
	lr3 := sl2.LogRecords().AppendEmpty()
	lr3.Body().SetInt(42)
	lr3.SetSeverityNumber(plog.SeverityNumberWarn)
	lr3.SetObservedTimestamp(3)
	lr4 := sl2.LogRecords().AppendEmpty()
	lr4.SetObservedTimestamp(5)
	return ld
}

// requireLogsEqual checks that got holds exactly want's records, field
// for field, in the same resources and scopes (attribute order aside:
// OTLP attributes are maps).
func requireLogsEqual(t *testing.T, want, got plog.Logs) {
	t.Helper()
	require.Equal(t, want.ResourceLogs().Len(), got.ResourceLogs().Len(), "resources")
	for i := range want.ResourceLogs().Len() {
		wr, gr := want.ResourceLogs().At(i), got.ResourceLogs().At(i)
		assert.Equal(t, wr.SchemaUrl(), gr.SchemaUrl())
		assert.Equal(t, wr.Resource().Attributes().AsRaw(), gr.Resource().Attributes().AsRaw(), "resource %d", i)
		assert.True(t, wr.Resource().Attributes().Equal(gr.Resource().Attributes()), "resource %d attributes", i)
		assert.Equal(t, wr.Resource().DroppedAttributesCount(), gr.Resource().DroppedAttributesCount())
		require.Equal(t, wr.ScopeLogs().Len(), gr.ScopeLogs().Len(), "scopes")
		for j := range wr.ScopeLogs().Len() {
			ws, gs := wr.ScopeLogs().At(j), gr.ScopeLogs().At(j)
			assert.Equal(t, ws.SchemaUrl(), gs.SchemaUrl())
			assert.Equal(t, ws.Scope().Name(), gs.Scope().Name())
			assert.Equal(t, ws.Scope().Version(), gs.Scope().Version())
			assert.True(t, ws.Scope().Attributes().Equal(gs.Scope().Attributes()))
			assert.Equal(t, ws.Scope().DroppedAttributesCount(), gs.Scope().DroppedAttributesCount())
			require.Equal(t, ws.LogRecords().Len(), gs.LogRecords().Len(), "records")
			for k := range ws.LogRecords().Len() {
				requireRecordEqual(t, ws.LogRecords().At(k), gs.LogRecords().At(k))
			}
		}
	}
}

func requireRecordEqual(t *testing.T, w, g plog.LogRecord) {
	t.Helper()
	assert.Equal(t, w.Timestamp(), g.Timestamp())
	assert.Equal(t, w.ObservedTimestamp(), g.ObservedTimestamp())
	assert.Equal(t, w.SeverityNumber(), g.SeverityNumber())
	assert.Equal(t, w.SeverityText(), g.SeverityText())
	assert.True(t, w.Body().Equal(g.Body()), "body: want %s got %s", w.Body().AsString(), g.Body().AsString())
	assert.Equal(t, w.Body().Type(), g.Body().Type())
	assert.Equal(t, w.Attributes().Len(), g.Attributes().Len())
	for k, v := range w.Attributes().All() {
		gv, ok := g.Attributes().Get(k)
		if assert.True(t, ok, "attribute %q missing", k) {
			assert.True(t, v.Equal(gv), "attribute %q: want %s (%s) got %s (%s)", k, v.AsString(), v.Type(), gv.AsString(), gv.Type())
		}
	}
	assert.Equal(t, w.TraceID(), g.TraceID())
	assert.Equal(t, w.SpanID(), g.SpanID())
	assert.Equal(t, w.Flags(), g.Flags())
	assert.Equal(t, w.EventName(), g.EventName())
	assert.Equal(t, w.DroppedAttributesCount(), g.DroppedAttributesCount())
}

func TestRoundTripOTLP(t *testing.T) {
	for _, names := range []otlp.SyslogNames{otlp.SpecNames, otlp.CollectorNames} {
		t.Run(map[otlp.SyslogNames]string{otlp.SpecNames: "spec", otlp.CollectorNames: "collector"}[names], func(t *testing.T) {
			m := otlp.Mapping{Names: names}
			in := richLogs(names)
			events := m.AppendEvents(nil, in, 99)
			require.Len(t, events, 4)
			out := plog.NewLogs()
			m.AppendLogs(out, events)
			requireLogsEqual(t, in, out)

			// Decoding into reused events gives the same events again.
			again := m.AppendEvents(events[:0], out, 99)
			out2 := plog.NewLogs()
			m.AppendLogs(out2, again)
			requireLogsEqual(t, in, out2)
		})
	}
}

func TestDecodedFields(t *testing.T) {
	m := otlp.Mapping{}
	events := m.AppendEvents(nil, richLogs(otlp.SpecNames), 99)
	e := &events[0]
	assert.Equal(t, "web-1", string(e.Host))
	assert.Equal(t, "checkout", string(e.Source))
	assert.Equal(t, "main", string(e.Index))
	assert.Equal(t, int64(1_700_000_000_123_456_789), e.Time)
	assert.Equal(t, int64(1_700_000_001_000_000_000), e.ReceiveTime)
	assert.Equal(t, "order placed", string(e.Raw))
	assert.Zero(t, e.Flags&relaykit.FlagPriority)
	want := map[string]string{
		"resource.process.pid":          "4242",
		"resource.process.command_args": `["/bin/app","-v"]`,
		"scope.name":                    "go.opentelemetry.io/contrib/bridges/otelslog",
		"scope.attr.scope.flag":         "true",
		"otel.severity_number":          "9",
		"otel.severity_text":            "INFO",
		"http.method":                   "POST",
		"http.status_code":              "201",
		"duration":                      "1",
		"digest":                        "AAEC/w==",
		"attr.procid":                   "not syslog",
		"attr.resource.thing":           "log attribute",
		"attr.attr.x":                   "y",
		"attr.otel.severity_text":       "fake",
		"attr.sd.a.b":                   "c",
		"attr.relaykit.source_type":     "1",
		"attr.syslog.facility":          "mail",
		"otel.trace_id":                 "0102030405060708090a0b0c0d0e0f10",
		"otel.span_id":                  "0807060504030201",
		"otel.flags":                    "1",
		"otel.event_name":               "order.placed",
	}
	for k, v := range want {
		got, ok := e.Field(k)
		if assert.True(t, ok, "field %q", k) {
			assert.Equal(t, v, string(got), "field %q", k)
		}
	}
	types, _ := e.Field(otlp.FieldTypes)
	assert.Contains(t, string(types), "int:http.status_code;double:duration;")
	assert.Contains(t, string(types), "weird%3Bkey%25")
	user, _ := e.Field("user")
	assert.JSONEq(t, `{"id":7,"name":"ada","score":2.5,"tags":["a",true]}`, string(user))
	// A map body is plain JSON in Raw; an int body its decimal text.
	assert.JSONEq(t, `{"msg":"hello","n":1}`, string(events[1].Raw))
	assert.Equal(t, "42", string(events[2].Raw))

	// A record without an observed time gets the receive time given.
	ld := plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("x")
	assert.Equal(t, int64(99), m.AppendEvents(nil, ld, 99)[0].ReceiveTime)
}

// syslogEvents parses messages as the relay's syslog inputs do.
func syslogEvents(t *testing.T) []relaykit.Event {
	t.Helper()
	p := syslog.NewParser(syslog.Config{CEF: true, Location: time.UTC, Clock: clock.NewFake(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))})
	msgs := []string{
		`<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog 1370 ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"][origin] An application event log entry...`,
		`<34>Oct 11 22:14:15 mymachine su[230]: 'su root' failed for lonvick on /dev/pts/8`,
		`<13>May  1 10:00:00 fw1 CEF:0|Security|threatmanager|1.0|100|worm successfully stopped|10|src=10.0.0.1 dst=2.1.2.2 spt=1232`,
		`no priority at all`,
	}
	events := make([]relaykit.Event, len(msgs))
	for i, m := range msgs {
		p.Parse(&events[i], []byte(m))
		events[i].ReceiveTime = int64(1_800_000_000_000_000_000 + i)
	}
	return events
}

func TestRoundTripSyslog(t *testing.T) {
	for _, names := range []otlp.SyslogNames{otlp.SpecNames, otlp.CollectorNames} {
		m := otlp.Mapping{Names: names}
		in := syslogEvents(t)
		ld := plog.NewLogs()
		m.AppendLogs(ld, in)
		out := m.AppendEvents(nil, ld, 1)
		require.Len(t, out, len(in))
		for i := range in {
			assert.Equal(t, viewOf(&in[i]), viewOf(&out[i]), "names %d event %d", names, i)
		}
	}
}

func TestSyslogAttributes(t *testing.T) {
	in := syslogEvents(t)[:1]
	ld := plog.NewLogs()
	otlp.Mapping{}.AppendLogs(ld, in)
	rl := ld.ResourceLogs().At(0)
	host, _ := rl.Resource().Attributes().Get("host.name")
	assert.Equal(t, "mymachine.example.com", host.Str())
	svc, _ := rl.Resource().Attributes().Get("service.name")
	assert.Equal(t, "evntslog", svc.Str())
	lr := rl.ScopeLogs().At(0).LogRecords().At(0)
	assert.Equal(t, plog.SeverityNumberInfo2, lr.SeverityNumber())
	assert.Equal(t, "notice", lr.SeverityText())
	assert.Equal(t, map[string]any{
		"syslog.facility":      int64(20),
		"syslog.procid":        "1370",
		"syslog.msgid":         "ID47",
		"relaykit.source_type": "syslog",
		"syslog.structured_data": map[string]any{
			"exampleSDID@32473":     map[string]any{"iut": "3", "eventSource": "Application", "eventID": "1011"},
			"examplePriority@32473": map[string]any{"class": "high"},
			"origin":                map[string]any{},
		},
	}, lr.Attributes().AsRaw())
	assert.Equal(t, "An application event log entry...", lr.Body().Str())

	// The Collector's syslog receiver's names.
	ld = plog.NewLogs()
	otlp.Mapping{Names: otlp.CollectorNames}.AppendLogs(ld, in)
	lr = ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	assert.Equal(t, 0, ld.ResourceLogs().At(0).Resource().Attributes().Len())
	raw := lr.Attributes().AsRaw()
	for k, v := range map[string]any{"hostname": "mymachine.example.com", "appname": "evntslog", "facility": int64(20),
		"priority": int64(165), "proc_id": "1370", "msg_id": "ID47"} {
		assert.Equal(t, v, raw[k], k)
	}
	assert.Contains(t, raw, "structured_data")
}

type fieldKV struct{ K, V string }

type eventView struct {
	ReceiveTime, Time                    int64
	Host, Source, SourceType, Index, Raw string
	Fields                               []fieldKV
	Priority                             uint8
	Flags                                relaykit.Flags
}

func viewOf(e *relaykit.Event) eventView {
	v := eventView{ReceiveTime: e.ReceiveTime, Time: e.Time, Host: string(e.Host), Source: string(e.Source),
		SourceType: string(e.SourceType), Index: string(e.Index), Raw: string(e.Raw), Priority: e.Priority, Flags: e.Flags}
	for _, f := range e.Fields {
		v.Fields = append(v.Fields, fieldKV{string(f.Key), string(f.Value)})
	}
	return v
}

func TestEncodeTypedFieldChangedByPipeline(t *testing.T) {
	// A pipeline step replaced an int field's text: it goes out as a
	// string rather than being lost.
	in := otlp.Mapping{}.AppendEvents(nil, richLogs(otlp.SpecNames), 0)
	in[0].SetFieldString("http.status_code", "two hundred")
	ld := plog.NewLogs()
	otlp.Mapping{}.AppendLogs(ld, in[:1])
	v, ok := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().Get("http.status_code")
	require.True(t, ok)
	assert.Equal(t, "two hundred", v.Str())
	assert.False(t, strings.Contains(v.AsString(), "201"))
}
