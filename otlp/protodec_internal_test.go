package otlp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/relaykit/relaykit"
)

// The direct decoder is held to the pdata path: for any bytes, the events
// of appendEventsProto are those of pdata's UnmarshalProto followed by
// Mapping.AppendEvents, or both fail.

const testNow = 1_800_000_000_000_000_000

// oracle decodes b the pdata way.
func oracle(m Mapping, b []byte) ([]relaykit.Event, error) {
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalProto(b); err != nil {
		return nil, err
	}
	return m.AppendEvents(nil, req.Logs(), testNow), nil
}

// eventText renders events for comparison: every property, fields in
// order, so that nil and empty buffers compare alike.
func eventText(evs []relaykit.Event) []string {
	out := make([]string, 0, len(evs))
	for i := range evs {
		e := &evs[i]
		var sb strings.Builder
		fmt.Fprintf(&sb, "time=%d receive=%d host=%q source=%q sourcetype=%q index=%q prio=%d flags=%d raw=%q",
			e.Time, e.ReceiveTime, e.Host, e.Source, e.SourceType, e.Index, e.Priority, e.Flags, e.Raw)
		for _, f := range e.Fields {
			fmt.Fprintf(&sb, "\n  %q=%q", f.Key, f.Value)
		}
		out = append(out, sb.String())
	}
	return out
}

// checkSame decodes b both ways (the direct way into dirty, a batch with
// used buffers) and requires the same result.
func checkSame(t testing.TB, m Mapping, b []byte, dirty []relaykit.Event) []relaykit.Event {
	t.Helper()
	want, werr := oracle(m, b)
	d := decoder{m: m}
	got, gerr := d.appendEventsProto(dirty[:0], b, testNow)
	if werr != nil {
		require.Error(t, gerr, "pdata refuses the request (%v), the direct decoder does not", werr)
		require.Empty(t, got)
		return got
	}
	require.NoError(t, gerr, "pdata reads the request")
	require.Equal(t, eventText(want), eventText(got))
	return got
}

// ---- hand-built requests ----

func tag(num protowire.Number, wt protowire.Type) []byte { return protowire.AppendTag(nil, num, wt) }

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func fLen(num protowire.Number, parts ...[]byte) []byte {
	return protowire.AppendBytes(tag(num, protowire.BytesType), cat(parts...))
}
func fStr(num protowire.Number, s string) []byte { return fLen(num, []byte(s)) }
func fVar(num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(tag(num, protowire.VarintType), v)
}
func fI64(num protowire.Number, v uint64) []byte {
	return protowire.AppendFixed64(tag(num, protowire.Fixed64Type), v)
}
func fI32(num protowire.Number, v uint32) []byte {
	return protowire.AppendFixed32(tag(num, protowire.Fixed32Type), v)
}

// AnyValue contents.
func avStr(s string) []byte     { return fStr(1, s) }
func avBool(v bool) []byte      { return fVar(2, map[bool]uint64{false: 0, true: 1}[v]) }
func avInt(v int64) []byte      { return fVar(3, uint64(v)) }
func avDouble(f float64) []byte { return fI64(4, math.Float64bits(f)) }
func avArray(vals ...[]byte) []byte {
	var b []byte
	for _, v := range vals {
		b = append(b, fLen(1, v)...)
	}
	return fLen(5, b)
}
func avKvlist(kvs ...[]byte) []byte { return fLen(6, cat(kvs...)) }
func avBytes(b []byte) []byte       { return fLen(7, b) }

// kv is a KeyValue field (of a KeyValueList, or attributes numbered num).
func kvf(num protowire.Number, k string, v []byte) []byte { return fLen(num, fStr(1, k), fLen(2, v)) }
func kv(k string, v []byte) []byte                        { return kvf(1, k, v) }

// unknowns are fields of every wire type no message here defines. The
// group is empty: pdata refuses a group with fields in it (its reader
// leaves the group after the first field), see "group with a field".
// The group comes first: pdata refuses one that ends a message too.
var unknowns = cat(tag(95, protowire.StartGroupType), tag(95, protowire.EndGroupType),
	fVar(99, 7), fI64(98, 1), fStr(97, "x"), fI32(96, 2))

