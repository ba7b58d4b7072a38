package syslog_test

import (
	"bytes"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/syslog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ref is the receive time the tests stamp on events: years of timestamps
// without one are inferred from it.
var ref = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

type syslogWant struct {
	format syslog.Format
	pri    int // -1: no valid PRI, 13 assumed (FlagPriorityAssumed)
	time   time.Time
	host   string
	source string
	raw    string
	fields map[string]string
}

func checkSyslog(t *testing.T, w syslogWant, ev *relaykit.Event, got syslog.Format) {
	t.Helper()
	assert.Equal(t, w.format, got, "format")
	assert.NotZero(t, ev.Flags&relaykit.FlagPriority, "priority flag")
	if w.pri < 0 {
		assert.NotZero(t, ev.Flags&relaykit.FlagPriorityAssumed, "priority assumed")
		assert.Equal(t, relaykit.PriorityAssumed, ev.Priority, "user.notice assumed")
	} else {
		assert.Zero(t, ev.Flags&relaykit.FlagPriorityAssumed, "priority not assumed")
		assert.Equal(t, uint8(w.pri), ev.Priority, "priority")
	}
	if w.time.IsZero() {
		assert.Zero(t, ev.Time, "time")
	} else {
		assert.Equal(t, w.time.UTC().Format(time.RFC3339Nano), time.Unix(0, ev.Time).UTC().Format(time.RFC3339Nano), "time")
	}
	assert.Equal(t, w.host, string(ev.Host), "host")
	assert.Equal(t, w.source, string(ev.Source), "source")
	assert.Equal(t, w.raw, string(ev.Raw), "raw")
	fields := map[string]string{}
	for _, f := range ev.Fields {
		fields[string(f.Key)] = string(f.Value)
	}
	if w.fields == nil {
		w.fields = map[string]string{}
	}
	assert.Equal(t, w.fields, fields, "fields")
	assert.Equal(t, w.format == syslog.Unparsed, ev.Flags&relaykit.FlagParseError != 0, "parse error flag")
}

// Expected values per format and field. Sources: RFC 5424 section 6.5
// (examples 1-4), RFC 3164 section 5.4, rsyslog's pmrfc3164 and syslog-ng's
// BSD parser variants, and vendor documentation samples (Cisco ASA and IOS
// message formats, FortiGate, Palo Alto PAN-OS, Check Point Log Exporter).
func TestParserFormats(t *testing.T) {
	utc := time.UTC
	tests := []struct {
		name string
		in   string
		want syslogWant
	}{
		// RFC 5424 section 6.5.
		{"rfc5424 example 1 (BOM)", "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - \xEF\xBB\xBF'su root' failed for lonvick on /dev/pts/8",
			syslogWant{format: syslog.RFC5424, pri: 34, time: time.Date(2003, 10, 11, 22, 14, 15, 3e6, utc),
				host: "mymachine.example.com", source: "su", raw: "'su root' failed for lonvick on /dev/pts/8", fields: map[string]string{"msgid": "ID47"}}},
		{"rfc5424 example 2 (offset, microseconds)", "<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make the do-nuts.",
			syslogWant{format: syslog.RFC5424, pri: 165, time: time.Date(2003, 8, 24, 12, 14, 15, 3000, utc),
				host: "192.0.2.1", source: "myproc", raw: "%% It's time to make the do-nuts.", fields: map[string]string{"procid": "8710"}}},
		{"rfc5424 example 3 (SD)", `<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] ` + "\xEF\xBB\xBF" + `An application event log entry...`,
			syslogWant{format: syslog.RFC5424, pri: 165, time: time.Date(2003, 10, 11, 22, 14, 15, 3e6, utc),
				host: "mymachine.example.com", source: "evntslog", raw: "An application event log entry...",
				fields: map[string]string{"msgid": "ID47", "sd.exampleSDID@32473.iut": "3", "sd.exampleSDID@32473.eventSource": "Application", "sd.exampleSDID@32473.eventID": "1011"}}},
		{"rfc5424 example 4 (two elements, no MSG)", `<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]`,
			syslogWant{format: syslog.RFC5424, pri: 165, time: time.Date(2003, 10, 11, 22, 14, 15, 3e6, utc),
				host: "mymachine.example.com", source: "evntslog",
				fields: map[string]string{"msgid": "ID47", "sd.exampleSDID@32473.iut": "3", "sd.exampleSDID@32473.eventSource": "Application",
					"sd.exampleSDID@32473.eventID": "1011", "sd.examplePriority@32473.class": "high"}}},
		{"rfc5424 SD escapes", `<13>1 2026-01-02T03:04:05+01:00 h app 1 - [x@1 q="a\"b" b="c\\d" r="e\]f" o="g\h"] m`,
			syslogWant{format: syslog.RFC5424, pri: 13, time: time.Date(2026, 1, 2, 2, 4, 5, 0, utc), host: "h", source: "app", raw: "m",
				fields: map[string]string{"procid": "1", "sd.x@1.q": `a"b`, "sd.x@1.b": `c\d`, "sd.x@1.r": "e]f", "sd.x@1.o": `g\h`}}},
		{"rfc5424 logger --sd-id", `<13>1 2026-11-23T09:00:00.123456+00:00 vm myapp 4242 LOGIN [timeQuality tzKnown="1" isSynced="1" syncAccuracy="123"][origin@32473 ip="10.1.2.3"] sd test`,
			syslogWant{format: syslog.RFC5424, pri: 13, time: time.Date(2026, 11, 23, 9, 0, 0, 123456000, utc), host: "vm", source: "myapp", raw: "sd test",
				fields: map[string]string{"procid": "4242", "msgid": "LOGIN", "sd.timeQuality.tzKnown": "1", "sd.timeQuality.isSynced": "1",
					"sd.timeQuality.syncAccuracy": "123", "sd.origin@32473.ip": "10.1.2.3"}}},
		// rsyslog reads STRUCTURED-DATA up to "] " (pmrfc5424); this test
		// message of rsyslog, syslog_loose and glossy has SP after '='.
		{"rfc5424 SP after '='", `<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource= "Application" eventID="1011"] ` + "\xEF\xBB\xBF" + `An application event log entry...`,
			syslogWant{format: syslog.RFC5424, pri: 165, time: time.Date(2003, 10, 11, 22, 14, 15, 3e6, utc),
				host: "mymachine.example.com", source: "evntslog", raw: "An application event log entry...",
				fields: map[string]string{"msgid": "ID47", "sd.exampleSDID@32473.iut": "3", "sd.exampleSDID@32473.eventSource": "Application", "sd.exampleSDID@32473.eventID": "1011"}}},
		{"rfc5424 SP after '=', two elements", `<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource= "Application" eventID="1011"][examplePriority@32473 class="high"]`,
			syslogWant{format: syslog.RFC5424, pri: 165, time: time.Date(2003, 10, 11, 22, 14, 15, 3e6, utc),
				host: "mymachine.example.com", source: "evntslog",
				fields: map[string]string{"msgid": "ID47", "sd.exampleSDID@32473.iut": "3", "sd.exampleSDID@32473.eventSource": "Application",
					"sd.exampleSDID@32473.eventID": "1011", "sd.examplePriority@32473.class": "high"}}},
		{"rfc5424 SP around '=', between parameters and before ']'", `<13>1 - h a - - [x@1  k = "v"  j="w" ][y ] m`,
			syslogWant{format: syslog.RFC5424, pri: 13, host: "h", source: "a", raw: "m",
				fields: map[string]string{"sd.x@1.k": "v", "sd.x@1.j": "w", "sd.y": ""}}},
		{"rfc5424 SP before a value without '=' is no SD", `<13>1 - h a - - [x@1 k "v"] m`,
			syslogWant{format: syslog.Lenient, pri: 13, host: "h", source: "a", raw: `[x@1 k "v"] m`}},
		{"rfc5424 element without params", `<14>1 - - - - - [meta] x`,
			syslogWant{format: syslog.RFC5424, pri: 14, raw: "x", fields: map[string]string{"sd.meta": ""}}},
		{"rfc5424 nil values", "<13>1 - - - - - - x", syslogWant{format: syslog.RFC5424, pri: 13, raw: "x"}},
		{"rfc5424 CRLF", "<13>1 - h a - - - hello\r\n", syslogWant{format: syslog.RFC5424, pri: 13, host: "h", source: "a", raw: "hello"}},
		{"rfc5424 version 2", "<13>2 - h a - - - v2", syslogWant{format: syslog.RFC5424, pri: 13, host: "h", source: "a", raw: "v2"}},
		{"rfc5424 year beyond int64 ns", "<13>1 2300-01-01T00:00:00Z h a - - - far",
			syslogWant{format: syslog.RFC5424, pri: 13, host: "h", source: "a", raw: "far", fields: map[string]string{"timestamp": "2300-01-01T00:00:00Z"}}},
		{"check point (non-standard SD kept in MSG)", `<134>1 2024-01-05T10:00:00Z gw-1 CheckPoint 12345 - [action:"Accept"; flags:"411908"; ifdir:"inbound"; src:"10.0.0.1"; dst:"8.8.8.8"]`,
			syslogWant{format: syslog.Lenient, pri: 134, time: time.Date(2024, 1, 5, 10, 0, 0, 0, utc), host: "gw-1", source: "CheckPoint",
				raw: `[action:"Accept"; flags:"411908"; ifdir:"inbound"; src:"10.0.0.1"; dst:"8.8.8.8"]`, fields: map[string]string{"procid": "12345"}}},
		{"non-standard SD, BOM after it", `<134>1 2024-01-05T10:00:00Z gw-1 CheckPoint 12345 - [action:"Accept"; src:"10.0.0.1"] ` + "\xEF\xBB\xBF" + "m",
			syslogWant{format: syslog.Lenient, pri: 134, time: time.Date(2024, 1, 5, 10, 0, 0, 0, utc), host: "gw-1", source: "CheckPoint",
				raw: `[action:"Accept"; src:"10.0.0.1"] m`, fields: map[string]string{"procid": "12345"}}},
		{"BOM glued to SD", `<13>1 - h a - - [x k="v"]` + "\xEF\xBB\xBF" + "m",
			syslogWant{format: syslog.Lenient, pri: 13, host: "h", source: "a", raw: `[x k="v"]m`, fields: map[string]string{"sd.x.k": "v"}}},
		{"BOM where SD belongs", "<13>1 - h a - - \xEF\xBB\xBFm",
			syslogWant{format: syslog.Lenient, pri: 13, host: "h", source: "a", raw: "m"}},
		{"rfc3164 BOM", "<34>Oct 11 22:14:15 mymachine su: \xEF\xBB\xBF'su root' failed",
			syslogWant{format: syslog.RFC3164, pri: 34, time: time.Date(2026, 10, 11, 22, 14, 15, 0, utc), host: "mymachine", source: "su",
				raw: "'su root' failed"}},
		{"no PRI, BOM", "\xEF\xBB\xBFplain text", syslogWant{format: syslog.Lenient, pri: -1, raw: "plain text"}},
		{"rfc5424 unterminated SD", `<13>1 - h a - - [x@1 k="v" m`,
			syslogWant{format: syslog.Lenient, pri: 13, host: "h", source: "a", raw: `[x@1 k="v" m`}},
		{"rfc5424 bad date falls back to lenient", "<13>1 2003-02-30T00:00:00Z h a - - - m",
			syslogWant{format: syslog.Lenient, pri: 13, raw: "1 2003-02-30T00:00:00Z h a - - - m"}},

		// RFC 3164 section 5.4.
		{"rfc3164 example 1", "<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8",
			syslogWant{format: syslog.RFC3164, pri: 34, time: time.Date(2026, 10, 11, 22, 14, 15, 0, utc), host: "mymachine", source: "su",
				raw: "'su root' failed for lonvick on /dev/pts/8"}},
		{"rfc3164 example 2 (no tag)", "<13>Feb  5 17:32:18 10.0.0.99 Use the BFG!",
			syslogWant{format: syslog.RFC3164, pri: 13, time: time.Date(2026, 2, 5, 17, 32, 18, 0, utc), host: "10.0.0.99", raw: "Use the BFG!"}},
		{"rfc3164 example 4 (relayed, no timestamp)", "<0>1990 Oct 22 10:52:01 TZ-6 scapegoat.dmz.example.org 10.1.2.3 sched[0]: That's All Folks!",
			syslogWant{format: syslog.Lenient, pri: 0, raw: "1990 Oct 22 10:52:01 TZ-6 scapegoat.dmz.example.org 10.1.2.3 sched[0]: That's All Folks!"}},
		{"rfc3164 pid", "<38>Nov 22 02:11:09 host-12 sshd[2211]: Accepted publickey",
			syslogWant{format: syslog.RFC3164, pri: 38, time: time.Date(2026, 11, 22, 2, 11, 9, 0, utc), host: "host-12", source: "sshd",
				raw: "Accepted publickey", fields: map[string]string{"procid": "2211"}}},
		{"rfc3164 December read in January is last year", "<38>Dec 31 23:59:59 h t: m",
			syslogWant{format: syslog.RFC3164, pri: 38, time: time.Date(2025, 12, 31, 23, 59, 59, 0, utc), host: "h", source: "t", raw: "m"}},

		// rsyslog and syslog-ng BSD variants.
		{"upper-case month", "<38>AUG 10 22:18:24 host tag: test message",
			syslogWant{format: syslog.RFC3164, pri: 38, time: time.Date(2026, 8, 10, 22, 18, 24, 0, utc), host: "host", source: "tag", raw: "test message"}},
		{"year after the day", "<38>Mar 7 2008 19:06:53 example tag: testmessage",
			syslogWant{format: syslog.RFC3164, pri: 38, time: time.Date(2008, 3, 7, 19, 6, 53, 0, utc), host: "example", source: "tag", raw: "testmessage"}},
		{"year after the time", "<38>Mar  7 19:06:53 2008 example tag: testmessage",
			syslogWant{format: syslog.RFC3164, pri: 38, time: time.Date(2008, 3, 7, 19, 6, 53, 0, utc), host: "example", source: "tag", raw: "testmessage"}},
		{"colon after the time", "<38>Mar 7 19:06:53: example tag: testmessage",
			syslogWant{format: syslog.RFC3164, pri: 38, time: time.Date(2026, 3, 7, 19, 6, 53, 0, utc), host: "example", source: "tag", raw: "testmessage"}},
		{"space after PRI", "<167> Mar  7 19:06:53 example tag: testmessage",
			syslogWant{format: syslog.RFC3164, pri: 167, time: time.Date(2026, 3, 7, 19, 6, 53, 0, utc), host: "example", source: "tag", raw: "testmessage"}},
		{"no hostname (local socket)", "<13>Oct 11 22:14:15 su: hi",
			syslogWant{format: syslog.RFC3164, pri: 13, time: time.Date(2026, 10, 11, 22, 14, 15, 0, utc), source: "su", raw: "hi"}},
		{"loggen default (ISO without zone)", "<38>2026-11-22T01:39:01 localhost prog[123]: seq: 0000000000, thread: 0000, runid: 1",
			syslogWant{format: syslog.Lenient, pri: 38, time: time.Date(2026, 11, 22, 1, 39, 1, 0, utc), host: "localhost", source: "prog",
				raw: "seq: 0000000000, thread: 0000, runid: 1", fields: map[string]string{"procid": "123"}}},
		{"ISO with offset and fraction", "<38>2026-11-22T01:39:01.5+01:00 host app: m",
			syslogWant{format: syslog.Lenient, pri: 38, time: time.Date(2026, 11, 22, 0, 39, 1, 5e8, utc), host: "host", source: "app", raw: "m"}},
		{"no PRI", "plain text line", syslogWant{format: syslog.Lenient, pri: -1, raw: "plain text line"}},
		{"no PRI with tag", "sshd[99]: Accepted key", syslogWant{format: syslog.Lenient, pri: -1, source: "sshd", raw: "Accepted key", fields: map[string]string{"procid": "99"}}},
		{"no PRI, BSD header", "Oct 11 22:14:15 mymachine su: x",
			syslogWant{format: syslog.RFC3164, pri: -1, time: time.Date(2026, 10, 11, 22, 14, 15, 0, utc), host: "mymachine", source: "su", raw: "x"}},

		// Vendor samples.
		{"cisco asa", "<166>Jan 05 2024 10:00:00: %ASA-6-302013: Built outbound TCP connection 123 for outside:10.0.0.1/443 (10.0.0.1/443) to inside:192.168.1.2/5000 (192.168.1.2/5000)",
			syslogWant{format: syslog.RFC3164, pri: 166, time: time.Date(2024, 1, 5, 10, 0, 0, 0, utc), source: "ASA",
				raw:    "Built outbound TCP connection 123 for outside:10.0.0.1/443 (10.0.0.1/443) to inside:192.168.1.2/5000 (192.168.1.2/5000)",
				fields: map[string]string{"msgid": "ASA-6-302013"}}},
		{"cisco asa device-id", "<166>Jan 05 2024 10:00:00 asa-fw01 : %ASA-4-106023: Deny tcp src outside:10.0.0.1/5000 dst inside:10.0.0.2/22",
			syslogWant{format: syslog.RFC3164, pri: 166, time: time.Date(2024, 1, 5, 10, 0, 0, 0, utc), host: "asa-fw01", source: "ASA",
				raw: "Deny tcp src outside:10.0.0.1/5000 dst inside:10.0.0.2/22", fields: map[string]string{"msgid": "ASA-4-106023"}}},
		{"cisco asa without timestamp", "<166>%ASA-6-302013: Built outbound TCP connection",
			syslogWant{format: syslog.Lenient, pri: 166, source: "ASA", raw: "Built outbound TCP connection", fields: map[string]string{"msgid": "ASA-6-302013"}}},
		{"cisco ios sequence, msec, unsynced", "<189>52: *Mar  1 18:46:11.123: %LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to up",
			syslogWant{format: syslog.RFC3164, pri: 189, time: time.Date(2026, 3, 1, 18, 46, 11, 123e6, utc), source: "LINK",
				raw: "Interface GigabitEthernet0/1, changed state to up", fields: map[string]string{"sequence": "52", "msgid": "LINK-3-UPDOWN"}}},
		{"cisco ios UTC", "<189>53: Nov 22 12:00:01.5 UTC: %SYS-5-CONFIG_I: Configured from console",
			syslogWant{format: syslog.RFC3164, pri: 189, time: time.Date(2026, 11, 22, 12, 0, 1, 5e8, utc), source: "SYS",
				raw: "Configured from console", fields: map[string]string{"sequence": "53", "msgid": "SYS-5-CONFIG_I"}}},
		{"digits that are no sequence number", "<13>404: not found", syslogWant{format: syslog.Lenient, pri: 13, source: "404", raw: "not found"}},
		{"fortigate", `<189>date=2024-01-05 time=10:00:00 devname="FGT60E" devid="FGT60E0000000001" logid="0000000013" type="traffic" subtype="forward" level="notice" srcip=10.0.0.1 dstip=8.8.8.8 action="accept"`,
			syslogWant{format: syslog.Lenient, pri: 189,
				raw: `date=2024-01-05 time=10:00:00 devname="FGT60E" devid="FGT60E0000000001" logid="0000000013" type="traffic" subtype="forward" level="notice" srcip=10.0.0.1 dstip=8.8.8.8 action="accept"`}},
		{"palo alto", "<14>Jan  5 10:00:00 PA-VM 1,2024/01/05 10:00:00,012801096514,TRAFFIC,end,2561,2024/01/05 10:00:00,10.0.0.1,8.8.8.8",
			syslogWant{format: syslog.RFC3164, pri: 14, time: time.Date(2026, 1, 5, 10, 0, 0, 0, utc), host: "PA-VM",
				raw: "1,2024/01/05 10:00:00,012801096514,TRAFFIC,end,2561,2024/01/05 10:00:00,10.0.0.1,8.8.8.8"}},

		// Unparsable input.
		{"bad PRI", "<999>x", syslogWant{format: syslog.Unparsed, pri: -1, raw: "<999>x"}},
		{"unclosed PRI", "<13 x", syslogWant{format: syslog.Unparsed, pri: -1, raw: "<13 x"}},
		{"leading zero PRI", "<013>x", syslogWant{format: syslog.Unparsed, pri: -1, raw: "<013>x"}},
		{"empty", "", syslogWant{format: syslog.Unparsed, pri: -1}},
		{"invalid UTF-8", "<13>bad \xff\xfe bytes", syslogWant{format: syslog.Unparsed, pri: -1, raw: "<13>bad \xff\xfe bytes"}},
		{"control bytes", "\x01\x02\x03garbage", syslogWant{format: syslog.Unparsed, pri: -1, raw: "\x01\x02\x03garbage"}},
	}
	p := syslog.NewParser(syslog.Config{Location: time.UTC, RequireText: true})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := relaykit.Event{ReceiveTime: ref.UnixNano()}
			if tt.name == "rfc3164 December read in January is last year" {
				ev.ReceiveTime = time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC).UnixNano()
			}
			got := p.Parse(&ev, []byte(tt.in))
			checkSyslog(t, tt.want, &ev, got)
			assert.Equal(t, "syslog", string(ev.SourceType))
		})
	}
}

