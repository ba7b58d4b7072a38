package parse_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/parse"
	"github.com/relaykit/relaykit/syslog"
)

// receiveTime is the receive time of the test events: the samples' dates
// are 2026-11-28 (and 2018-12-27, the FortiOS reference's examples).
var receiveTime = time.Date(2026, 11, 28, 13, 5, 0, 0, time.UTC).UnixNano()

// cet is the zone of the PAN-OS samples' device (+01:00).
var cet = time.FixedZone("CET", 3600)

// syslogThenVendor runs what the relay runs: the syslog parser, then the
// vendor step.
func syslogThenVendor(t testing.TB, v *parse.Vendor, raw string) (relaykit.Event, error) {
	t.Helper()
	e := relaykit.Event{ReceiveTime: receiveTime}
	syslog.NewParser(syslog.Config{Location: time.UTC}).Parse(&e, []byte(raw))
	keep, err := v.Apply(&e)
	require.True(t, keep)
	return e, err
}

func newVendor(t testing.TB, name string, loc *time.Location) *parse.Vendor {
	t.Helper()
	v, err := parse.NewVendor(parse.VendorConfig{Name: name, Location: loc})
	require.NoError(t, err)
	return v
}

func utc(t testing.TB, s string) int64 {
	t.Helper()
	return mustParse(t, time.RFC3339Nano, s, time.UTC)
}

// vendorCase is one sample line and what the step must make of it:
// fields (a subset of the event's), the time (0: unchanged), the error.
type vendorCase struct {
	name   string
	line   int
	fields map[string]string
	absent []string
	time   string
	err    error
}

func runVendorCases(t *testing.T, vendor, file string, loc *time.Location, cases []vendorCase) {
	lines := readLines(t, file)
	v := newVendor(t, vendor, loc)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw := lines[tc.line-1]
			e, err := syslogThenVendor(t, v, raw)
			if tc.err == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.err)
			}
			for k, want := range tc.fields {
				got, ok := e.Field(k)
				if assert.True(t, ok, "field %q missing", k) {
					assert.Equal(t, want, string(got), k)
				}
			}
			for _, k := range tc.absent {
				_, ok := e.Field(k)
				assert.False(t, ok, "field %q set", k)
			}
			if tc.time != "" {
				assert.Equal(t, utc(t, tc.time), e.Time, "time")
			}
			if tc.err == parse.ErrNoMatch {
				_, ok := e.Field(parse.FieldCEFDeviceVendor)
				assert.False(t, ok, "no header on a line not recognised")
			}
		})
	}
}