func request(rls ...[]byte) []byte {
	var b []byte
	for _, rl := range rls {
		b = append(b, fLen(1, rl)...)
	}
	return b
}

func resourceLogs(resource []byte, scopes ...[]byte) []byte {
	b := fLen(1, resource)
	for _, s := range scopes {
		b = append(b, fLen(2, s)...)
	}
	return b
}

func scopeLogs(scope []byte, records ...[]byte) []byte {
	b := fLen(1, scope)
	for _, r := range records {
		b = append(b, fLen(2, r)...)
	}
	return b
}

func attrs(num protowire.Number, n int) []byte {
	var b []byte
	for i := range n {
		b = append(b, kvf(num, "k"+strconv.Itoa(i), avInt(int64(i)))...)
	}
	return b
}

var traceID = []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

func handBuilt() map[string][]byte {
	every := cat(
		kvf(6, "s", avStr("text")), kvf(6, "s0", avStr("")), kvf(6, "b", avBool(true)), kvf(6, "bf", avBool(false)),
		kvf(6, "i", avInt(-42)), kvf(6, "d", avDouble(1)), kvf(6, "dn", avDouble(math.NaN())),
		kvf(6, "dinf", avDouble(math.Inf(-1))), kvf(6, "dz", avDouble(math.Copysign(0, -1))),
		kvf(6, "by", avBytes([]byte{0, 1, 0xff})), kvf(6, "by0", avBytes(nil)), kvf(6, "empty", nil),
		kvf(6, "strindex", fVar(8, 3)), kvf(6, "nokey-value", nil)[:0],
		kvf(6, "map", avKvlist(kv("a", avInt(1)), kv("b", avArray(avStr("x"), avBool(false), avDouble(2.5))), kv("c", avKvlist()))),
		kvf(6, "odd", avArray(avBytes([]byte("raw")), avDouble(math.Inf(1)), nil, avKvlist(kv("e", nil)))),
		kvf(6, "arr0", avArray()),
		kvf(6, "weird;key%", avStr("v")),
		kvf(6, "q\"uote\x01", avKvlist(kv("k\"\n", avStr("\xff\xfe bad utf-8 \u2028")))),
	)
	rec := func(extra ...[]byte) []byte {
		return cat(fI64(1, 1_700_000_000_123_456_789), fI64(11, 1_700_000_001_000_000_000), fVar(2, 9), fStr(3, "INFO"),
			fLen(5, avStr("hello")), cat(extra...))
	}
	syslogRec := cat(fVar(2, uint64(plog.SeverityNumberError)), fStr(3, "err"), fLen(5, avStr("su: failed")),
		kvf(6, "syslog.facility", avInt(4)), kvf(6, "facility", avInt(4)), kvf(6, "priority", avInt(35)),
		kvf(6, "syslog.procid", avStr("123")), kvf(6, "proc_id", avStr("124")), kvf(6, "syslog.msgid", avStr("ID1")),
		kvf(6, "hostname", avStr("h-attr")), kvf(6, "appname", avStr("su")),
		kvf(6, "syslog.structured_data", avKvlist(kv("ex@1", avKvlist(kv("a", avStr("1")), kv("b", avStr("2")))), kv("empty@1", avKvlist()))),
		kvf(6, "structured_data", avKvlist(kv("bad@1", avStr("not a map")))),
		kvf(6, "relaykit.flags", avInt(2)), kvf(6, "relaykit.index", avStr("main")), kvf(6, "relaykit.source_type", avStr("syslog")),
		kvf(6, "sd.x", avStr("escaped")), kvf(6, "otel.x", avStr("escaped")), kvf(6, "procid", avStr("escaped")))
	res := cat(kvf(1, "host.name", avStr("web-1")), kvf(1, "service.name", avStr("checkout")), kvf(1, "host.name", avStr("second")),
		kvf(1, "env", avStr("prod")), kvf(1, "pid", avInt(7)), fVar(2, 3))
	scope := cat(fStr(1, "lib"), fStr(2, "1.0"), kvf(3, "scope.flag", avBool(true)), fVar(4, 1))

	cases := map[string][]byte{
		"empty":                         nil,
		"empty resource":                request(nil),
		"no scope":                      request(resourceLogs(res)),
		"scope, no records":             request(resourceLogs(res, scopeLogs(scope))),
		"bare record":                   request(fLen(2, fLen(2, nil))),
		"every value kind":              request(resourceLogs(res, scopeLogs(scope, rec(every)))),
		"syslog":                        request(resourceLogs(res, scopeLogs(scope, syslogRec))),
		"syslog, inconsistent priority": request(resourceLogs(nil, scopeLogs(nil, cat(syslogRec, kvf(6, "syslog.facility", avInt(5)))))),
		"many scopes": request(resourceLogs(res, scopeLogs(scope, rec()), scopeLogs(nil, rec(), rec()),
			scopeLogs(cat(fStr(1, "other")), rec(fLen(5, avInt(3)))))),
		"many resources":  request(resourceLogs(res, scopeLogs(scope, rec())), resourceLogs(nil, scopeLogs(nil, rec())), nil),
		"huge attributes": request(resourceLogs(attrs(1, 300), scopeLogs(attrs(3, 200), rec(attrs(6, 2000))))),
		"duplicate keys":  request(resourceLogs(res, scopeLogs(scope, rec(kvf(6, "k", avStr("1")), kvf(6, "k", avInt(2)), kvf(6, "k", nil))))),
		"record ids and flags": request(resourceLogs(nil, scopeLogs(nil,
			rec(fLen(9, traceID), fLen(10, traceID[:8]), fI32(8, 0x101), fStr(12, "evt"), fVar(7, 5)),
			rec(fLen(9, traceID), fLen(9, nil), fLen(10, traceID[8:]), fI32(8, 0))))),
		"negative severity":  request(resourceLogs(nil, scopeLogs(nil, rec(fVar(2, math.MaxUint64))))),
		"big dropped":        request(resourceLogs(fVar(2, 1<<40), scopeLogs(fVar(4, math.MaxUint64), rec(fVar(7, 1<<33+1))))),
		"observed time zero": request(resourceLogs(nil, scopeLogs(nil, cat(fI64(1, 5), fI64(11, 0))))),
		"unknown fields":     request(cat(resourceLogs(cat(res, unknowns), scopeLogs(cat(scope, unknowns), rec(unknowns, fLen(5, cat(unknowns, avStr("b"), unknowns))), unknowns)), unknowns), unknowns),
		"unknown fields top": cat(unknowns, request(resourceLogs(nil, scopeLogs(nil, rec()))), unknowns),
		"schema urls":        request(cat(resourceLogs(res, scopeLogs(cat(scope), rec()), cat(fLen(1, nil), fStr(3, "s1"), rec()[:0])), fStr(3, "https://r"))),
		"scope schema":       request(resourceLogs(nil, cat(scopeLogs(scope, rec()), fStr(3, "https://s")))),
		"last oneof wins":    request(resourceLogs(nil, scopeLogs(nil, rec(kvf(6, "k", cat(avStr("a"), avInt(1))), fLen(5, cat(avInt(1), avBytes([]byte("z")))))))),
		"value merged": request(resourceLogs(nil, scopeLogs(nil, rec(
			fLen(6, fStr(1, "k"), fLen(2, avStr("first")), fLen(2, nil)),
			fLen(6, fStr(1, "k2"), fLen(2, avStr("first")), fLen(2, avBool(true)), fStr(1, "renamed")),
			fLen(5, avStr("body1")), fLen(5, nil))))),
		"body twice": request(resourceLogs(nil, scopeLogs(nil, rec(fLen(5, avStr("a")), fLen(5, avKvlist(kv("x", avInt(1)))))))),
		"resource twice": request(cat(fLen(1, kvf(1, "a", avStr("1")), fVar(2, 4)), fLen(2, scopeLogs(nil, rec())),
			fLen(1, kvf(1, "host.name", avStr("h")), fVar(2, 0)))),
		"scope after records":   request(resourceLogs(nil, cat(fLen(2, rec()), fLen(1, fStr(1, "late")), fLen(1, fStr(2, "v2")), fLen(2, rec())))),
		"resource after scopes": request(cat(fLen(2, scopeLogs(nil, rec())), fLen(1, res))),
		"deprecated scopes":     request(cat(fLen(1, res), fLen(1000, scopeLogs(scope, rec())))),
		"both scope fields":     request(cat(fLen(1000, scopeLogs(scope, rec(fLen(5, avStr("old"))))), fLen(2, scopeLogs(nil, rec())))),
		"key strindex":          request(resourceLogs(nil, scopeLogs(nil, rec(fLen(6, fStr(1, "k"), fVar(3, 9), fLen(2, avStr("v"))))))),
		"invalid utf-8":         request(resourceLogs(kvf(1, "host.name", avStr("h\xff")), scopeLogs(fStr(1, "\xc3"), rec(fStr(3, "\xff"), kvf(6, "\xfe", avStr("\xff")), fLen(5, avKvlist(kv("\xff", avStr("\xfe")))))))),
		"entity refs":           request(resourceLogs(cat(fLen(3, fStr(1, "s"), fStr(2, "t"), fStr(3, "id"), fStr(4, "d"), unknowns), res), scopeLogs(nil, rec()))),
		"nested deep":           request(resourceLogs(nil, scopeLogs(nil, rec(fLen(5, avArray(avArray(avArray(avKvlist(kv("k", avArray(avBytes(nil)))))))))))),
		"group with a field":    request(resourceLogs(nil, scopeLogs(nil, rec(tag(95, protowire.StartGroupType), fVar(1, 1), tag(95, protowire.EndGroupType))))),
		"long tag":              cat([]byte{0x8a, 0x80, 0x80, 0x80, 0x00}, protowire.AppendBytes(nil, resourceLogs(nil, scopeLogs(nil, fI64(1, 1))))), // field 1 with a padded tag

		// Invalid requests.
		"truncated":            request(resourceLogs(res, scopeLogs(scope, rec(every))))[:100],
		"truncated length":     {0x0a, 0x05, 0x01},
		"bad varint":           {0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"field zero":           {0x02, 0x00},
		"wrong wire type":      cat(fVar(1, 1)),
		"wrong wire in record": request(resourceLogs(nil, scopeLogs(nil, fVar(3, 1)))),
		"wrong wire in value":  request(resourceLogs(nil, scopeLogs(nil, rec(kvf(6, "k", fI32(1, 1)))))),
		"bad trace id":         request(resourceLogs(nil, scopeLogs(nil, rec(fLen(9, traceID[:5]))))),
		"bad span id":          request(resourceLogs(nil, scopeLogs(nil, rec(fLen(10, traceID))))),
		"end group":            cat(tag(5, protowire.EndGroupType)),
		"bad wire type 6":      {0x0e},
		"open group":           cat(tag(5, protowire.StartGroupType), fVar(1, 1)),
		"bad overwritten list": request(resourceLogs(nil, scopeLogs(nil, rec(kvf(6, "k", cat(fLen(6, fLen(1, fVar(2, 1))), avStr("ok"))))))),
		"bad deprecated":       request(cat(fLen(2, scopeLogs(nil, rec())), fLen(1000, fLen(2, fI32(1, 0))))),
		"bad entity ref":       request(resourceLogs(fLen(3, fVar(1, 1)))),
		"bad after records":    request(resourceLogs(nil, scopeLogs(nil, rec(), rec(), fLen(9, nil)[:1]))),
		"bad schema wire":      request(cat(fLen(2, scopeLogs(nil, rec())), fVar(3, 1))),
	}
	// Lists nested 3000 deep: walking them must cost linear time.
	deep := avStr("leaf")
	for i := range 3000 {
		if i%2 == 0 {
			deep = avArray(deep)
		} else {
			deep = avKvlist(kv("k", deep))
		}
	}
	cases["nested 3000 deep"] = request(resourceLogs(nil, scopeLogs(nil, rec(fLen(5, deep), kvf(6, "a", deep)))))
	// A nested list with a KeyValue without key or value, and one with
	// only unknown fields.
	cases["odd kvlists"] = request(resourceLogs(nil, scopeLogs(nil, rec(kvf(6, "m", fLen(6, fLen(1, nil), fLen(1, unknowns), unknowns))))))
	return cases
}

func TestDecodeProtoMatchesPdata(t *testing.T) {
	var dirty []relaykit.Event
	for _, names := range []SyslogNames{SpecNames, CollectorNames} {
		m := Mapping{Names: names}
		for name, b := range handBuilt() {
			t.Run(fmt.Sprintf("names=%d/%s", names, name), func(t *testing.T) {
				dirty = checkSame(t, m, b, dirty)
			})
		}
	}
}

// TestDecodeProtoCases pins a few of the hand-built cases, so that the
// comparison is not between two equally wrong decoders.
func TestDecodeProtoCases(t *testing.T) {
	cases := handBuilt()
	var d decoder
	evs, err := d.appendEventsProto(nil, cases["every value kind"], testNow)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	e := &evs[0]
	assert.Equal(t, "web-1", string(e.Host))
	assert.Equal(t, "checkout", string(e.Source))
	assert.Equal(t, "hello", string(e.Raw))
	v, ok := fieldValue(e, "resource.host.name")
	assert.True(t, ok)
	assert.Equal(t, "second", string(v))
	v, _ = fieldValue(e, "map")
	assert.Equal(t, `{"a":1,"b":["x",false,2.5],"c":{}}`, string(v))
	v, _ = fieldValue(e, "by")
	assert.Equal(t, "AAH/", string(v))

	evs, err = d.appendEventsProto(evs[:0], cases["deprecated scopes"], testNow)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	evs, err = d.appendEventsProto(evs[:0], cases["both scope fields"], testNow)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, "hello", string(evs[0].Raw))

	for _, bad := range []string{"truncated", "wrong wire type", "bad trace id", "bad overwritten list", "bad deprecated"} {
		evs, err = d.appendEventsProto(evs[:0], cases[bad], testNow)
		assert.Error(t, err, bad)
		assert.Empty(t, evs, bad)
	}
}

