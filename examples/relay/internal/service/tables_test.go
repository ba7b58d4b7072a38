package service

import (
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/dest"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward/forwardtest"
)

func TestTableConfigErrors(t *testing.T) {
	const sentinel = "destinations:\n  s:\n    type: sentinel\n    endpoint: https://dce.example.com\n" +
		"    dcr_immutable_id: dcr-00000000000000000000000000000001\n    tenant_id: t\n    client_id: c\n    client_secret: x\n"
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown table", sentinel + "    table: syslg\n",
			`destinations.s.table: unknown table "syslg" (want custom, syslog or common_security_log)`},
		{"columns with a built-in table", sentinel + "    table: syslog\n    columns:\n      host: HostName\n",
			"destinations.s.columns: not used with table: syslog (the Syslog table's columns are fixed"},
		{"built-in stream without the table", sentinel + "    stream: Microsoft-CommonSecurityLog\n",
			`destinations.s.stream: "Microsoft-CommonSecurityLog" is the built-in CommonSecurityLog table: set table: common_security_log`},
		{"stream of the other table", sentinel + "    table: syslog\n    stream: Microsoft-CommonSecurityLog\n",
			`destinations.s.stream: "Microsoft-CommonSecurityLog" does not match table: syslog (its stream is Microsoft-Syslog)`},
		{"custom column without _CF", sentinel + "    table: common_security_log\n    custom_columns:\n      msgid: MsgID\n",
			`destinations.s.custom_columns.msgid: column "MsgID" added to the built-in CommonSecurityLog table must end in _CF`},
		{"bad custom column", sentinel + "    stream: Custom-T_CL\n    custom_columns:\n      msgid: 9lives\n",
			`destinations.s.custom_columns.msgid: "9lives" is not a column name`},
		{"custom table needs a stream", sentinel, "destinations.s.stream: required"},
		{"indexed and omitted", "destinations:\n  h:\n    type: hec\n    url: https://x\n    token: t\n    omit_fields: true\n    indexed_fields: [msgid]\n",
			"destinations.h.indexed_fields: set together with omit_fields: true"},
		{"empty indexed field", "destinations:\n  h:\n    type: hec\n    url: https://x\n    token: t\n    indexed_fields: ['']\n",
			`destinations.h.indexed_fields: entry 0 is ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.LoadConfig(relaytest.WriteConfig(t, tt.yaml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestTablePresetsLoad: a built-in table needs no stream and no columns; a
// YAML merge key shares the credentials of two destinations.
func TestTablePresetsLoad(t *testing.T) {
	cfg, err := config.LoadConfig(relaytest.WriteConfig(t, `
routes:
  - name: cef
    field: sourcetype
    filter: ^cef$
    destinations: [sentinel-cef]
  - name: rest
    final: true
    destinations: [sentinel-syslog]
destinations:
  sentinel-syslog: &sentinel
    type: sentinel
    table: syslog
    endpoint: https://dce.example.com
    dcr_immutable_id: dcr-00000000000000000000000000000001
    tenant_id: t
    client_id: c
    client_secret: x
    custom_columns: {msgid: MsgID_CF}
  sentinel-cef:
    <<: *sentinel
    table: common_security_log
`))
	require.NoError(t, err)
	assert.Equal(t, "Microsoft-Syslog", relaytest.SpecOf[*dest.SentinelDestination](cfg, "sentinel-syslog").Stream)
	assert.Equal(t, "Microsoft-CommonSecurityLog", relaytest.SpecOf[*dest.SentinelDestination](cfg, "sentinel-cef").Stream)
	assert.Equal(t, "c", relaytest.SpecOf[*dest.SentinelDestination](cfg, "sentinel-cef").ClientID)
	assert.Equal(t, map[string]string{"msgid": "MsgID_CF"}, relaytest.SpecOf[*dest.SentinelDestination](cfg, "sentinel-cef").CustomColumns)
}

// tablesConfig routes CEF events to a CommonSecurityLog destination, other
// syslog events to a Syslog-table destination, and every event to HEC and
// the archive.
func tablesConfig(t *testing.T, hec *forwardtest.HECServer, syslogDCR, cefDCR *forwardtest.DCRServer) config.Config {
	t.Helper()
	cfg := relaytest.TestConfig(t)
	// A long budget: these tests are about what arrives, not timing, and
	// run under the race detector on a shared machine, where one request
	// may take seconds (a timed-out attempt is sent again: a duplicate).
	fast := config.RetryConfig{MaxAttempts: 2, MaxElapsed: 20 * time.Second, InitialBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}
	sentinel := func(srv *forwardtest.DCRServer, table string) config.DestinationConfig {
		c := srv.Config()
		return config.DestinationConfig{Spec: &dest.SentinelDestination{
			Table: table, Endpoint: srv.URL, AuthorityHost: srv.AuthorityHost,
			DCRImmutableID: c.DCRImmutableID, TenantID: c.TenantID, ClientID: c.ClientID,
			ClientSecret: config.Secret(c.ClientSecret), CollectorHostName: "relay-test",
			CustomColumns:   map[string]string{"msgid": "MsgID_CF"},
			NetworkSettings: dest.NetworkSettings{Retry: fast, Timeout: 5 * time.Second},
		}}
	}
	cfg.Destinations["sentinel-syslog"] = sentinel(syslogDCR, "syslog")
	cfg.Destinations["sentinel-cef"] = sentinel(cefDCR, "common_security_log")
	cfg.Destinations["hec"] = config.DestinationConfig{Spec: &dest.HECDestination{URL: hec.URL, Token: config.Secret(hec.Token()),
		NetworkSettings: dest.NetworkSettings{Retry: fast, Timeout: 5 * time.Second}}}
	cfg.Routes = append([]config.RouteConfig{
		{Name: "cef", Field: "sourcetype", Filter: "^cef$", Destinations: []string{"sentinel-cef"}},
		{Name: "syslog", Field: "sourcetype", Filter: "^syslog$", Destinations: []string{"sentinel-syslog"}},
		{Name: "all-to-hec", Destinations: []string{"hec"}},
	}, cfg.Routes...)
	return cfg
}

// archiveLine is a JSON archive line with the syslog priority.
type archiveLine struct {
	Message         string            `json:"message"`
	SourceType      string            `json:"sourcetype"`
	Facility        string            `json:"facility"`
	FacilityCode    *int              `json:"facility_code"`
	Severity        string            `json:"severity"`
	SeverityCode    *int              `json:"severity_code"`
	PriorityAssumed bool              `json:"priority_assumed"`
	Fields          map[string]string `json:"fields"`
}

// TestSentinelTablesEndToEnd: logger (RFC 5424 with SD, MSGID, PROCID),
// loggen and a CEF line from a FortiGate's documentation through the relay
// into the DCR server with the Syslog and CommonSecurityLog schemas, HEC
// and the JSON archive. The DCR servers refuse any row that does not fit
// the table (400), which the ledger would show as dropped{rejected}.
func TestSentinelTablesEndToEnd(t *testing.T) {
	relaytest.NeedTool(t, "logger")
	relaytest.NeedTool(t, "loggen")
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	extra := map[string]string{"MsgID_CF": forwardtest.TypeString}
	syslogDCR := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{Stream: "Microsoft-Syslog", Columns: extra})
	cefDCR := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{Stream: "Microsoft-CommonSecurityLog", Columns: extra})
	cfg := tablesConfig(t, hec, syslogDCR, cefDCR)
	tr := startRelay(t, cfg)
	port := tr.port("tcp")

	runTool(t, "logger", "-n", "127.0.0.1", "-P", port, "-T", "--rfc5424", "--sd-id", "origin@32473",
		"--sd-param", `ip="10.1.2.3"`, "--msgid", "LOGIN", "--id=4711", "-t", "myapp", "-p", "auth.err", "sd test")
	const cef = "CEF:0|Fortinet|Fortigate|v6.0.3|00013|traffic:forward close|3|deviceExternalId=FGT5HD3915800610 " +
		"src=10.1.100.11 spt=54190 dst=52.53.140.235 dpt=443 proto=6 act=close app=HTTPS out=3652 in=146668 FTNTFGTvd=vdom1"
	runTool(t, "logger", "-n", "127.0.0.1", "-P", port, "-T", "--rfc5424", "-t", "FGT-A-LOG", "-p", "local7.notice", cef)
	out := runTool(t, "loggen", "--inet", "--stream", "--syslog-proto", "--rate", "1000", "--interval", "1", "127.0.0.1", port)
	// A line without PRI: user.notice, assumed (RFC 3164 section 4.3.3).
	c, err := net.Dial("tcp", tr.addr("tcp"))
	require.NoError(t, err)
	_, err = io.WriteString(c, "a line without priority\n")
	require.NoError(t, err)
	require.NoError(t, c.Close())
	total := loggenCount(t, out) + 3

	relaytest.WaitFor(t, 30*time.Second, func() bool {
		s := tr.Ledger()
		return s.Dest["sentinel-syslog"].Delivered+s.Dest["sentinel-cef"].Delivered == int64(total) &&
			s.Dest["hec"].Delivered == int64(total) && s.Dest["archive"].Delivered == int64(total)
	}, "every event at HEC, the archive and one of the two Sentinel tables")
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Zero(t, s.DroppedTotal(), "no row refused by the table schemas")
	assert.Len(t, syslogDCR.Rows(), int(s.Dest["sentinel-syslog"].Delivered))

	// Syslog table: logger's event with its facility, severity, PROCID;
	// the line without PRI as user.notice.
	var found, foundAssumed bool
	for _, r := range syslogDCR.Rows() {
		assert.Equal(t, "relay-test", r["CollectorHostName"])
		assert.NotEmpty(t, r["HostName"])
		if r["SyslogMessage"] == "a line without priority" {
			foundAssumed = true
			assert.Equal(t, "user", r["Facility"])
			assert.Equal(t, "notice", r["SeverityLevel"])
		}
		if r["SyslogMessage"] != "sd test" {
			continue
		}
		found = true
		assert.Equal(t, "auth", r["Facility"])
		assert.Equal(t, "err", r["SeverityLevel"])
		assert.Equal(t, "myapp", r["ProcessName"])
		assert.Equal(t, json.Number("4711"), r["ProcessID"])
		assert.Equal(t, "LOGIN", r["MsgID_CF"])
		assert.NotEmpty(t, r["EventTime"])
	}
	assert.True(t, found, "logger's event is in the Syslog table")
	assert.True(t, foundAssumed, "the line without PRI is in the Syslog table")

	// HEC: facility, severity and the syslog parts as indexed fields.
	found, foundAssumed = false, false
	for _, e := range hec.Events() {
		if e.Message() == "a line without priority" {
			foundAssumed = true
			assert.Equal(t, "user", e.Fields["facility"])
			assert.Equal(t, "notice", e.Fields["severity"])
		}
		if e.Message() != "sd test" {
			continue
		}
		found = true
		assert.Equal(t, "syslog", e.SourceType)
		assert.Equal(t, "myapp", e.Source)
		assert.NotEmpty(t, e.Host)
		assert.Regexp(t, `^\d{10}\.\d{3}$`, e.Time)
		assert.Equal(t, "auth", e.Fields["facility"])
		assert.Equal(t, "err", e.Fields["severity"])
		assert.Equal(t, "LOGIN", e.Fields["msgid"])
		assert.Equal(t, "4711", e.Fields["procid"])
	}
	assert.True(t, found, "logger's event reached HEC")
	assert.True(t, foundAssumed, "the line without PRI reached HEC")

	// JSON archive: facility and severity by name and code; an assumed
	// priority says so.
	found, foundAssumed = false, false
	for _, l := range archived(t, relaytest.ArchiveOf(cfg).Dir) {
		var a archiveLine
		require.NoError(t, json.Unmarshal([]byte(l), &a), l)
		require.NotNil(t, a.FacilityCode, l)
		require.NotNil(t, a.SeverityCode, l)
		assert.Equal(t, a.Message == "a line without priority", a.PriorityAssumed, l)
		if a.PriorityAssumed {
			foundAssumed = true
			assert.Equal(t, "user", a.Facility)
			assert.Equal(t, 1, *a.FacilityCode)
			assert.Equal(t, "notice", a.Severity)
			assert.Equal(t, 5, *a.SeverityCode)
		}
		if a.Message != "sd test" {
			continue
		}
		found = true
		assert.Equal(t, "auth", a.Facility)
		assert.Equal(t, 4, *a.FacilityCode)
		assert.Equal(t, "err", a.Severity)
		assert.Equal(t, 3, *a.SeverityCode)
		assert.Equal(t, "LOGIN", a.Fields["msgid"])
	}
	assert.True(t, found, "logger's event is in the archive")
	assert.True(t, foundAssumed, "the line without PRI is in the archive")

	// CommonSecurityLog: the FortiGate line, parsed as CEF.
	t.Run("CommonSecurityLog", func(t *testing.T) {
		rows := cefDCR.Rows()
		if len(rows) == 0 {
			for _, r := range syslogDCR.Rows() {
				if strings.HasPrefix(r["SyslogMessage"].(string), "CEF:0|Fortinet") {
					t.Fatal("the FortiGate CEF line went to the Syslog table: CEF detection failed " +
						"(the relay's parser set sourcetype syslog and no cef.* fields)")
				}
			}
			t.Fatal("the CEF line reached neither table")
		}
		require.Len(t, rows, 1)
		r := rows[0]
		for col, want := range map[string]any{
			"DeviceVendor": "Fortinet", "DeviceProduct": "Fortigate", "DeviceVersion": "v6.0.3", "DeviceEventClassID": "00013",
			"Activity": "traffic:forward close", "LogSeverity": "3", "DeviceExternalID": "FGT5HD3915800610",
			"SourceIP": "10.1.100.11", "SourcePort": json.Number("54190"), "DestinationIP": "52.53.140.235",
			"DestinationPort": json.Number("443"), "Protocol": "6", "DeviceAction": "close", "ApplicationProtocol": "HTTPS",
			"SentBytes": json.Number("3652"), "ReceivedBytes": json.Number("146668"), "CollectorHostName": "relay-test",
		} {
			assert.Equal(t, want, r[col], col)
		}
		assert.Contains(t, r["AdditionalExtensions"], "FTNTFGTvd=vdom1")
		for _, e := range hec.Events() {
			if strings.Contains(e.Message(), "Fortinet") {
				assert.Equal(t, "cef", e.SourceType)
				assert.Equal(t, "Fortinet", e.Fields["cef.device_vendor"])
				assert.Equal(t, "local7", e.Fields["facility"])
			}
		}
	})
}

// TestCommonSecurityLogFromJSON fills CEF fields without the CEF parser:
// JSON lines (a Check Point Log Exporter event, flattened to cef.* and the
// extension keys) become CEF events through parse_json and set, and land
// in the CommonSecurityLog table with typed columns the DCR server checks.
func TestCommonSecurityLogFromJSON(t *testing.T) {
	cefDCR := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{Stream: "Microsoft-CommonSecurityLog"})
	cfg := relaytest.TestConfig(t)
	cfg.Inputs.JSONTCP = []config.JSONInputConfig{{Name: "json", Listen: "127.0.0.1:0"}}
	c := cefDCR.Config()
	cfg.Destinations["sentinel-cef"] = config.DestinationConfig{Spec: &dest.SentinelDestination{
		Table: "common_security_log", Endpoint: cefDCR.URL, AuthorityHost: cefDCR.AuthorityHost,
		DCRImmutableID: c.DCRImmutableID, TenantID: c.TenantID, ClientID: c.ClientID, ClientSecret: config.Secret(c.ClientSecret),
		CollectorHostName: "-", NetworkSettings: dest.NetworkSettings{Timeout: 5 * time.Second},
	}}
	cfg.Routes = append([]config.RouteConfig{{
		Name: "json-cef", Field: "sourcetype", Filter: "^json$", Destinations: []string{"sentinel-cef"},
		Pipeline: []config.StepConfig{{Type: "parse_json"}, {Type: "set", Field: "sourcetype", Value: "cef"}},
	}}, cfg.Routes...)
	tr := startRelay(t, cfg)
	line := `{"cef":{"version":"0","device_vendor":"Check Point","device_product":"VPN-1 & FireWall-1",` +
		`"device_version":"Check Point","device_event_class_id":"Log","name":"https","severity":"Unknown"},` +
		`"act":"Accept","deviceDirection":"0","rt":"1557767758000","src":"192.168.96.27","spt":63945,` +
		`"dst":"192.168.96.80","dpt":443,"proto":"6","cs2Label":"Rule Name","cs2":"Outgoing","layer_name":"Network"}` + "\n"
	relaytest.Send(t, "tcp", tr.addr("json"), []byte(line))
	relaytest.WaitFor(t, 20*time.Second, func() bool { return tr.Ledger().Dest["sentinel-cef"].Delivered == 1 }, "the row delivered")
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Zero(t, s.DroppedTotal())
	rows := cefDCR.Rows()
	require.Len(t, rows, 1)
	for col, want := range map[string]any{
		"DeviceVendor": "Check Point", "DeviceProduct": "VPN-1 & FireWall-1", "DeviceVersion": "Check Point",
		"DeviceEventClassID": "Log", "Activity": "https", "LogSeverity": "Unknown", "DeviceAction": "Accept",
		"CommunicationDirection": "0", "ReceiptTime": "1557767758000", "SourceIP": "192.168.96.27",
		"SourcePort": json.Number("63945"), "DestinationIP": "192.168.96.80", "DestinationPort": json.Number("443"),
		"Protocol": "6", "DeviceCustomString2Label": "Rule Name", "DeviceCustomString2": "Outgoing",
		"AdditionalExtensions": "layer_name=Network",
	} {
		assert.Equal(t, want, rows[0][col], col)
	}
	assert.NotContains(t, rows[0], "CollectorHostName", `collector_host_name: "-" leaves it out`)
}

// TestTableWithOwnInputStream: a rule's own input stream, declared with
// the table's columns, goes with a built-in table.
func TestTableWithOwnInputStream(t *testing.T) {
	cfg, err := config.LoadConfig(relaytest.WriteConfig(t, `
routes:
  - {name: r, final: true, destinations: [s]}
destinations:
  s:
    type: sentinel
    table: syslog
    stream: Custom-SyslogIn
    endpoint: https://dce.example.com
    dcr_immutable_id: dcr-00000000000000000000000000000001
    tenant_id: t
    client_id: c
    client_secret: x
`))
	require.NoError(t, err)
	assert.Equal(t, "Custom-SyslogIn", relaytest.SpecOf[*dest.SentinelDestination](cfg, "s").Stream)
}