// Timestamps without zone are read in the configured Location, and the year
// comes from Now when the event has no receive time.
func TestParserLocation(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	p := syslog.NewParser(syslog.Config{Location: berlin, Clock: clock.NewFake(ref)})
	for _, tt := range []struct {
		in   string
		want time.Time
	}{
		{"<13>Jul  1 12:00:00 h t: m", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)}, // CEST
		{"<13>Jan  1 12:00:00 h t: m", time.Date(2026, 1, 1, 11, 0, 0, 0, time.UTC)}, // CET
		{"<13>2026-07-01T12:00:00 h t: m", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)},
		{"<13>2026-07-01T12:00:00.25 h t: m", time.Date(2026, 7, 1, 10, 0, 0, 25e7, time.UTC)},
		{"<13>2026-07-01T12:00:00Z h t: m", time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)},
	} {
		var ev relaykit.Event
		p.Parse(&ev, []byte(tt.in))
		assert.Equal(t, tt.want.UnixNano(), ev.Time, tt.in)
	}
}

// Parse keeps what the caller set (SourceType, Index, ReceiveTime, fields,
// FlagTruncated) and replaces what it parsed.
func TestParserKeepsCallerMetadata(t *testing.T) {
	p := syslog.NewParser(syslog.Config{Location: time.UTC})
	ev := relaykit.Event{ReceiveTime: 42, Flags: relaykit.FlagTruncated | relaykit.FlagParseError}
	ev.SourceType = append(ev.SourceType, "fw"...)
	ev.Index = append(ev.Index, "net"...)
	ev.SetFieldString("input", "udp")
	ev.Host = append(ev.Host, "old"...)
	p.Parse(&ev, []byte("<13>1 - h a 7 - - m"))
	assert.Equal(t, "fw", string(ev.SourceType))
	assert.Equal(t, "net", string(ev.Index))
	assert.Equal(t, int64(42), ev.ReceiveTime)
	assert.Equal(t, "h", string(ev.Host))
	assert.Equal(t, relaykit.FlagTruncated|relaykit.FlagPriority, ev.Flags)
	// An assumed priority does not outlive the message that had no PRI.
	p.Parse(&ev, []byte("no PRI"))
	assert.Equal(t, relaykit.FlagTruncated|relaykit.FlagPriority|relaykit.FlagPriorityAssumed, ev.Flags)
	assert.Equal(t, uint8(13), ev.Priority)
	p.Parse(&ev, []byte("<34>Oct 11 22:14:15 h su: x"))
	assert.Equal(t, relaykit.FlagTruncated|relaykit.FlagPriority, ev.Flags)
	assert.Equal(t, uint8(34), ev.Priority)
	v, _ := ev.Field("input")
	assert.Equal(t, "udp", string(v))
	v, _ = ev.Field("procid")
	assert.Equal(t, "7", string(v))
}

