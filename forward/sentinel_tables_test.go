package forward_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
)

// Events are built with the fields the pipeline package's syslog and CEF
// parsers produce: Host = HOSTNAME, Source = APP-NAME or tag, Priority,
// Time, Raw = MSG, fields procid, msgid, sd.<ID>.<PARAM>; for CEF the
// header as cef.* and the extension keys as they are.

func mustTime(t testing.TB, s string) int64 {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	return ts.UnixNano()
}

// syslogEv builds a syslog event; pri < 0 means no PRI.
func syslogEv(t testing.TB, pri int, ts, host, app, procid, msgid, msg string, sd ...string) relaykit.Event {
	t.Helper()
	var e relaykit.Event
	if pri >= 0 {
		e.SetPriority(uint8(pri>>3), uint8(pri&7))
	}
	if ts != "" {
		e.Time = mustTime(t, ts)
	}
	e.ReceiveTime = mustTime(t, "2026-11-23T09:00:00Z")
	e.Host, e.Source, e.SourceType, e.Raw = []byte(host), []byte(app), []byte("syslog"), []byte(msg)
	if procid != "" {
		e.SetFieldString("procid", procid)
	}
	if msgid != "" {
		e.SetFieldString("msgid", msgid)
	}
	for i := 0; i+1 < len(sd); i += 2 {
		e.SetFieldString(sd[i], sd[i+1])
	}
	return e
}

// cefEv builds a CEF event from the seven header fields (version first)
// and extension key/value pairs.
func cefEv(t testing.TB, pri int, ts, host, raw string, header [7]string, ext ...string) relaykit.Event {
	t.Helper()
	e := syslogEv(t, pri, ts, host, "", "", "", raw)
	e.SourceType = []byte("cef")
	for i, k := range []string{"cef.version", "cef.device_vendor", "cef.device_product", "cef.device_version",
		"cef.device_event_class_id", "cef.name", "cef.severity"} {
		e.SetFieldString(k, header[i])
	}
	for i := 0; i+1 < len(ext); i += 2 {
		e.Fields = append(e.Fields, relaykit.Field{Key: []byte(ext[i]), Value: []byte(ext[i+1])})
	}
	return e
}

