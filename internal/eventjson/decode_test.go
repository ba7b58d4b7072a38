package eventjson_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/eventjson"
	"github.com/relaykit/relaykit/syslog"
)

// crossing returns what of e crosses Append and Decode, as Decode's
// documentation lists it: no ReceiveTime beside a Time, no priority
// without FlagPriority, no parse-error or truncation flag, each byte of
// invalid UTF-8 outside the message as U+FFFD, and empty slices as nil.
func crossing(e *relaykit.Event) relaykit.Event {
	w := relaykit.Event{
		Time:       e.Time,
		Host:       text(e.Host),
		Source:     text(e.Source),
		SourceType: text(e.SourceType),
		Index:      text(e.Index),
		Raw:        bytes.Clone(nonEmpty(e.Raw)),
	}
	if e.Time == 0 {
		w.ReceiveTime = e.ReceiveTime
	}
	if e.Flags&relaykit.FlagPriority != 0 {
		w.Priority = e.Priority
		w.Flags = e.Flags & (relaykit.FlagPriority | relaykit.FlagPriorityAssumed)
	}
	for _, f := range e.Fields {
		w.Fields = append(w.Fields, relaykit.Field{Key: text(f.Key), Value: text(f.Value)})
	}
	return w
}

// normal returns e with empty slices as nil, for comparison.
func normal(e *relaykit.Event) relaykit.Event {
	w := *e
	w.Host, w.Source, w.SourceType, w.Index, w.Raw = nonEmpty(e.Host), nonEmpty(e.Source), nonEmpty(e.SourceType), nonEmpty(e.Index), nonEmpty(e.Raw)
	w.Fields = nil
	for _, f := range e.Fields {
		w.Fields = append(w.Fields, relaykit.Field{Key: nonEmpty(f.Key), Value: nonEmpty(f.Value)})
	}
	return w
}

func nonEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// text is b as a JSON string carries it: each byte that is not part of
// valid UTF-8 becomes U+FFFD.
func text(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		out = utf8.AppendRune(out, r)
		b = b[n:]
	}
	return out
}

// roundTrip appends e, decodes it into a dirty event, and returns the
// result, normalised.
func roundTrip(t testing.TB, p *fastjson.Parser, e *relaykit.Event) relaykit.Event {
	t.Helper()
	data := eventjson.Append(nil, e)
	require.True(t, utf8.Valid(data), "Append writes valid UTF-8: %q", data)
	got := relaykit.Event{Host: []byte("stale"), Time: 7, Flags: relaykit.FlagTruncated}
	got.SetFieldString("stale", "x")
	require.NoError(t, eventjson.Decode(p, data, &got), "%s", data)
	return normal(&got)
}

// hopFrames are syslog messages with every part a relay carries between
// tiers: priority, time with zone and fraction, host, app, procid, msgid,
// structured data (escapes included), a BOM, CEF extensions, a Cisco tag,
// a message without PRI, one without timestamp or host, one that is not
// UTF-8, and one that does not parse.
var hopFrames = []string{
	"<165>1 2026-11-23T10:00:00.123456+02:00 fw-1.example.com sshd 4242 LOGIN " +
		`[exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][meta sequenceId="7" note="a \"quoted\" \] value"] ` +
		"\xef\xbb\xbfAccepted password for root from 192.0.2.7 port 52814 ssh2",
	"<38>Nov 23 10:00:01 host-3 sudo[1234]: pam_unix(sudo:session): session opened for user root",
	"<134>Nov 23 10:00:02 fw-2 CEF:0|Fortinet|Fortigate|v6.0.3|00013|traffic:forward close|3|src=10.1.100.11 dst=52.53.140.235 " +
		`spt=54190 dpt=443 proto=6 act=close app=HTTPS out=3652 in=146668 deviceExternalId=FGT5HD3915800610 cs1=a\=b cs1Label=eq`,
	"<189>: %LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to up",
	"<14>1 - - - - - - no timestamp, no host, tab\tand \u00e9",
	"<11>1 2026-11-23T10:00:03.000000001-07:00 db-1 postgres - - - FATAL:  password authentication failed",
	"<13>1 2026-11-23T10:00:04.5Z h app - - - bad \xff\xfe bytes",
	"just a line without a priority",
	"<999>malformed priority",
	`<86>1 2026-11-23T10:00:05Z h app - - [x@1 k="\xff" e=""] sd value not UTF-8, one empty`,
}