func TestFortiGate(t *testing.T) {
	runVendorCases(t, parse.VendorFortiGate, "fortigate.log", time.UTC, []vendorCase{
		{name: "traffic forward close", line: 1, time: "2026-11-28T11:58:59Z", fields: map[string]string{
			"cef.device_vendor": "Fortinet", "cef.device_product": "Fortigate", "cef.device_event_class_id": "00013",
			"cef.name": "traffic:forward close", "cef.severity": "3", "cat": "traffic:forward",
			"src": "10.1.100.11", "spt": "54190", "dst": "52.53.140.235", "dpt": "443", "proto": "6", "act": "close",
			"app": "HTTPS", "deviceInboundInterface": "port12", "deviceOutboundInterface": "port11", "externalId": "402",
			"sourceTranslatedAddress": "172.16.200.1", "sourceTranslatedPort": "54190", "out": "3652", "in": "146668",
			"deviceExternalId": "FG100FTK19000001", "dvchost": "FGT-1", "FTNTFGTlogid": "0000000013",
			"FTNTFGTsubtype": "forward", "FTNTFGTlevel": "notice", "FTNTFGTapp": "HTTPS.BROWSER",
			"FTNTFGTdstcountry": "United States", "FTNTFGTtz": "+0100",
		}, absent: []string{"date", "time", "type", "FTNTFGTdate", "FTNTFGTtype"}},
		{name: "traffic deny, quoted msg with spaces, = and escaped quotes", line: 2, time: "2026-11-28T11:59:01Z",
			fields: map[string]string{
				"act": "deny", "cef.name": "traffic:forward deny", "cef.severity": "4", "dpt": "3389",
				"msg": `Denied by "implicit" policy: rule=0 action=deny`,
			}},
		{name: "UTM webfilter: srcip= inside the quoted url does not set src", line: 3, time: "2018-12-27T11:23:50Z",
			fields: map[string]string{
				"src": "10.1.100.11", "dpt": "80", "request": "/bizsquads?srcip=1.2.3.4&dstport=22",
				"dhost": "ambrishsriv.wixsite.com", "duser": "bob", "act": "blocked", "cef.device_event_class_id": "13056",
				"cef.name": "utm:webfilter ftgd_blk blocked", "cef.severity": "4", "FTNTFGTcat": "26", "cat": "utm:webfilter",
				"FTNTFGTcatdesc": "Malicious Websites",
			}},
		{name: "UTM virus", line: 4, time: "2018-12-27T11:20:49Z", fields: map[string]string{
			"cef.device_event_class_id": "08192", "cef.name": "utm:virus infected blocked", "fname": "eicar.com",
			"FTNTFGTvirus": "EICAR_TEST_FILE", "request": "http://172.16.200.55/virus/eicar.com",
			"requestClientApplication": "curl/7.47.0", "msg": "File is infected.",
		}},
		{name: "event system login failed", line: 5, time: "2018-12-27T11:15:40Z", fields: map[string]string{
			"cef.device_event_class_id": "32002", "cef.name": "event:system login failed", "cef.severity": "7",
			"act": "login", "outcome": "failed", "reason": "name_invalid", "duser": "admin1",
			"sproc": "https(172.16.200.254)", "src": "172.16.200.254", "dst": "172.16.200.1",
			"FTNTFGTlogdesc": "Admin login failed",
		}},
		{name: "IPv6, no tz: the configured zone", line: 6, time: "2026-11-28T13:00:00Z", fields: map[string]string{
			"src": "2001:db8::10", "dst": "2001:db8:1::20", "proto": "17", "dpt": "53", "act": "accept",
		}},
		{name: "unterminated quote: stored to the end", line: 7, err: parse.ErrUnterminated, time: "2026-11-28T13:00:01Z",
			fields: map[string]string{"msg": "line cut in the mid", "src": "10.0.0.1", "cef.device_vendor": "Fortinet"}},
		{name: "not FortiOS", line: 8, err: parse.ErrNoMatch},
		{name: "unreadable date and time: kept as fields, the time stays", line: 9, err: parse.ErrTimestamp,
			fields: map[string]string{"FTNTFGTdate": "2026-13-45", "FTNTFGTtime": "99:99:99", "src": "10.0.0.3"}},
		{name: "logid= only inside a quoted value", line: 10, err: parse.ErrNoMatch, absent: []string{"FTNTFGTmsg", "msg"}},
	})
}