// tableSink returns a Sentinel sink for table whose rows go to AppendEvent
// only (no server), with cfg adjusted by mod.
func tableSink(t *testing.T, table forward.SentinelTable, mod func(*forward.SentinelConfig)) *forward.Sentinel {
	t.Helper()
	cfg := forward.SentinelConfig{
		Endpoint: "https://dce.example.com", DCRImmutableID: "dcr-00000000000000000000000000000001",
		Table: table, TokenSource: forward.StaticToken("t"),
	}
	if mod != nil {
		mod(&cfg)
	}
	s, err := forward.NewSentinel(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// decodeRow decodes one row, numbers as json.Number.
func decodeRow(t *testing.T, b []byte) map[string]any {
	t.Helper()
	require.True(t, json.Valid(b), "%s", b)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var row map[string]any
	require.NoError(t, dec.Decode(&row))
	return row
}

// checkSchema asserts that row holds only columns of table (plus extra),
// with values of their types: the same rules as the DCR server, written
// out again so that the test does not trust either side alone.
func checkSchema(t *testing.T, table string, extra map[string]string, row map[string]any) {
	t.Helper()
	schema := forwardtest.TableColumns(table)
	for k, v := range extra {
		schema[k] = v
	}
	require.NotEmpty(t, schema)
	for col, v := range row {
		typ, ok := schema[col]
		if !assert.True(t, ok, "column %q is not in %s", col, table) {
			continue
		}
		switch typ {
		case forwardtest.TypeString:
			assert.IsType(t, "", v, col)
		case forwardtest.TypeDatetime:
			s, _ := v.(string)
			_, err := time.Parse(time.RFC3339Nano, s)
			assert.NoError(t, err, col)
		case forwardtest.TypeInt, forwardtest.TypeLong:
			n, ok := v.(json.Number)
			require.True(t, ok, "%s: %v", col, v)
			i, err := n.Int64()
			require.NoError(t, err, col)
			if typ == forwardtest.TypeInt {
				assert.True(t, i >= math.MinInt32 && i <= math.MaxInt32, "%s: %d", col, i)
			}
		case forwardtest.TypeReal:
			n, ok := v.(json.Number)
			require.True(t, ok, "%s: %v", col, v)
			_, err := n.Float64()
			assert.NoError(t, err, col)
		}
	}
	assert.Contains(t, row, "TimeGenerated")
}

func TestSentinelSyslogTable(t *testing.T) {
	tests := []struct {
		name string
		ev   relaykit.Event
		want map[string]any
	}{{
		// RFC 5424 section 6.5, example 1.
		name: "RFC 5424 example 1",
		ev:   syslogEv(t, 34, "2003-10-11T22:14:15.003Z", "mymachine.example.com", "su", "", "ID47", "'su root' failed for lonvick on /dev/pts/8"),
		want: map[string]any{
			"TimeGenerated": "2003-10-11T22:14:15.0030000Z", "EventTime": "2003-10-11T22:14:15.0030000Z",
			"Computer": "mymachine.example.com", "HostName": "mymachine.example.com",
			"Facility": "auth", "SeverityLevel": "crit", "ProcessName": "su",
			"SyslogMessage": "'su root' failed for lonvick on /dev/pts/8",
		},
	}, {
		// RFC 5424 section 6.5, example 2: an IP address as HOSTNAME, a PROCID.
		name: "RFC 5424 example 2",
		ev:   syslogEv(t, 165, "2003-08-24T05:14:15.000003-07:00", "192.0.2.1", "myproc", "8710", "", "%% It's time to make the do-nuts."),
		want: map[string]any{
			"TimeGenerated": "2003-08-24T12:14:15.0000030Z", "EventTime": "2003-08-24T12:14:15.0000030Z",
			"Computer": "192.0.2.1", "HostName": "192.0.2.1", "HostIP": "192.0.2.1",
			"Facility": "local4", "SeverityLevel": "notice", "ProcessName": "myproc", "ProcessID": json.Number("8710"),
			"SyslogMessage": "%% It's time to make the do-nuts.",
		},
	}, {
		// RFC 5424 section 6.5, example 3: structured data, which the
		// Syslog table has no column for.
		name: "RFC 5424 example 3",
		ev: syslogEv(t, 165, "2003-10-11T22:14:15.003Z", "mymachine.example.com", "evntslog", "", "ID47", "An application event log entry...",
			"sd.exampleSDID@32473.iut", "3", "sd.exampleSDID@32473.eventSource", "Application", "sd.exampleSDID@32473.eventID", "1011"),
		want: map[string]any{
			"TimeGenerated": "2003-10-11T22:14:15.0030000Z", "EventTime": "2003-10-11T22:14:15.0030000Z",
			"Computer": "mymachine.example.com", "HostName": "mymachine.example.com",
			"Facility": "local4", "SeverityLevel": "notice", "ProcessName": "evntslog",
			"SyslogMessage": "An application event log entry...",
		},
	}, {
		// Cisco ASA message 302013 (Cisco ASA Series Syslog Messages),
		// RFC 3164 with the message ID as tag, facility local4.
		name: "Cisco ASA 302013",
		ev: syslogEv(t, 166, "2026-01-05T14:23:45Z", "FW-EDGE-01", "%ASA-6-302013", "", "",
			"Built outbound TCP connection 1234 for outside:198.51.100.10/443 (198.51.100.10/443) to inside:10.0.0.5/51515 (10.0.0.5/51515)"),
		want: map[string]any{
			"TimeGenerated": "2026-01-05T14:23:45.0000000Z", "EventTime": "2026-01-05T14:23:45.0000000Z",
			"Computer": "FW-EDGE-01", "HostName": "FW-EDGE-01",
			"Facility": "local4", "SeverityLevel": "info", "ProcessName": "%ASA-6-302013",
			"SyslogMessage": "Built outbound TCP connection 1234 for outside:198.51.100.10/443 (198.51.100.10/443) to inside:10.0.0.5/51515 (10.0.0.5/51515)",
		},
	}, {
		// sshd through logger: authpriv, an IPv6 peer as host.
		name: "sshd authpriv IPv6 host",
		ev:   syslogEv(t, 86, "2026-11-23T08:59:59.5+01:00", "2001:db8::7", "sshd", "4242", "", "Failed password for root from 203.0.113.9 port 2222 ssh2"),
		want: map[string]any{
			"TimeGenerated": "2026-11-23T07:59:59.5000000Z", "EventTime": "2026-11-23T07:59:59.5000000Z",
			"Computer": "2001:db8::7", "HostName": "2001:db8::7", "HostIP": "2001:db8::7",
			"Facility": "authpriv", "SeverityLevel": "info", "ProcessName": "sshd", "ProcessID": json.Number("4242"),
			"SyslogMessage": "Failed password for root from 203.0.113.9 port 2222 ssh2",
		},
	}, {
		// No PRI, no timestamp, a PROCID that is not a number: TimeGenerated
		// is the receive time; no Facility, SeverityLevel, EventTime or
		// ProcessID.
		name: "no PRI, no time",
		ev:   syslogEv(t, -1, "", "", "", "worker-3", "", "plain line"),
		want: map[string]any{"TimeGenerated": "2026-11-23T09:00:00.0000000Z", "SyslogMessage": "plain line"},
	}, {
		name: "PROCID beyond int",
		ev:   syslogEv(t, 13, "2026-11-23T09:00:00Z", "h", "app", "4294967296", "", "x"),
		want: map[string]any{
			"TimeGenerated": "2026-11-23T09:00:00.0000000Z", "EventTime": "2026-11-23T09:00:00.0000000Z",
			"Computer": "h", "HostName": "h", "Facility": "user", "SeverityLevel": "notice", "ProcessName": "app", "SyslogMessage": "x",
		},
	}}
	s := tableSink(t, forward.SentinelSyslog, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := decodeRow(t, s.AppendEvent(nil, &tt.ev))
			assert.Equal(t, tt.want, row)
			checkSchema(t, "Syslog", nil, row)
		})
	}
}