// ---- generated requests ----

func randString(r *rand.Rand) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz.;%_\"\\\n\x00\xff\u00e9"
	n := r.IntN(12)
	b := make([]byte, 0, n)
	for range n {
		b = append(b, alphabet[r.IntN(len(alphabet))])
	}
	return string(b)
}

func randKey(r *rand.Rand) string {
	keys := []string{"host.name", "service.name", "syslog.facility", "facility", "priority", "syslog.procid",
		"proc_id", "syslog.msgid", "msg_id", "syslog.structured_data", "structured_data", "hostname", "appname",
		"relaykit.flags", "relaykit.index", "relaykit.source_type", "attr.x", "otel.y", "sd.z", "procid", "msgid", "", "k"}
	if r.IntN(3) == 0 {
		return randString(r)
	}
	return keys[r.IntN(len(keys))]
}

func randValue(r *rand.Rand, v pcommon.Value, depth int) {
	switch r.IntN(9) {
	case 0:
		v.SetStr(randString(r))
	case 1:
		v.SetInt(r.Int64N(50) - 10)
	case 2:
		v.SetDouble([]float64{0, 1.5, -2, math.NaN(), math.Inf(1), 1e300}[r.IntN(6)])
	case 3:
		v.SetBool(r.IntN(2) == 0)
	case 4:
		v.SetEmptyBytes().FromRaw([]byte(randString(r)))
	case 5:
		if depth < 3 {
			m := v.SetEmptyMap()
			for range r.IntN(4) {
				randValue(r, m.PutEmpty(randKey(r)), depth+1)
			}
		}
	case 6:
		if depth < 3 {
			s := v.SetEmptySlice()
			for range r.IntN(4) {
				randValue(r, s.AppendEmpty(), depth+1)
			}
		}
	case 7:
		v.SetStr(strconv.Itoa(r.IntN(8)))
	default: // empty
	}
}