func TestRoundTripSyslog(t *testing.T) {
	recv := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC).UnixNano()
	sp := syslog.NewParser(syslog.Config{Location: time.UTC, CEF: true})
	var p fastjson.Parser
	for _, f := range hopFrames {
		t.Run(f[:min(len(f), 24)], func(t *testing.T) {
			e := relaykit.Event{ReceiveTime: recv, Index: []byte("main")}
			sp.Parse(&e, []byte(f))
			require.NotZero(t, e.Flags&relaykit.FlagPriority, "the parser sets a priority")
			want := crossing(&e)
			assert.Equal(t, want, roundTrip(t, &p, &e))
		})
	}
}

func TestRoundTripFields(t *testing.T) {
	const t0 = int64(1_795_420_800_123_456_789) // 2026-11-23T08:00:00.123456789Z
	many := relaykit.Event{Time: t0, Raw: []byte("many")}
	for i := range 300 {
		many.Fields = append(many.Fields, relaykit.Field{Key: fmt.Appendf(nil, "k%d", i%290), Value: fmt.Appendf(nil, "v%d", i)})
	}
	pri := func(e relaykit.Event, fac, sev uint8, flags relaykit.Flags) relaykit.Event {
		e.SetPriority(fac, sev)
		e.Flags |= flags
		return e
	}
	tests := []struct {
		name string
		e    relaykit.Event
	}{
		{"empty", relaykit.Event{}},
		{"message only", relaykit.Event{Raw: []byte("m")}},
		{"receive time only", relaykit.Event{ReceiveTime: t0, Raw: []byte("m")}},
		{"both times", relaykit.Event{ReceiveTime: t0 + 5, Time: t0, Raw: []byte("m")}},
		{"whole seconds", relaykit.Event{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()}},
		{"fraction with trailing zeros", relaykit.Event{Time: time.Date(2026, 1, 2, 3, 4, 5, 120_000_000, time.UTC).UnixNano()}},
		{"before 1970", relaykit.Event{Time: -1}},
		{"earliest time", relaykit.Event{Time: time.Date(1678, 1, 1, 0, 0, 0, 1, time.UTC).UnixNano()}},
		{"latest time", relaykit.Event{Time: 1<<63 - 1}},
		{"metadata", relaykit.Event{Time: t0, Host: []byte("fw-1"), Source: []byte("sshd"), SourceType: []byte("syslog"), Index: []byte("net"), Raw: []byte("m")}},
		{"priority", pri(relaykit.Event{Raw: []byte("m")}, 4, 3, 0)},
		{"priority assumed", pri(relaykit.Event{Raw: []byte("m")}, 1, 5, relaykit.FlagPriorityAssumed)},
		{"priority 0", pri(relaykit.Event{Raw: []byte("m")}, 0, 0, 0)},
		{"local7.debug", pri(relaykit.Event{Raw: []byte("m")}, 23, 7, 0)},
		{"facility beyond RFC 5424", relaykit.Event{Priority: 255, Flags: relaykit.FlagPriority, Raw: []byte("m")}},
		{"priority without flag", relaykit.Event{Priority: 34, Flags: relaykit.FlagPriorityAssumed, Raw: []byte("m")}},
		{"flags that stay", pri(relaykit.Event{Raw: []byte("m")}, 3, 3, relaykit.FlagParseError|relaykit.FlagTruncated)},
		{"non-UTF-8 message", relaykit.Event{Raw: []byte("a\xff\xfeb\xc3")}},
		{"non-UTF-8 metadata", relaykit.Event{Host: []byte("h\xff"), Source: []byte("\xed\xa0\x80s"), Raw: []byte("ok"),
			Fields: []relaykit.Field{{Key: []byte("k\xc0"), Value: []byte("v\xff")}}}},
		{"escapes", relaykit.Event{Host: []byte("\"h\"\\"), Raw: []byte("\x00\x01\x1f\t\n\r\b\f\"\\/ \u2028\u2029 \U0001F600 é </script>"),
			Fields: []relaykit.Field{{Key: []byte("\"k\"\n"), Value: []byte("\\v\x00")}}}},
		{"U+FFFD in a valid message", relaykit.Event{Raw: []byte("\uFFFD")}},
		{"empty field", relaykit.Event{Raw: []byte("m"), Fields: []relaykit.Field{{}, {Key: []byte("k")}, {Value: []byte("v")}}}},
		{"duplicate fields", relaykit.Event{Raw: []byte("m"), Fields: []relaykit.Field{{Key: []byte("k"), Value: []byte("1")}, {Key: []byte("k"), Value: []byte("2")}}}},
		{"member names as fields", relaykit.Event{Raw: []byte("m"), Fields: []relaykit.Field{{Key: []byte("message"), Value: []byte("no")}, {Key: []byte("time"), Value: []byte("x")}}}},
		{"many fields", many},
		{"large message", relaykit.Event{Raw: bytes.Repeat([]byte("0123456789\xff"), 10_000)}},
	}
	var p fastjson.Parser
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := crossing(&tt.e)
			assert.Equal(t, want, roundTrip(t, &p, &tt.e))
		})
	}
}

