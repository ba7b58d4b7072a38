package bench

import (
	"bytes"
	"testing"
	"time"

	"github.com/leodido/go-syslog/v4/rfc5424"
	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/syslog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syslog5424 is a 200-byte RFC 5424 message with STRUCTURED-DATA (RFC 5424
// section 6.5 example 3, with PROCID and a longer MSG).
var syslog5424 = []byte(`<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog 1234 ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] ` + "\xEF\xBB\xBF" + `An application event log entry with some texts, padded.`)

// BenchmarkSyslogParse compares syslog.Parser, filling a reused
// event, with go-syslog's RFC 5424 machine, which returns a new message
// (strings, a map per SD element) on every call. One op is one message.
func BenchmarkSyslogParse(b *testing.B) {
	if len(syslog5424) != 200 {
		b.Fatalf("sample is %d bytes", len(syslog5424))
	}
	for _, c := range []struct {
		name string
		cfg  syslog.Config
	}{
		{"impl=relaykit", syslog.Config{Location: time.UTC}},
		// As the relay runs it: UTF-8 and control byte check, CEF detection.
		{"impl=relaykit-text-cef", syslog.Config{Location: time.UTC, RequireText: true, CEF: true}},
	} {
		b.Run("msg=rfc5424-sd-200B/"+c.name, func(b *testing.B) {
			p := syslog.NewParser(c.cfg)
			var ev relaykit.Event
			b.SetBytes(int64(len(syslog5424)))
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				ev.Reset()
				if p.Parse(&ev, syslog5424) != syslog.RFC5424 || len(ev.Fields) != 5 {
					b.Fatal("not parsed")
				}
			}
			cpu.report(b)
		})
	}
	b.Run("msg=rfc5424-sd-200B/impl=go-syslog", func(b *testing.B) {
		m := rfc5424.NewParser()
		b.SetBytes(int64(len(syslog5424)))
		b.ReportAllocs()
		cpu := startCPU()
		for b.Loop() {
			msg, err := m.Parse(syslog5424)
			if err != nil || len(*msg.(*rfc5424.SyslogMessage).StructuredData) != 1 {
				b.Fatal(err)
			}
		}
		cpu.report(b)
	})
}

// goSyslogFields is what go-syslog found in a valid RFC 5424 message, in
// the parser's field naming.
func goSyslogFields(m *rfc5424.SyslogMessage) (pri uint8, ts *time.Time, host, app, msg string, fields map[string]string) {
	fields = map[string]string{}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	if m.ProcID != nil {
		fields[syslog.FieldProcID] = *m.ProcID
	}
	if m.MsgID != nil {
		fields[syslog.FieldMsgID] = *m.MsgID
	}
	if m.StructuredData != nil {
		for id, params := range *m.StructuredData {
			if len(params) == 0 {
				fields[syslog.SDFieldPrefix+id] = ""
			}
			for k, v := range params {
				fields[syslog.SDFieldPrefix+id+"."+k] = v
			}
		}
	}
	msg = str(m.Message)
	msg = string(bytes.TrimRight(bytes.TrimPrefix([]byte(msg), []byte("\xEF\xBB\xBF")), "\r\n"))
	return *m.Priority, m.Timestamp, str(m.Hostname), str(m.Appname), msg, fields
}

// FuzzSyslogDifferential: on every input go-syslog (the former parser,
// kept as the oracle) accepts as valid RFC 5424, syslog.Parser
// recognises RFC 5424 and extracts the same priority, timestamp, hostname,
// app-name, procid, msgid, structured data and message (the parser removes
// the BOM and trailing CR/LF; go-syslog keeps them).
//
// The parser is deliberately more lenient than go-syslog in
// STRUCTURED-DATA, as rsyslog is (its pmrfc5424 takes everything up to "] "
// as STRUCTURED-DATA): SP around '=', more than one SP between parameters
// and SP before ']'. go-syslog rejects those messages, so the fuzz target
// says nothing of them; TestSyslogLeniency checks that each is read as
// go-syslog reads the same message without the extra spaces.
func FuzzSyslogDifferential(f *testing.F) {
	for _, s := range []string{
		string(syslog5424),
		"<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - \xEF\xBB\xBF'su root' failed",
		"<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make the do-nuts.",
		`<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]`,
		`<13>1 2026-01-02T03:04:05+01:00 h app 1 - [x@1 q="a\"b" b="c\\d" r="e\]f" o="g\h"] m`,
		"<13>1 - - - - - - x", "<13>999 - - - - - [a][b x=\"\"]", "<0>1 1985-04-12T23:20:50.52Z - - - - -",
		"<191>1 2016-02-29T00:00:00-23:59 h a p m - \r\n",
		`<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource= "Application" eventID="1011"] x`,
	} {
		f.Add([]byte(s))
	}
	p := syslog.NewParser(syslog.Config{Location: time.UTC})
	oracle := rfc5424.NewParser()
	var ev relaykit.Event
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := oracle.Parse(in)
		if err != nil || m == nil || !m.Valid() {
			return
		}
		sameAsGoSyslog(t, p, &ev, in, in, m.(*rfc5424.SyslogMessage))
	})
}