func randAttrs(r *rand.Rand, m pcommon.Map) {
	for range r.IntN(8) {
		// Putting through the slice keeps duplicate keys.
		randValue(r, m.PutEmpty(randKey(r)), 0)
	}
}

func randLogs(r *rand.Rand) plog.Logs {
	ld := plog.NewLogs()
	for range r.IntN(3) + 1 {
		rl := ld.ResourceLogs().AppendEmpty()
		randAttrs(r, rl.Resource().Attributes())
		rl.Resource().SetDroppedAttributesCount(uint32(r.IntN(2)))
		if r.IntN(2) == 0 {
			rl.SetSchemaUrl(randString(r))
		}
		for range r.IntN(3) {
			sl := rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName(randString(r))
			sl.Scope().SetVersion(randString(r))
			randAttrs(r, sl.Scope().Attributes())
			sl.Scope().SetDroppedAttributesCount(uint32(r.IntN(2)))
			sl.SetSchemaUrl(randString(r))
			for range r.IntN(4) {
				lr := sl.LogRecords().AppendEmpty()
				lr.SetTimestamp(pcommon.Timestamp(r.Uint64()))
				lr.SetObservedTimestamp(pcommon.Timestamp(r.Uint64N(2)))
				lr.SetSeverityNumber(plog.SeverityNumber(r.IntN(25)))
				lr.SetSeverityText([]string{"", "INFO", "err", "debug", "notice", randString(r)}[r.IntN(6)])
				randValue(r, lr.Body(), 0)
				randAttrs(r, lr.Attributes())
				if r.IntN(2) == 0 {
					lr.SetTraceID(pcommon.TraceID(traceID))
					lr.SetSpanID(pcommon.SpanID(traceID[:8]))
				}
				lr.SetFlags(plog.LogRecordFlags(r.Uint32N(3)))
				lr.SetEventName(randString(r))
				lr.SetDroppedAttributesCount(uint32(r.IntN(2)))
			}
		}
	}
	return ld
}

func TestDecodeProtoGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var dirty []relaykit.Event
	n := 500
	if testing.Short() {
		n = 100
	}
	for i := range n {
		ld := randLogs(r)
		b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
		require.NoError(t, err)
		m := Mapping{Names: SyslogNames(i % 2)}
		dirty = checkSame(t, m, b, dirty)
	}
}

func FuzzDecodeMatchesPdata(f *testing.F) {
	for _, name := range []string{"every value kind", "syslog", "value merged", "unknown fields", "resource twice", "truncated", "deprecated scopes"} {
		f.Add(handBuilt()[name], false)
	}
	b, err := plogotlp.NewExportRequestFromLogs(randLogs(rand.New(rand.NewPCG(3, 4)))).MarshalProto()
	require.NoError(f, err)
	f.Add(b, true)
	var dirty []relaykit.Event
	f.Fuzz(func(t *testing.T, b []byte, collector bool) {
		m := Mapping{}
		if collector {
			m.Names = CollectorNames
		}
		dirty = checkSame(t, m, b, dirty)
	})
}

// TestRawGRPCCodec checks that pdata's proto codec, registered by its
// import, takes the receiver's own messages, so that RegisterGRPC uses
// the direct decoder, and that the empty response is pdata's.
func TestRawGRPCCodec(t *testing.T) {
	require.True(t, rawCodecOK())
	want, err := plogotlp.NewExportResponse().MarshalProto()
	require.NoError(t, err)
	require.Equal(t, want, emptyResponse.b)
}

// TestEscapedBytes checks the direct decoder's key test against the
// mapping's over every name it knows and a few others.
func TestEscapedBytes(t *testing.T) {
	for _, n := range []*names{&specNames, &collectorNames} {
		keys := []string{"", "x", "http.method", "hostname", "appname", "priority", "facility", "procid", "msgid",
			"attr.", "attr.x", "resource.a", "scope.b", "otel.c", "sd.d", "sd", "relaykit.index", "relaykit.flags",
			"relaykit.source_type", "syslog.facility", "syslog.procid", "proc_id", "msg_id", "structured_data"}
		for _, k := range keys {
			assert.Equal(t, escaped(k, n), escapedBytes([]byte(k), n), "%q", k)
		}
	}
}