// TestDecodeOtherWriters: objects written by other producers (another
// version, a script, kcat) decode as documented.
func TestDecodeOtherWriters(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want relaykit.Event
	}{
		{"time with an offset", `{"time":"2026-11-23T10:00:00.5+02:00","message":"m"}`,
			relaykit.Event{Time: time.Date(2026, 11, 23, 8, 0, 0, 500_000_000, time.UTC).UnixNano(), Raw: []byte("m")}},
		{"receive time", `{"time":"2026-11-23T10:00:00Z","time_is_receive_time":true,"message":"m"}`,
			relaykit.Event{ReceiveTime: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC).UnixNano(), Raw: []byte("m")}},
		{"names only", `{"facility":"auth","severity":"err","message":"m"}`,
			relaykit.Event{Priority: 4<<3 | 3, Flags: relaykit.FlagPriority, Raw: []byte("m")}},
		{"numbers as names", `{"facility":16,"severity":6,"priority_assumed":true,"message":"m"}`,
			relaykit.Event{Priority: 16<<3 | 6, Flags: relaykit.FlagPriority | relaykit.FlagPriorityAssumed, Raw: []byte("m")}},
		{"codes win over names", `{"facility":"kern","facility_code":1,"severity":"emerg","severity_code":5,"message":"m"}`,
			relaykit.Event{Priority: 13, Flags: relaykit.FlagPriority, Raw: []byte("m")}},
		{"priority_assumed alone", `{"priority_assumed":true,"message":"m"}`, relaykit.Event{Raw: []byte("m")}},
		{"first of a repeated member", `{"message":"a","message":"b","host":"h1","host":"h2"}`,
			relaykit.Event{Host: []byte("h1"), Raw: []byte("a")}},
		{"ill-typed metadata is ignored", `{"host":1,"index":null,"time":5,"fields":[1],"message":"m","extra":{}}`,
			relaykit.Event{Raw: []byte("m")}},
		{"base64 wins over message", `{"message":"x","message_base64":"/w=="}`, relaykit.Event{Raw: []byte{0xff}}},
		{"escaped keys", `{"mess\u0061ge":"m","fields":{"k\"1":"v"}}`,
			relaykit.Event{Raw: []byte("m"), Fields: []relaykit.Field{{Key: []byte(`k"1`), Value: []byte("v")}}}},
	}
	var p fastjson.Parser
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e relaykit.Event
			require.NoError(t, eventjson.Decode(&p, []byte(tt.in), &e))
			assert.Equal(t, normal(&tt.want), normal(&e))
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", ``, "invalid json"},
		{"not json", `this is not json`, "invalid json"},
		{"trailing garbage", `{"message":"m"} x`, "invalid json"},
		{"array", `["message"]`, "not a JSON object"},
		{"string", `"m"`, "not a JSON object"},
		{"no message", `{"host":"h"}`, `no "message" string`},
		{"message not a string", `{"message":1}`, `no "message" string`},
		{"bad base64", `{"message":"m","message_base64":"%%%"}`, `invalid "message_base64"`},
		{"base64 not a string", `{"message":"m","message_base64":1}`, `invalid "message_base64"`},
		{"bad time", `{"time":"yesterday","message":"m"}`, "invalid time"},
		{"time after 2262", `{"time":"3000-01-01T00:00:00Z","message":"m"}`, "outside the years"},
		{"time before 1678", `{"time":"0001-01-01T00:00:00+01:00","message":"m"}`, "outside the years"},
		{"field not a string", `{"message":"m","fields":{"a":"1","b":2}}`, `field "b" is not a string`},
		{"facility alone", `{"facility_code":3,"message":"m"}`, "facility without a severity"},
		{"severity alone", `{"severity":"err","message":"m"}`, "facility without a severity"},
		{"unknown facility", `{"facility":"nope","severity":"err","message":"m"}`, `unknown facility "nope"`},
		{"facility code out of range", `{"facility_code":32,"severity_code":1,"message":"m"}`, "facility_code is not a code 0-31"},
		{"severity code out of range", `{"facility_code":1,"severity_code":8,"message":"m"}`, "severity_code is not a code 0-7"},
		{"negative code", `{"facility_code":-1,"severity_code":1,"message":"m"}`, "facility_code is not a code"},
		{"code not a number", `{"facility_code":"1","severity_code":1,"message":"m"}`, "facility_code is not a code"},
	}
	var p fastjson.Parser
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e relaykit.Event
			err := eventjson.Decode(&p, []byte(tt.in), &e)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// warmEvent is an event with every member set, a message that is not