func TestPANOS(t *testing.T) {
	runVendorCases(t, parse.VendorPANOS, "panos.log", cet, []vendorCase{
		{name: "TRAFFIC, 10.x columns", line: 1, time: "2026-11-28T11:58:58.123Z", fields: map[string]string{
			"cef.device_vendor": "Palo Alto Networks", "cef.device_product": "PAN-OS", "cef.device_event_class_id": "end",
			"cef.name": "TRAFFIC", "cef.severity": "1", "rt": "2026/11/28 12:58:59", "deviceExternalId": "012801000001",
			"src": "192.168.1.100", "dst": "203.0.113.50", "sourceTranslatedAddress": "198.51.100.10",
			"cs1": "Allow-Outbound", "cs1Label": "Rule", "suser": `example\jsmith`, "app": "web-browsing",
			"cs4": "trust", "cs4Label": "Source Zone", "cs5": "untrust", "cn1": "12345", "cn1Label": "SessionID",
			"spt": "54321", "dpt": "443", "sourceTranslatedPort": "40001", "proto": "tcp", "act": "allow",
			"in": "800", "out": "723", "reason": "tcp-fin", "dvchost": "PA-3260", "cat": "from-policy",
			"externalId": "7219852410", "PanOSDGl1": "12", "PanOSRuleUUID": "9f1c2b3a-1d2e-4f50-8a6b-7c8d9e0f1a2b",
			"high_res_timestamp": "2026-11-28T12:58:58.123+01:00", "is_saas_of_app": "no", "offloaded": "0",
			"start": "1795867138123",
		}, absent: []string{"type", "subtype", "column116", "time_generated"}},
		{name: "TRAFFIC, 9.1 columns: generated time in the configured zone", line: 2, time: "2026-11-28T11:58:58Z",
			fields: map[string]string{"src": "192.168.1.100", "dpt": "443", "cef.device_event_class_id": "end", "start": "1795867138000"}},
		{name: "THREAT url, quoted URL with commas", line: 3, time: "2026-11-28T11:58:58.5Z", fields: map[string]string{
			"cef.device_event_class_id": "url", "cef.name": "THREAT", "cef.severity": "4", "severity": "high",
			"request": "malware-cdn.example.net/payload.bin?a=1,b=2", "cat": "(9999)", "act": "block-url",
			"flexString2": "client-to-server", "flexString2Label": "Direction", "requestClientApplication": "Mozilla/5.0 (X11; Linux x86_64)",
			"requestMethod": "get", "PanOSReferer": "http://ref.example.org/", "dpt": "80", "src": "192.168.1.100",
			"dst": "198.51.100.99",
		}},
		{name: "THREAT vulnerability, 9.1", line: 4, time: "2026-11-28T11:58:58Z", fields: map[string]string{
			"cef.device_event_class_id": "vulnerability", "cef.severity": "5",
			"cat": "Bash Remote Code Execution Vulnerability(36731)",
		}},
		{name: "SYSTEM, quoted description", line: 5, time: "2026-11-28T11:58:58.75Z", fields: map[string]string{
			"cef.device_event_class_id": "general", "cef.name": "SYSTEM", "cef.severity": "1", "cat": "general",
			"msg":         "User admin logged in via Web from 192.0.2.10 using https, auth method: password",
			"flexString2": "general", "dvchost": "PA-3260",
		}},
		{name: "CONFIG: the result is the class", line: 6, time: "2026-11-28T11:58:58Z", fields: map[string]string{
			"cef.device_event_class_id": "Succeeded", "cef.name": "CONFIG", "cef.severity": "1", "act": "edit",
			"duser": "admin", "shost": "192.0.2.10", "destinationServiceName": "Web",
			"msg": ` vsys  vsys1 rulebase security rules  "Allow, Outbound"`, "comment": "change window 42",
		}},
		{name: "IPv6", line: 7, fields: map[string]string{
			"src": "2001:db8::100", "dst": "2001:db8:1::50", "proto": "udp", "dpt": "53", "cef.device_event_class_id": "start",
		}, absent: []string{"sourceTranslatedAddress"}},
		{name: "missing trailing columns", line: 8, fields: map[string]string{"src": "192.168.1.100", "externalId": "7219852410"},
			absent: []string{"reason", "dvchost"}},
		{name: "extra trailing columns kept", line: 9, fields: map[string]string{
			"offloaded": "0", "column116": "future-a", "column117": "future,b",
		}},
		{name: "unknown type: common columns and column<n>", line: 10, fields: map[string]string{
			"cef.name": "GLOBALPROTECT", "deviceExternalId": "012801000001", "column8": "vsys1", "column11": "gp-portal",
		}},
		{name: "Link Switches: a braced list with commas is one column", line: 11, fields: map[string]string{
			"PanLinkDetail":   "{link1,tag1,ether,ethernet1/1,2026/11/28 12:58:00,100,200,good,none}",
			"PanSDWANCluster": "cluster-1", "offloaded": "0",
		}},
		{name: "not PAN-OS", line: 12, err: parse.ErrNoMatch},
		{name: "no hostname in the syslog header", line: 13, time: "2026-11-28T11:58:58.123Z", fields: map[string]string{
			"rt": "2026/11/28 12:58:59", "src": "192.168.1.100", "cef.device_event_class_id": "end",
		}},
		{name: "unreadable generated time: kept, the syslog time stays", line: 14, err: parse.ErrTimestamp,
			fields: map[string]string{"time_generated": "2026/13/45 99:99:99", "src": "192.168.1.100"}},
	})
	// The hostname PAN-OS did not send is the device name, not the
	// syslog parser's guess.
	e, err := syslogThenVendor(t, newVendor(t, parse.VendorPANOS, cet), line(t, "panos.log", 13))
	require.NoError(t, err)
	assert.Equal(t, "PA-3260", string(e.Host))
}