// A hostile message with thousands of SD parameters keeps its header and
// loses nothing: past the field cap the SD text stays in Raw.
func TestParserSDCap(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("<13>1 - h a - - [x@1")
	for i := range 300 {
		b.WriteString(` k`)
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(string(rune('a' + i/26)))
		b.WriteString(`="v"`)
	}
	b.WriteString("] msg")
	p := syslog.NewParser(syslog.Config{Location: time.UTC})
	var ev relaykit.Event
	got := p.Parse(&ev, b.Bytes())
	assert.Equal(t, syslog.Lenient, got)
	assert.Equal(t, "h", string(ev.Host))
	assert.Empty(t, ev.Fields)
	assert.True(t, bytes.HasPrefix(ev.Raw, []byte("[x@1 kaa=")))
	assert.True(t, bytes.HasSuffix(ev.Raw, []byte("] msg")))
}

func TestSyslogFormatString(t *testing.T) {
	assert.Equal(t, "rfc5424", syslog.RFC5424.String())
	assert.Equal(t, "rfc3164", syslog.RFC3164.String())
	assert.Equal(t, "lenient", syslog.Lenient.String())
	assert.Equal(t, "unparsed", syslog.Unparsed.String())
	assert.Equal(t, "unknown", syslog.Format(9).String())
}