// UTF-8 (so message_base64) and fields: the costliest shape to decode.
func warmEvent() *relaykit.Event {
	e := &relaykit.Event{Time: 1_795_420_800_123_456_789, Host: []byte("fw-1.example.com"), Source: []byte("sshd"),
		SourceType: []byte("syslog"), Index: []byte("net"), Raw: []byte("Accepted password for root \xff from 192.0.2.7")}
	e.SetPriority(4, 6)
	e.Flags |= relaykit.FlagPriorityAssumed
	for _, k := range []string{"procid", "msgid", "sd.meta.sequenceId", "sd.meta.note", "src_ip"} {
		e.SetFieldString(k, "value of "+k+" with a \"quote\"")
	}
	return e
}

func TestDecodeNoAlloc(t *testing.T) {
	data := eventjson.Append(nil, warmEvent())
	var p fastjson.Parser
	var e relaykit.Event
	require.NoError(t, eventjson.Decode(&p, data, &e))
	allocs := testing.AllocsPerRun(100, func() {
		if err := eventjson.Decode(&p, data, &e); err != nil {
			panic(err)
		}
	})
	assert.Equal(t, crossing(warmEvent()), normal(&e))
	if !raceEnabled {
		assert.Zero(t, allocs, "Decode allocates nothing once the parser and the event are warm")
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, bc := range []struct {
		name string
		e    *relaykit.Event
	}{
		{"shape=syslog", warmEvent()},
		{"shape=minimal", &relaykit.Event{Time: 1_795_420_800_000_000_000, Host: []byte("h"), Raw: []byte(strings.Repeat("x", 200))}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			data := eventjson.Append(nil, bc.e)
			var p fastjson.Parser
			var e relaykit.Event
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := eventjson.Decode(&p, data, &e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzDecode: Decode never panics on any input, and whatever it accepts
// survives a further round trip unchanged.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"message":"m"}`))
	f.Add(eventjson.Append(nil, warmEvent()))
	f.Add([]byte(`{"time":"2026-11-23T10:00:00.5+02:00","time_is_receive_time":true,"facility":"auth","severity":3,"message":"m","message_base64":"/w==","fields":{"a":"b","a":"c"}}`))
	f.Add([]byte(`{"facility_code":31,"severity_code":7,"priority_assumed":true,"message":"\u2028\ud83d\ude00\ud800"}`))
	var p fastjson.Parser
	f.Fuzz(func(t *testing.T, data []byte) {
		var e relaykit.Event
		if err := eventjson.Decode(&p, data, &e); err != nil {
			return
		}
		once := normal(&e)
		want := crossing(&e)
		assert.Equal(t, want, roundTrip(t, &p, &e))
		assert.Equal(t, once, normal(&e), "Append does not change the event")
	})
}

// FuzzRoundTrip: Decode(Append(e)) is e, less what does not cross, for
// events built from the fuzz input.
func FuzzRoundTrip(f *testing.F) {
	f.Add(int64(1_795_420_800_123_456_789), int64(0), uint8(165), uint8(1), "fw-1", "sshd", "syslog", "main", []byte("message"), []byte("k\x00v\x00k2\x00"))
	f.Add(int64(0), int64(-1), uint8(13), uint8(0xff), "h\xff", "", "", "", []byte("bad \xff\xfe"), []byte("\xff\x00\xfe"))
	f.Add(int64(0), int64(0), uint8(0), uint8(0), "", "", "", "", []byte(nil), []byte(nil))
	var p fastjson.Parser
	f.Fuzz(func(t *testing.T, tm, recv int64, prio, flags uint8, host, source, sourcetype, index string, raw, fields []byte) {
		e := relaykit.Event{Time: tm, ReceiveTime: recv, Priority: prio, Flags: relaykit.Flags(flags),
			Host: []byte(host), Source: []byte(source), SourceType: []byte(sourcetype), Index: []byte(index), Raw: raw}
		// fields: NUL-separated key, value, key, value...
		parts := bytes.Split(fields, []byte{0})
		for i := 0; i+1 < len(parts); i += 2 {
			e.Fields = append(e.Fields, relaykit.Field{Key: parts[i], Value: parts[i+1]})
		}
		assert.Equal(t, crossing(&e), roundTrip(t, &p, &e))
	})
}