func TestPANOSStats(t *testing.T) {
	v := newVendor(t, parse.VendorPANOS, cet)
	for _, l := range readLines(t, "panos.log") {
		_, _ = syslogThenVendor(t, v, l)
	}
	assert.Equal(t, parse.VendorStats{Events: 14, Parsed: 13, NoMatch: 1, Unknown: 1, Short: 1, Long: 1, BadTime: 1}, v.Stats())
}

func TestCiscoASA(t *testing.T) {
	runVendorCases(t, parse.VendorCiscoASA, "asa.log", time.UTC, []vendorCase{
		{name: "302013 inbound", line: 1, time: "2026-11-28T12:58:59Z", fields: map[string]string{
			"cef.device_vendor": "Cisco", "cef.device_product": "ASA", "cef.device_event_class_id": "302013",
			"cef.severity": "6", "cef.name": "Built TCP connection", "act": "Built", "proto": "TCP", "deviceDirection": "0",
			"src": "203.0.113.5", "spt": "51234", "dst": "10.0.0.5", "dpt": "443", "deviceInboundInterface": "outside",
			"deviceOutboundInterface": "inside", "destinationTranslatedAddress": "198.51.100.10",
			"destinationTranslatedPort": "443", "externalId": "123",
			"msg": "Built inbound TCP connection 123 for outside:203.0.113.5/51234 (203.0.113.5/51234) to inside:10.0.0.5/443 (198.51.100.10/443)",
		}, absent: []string{"sourceTranslatedAddress"}},
		{name: "302013 outbound: the source is the inside host", line: 2, fields: map[string]string{
			"deviceDirection": "1", "src": "10.1.1.2", "spt": "53496", "dst": "10.1.2.1", "dpt": "22",
			"deviceInboundInterface": "inside", "deviceOutboundInterface": "outside",
		}},
		{name: "302014 teardown, interface with spaces", line: 3, fields: map[string]string{
			"act": "Teardown", "src": "10.1.1.2", "spt": "12523", "dst": "10.1.1.1", "dpt": "22",
			"deviceOutboundInterface": "NP Identity Ifc", "duration": "0:00:53", "bytes": "2436", "reason": "TCP FINs",
		}},
		{name: "302015 outbound UDP, source NAT and user", line: 4, fields: map[string]string{
			"proto": "UDP", "src": "192.168.10.5", "spt": "53", "sourceTranslatedAddress": "192.168.10.5",
			"sourceTranslatedPort": "171", "suser": `LOCAL\jdoe`, "dst": "168.15.3.6",
		}},
		{name: "302016", line: 5, fields: map[string]string{"act": "Teardown", "proto": "UDP", "bytes": "312", "src": "168.15.3.6"}},
		{name: "302020 ICMP", line: 6, fields: map[string]string{
			"proto": "ICMP", "src": "203.0.113.5", "dst": "10.0.0.5", "destinationTranslatedAddress": "198.51.100.10",
			"icmp_type": "8", "icmp_code": "0",
		}, absent: []string{"spt", "dpt"}},
		{name: "302021", line: 7, fields: map[string]string{"act": "Teardown", "src": "203.0.113.5"}},
		{name: "106023 IPv6", line: 8, fields: map[string]string{
			"act": "Deny", "proto": "tcp", "src": "2001:db8::5", "spt": "51234", "dst": "2001:db8:1::10", "dpt": "443",
			"cs1": "outside_access_in", "cs1Label": "Access List", "cef.severity": "4",
		}},
		{name: "106023 ICMP", line: 9, fields: map[string]string{"src": "203.0.113.5", "dst": "10.0.0.1", "icmp_type": "8"},
			absent: []string{"spt"}},
		{name: "106100", line: 10, fields: map[string]string{
			"act": "denied", "cs1": "outside_access_in", "src": "203.0.113.5", "spt": "51234", "dst": "10.0.0.5",
			"dpt": "22", "cnt": "1", "deviceInboundInterface": "outside",
		}},
		{name: "106001", line: 11, fields: map[string]string{"act": "denied", "tcp_flags": "SYN", "dpt": "23", "deviceInboundInterface": "outside"}},
		{name: "106006", line: 12, fields: map[string]string{"act": "Deny", "proto": "UDP", "dpt": "161", "deviceDirection": "0"}},
		{name: "106014", line: 13, fields: map[string]string{"proto": "icmp", "src": "203.0.113.5", "dst": "10.0.0.5", "icmp_code": "0"}},
		{name: "305011 NAT", line: 14, fields: map[string]string{
			"act": "Built", "src": "10.0.0.5", "spt": "51234", "sourceTranslatedAddress": "198.51.100.10",
			"sourceTranslatedPort": "40001", "translation_type": "dynamic",
		}},
		{name: "313001", line: 15, fields: map[string]string{"act": "Denied", "proto": "ICMP", "src": "203.0.113.5", "icmp_type": "8"}},
		{name: "710003", line: 16, fields: map[string]string{
			"act": "denied", "src": "203.0.113.5", "dst": "198.51.100.1", "dpt": "22", "deviceInboundInterface": "outside",
		}},
		{name: "733100", line: 17, fields: map[string]string{"cs1": "Scanning", "cs2": "rate-1", "cnt": "3000"}},
		{name: "unknown ID: its text in msg", line: 18, fields: map[string]string{
			"cef.device_event_class_id": "111008", "cef.severity": "5",
			"msg": "User 'enable_15' executed the 'write memory' command.",
		}, absent: []string{"cef.name", "act"}},
		{name: "FTD after a device-id host", line: 19, fields: map[string]string{
			"cef.device_product": "FTD", "cef.device_event_class_id": "302013", "src": "203.0.113.7", "dpt": "8443",
		}},
		{name: "known ID, other layout: text kept", line: 20, fields: map[string]string{
			"cef.device_event_class_id": "302013", "msg": "Built sideways TCP connection 78 for outside:203.0.113.8/1 to inside:10.0.0.8/2",
		}, absent: []string{"src", "cef.name"}},
		{name: "not Cisco", line: 21, err: parse.ErrNoMatch},
	})
	v := newVendor(t, parse.VendorCiscoASA, time.UTC)
	for _, l := range readLines(t, "asa.log") {
		_, _ = syslogThenVendor(t, v, l)
	}
	assert.Equal(t, parse.VendorStats{Events: 21, Parsed: 20, NoMatch: 1, Unknown: 1, Mismatch: 1}, v.Stats())
}