func TestSentinelSyslogTableCustomColumns(t *testing.T) {
	s := tableSink(t, forward.SentinelSyslog, func(c *forward.SentinelConfig) {
		c.CollectorHostName = "relay-1"
		c.Fields = []forward.SentinelField{{Field: "msgid", Column: "MsgID_CF"}, {Field: "sd.origin@32473.ip", Column: "OriginIP_CF"}}
	})
	e := syslogEv(t, 13, "2026-11-23T09:00:00Z", "vm", "myapp", "", "LOGIN", "sd test", "sd.origin@32473.ip", "10.1.2.3")
	row := decodeRow(t, s.AppendEvent(nil, &e))
	assert.Equal(t, "relay-1", row["CollectorHostName"])
	assert.Equal(t, "LOGIN", row["MsgID_CF"])
	assert.Equal(t, "10.1.2.3", row["OriginIP_CF"])
	checkSchema(t, "Syslog", map[string]string{"MsgID_CF": "string", "OriginIP_CF": "string"}, row)
}

// Vendor samples, from the vendors' documentation: FortiOS Log Message
// Reference "Traffic log support for CEF" (6.0), the Palo Alto Networks
// PAN-OS CEF traffic and threat formats, Check Point Log Exporter's CEF
// mapping (sk122323, header "Check Point|VPN-1 & FireWall-1|Check
// Point|Log|https|Unknown").
func TestSentinelCommonSecurityLogTable(t *testing.T) {
	type check struct {
		cols  map[string]any // columns and their values (others may exist)
		extra string         // AdditionalExtensions, "" for none
	}
	tests := []struct {
		name string
		ev   relaykit.Event
		want check
	}{{
		name: "FortiGate traffic forward close",
		ev: cefEv(t, 189, "2018-12-27T11:07:55Z", "FGT-A-LOG", "CEF:0|Fortinet|Fortigate|v6.0.3|00013|traffic:forward close|3|...",
			[7]string{"0", "Fortinet", "Fortigate", "v6.0.3", "00013", "traffic:forward close", "3"},
			"deviceExternalId", "FGT5HD3915800610", "FTNTFGTlogid", "0000000013", "cat", "traffic:forward",
			"FTNTFGTsubtype", "forward", "FTNTFGTlevel", "notice", "FTNTFGTvd", "vdom1", "FTNTFGTeventtime", "1545937675",
			"src", "10.1.100.11", "spt", "54190", "deviceInboundInterface", "port12", "FTNTFGTsrcintfrole", "undefined",
			"dst", "52.53.140.235", "dpt", "443", "deviceOutboundInterface", "port11", "FTNTFGTdstintfrole", "undefined",
			"FTNTFGTpoluuid", "c2d460aa-fe6f-51e8-9505-41b5117dfdd4", "externalId", "402", "proto", "6", "act", "close",
			"FTNTFGTpolicyid", "1", "FTNTFGTpolicytype", "policy", "app", "HTTPS", "FTNTFGTdstcountry", "United States",
			"FTNTFGTsrccountry", "Reserved", "FTNTFGTtrandisp", "snat", "sourceTranslatedAddress", "172.16.200.1",
			"sourceTranslatedPort", "54190", "FTNTFGTappid", "40568", "FTNTFGTapp", "HTTPS.BROWSER",
			"FTNTFGTappcat", "Web.Client", "FTNTFGTapprisk", "medium", "FTNTFGTapplist", "g-default",
			"FTNTFGTduration", "2", "out", "3652", "in", "146668", "FTNTFGTsentpkt", "58", "FTNTFGTrcvdpkt", "105",
			"FTNTFGTutmaction", "allow", "FTNTFGTcountapp", "2"),
		want: check{
			cols: map[string]any{
				"TimeGenerated": "2018-12-27T11:07:55.0000000Z", "Computer": "FGT-A-LOG",
				"DeviceVendor": "Fortinet", "DeviceProduct": "Fortigate", "DeviceVersion": "v6.0.3",
				"DeviceEventClassID": "00013", "Activity": "traffic:forward close", "LogSeverity": "3",
				"DeviceExternalID": "FGT5HD3915800610", "DeviceEventCategory": "traffic:forward",
				"SourceIP": "10.1.100.11", "SourcePort": json.Number("54190"), "DeviceInboundInterface": "port12",
				"DestinationIP": "52.53.140.235", "DestinationPort": json.Number("443"), "DeviceOutboundInterface": "port11",
				"ExtID": "402", "Protocol": "6", "DeviceAction": "close", "ApplicationProtocol": "HTTPS",
				"SourceTranslatedAddress": "172.16.200.1", "SourceTranslatedPort": json.Number("54190"),
				"SentBytes": json.Number("3652"), "ReceivedBytes": json.Number("146668"),
			},
			extra: "FTNTFGTlogid=0000000013;FTNTFGTsubtype=forward;FTNTFGTlevel=notice;FTNTFGTvd=vdom1;" +
				"FTNTFGTeventtime=1545937675;FTNTFGTsrcintfrole=undefined;FTNTFGTdstintfrole=undefined;" +
				"FTNTFGTpoluuid=c2d460aa-fe6f-51e8-9505-41b5117dfdd4;FTNTFGTpolicyid=1;FTNTFGTpolicytype=policy;" +
				"FTNTFGTdstcountry=United States;FTNTFGTsrccountry=Reserved;FTNTFGTtrandisp=snat;FTNTFGTappid=40568;" +
				"FTNTFGTapp=HTTPS.BROWSER;FTNTFGTappcat=Web.Client;FTNTFGTapprisk=medium;FTNTFGTapplist=g-default;" +
				"FTNTFGTduration=2;FTNTFGTsentpkt=58;FTNTFGTrcvdpkt=105;FTNTFGTutmaction=allow;FTNTFGTcountapp=2",
		},
	}, {
		name: "FortiGate 5.6 with custom numbers",
		ev: cefEv(t, 189, "2016-02-12T11:11:30Z", "syslog-800c", "CEF:0|...",
			[7]string{"0", "Fortinet", "Fortigate", "v5.6.0", "00013", "traffic:forward close", "3"},
			"src", "192.168.1.183", "shost", "192.168.1.183", "spt", "45719", "dst", "192.168.70.184", "dhost", "192.168.70.184",
			"dpt", "80", "cs5", "10", "cs5Label", "Policy Id", "cn1", "7", "cn1Label", "Duration",
			"cn2", "5", "cn2Label", "Packets Sent", "cn3", "5", "cn3Label", "Packets Received"),
		want: check{cols: map[string]any{
			"SourceHostName": "192.168.1.183", "DestinationHostName": "192.168.70.184",
			"DeviceCustomString5": "10", "DeviceCustomString5Label": "Policy Id",
			"FieldDeviceCustomNumber1": json.Number("7"), "DeviceCustomNumber1Label": "Duration",
			"FieldDeviceCustomNumber2": json.Number("5"), "DeviceCustomNumber2Label": "Packets Sent",
			"FieldDeviceCustomNumber3": json.Number("5"), "DeviceCustomNumber3Label": "Packets Received",
		}},
	}, {
		name: "Palo Alto PAN-OS threat url",
		ev: cefEv(t, 116, "2026-07-03T14:22:15Z", "PA-3260", "CEF:0|...",
			[7]string{"0", "Palo Alto Networks", "PAN-OS", "11.1", "THREAT", "url", "5"},
			"rt", "Jul 03 2026 14:22:15", "src", "192.0.2.55", "dst", "198.51.100.99", "spt", "52881", "dpt", "443",
			"suser", "bhapci", "app", "web-browsing", "act", "block-url",
			"request", "https://malware-cdn.example.net/payload.bin", "cat", "malware"),
		want: check{cols: map[string]any{
			"DeviceVendor": "Palo Alto Networks", "DeviceProduct": "PAN-OS", "DeviceVersion": "11.1",
			"DeviceEventClassID": "THREAT", "Activity": "url", "LogSeverity": "5",
			"ReceiptTime": "Jul 03 2026 14:22:15", "SourceIP": "192.0.2.55", "DestinationIP": "198.51.100.99",
			"SourcePort": json.Number("52881"), "DestinationPort": json.Number("443"), "SourceUserName": "bhapci",
			"ApplicationProtocol": "web-browsing", "DeviceAction": "block-url",
			"RequestURL": "https://malware-cdn.example.net/payload.bin", "DeviceEventCategory": "malware",
		}},
	}, {
		name: "Palo Alto PAN-OS traffic end",
		ev: cefEv(t, 110, "2026-01-02T10:15:32Z", "PA-3260", "CEF:0|...",
			[7]string{"0", "Palo Alto Networks", "PAN-OS", "11.0.0", "TRAFFIC", "end", "3"},
			"src", "192.168.1.100", "dst", "203.0.113.50", "spt", "54321", "dpt", "443", "proto", "tcp", "act", "allow",
			"app", "web-browsing", "cs1", "Allow-Outbound", "cs1Label", "Rule", "duser", "domain\\jsmith"),
		want: check{cols: map[string]any{
			"Protocol": "tcp", "DeviceCustomString1": "Allow-Outbound", "DeviceCustomString1Label": "Rule",
			"DestinationUserName": "domain\\jsmith",
		}},
	}, {
		name: "Check Point Log Exporter accept",
		ev: cefEv(t, 134, "2019-05-13T17:15:58Z", "r80test", "CEF:0|...",
			[7]string{"0", "Check Point", "VPN-1 & FireWall-1", "Check Point", "Log", "https", "Unknown"},
			"act", "Accept", "deviceDirection", "0", "rt", "1557767758000", "spt", "63945", "dpt", "443",
			"cs2Label", "Rule Name", "cs2", "Outgoing", "layer_name", "Network",
			"layer_uuid", "c0264a80-1832-4fce-8a90-d0849dc4ba33", "match_id", "1", "parent_rule", "0",
			"rule_action", "Accept", "ifname", "eth0", "loguid", "{0x5cd9a64e,0x0,0x5060a8c0,0xc0000001}",
			"origin", "192.168.96.80", "originsicname", "cn=cp_mgmt,o=r80test..ymydp2", "sequencenum", "1", "version", "5",
			"dst", "192.168.96.80", "inzone", "Internal", "outzone", "Local", "proto", "6", "service_id", "https", "src", "192.168.96.27"),
		want: check{
			cols: map[string]any{
				"DeviceVendor": "Check Point", "DeviceProduct": "VPN-1 & FireWall-1", "DeviceVersion": "Check Point",
				"DeviceEventClassID": "Log", "Activity": "https", "LogSeverity": "Unknown",
				"DeviceAction": "Accept", "CommunicationDirection": "0", "ReceiptTime": "1557767758000",
				"SourcePort": json.Number("63945"), "DestinationPort": json.Number("443"),
				"DeviceCustomString2Label": "Rule Name", "DeviceCustomString2": "Outgoing",
				"DestinationIP": "192.168.96.80", "SourceIP": "192.168.96.27", "Protocol": "6",
			},
			extra: "layer_name=Network;layer_uuid=c0264a80-1832-4fce-8a90-d0849dc4ba33;match_id=1;parent_rule=0;" +
				"rule_action=Accept;ifname=eth0;loguid={0x5cd9a64e,0x0,0x5060a8c0,0xc0000001};origin=192.168.96.80;" +
				`originsicname=cn\=cp_mgmt,o\=r80test..ymydp2;sequencenum=1;version=5;inzone=Internal;outzone=Local;service_id=https`,
		},
	}, {
		name: "typed columns that do not fit, duplicates, escapes, syslog fields",
		ev: func() relaykit.Event {
			e := cefEv(t, 134, "2026-11-23T09:00:00Z", "fw", "CEF:0|...",
				[7]string{"0", "Acme", "Wall", "1.0", "100", "probe", "10"},
				"dpt", "http", "spt", "99999999999", "cnt", "-2147483648", "in", "9223372036854775807",
				"cfp1", "1.5e3", "cfp2", "1.", "cfp3", "-0.25", "start", "1700000000123", "end", "Nov 23 2026 09:00:00",
				"src", "10.0.0.1", "src", "10.0.0.2", "dvcpid", "0", "note", `a;b=c\d`, "msg", "multi\nline")
			e.SetFieldString("msgid", "FW100")
			e.SetFieldString("sd.meta.sequenceId", "7")
			e.Source = []byte("acme-fw")
			return e
		}(),
		want: check{
			cols: map[string]any{
				"EventCount": json.Number("-2147483648"), "ReceivedBytes": json.Number("9223372036854775807"),
				"DeviceCustomFloatingPoint1": json.Number("1.5e3"), "DeviceCustomFloatingPoint3": json.Number("-0.25"),
				"StartTime": "2023-11-14T22:13:20.1230000Z", "SourceIP": "10.0.0.1", "ProcessID": json.Number("0"),
				"Message": "multi\nline", "ProcessName": "acme-fw",
			},
			extra: `dpt=http;spt=99999999999;cfp2=1.;end=Nov 23 2026 09:00:00;src=10.0.0.2;note=a\;b\=c\\d;msgid=FW100;sd.meta.sequenceId=7`,
		},
	}, {
		name: "not CEF: the raw message is kept in Message",
		ev:   syslogEv(t, 13, "2026-11-23T09:00:00Z", "h", "app", "", "", "not a CEF line"),
		want: check{cols: map[string]any{"Message": "not a CEF line", "ProcessName": "app", "Computer": "h"}},
	}}
	s := tableSink(t, forward.SentinelCommonSecurityLog, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := decodeRow(t, s.AppendEvent(nil, &tt.ev))
			for col, v := range tt.want.cols {
				assert.Equal(t, v, row[col], col)
			}
			if tt.want.extra == "" {
				assert.NotContains(t, row, "AdditionalExtensions")
			} else {
				assert.Equal(t, tt.want.extra, row["AdditionalExtensions"])
			}
			assert.NotContains(t, row, "cef.version")
			checkSchema(t, "CommonSecurityLog", nil, row)
		})
	}
}