// FuzzParser: any input gives an event, never a panic; a parse error
// keeps the input whole; the message is a substring of the input but for
// BOMs removed, and never starts with a BOM; the event is reusable.
func FuzzParser(f *testing.F) {
	for _, s := range []string{
		"<38>2026-11-22T01:39:01 host prog[123]: msg", "<13>1 - - - - - - x", "<34>Oct 11 22:14:15 h su: m",
		"<166>%ASA-6-302013: B", "<166>Nov 22 2026 01:39:01: %ASA-6-1: x", "*Mar  1 18:46:11.123: %LINK-3-UPDOWN: x",
		"<1>", "<", "<191>1 ", "\xff", "<13>Jan  1 00:00:00.123456789012 h: x", `<13>1 - h a - - [x@1 k="a\]b"][y] m`,
		"<13>1 2003-10-11T22:14:15.003Z h a - - - \xEF\xBB\xBFm", "<189>52: *Mar  1 18:46:11.123 UTC: %X-1-Y: z",
		"<134>1 - h a - - - CEF:0|V|P|1|id|n|5|src=1.2.3.4 msg=a b",
		`<13>1 - h a - - [x@1  k = "v"  j="w" ][y ] m`, "<13>1 - h a - - [a:\"b\"] \xEF\xBB\xBF\xEF\xBB\xBFm",
		"\xEF\xBB\xBF<13>Oct 11 22:14:15 h su: \xEF\xBB\xBFm",
	} {
		f.Add([]byte(s))
	}
	p := syslog.NewParser(syslog.Config{Location: time.UTC, CEF: true})
	var ev relaykit.Event
	f.Fuzz(func(t *testing.T, in []byte) {
		ev.Reset()
		ev.ReceiveTime = ref.UnixNano()
		got := p.Parse(&ev, in)
		trimmed := bytes.TrimRight(in, "\r\n")
		if got == syslog.Unparsed {
			if !bytes.Equal(ev.Raw, trimmed) || ev.Flags&relaykit.FlagParseError == 0 {
				t.Fatalf("unparsed event %q lost input %q", ev.Raw, in)
			}
			return
		}
		noBOM := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\xEF\xBB\xBF"), nil) }
		if !bytes.Contains(noBOM(trimmed), noBOM(ev.Raw)) {
			t.Fatalf("message %q not in input %q", ev.Raw, in)
		}
		if bytes.HasPrefix(ev.Raw, []byte("\xEF\xBB\xBF")) {
			t.Fatalf("message %q starts with a BOM", ev.Raw)
		}
		for _, f := range ev.Fields {
			if len(f.Key) == 0 {
				t.Fatalf("empty field name in %q", in)
			}
		}
	})
}