func TestCheckPoint(t *testing.T) {
	runVendorCases(t, parse.VendorCheckPoint, "checkpoint.log", time.UTC, []vendorCase{
		{name: "accept, timestamp with a space", line: 1, time: "2026-11-28T12:58:59Z", fields: map[string]string{
			"cef.device_vendor": "Check Point", "cef.device_product": "VPN-1 & FireWall-1", "cef.device_version": "Check Point",
			"cef.device_event_class_id": "Log", "cef.name": "https", "cef.severity": "Unknown",
			"act": "Accept", "deviceDirection": "1", "src": "192.168.96.27", "dst": "192.168.96.80", "spt": "63945",
			"dpt": "443", "proto": "6", "cs2": "Outgoing", "cs2Label": "Rule Name", "rt": "1795870739000",
			"loguid": "{0x5cd9a64e,0x0,0x5060a8c0,0xc0000001}", "originsicname": "cn=cp_mgmt,o=r80test..ymydp2",
			"layer_name": "Network", "service_id": "https", "procid": "13752",
		}, absent: []string{"time", "product", "s_port"}},
		{name: "drop, IPv6", line: 2, fields: map[string]string{
			"act": "Drop", "deviceDirection": "0", "src": "2001:db8:ffff::7", "dst": "2001:db8::80", "proto": "17",
			"cef.name": "snmp", "cs2": "Cleanup rule",
		}},
		{name: "quoted value holding ; ] and a pair: one field", line: 3, fields: map[string]string{
			"src": "192.168.96.30", "dst": "203.0.113.80", "request": `http://x.example/?src=1.2.3.4; dst:"9.9.9.9"]`,
			"user": `Jane "JD" Doe`, "cef.device_product": "URL Filtering",
		}},
		{name: "ISO timestamp: the syslog parser read the header", line: 4, time: "2026-11-28T12:59:02Z", fields: map[string]string{
			"src": "192.168.96.31", "dpt": "22", "rt": "1795870742000", "procid": "13752",
		}},
		{name: "threat prevention", line: 5, fields: map[string]string{
			"cef.device_product": "SmartDefense", "cef.device_event_class_id": "IPS",
			"cef.name": "Apache Struts2 Content-Type Remote Code Execution", "cef.severity": "High", "act": "Prevent",
		}},
		{name: "unterminated quote", line: 6, err: parse.ErrUnterminated, fields: map[string]string{"message_info": "cut here", "src": "192.168.96.32"}},
		{name: "not Check Point", line: 7, err: parse.ErrNoMatch},
	})
	// The host and application of a header the syslog parser could not read.
	e, err := syslogThenVendor(t, newVendor(t, parse.VendorCheckPoint, time.UTC), line(t, "checkpoint.log", 1))
	require.NoError(t, err)
	assert.Equal(t, "gw-01", string(e.Host))
	assert.Equal(t, "CheckPoint", string(e.Source))

	// As an input leaves it: the sender's address as the host, flagged as
	// such. The header's host replaces it; a host the message named stays.
	var ev relaykit.Event
	syslog.NewParser(syslog.Config{Location: time.UTC}).Parse(&ev, []byte(line(t, "checkpoint.log", 1)))
	require.Empty(t, ev.Host, "the syslog parser read no host")
	ev.Host = append(ev.Host, "10.0.0.9"...)
	ev.Flags |= relaykit.FlagHostFromPeer
	_, err = newVendor(t, parse.VendorCheckPoint, time.UTC).Apply(&ev)
	require.NoError(t, err)
	assert.Equal(t, "gw-01", string(ev.Host), "the header's host, not the sender's address")
	assert.Zero(t, ev.Flags&relaykit.FlagHostFromPeer)
	ev.Reset()
	syslog.NewParser(syslog.Config{Location: time.UTC}).Parse(&ev, []byte(line(t, "checkpoint.log", 1)))
	ev.Host = append(ev.Host, "named-by-the-message"...)
	_, err = newVendor(t, parse.VendorCheckPoint, time.UTC).Apply(&ev)
	require.NoError(t, err)
	assert.Equal(t, "named-by-the-message", string(ev.Host))
}