// TestSentinelBuiltinTablesEndToEnd sends the rows through the sink to the
// DCR server, which checks them against the tables' schemas.
func TestSentinelBuiltinTablesEndToEnd(t *testing.T) {
	for _, table := range []forward.SentinelTable{forward.SentinelSyslog, forward.SentinelCommonSecurityLog} {
		t.Run(table.String(), func(t *testing.T) {
			srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{
				Stream: table.Stream(), Columns: map[string]string{"MsgID_CF": forwardtest.TypeString},
			})
			var fl failureLog
			s := sentinelFor(t, srv, &fl, func(c *forward.SentinelConfig) {
				c.Table, c.Stream, c.Columns, c.CollectorHostName = table, "", forward.SentinelColumns{}, "relay-1"
				c.Fields = []forward.SentinelField{{Field: "msgid", Column: "MsgID_CF"}}
			})
			batch := []relaykit.Event{
				syslogEv(t, 34, "2003-10-11T22:14:15.003Z", "mymachine.example.com", "su", "77", "ID47", "'su root' failed"),
				cefEv(t, 134, "2026-11-23T09:00:00Z", "fw", "CEF:0|...", [7]string{"0", "Acme", "Wall", "1.0", "100", "probe", "10"},
					"src", "10.0.0.1", "dpt", "443", "in", "12", "cfp1", "0.5", "start", "1700000000123", "x", "y"),
			}
			require.NoError(t, fl.send(t, s, batch))
			assert.Zero(t, fl.count(), "%v", fl.messages)
			rows := srv.Rows()
			require.Len(t, rows, 2)
			assert.Equal(t, "relay-1", rows[0]["CollectorHostName"])
			assert.Equal(t, "ID47", rows[0]["MsgID_CF"])
		})
	}
}

