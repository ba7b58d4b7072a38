package service

import (
	"bytes"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/relaykit/relaykit/examples/relay/internal/input"

	"github.com/leodido/go-syslog/v4/rfc5424"
	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/syslog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	parsed5424    = syslog.RFC5424
	parsed3164    = syslog.RFC3164
	parsedLenient = syslog.Lenient
	parsedRaw     = syslog.Unparsed
)

func TestSyslogParse(t *testing.T) {
	utc := time.UTC
	tests := []struct {
		name     string
		in       string
		format   syslog.Format
		pri      int // -1: no valid PRI, user.notice assumed
		time     time.Time
		host     string
		source   string
		procid   string
		msgid    string
		raw      string
		parseErr bool
	}{
		{name: "rfc5424", in: `<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog 77 ID47 [exampleSDID@32473 iut="3"] An application event`,
			format: parsed5424, pri: 165, time: time.Date(2003, 10, 11, 22, 14, 15, 3e6, utc), host: "mymachine.example.com",
			source: "evntslog", procid: "77", msgid: "ID47", raw: "An application event"},
		{name: "rfc5424 nil values", in: "<13>1 - - - - - - x", format: parsed5424, pri: 13, host: "peer", raw: "x"},
		{name: "rfc3164", in: "<34>Oct 11 22:14:15 mymachine su: 'su root' failed",
			format: parsed3164, pri: 34, host: "mymachine", source: "su", raw: "'su root' failed"},
		{name: "loggen default (ISO without zone)", in: "<38>2026-11-22T01:39:01 host prog[123]: msg body",
			format: parsedLenient, pri: 38, time: time.Date(2026, 11, 22, 1, 39, 1, 0, utc), host: "host", source: "prog", procid: "123", raw: "msg body"},
		{name: "ISO with zone and fraction", in: "<38>2026-11-22T01:39:01.5+01:00 host app: m",
			format: parsedLenient, pri: 38, time: time.Date(2026, 11, 22, 0, 39, 1, 5e8, utc), host: "host", source: "app", raw: "m"},
		{name: "cisco asa", in: "<166>%ASA-6-302013: Built outbound TCP connection",
			format: parsedLenient, pri: 166, host: "peer", source: "ASA", msgid: "ASA-6-302013", raw: "Built outbound TCP connection"},
		{name: "cisco with year", in: "<166>Nov 22 2026 01:39:01: %ASA-6-302013: Built",
			format: parsed3164, pri: 166, time: time.Date(2026, 11, 22, 1, 39, 1, 0, utc), host: "peer", source: "ASA", msgid: "ASA-6-302013", raw: "Built"},
		{name: "no PRI", in: "plain text line", format: parsedLenient, pri: -1, host: "peer", raw: "plain text line"},
		{name: "no PRI with tag", in: "sshd[99]: Accepted key", format: parsedLenient, pri: -1, host: "peer", source: "sshd", procid: "99", raw: "Accepted key"},
		{name: "CRLF", in: "<13>1 - h a - - - hello\r\n", format: parsed5424, pri: 13, host: "h", source: "a", raw: "hello"},
		{name: "bad PRI", in: "<999>x", format: parsedRaw, pri: -1, host: "peer", raw: "<999>x", parseErr: true},
		{name: "unclosed PRI", in: "<13 x", format: parsedRaw, pri: -1, host: "peer", raw: "<13 x", parseErr: true},
		{name: "invalid UTF-8", in: "<13>bad \xff\xfe bytes", format: parsedRaw, pri: -1, host: "peer", raw: "<13>bad \xff\xfe bytes", parseErr: true},
		{name: "control bytes", in: "\x01\x02\x03garbage", format: parsedRaw, pri: -1, host: "peer", raw: "\x01\x02\x03garbage", parseErr: true},
	}
	sp := input.NewSyslogParser(time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ev relaykit.Event
			got := sp.Parse(&ev, []byte(tt.in), "peer")
			assert.Equal(t, tt.format, got)
			pri, ok := ev.Priority, ev.Flags&relaykit.FlagPriority != 0
			assert.True(t, ok)
			if tt.pri < 0 {
				// RFC 3164 section 4.3.3: a relay assumes user.notice.
				assert.Equal(t, relaykit.PriorityAssumed, pri)
				assert.NotZero(t, ev.Flags&relaykit.FlagPriorityAssumed)
			} else {
				assert.Equal(t, uint8(tt.pri), pri)
				assert.Zero(t, ev.Flags&relaykit.FlagPriorityAssumed)
			}
			if !tt.time.IsZero() {
				assert.Equal(t, tt.time.UnixNano(), ev.Time)
			}
			assert.Equal(t, tt.host, string(ev.Host))
			assert.Equal(t, tt.source, string(ev.Source))
			procid, _ := ev.Field(syslog.FieldProcID)
			assert.Equal(t, tt.procid, string(procid))
			msgid, _ := ev.Field(syslog.FieldMsgID)
			assert.Equal(t, tt.msgid, string(msgid))
			assert.Equal(t, tt.raw, string(ev.Raw))
			assert.Equal(t, tt.parseErr, ev.Flags&relaykit.FlagParseError != 0)
			assert.Equal(t, "syslog", string(ev.SourceType))
		})
	}
}