// TestVendorRawLines runs the steps on lines no syslog parser has seen
// (<PRI> and all): the same fields.
func TestVendorRawLines(t *testing.T) {
	for _, tt := range []struct {
		vendor, file string
		line         int
		loc          *time.Location
		want         map[string]string
		time         string
	}{
		{parse.VendorFortiGate, "fortigate.log", 1, time.UTC, map[string]string{"src": "10.1.100.11", "act": "close"}, "2026-11-28T11:58:59Z"},
		{parse.VendorPANOS, "panos.log", 1, cet, map[string]string{"src": "192.168.1.100", "cef.device_event_class_id": "end"}, "2026-11-28T11:58:58.123Z"},
		{parse.VendorCiscoASA, "asa.log", 1, time.UTC, map[string]string{"src": "203.0.113.5", "cef.device_event_class_id": "302013"}, ""},
		{parse.VendorCheckPoint, "checkpoint.log", 1, time.UTC, map[string]string{"src": "192.168.96.27", "cef.name": "https"}, "2026-11-28T12:58:59Z"},
	} {
		t.Run(tt.vendor, func(t *testing.T) {
			raw := line(t, tt.file, tt.line)
			e := relaykit.Event{Raw: []byte(raw), ReceiveTime: receiveTime}
			_, err := newVendor(t, tt.vendor, tt.loc).Apply(&e)
			require.NoError(t, err)
			for k, want := range tt.want {
				got, _ := e.Field(k)
				assert.Equal(t, want, string(got), k)
			}
			if tt.time != "" {
				assert.Equal(t, utc(t, tt.time), e.Time)
			}
			assert.Equal(t, raw, string(e.Raw))
		})
	}
}