// TestSyslogLeniency: each message go-syslog rejects for spaces in
// STRUCTURED-DATA that rsyslog accepts is read by syslog.Parser as
// go-syslog reads it without them.
func TestSyslogLeniency(t *testing.T) {
	p := syslog.NewParser(syslog.Config{Location: time.UTC})
	oracle := rfc5424.NewParser()
	var ev relaykit.Event
	for _, tt := range []struct{ lenient, strict string }{
		{ // rsyslog's, syslog_loose's and glossy's test message
			`<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource= "Application" eventID="1011"] ` + "\xEF\xBB\xBF" + `An application event log entry...`,
			`<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] ` + "\xEF\xBB\xBF" + `An application event log entry...`,
		},
		{
			`<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource= "Application" eventID="1011"][examplePriority@32473 class="high"]`,
			`<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]`,
		},
		{`<13>1 - h a - - [x@1  k = "v"  j="w" ][y ] m`, `<13>1 - h a - - [x@1 k="v" j="w"][y] m`},
	} {
		_, err := oracle.Parse([]byte(tt.lenient))
		assert.Error(t, err, "go-syslog rejects %q", tt.lenient)
		m, err := oracle.Parse([]byte(tt.strict))
		require.NoError(t, err)
		sameAsGoSyslog(t, p, &ev, []byte(tt.lenient), []byte(tt.strict), m.(*rfc5424.SyslogMessage))
	}
}

// sameAsGoSyslog checks that p reads in as go-syslog read the message
// strict into sm; strict is in itself, or in without the spaces go-syslog
// rejects.
func sameAsGoSyslog(t *testing.T, p *syslog.Parser, ev *relaykit.Event, in, strict []byte, sm *rfc5424.SyslogMessage) {
	t.Helper()
	pri, ts, host, app, msg, fields := goSyslogFields(sm)
	ev.Reset()
	got := p.Parse(ev, in)
	if got != syslog.RFC5424 {
		t.Fatalf("%q: go-syslog accepts %q, parser says %v", in, strict, got)
	}
	if ev.Flags&relaykit.FlagPriority == 0 || ev.Priority != pri {
		t.Errorf("%q: priority %d, want %d", in, ev.Priority, pri)
	}
	if ts != nil {
		if y := ts.Year(); y > 1678 && y < 2262 {
			if ev.Time != ts.UnixNano() {
				t.Errorf("%q: time %d, want %d (%v)", in, ev.Time, ts.UnixNano(), ts)
			}
		} else {
			if ev.Time != 0 {
				t.Errorf("%q: out-of-range time %d set", in, ev.Time)
			}
			delete(fields, syslog.FieldTimestamp)
			if v, ok := ev.Field(syslog.FieldTimestamp); ok {
				fields[syslog.FieldTimestamp] = string(v)
			}
		}
	} else if ev.Time != 0 {
		t.Errorf("%q: time %d from a NILVALUE", in, ev.Time)
	}
	if string(ev.Host) != host || string(ev.Source) != app {
		t.Errorf("%q: host/app %q/%q, want %q/%q", in, ev.Host, ev.Source, host, app)
	}
	if string(ev.Raw) != msg {
		t.Errorf("%q: message %q, want %q", in, ev.Raw, msg)
	}
	gotFields := map[string]string{}
	for _, f := range ev.Fields {
		gotFields[string(f.Key)] = string(f.Value)
	}
	if len(gotFields) != len(fields) {
		t.Fatalf("%q: fields %q, want %q", in, gotFields, fields)
	}
	for k, v := range fields {
		if gotFields[k] != v {
			t.Errorf("%q: field %s = %q, want %q", in, k, gotFields[k], v)
		}
	}
}