// TestDCRServerRejectsSchemaMismatch: a sink that writes custom-table
// columns to a built-in stream, or a value of the wrong type, is refused
// with 400 and the rows are reported rejected.
func TestDCRServerRejectsSchemaMismatch(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		cols   map[string]string
		mod    func(*forward.SentinelConfig)
		want   string
	}{
		{"custom layout to Microsoft-Syslog", "Microsoft-Syslog", nil, func(c *forward.SentinelConfig) {
			c.Columns, c.Fields = forward.SentinelColumns{}, nil
		}, "column 'RawData' is not in the schema"},
		{"string into an int column", "Microsoft-Syslog", nil, func(c *forward.SentinelConfig) {
			c.Columns = forward.SentinelColumns{Message: "SyslogMessage", Source: "ProcessID"}
			c.Fields = nil
		}, "column 'ProcessID' of type 'int' has an invalid value"},
		{"custom column not added to the table", "Microsoft-CommonSecurityLog", nil, func(c *forward.SentinelConfig) {
			c.Table, c.Columns = forward.SentinelCommonSecurityLog, forward.SentinelColumns{}
			c.Fields = []forward.SentinelField{{Field: "user", Column: "User_CF"}}
		}, "column 'User_CF' is not in the schema"},
		{"declared custom stream, wrong type", "Custom-Typed", map[string]string{
			"TimeGenerated": "datetime", "RawData": "string", "Computer": "string", "App": "string",
			"Facility": "string", "SeverityLevel": "int", "UserName": "string", "n": "string",
		}, nil, "column 'Facility' of type 'string' has an invalid value: 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{Stream: tt.stream, Columns: tt.cols})
			var fl failureLog
			s := sentinelFor(t, srv, &fl, func(c *forward.SentinelConfig) {
				c.Stream = tt.stream
				if tt.mod != nil {
					tt.mod(c)
				}
			})
			e := syslogEv(t, 35, "2026-11-23T09:00:00Z", "h", "app", "", "", "msg")
			e.SetFieldString("user", "root")
			_ = fl.send(t, s, []relaykit.Event{e})
			require.Equal(t, 1, fl.count())
			assert.Equal(t, relaykit.ReasonRejected, fl.reasons[0])
			require.NotEmpty(t, fl.messages)
			assert.Contains(t, fl.messages[0], "InvalidPayload")
			assert.Contains(t, fl.messages[0], tt.want)
			assert.Empty(t, srv.Rows())
			reqs := srv.Requests()
			require.NotEmpty(t, reqs)
			assert.Equal(t, 400, reqs[0].Status)
		})
	}
}

func TestSentinelTableConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*forward.SentinelConfig)
		want string
	}{
		{"Columns with a built-in table", func(c *forward.SentinelConfig) {
			c.Table, c.Columns = forward.SentinelSyslog, forward.SentinelColumns{Host: "HostName"}
		}, "Columns: do not apply to the Syslog table"},
		{"custom column without _CF", func(c *forward.SentinelConfig) {
			c.Table, c.Fields = forward.SentinelCommonSecurityLog, []forward.SentinelField{{Field: "x", Column: "Extra"}}
		}, `column "Extra" added to the CommonSecurityLog table must end in _CF`},
		{"unknown table", func(c *forward.SentinelConfig) { c.Table = 7 }, "Table: unknown table SentinelTable(7)"},
		{"custom table needs a stream", func(c *forward.SentinelConfig) { c.Table = forward.SentinelCustom }, "Stream: required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := forward.SentinelConfig{
				Endpoint: "https://dce.example.com", DCRImmutableID: "dcr-00000000000000000000000000000001", TokenSource: forward.StaticToken("t"),
			}
			tt.mod(&cfg)
			_, err := forward.NewSentinel(cfg)
			require.ErrorIs(t, err, forward.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	// The stream defaults to the table's.
	assert.Equal(t, "Microsoft-Syslog", forward.SentinelSyslog.Stream())
	assert.Equal(t, "Microsoft-CommonSecurityLog", forward.SentinelCommonSecurityLog.Stream())
	assert.Empty(t, forward.SentinelCustom.Stream())
}

// TestSentinelCEFColumnsMatchSchema: every column of the mapping exists in
// the published CommonSecurityLog schema.
func TestSentinelCEFColumnsMatchSchema(t *testing.T) {
	schema := forwardtest.TableColumns("CommonSecurityLog")
	for field, col := range forward.SentinelCEFColumns() {
		assert.Contains(t, schema, col, "field %s", field)
	}
}

func TestSentinelTablesZeroAllocs(t *testing.T) {
	for _, table := range []forward.SentinelTable{forward.SentinelSyslog, forward.SentinelCommonSecurityLog} {
		t.Run(table.String(), func(t *testing.T) {
			s := tableSink(t, table, func(c *forward.SentinelConfig) {
				c.CollectorHostName = "relay-1"
				c.Fields = []forward.SentinelField{{Field: "msgid", Column: "MsgID_CF"}}
			})
			e := cefEv(t, 134, "2026-11-23T09:00:00Z", "fw", "CEF:0|...", [7]string{"0", "Acme", "Wall", "1.0", "100", "probe", "10"},
				"src", "10.0.0.1", "dpt", "443", "in", "12", "cfp1", "0.5", "start", "1700000000123", "x", "y;z", "msgid", "M1", "procid", "42")
			buf := make([]byte, 0, 4096)
			allocs := testing.AllocsPerRun(100, func() { buf = s.AppendEvent(buf[:0], &e) })
			assert.Zero(t, allocs)
			assert.True(t, json.Valid(buf))
		})
	}
}

// FuzzSentinelTables: any event encodes to a valid JSON row that holds only
// columns of the table, with values of their types.
func FuzzSentinelTables(f *testing.F) {
	f.Add([]byte("msg"), []byte("host"), []byte("src"), []byte("10.0.0.1"), []byte("dpt"), []byte("443"), uint8(34), false)
	f.Add([]byte("\xff"), []byte("192.168.0.1"), []byte("cef.name"), []byte("x;y=z\\"), []byte("cfp1"), []byte("1e400"), uint8(255), true)
	f.Add([]byte(""), []byte("::"), []byte("start"), []byte("-1"), []byte("procid"), []byte("-0"), uint8(0), true)
	f.Fuzz(func(t *testing.T, raw, host, k1, v1, k2, v2 []byte, pri uint8, cef bool) {
		table, name := forward.SentinelSyslog, "Syslog"
		if cef {
			table, name = forward.SentinelCommonSecurityLog, "CommonSecurityLog"
		}
		s := tableSink(t, table, nil)
		e := relaykit.Event{ReceiveTime: 1, Raw: raw, Host: host, Priority: pri, Flags: relaykit.FlagPriority}
		e.Fields = []relaykit.Field{{Key: k1, Value: v1}, {Key: k2, Value: v2}}
		out := s.AppendEvent([]byte("["), &e)[1:]
		row := decodeRow(t, out)
		checkSchema(t, name, nil, row)
		if cef && strings.HasPrefix(string(k1), "cef.") && string(k1) != "cef.version" {
			// A header field is in its column or in AdditionalExtensions.
			col := forward.SentinelCEFColumns()[string(k1)]
			_, inCol := row[col]
			_, inExtra := row["AdditionalExtensions"]
			assert.True(t, col == "" || inCol || inExtra)
		}
	})
}

// BenchmarkSentinelTables encodes one row per op: a syslog event for the
// custom layout and the Syslog table, the FortiGate traffic sample (25 CEF
// extension keys, 20 of them vendor keys for AdditionalExtensions) for
// CommonSecurityLog.
func BenchmarkSentinelTables(b *testing.B) {
	syslogE := syslogEv(b, 86, "2026-11-23T08:59:59.5+01:00", "web-1", "sshd", "4242", "", "Failed password for root from 203.0.113.9 port 2222 ssh2")
	cefE := cefEv(b, 189, "2018-12-27T11:07:55Z", "FGT-A-LOG", "CEF:0|...",
		[7]string{"0", "Fortinet", "Fortigate", "v6.0.3", "00013", "traffic:forward close", "3"},
		"deviceExternalId", "FGT5HD3915800610", "FTNTFGTlogid", "0000000013", "cat", "traffic:forward",
		"FTNTFGTsubtype", "forward", "FTNTFGTlevel", "notice", "FTNTFGTvd", "vdom1", "FTNTFGTeventtime", "1545937675",
		"src", "10.1.100.11", "spt", "54190", "deviceInboundInterface", "port12", "FTNTFGTsrcintfrole", "undefined",
		"dst", "52.53.140.235", "dpt", "443", "deviceOutboundInterface", "port11", "FTNTFGTdstintfrole", "undefined",
		"FTNTFGTpoluuid", "c2d460aa-fe6f-51e8-9505-41b5117dfdd4", "externalId", "402", "proto", "6", "act", "close",
		"FTNTFGTpolicyid", "1", "FTNTFGTpolicytype", "policy", "app", "HTTPS", "FTNTFGTdstcountry", "United States",
		"FTNTFGTsrccountry", "Reserved", "FTNTFGTtrandisp", "snat", "sourceTranslatedAddress", "172.16.200.1",
		"sourceTranslatedPort", "54190", "FTNTFGTappid", "40568", "FTNTFGTapp", "HTTPS.BROWSER",
		"out", "3652", "in", "146668")
	for _, c := range []struct {
		name  string
		table forward.SentinelTable
		ev    *relaykit.Event
		col   string // a column the row must have
	}{
		{"table=custom", forward.SentinelCustom, &syslogE, "RawData"},
		{"table=Syslog", forward.SentinelSyslog, &syslogE, "SyslogMessage"},
		{"table=CommonSecurityLog", forward.SentinelCommonSecurityLog, &cefE, "AdditionalExtensions"},
	} {
		b.Run(c.name, func(b *testing.B) {
			cfg := forward.SentinelConfig{
				Endpoint: "https://dce.example.com", DCRImmutableID: "dcr-00000000000000000000000000000001",
				Table: c.table, TokenSource: forward.StaticToken("t"),
			}
			if c.table == forward.SentinelCustom {
				cfg.Stream = "Custom-Relay_CL"
				cfg.Columns = forward.SentinelColumns{Source: "ProcessName", Facility: "Facility", Severity: "SeverityLevel", Fields: "Fields"}
			}
			s, err := forward.NewSentinel(cfg)
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 0, 4096)
			b.ReportAllocs()
			for b.Loop() {
				buf = s.AppendEvent(buf[:0], c.ev)
			}
			b.SetBytes(int64(len(buf)))
			var row map[string]any
			if err := json.Unmarshal(buf, &row); err != nil || row[c.col] == nil {
				b.Fatalf("bad row %s: %v", buf, err)
			}
		})
	}
}