// TestVendorHeaderNames: the header field names are the syslog package's
// CEF names, which the CommonSecurityLog encoder reads.
func TestVendorHeaderNames(t *testing.T) {
	assert.Equal(t, syslog.FieldCEFDeviceVendor, parse.FieldCEFDeviceVendor)
	assert.Equal(t, syslog.FieldCEFDeviceProduct, parse.FieldCEFDeviceProduct)
	assert.Equal(t, syslog.FieldCEFDeviceVersion, parse.FieldCEFDeviceVersion)
	assert.Equal(t, syslog.FieldCEFDeviceEventClassID, parse.FieldCEFDeviceEventClassID)
	assert.Equal(t, syslog.FieldCEFName, parse.FieldCEFName)
	assert.Equal(t, syslog.FieldCEFSeverity, parse.FieldCEFSeverity)
}

func TestNewVendor(t *testing.T) {
	for _, name := range parse.Vendors() {
		v, err := parse.NewVendor(parse.VendorConfig{Name: name})
		require.NoError(t, err)
		assert.Equal(t, "parse_"+name, v.Name())
	}
	_, err := parse.NewVendor(parse.VendorConfig{Name: "sonicwall"})
	assert.ErrorIs(t, err, parse.ErrInvalidConfig)
}

// FuzzVendor: no panic, the raw message untouched, and an event either
// left unchanged (ErrNoMatch) or given the header.
func FuzzVendor(f *testing.F) {
	for _, file := range []string{"fortigate.log", "panos.log", "asa.log", "checkpoint.log"} {
		for _, l := range readLines(f, file) {
			f.Add(l)
		}
	}
	var steps []*parse.Vendor
	for _, name := range parse.Vendors() {
		steps = append(steps, newVendor(f, name, time.UTC))
	}
	p := syslog.NewParser(syslog.Config{Location: time.UTC})
	f.Fuzz(func(t *testing.T, raw string) {
		for _, v := range steps {
			for _, viaSyslog := range []bool{false, true} {
				e := relaykit.Event{Raw: []byte(raw), ReceiveTime: receiveTime}
				if viaSyslog {
					p.Parse(&e, []byte(raw))
				}
				before := e.Clone()
				_, err := v.Apply(&e)
				require.Equal(t, string(before.Raw), string(e.Raw))
				_, header := e.Field(parse.FieldCEFDeviceVendor)
				if err == parse.ErrNoMatch {
					require.Equal(t, fieldPairs(&before), fieldPairs(&e), "%s: unchanged", v.Name())
					before.Fields, e.Fields = nil, nil
					require.Equal(t, before, e, "%s: unchanged", v.Name())
				} else {
					require.True(t, header, "%s: %v", v.Name(), err)
				}
			}
		}
	})
}

// TestVendorTooManyFields: a line with more pairs than DefaultMaxFields
// stores the first ones and the header, and says so.
func TestVendorTooManyFields(t *testing.T) {
	var b []byte
	b = append(b, `logid="0000000013" type="traffic" subtype="forward" srcip=10.0.0.1`...)
	for i := range parse.DefaultMaxFields + 10 {
		b = append(b, " k"...)
		b = append(b, itoa(i)...)
		b = append(b, "=v"...)
	}
	v := newVendor(t, parse.VendorFortiGate, time.UTC)
	e := relaykit.Event{Raw: b}
	_, err := v.Apply(&e)
	require.ErrorIs(t, err, parse.ErrTooManyFields)
	src, _ := e.Field("src")
	assert.Equal(t, "10.0.0.1", string(src))
	vendor, _ := e.Field(parse.FieldCEFDeviceVendor)
	assert.Equal(t, "Fortinet", string(vendor))
	assert.LessOrEqual(t, len(e.Fields), parse.DefaultMaxFields+8)
	assert.Equal(t, uint64(1), v.Stats().TooManyFields)
}