// FuzzSyslogParse: any input gives an event, never a panic; the message
// part is a substring of the input; a parse error keeps the input whole.
func FuzzSyslogParse(f *testing.F) {
	for _, s := range []string{
		"<38>2026-11-22T01:39:01 host prog[123]: msg", "<13>1 - - - - - - x", "<34>Oct 11 22:14:15 h su: m",
		"<166>%ASA-6-302013: B", "<166>Nov 22 2026 01:39:01: %ASA-6-1: x", "*Mar  1 18:46:11.123: %LINK-3-UPDOWN: x",
		"<1>", "<", "<191>1 ", "\xff", "<13>Jan  1 00:00:00.123456789012 h: x",
	} {
		f.Add([]byte(s))
	}
	sp := input.NewSyslogParser(time.UTC)
	f.Fuzz(func(t *testing.T, in []byte) {
		var ev relaykit.Event
		r := sp.Parse(&ev, in, "peer")
		trimmed := bytes.TrimRight(in, "\r\n")
		if r == parsedRaw {
			if !bytes.Equal(ev.Raw, trimmed) || ev.Flags&relaykit.FlagParseError == 0 {
				t.Fatalf("raw event %q lost input %q", ev.Raw, in)
			}
			return
		}
		if !utf8.Valid(ev.Raw) {
			t.Fatalf("parsed message is not UTF-8: %q", ev.Raw)
		}
		if r == parsedLenient && !bytes.Contains(trimmed, ev.Raw) {
			t.Fatalf("lenient message %q not in input %q", ev.Raw, in)
		}
	})
}

// go-syslog, the parser the relay used before, stays the oracle: on the
// RFC 5424 cases it extracts what the relay's parser does (the BOM and
// trailing CR/LF aside).
func TestSyslogParseAgreesWithGoSyslog(t *testing.T) {
	sp := input.NewSyslogParser(time.UTC)
	oracle := rfc5424.NewParser()
	for _, in := range []string{
		`<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog 77 ID47 [exampleSDID@32473 iut="3"] An application event`,
		"<13>1 2026-11-23T09:00:00.123456+01:00 vm myapp 4242 LOGIN [timeQuality tzKnown=\"1\"][origin@32473 ip=\"10.1.2.3\"] \xEF\xBB\xBFsd test",
		"<13>1 - h a - - - hello",
	} {
		m, err := oracle.Parse([]byte(in))
		require.NoError(t, err, in)
		want := m.(*rfc5424.SyslogMessage)
		var ev relaykit.Event
		require.Equal(t, parsed5424, sp.Parse(&ev, []byte(in), "peer"), in)
		assert.Equal(t, *want.Priority, ev.Priority)
		if want.Timestamp != nil {
			assert.Equal(t, want.Timestamp.UnixNano(), ev.Time)
		}
		assert.Equal(t, *want.Hostname, string(ev.Host))
		assert.Equal(t, *want.Appname, string(ev.Source))
		assert.Equal(t, string(bytes.TrimPrefix([]byte(*want.Message), []byte("\xEF\xBB\xBF"))), string(ev.Raw))
		if want.StructuredData != nil {
			for id, params := range *want.StructuredData {
				for k, v := range params {
					got, ok := ev.Field("sd." + id + "." + k)
					assert.True(t, ok, id+"."+k)
					assert.Equal(t, v, string(got))
				}
			}
		}
	}
}