// Sample messages for allocation tests and benchmarks.
var (
	// sample5424 is a 200-byte RFC 5424 message with STRUCTURED-DATA.
	sample5424 = []byte(`<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog 1234 ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] ` + "\xEF\xBB\xBF" + `An application event log entry with some texts, padded.`)
	sample3164 = []byte(`<38>Nov 22 02:11:09 host-12 sshd[2211]: Accepted publickey for deploy from 198.51.100.4 port 40022 ssh2: RSA SHA256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08`)
	sampleISO  = []byte(`<38>2026-11-22T01:39:01 localhost prog[123]: seq: 0000000042, thread: 0000, runid: 1763775541, stamp: 2026-11-22T01:39:01 PADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADD`)
	sampleCEF  = []byte(`<134>Jan  5 10:00:00 fw01 CEF:0|Palo Alto Networks|PAN-OS|10.1.0|end|TRAFFIC|1|rt=Jan 05 2024 10:00:00 GMT src=10.0.0.1 dst=8.8.8.8 spt=5000 dpt=53 proto=udp act=allow cs1Label=Rule cs1=allow-out suser=alice`)
)

// Once the event is warm, parsing allocates nothing on any path.
func TestParserAllocs(t *testing.T) {
	skipIfRace(t)
	require.Len(t, sample5424, 200)
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	for _, loc := range []*time.Location{time.UTC, berlin} {
		p := syslog.NewParser(syslog.Config{Location: loc, RequireText: true, CEF: true})
		for _, in := range [][]byte{sample5424, sample3164, sampleISO, sampleCEF, []byte("<999>bad"), []byte("<189>52: *Mar  1 18:46:11.123: %LINK-3-UPDOWN: x")} {
			ev := relaykit.Event{ReceiveTime: ref.UnixNano()}
			p.Parse(&ev, in)
			allocs := testing.AllocsPerRun(100, func() {
				ev.Reset()
				ev.ReceiveTime = ref.UnixNano()
				p.Parse(&ev, in)
			})
			assert.Zero(t, allocs, "%s in %s", in, loc)
		}
	}
	var ev relaykit.Event
	fn := syslog.ParseCEF()
	ev.Raw = append(ev.Raw, sampleCEF[26:]...)
	_, err = fn.Apply(&ev)
	require.NoError(t, err)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		ev.Fields = ev.Fields[:0]
		_, _ = fn.Apply(&ev)
	}), "parse_cef")
}

// The word-at-a-time control byte test agrees with a byte loop for every
// byte value at every position.
func TestHasControl(t *testing.T) {
	for c := range 256 {
		for pos := range 20 {
			b := bytes.Repeat([]byte{'a'}, 20)
			b[pos] = byte(c)
			want := c < 0x20 && c != '\t' || c == 0x7f
			if got := syslog.HasControl(b); got != want {
				t.Fatalf("byte %#x at %d: got %t", c, pos, got)
			}
			if got, want := syslog.IsText(b), !want && utf8.Valid(b); got != want {
				t.Fatalf("IsText: byte %#x at %d: got %t", c, pos, got)
			}
			// A multi-byte rune before the byte moves the check to the slow path.
			m := append([]byte("é"), b...)
			if got, want := syslog.IsText(m), utf8.Valid(m) && !syslog.HasControl(m); got != want {
				t.Fatalf("IsText after a rune: byte %#x at %d: got %t", c, pos, got)
			}
		}
	}
}

// FuzzIsText: the word-at-a-time text check agrees with utf8.Valid and a
// byte loop.
func FuzzIsText(f *testing.F) {
	f.Add([]byte("plain ascii text that is longer than sixteen bytes\t"))
	f.Add([]byte("é\x7f"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := syslog.IsText(b), utf8.Valid(b) && !syslog.HasControl(b); got != want {
			t.Fatalf("%q: got %t", b, got)
		}
	})
}
