package parse_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
	"github.com/relaykit/relaykit/parse"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/syslog"
)

// commonSecurityLog returns a Sentinel sink writing CommonSecurityLog rows,
// used for its encoder only (AppendEvent): no request is sent.
func commonSecurityLog(t *testing.T) *forward.Sentinel {
	t.Helper()
	s, err := forward.NewSentinel(forward.SentinelConfig{
		Endpoint: "https://dce.example.com", DCRImmutableID: "dcr-00000000000000000000000000000001",
		Table: forward.SentinelCommonSecurityLog, TokenSource: forward.StaticToken("t"),
	})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func mustField(t *testing.T, e *relaykit.Event, key string) string {
	t.Helper()
	v, ok := e.Field(key)
	require.True(t, ok, key)
	return string(v)
}

func decodeRow(t *testing.T, b []byte) map[string]any {
	t.Helper()
	require.True(t, json.Valid(b), "%s", b)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var row map[string]any
	require.NoError(t, dec.Decode(&row))
	return row
}

// TestVendorCommonSecurityLog runs each vendor's samples through the syslog
// parser, the vendor step and the CommonSecurityLog encoder, and checks the
// columns an analyst queries first, and that every column is one of the
// table's, of its type.
func TestVendorCommonSecurityLog(t *testing.T) {
	sink := commonSecurityLog(t)
	schema := forwardtest.TableColumns("CommonSecurityLog")
	require.NotEmpty(t, schema)
	tests := []struct {
		vendor, file string
		line         int
		loc          *time.Location
		cols         map[string]any
	}{
		{parse.VendorFortiGate, "fortigate.log", 1, time.UTC, map[string]any{
			"SourceIP": "10.1.100.11", "DestinationIP": "52.53.140.235", "SourcePort": json.Number("54190"),
			"DestinationPort": json.Number("443"), "Protocol": "6", "DeviceAction": "close", "DeviceEventClassID": "00013",
			"TimeGenerated": "2026-11-28T11:58:59.0000000Z", "DeviceVendor": "Fortinet", "DeviceProduct": "Fortigate",
			"Activity": "traffic:forward close", "LogSeverity": "3", "DeviceName": "FGT-1",
			"SentBytes": json.Number("3652"), "ReceivedBytes": json.Number("146668"),
		}},
		{parse.VendorFortiGate, "fortigate.log", 3, time.UTC, map[string]any{
			"SourceIP": "10.1.100.11", "DestinationIP": "185.230.61.185", "SourcePort": json.Number("59194"),
			"DestinationPort": json.Number("80"), "Protocol": "6", "DeviceAction": "blocked", "DeviceEventClassID": "13056",
			"TimeGenerated": "2018-12-27T11:23:50.0000000Z", "RequestURL": "/bizsquads?srcip=1.2.3.4&dstport=22",
		}},
		{parse.VendorPANOS, "panos.log", 1, cet, map[string]any{
			"SourceIP": "192.168.1.100", "DestinationIP": "203.0.113.50", "SourcePort": json.Number("54321"),
			"DestinationPort": json.Number("443"), "Protocol": "tcp", "DeviceAction": "allow", "DeviceEventClassID": "end",
			"TimeGenerated": "2026-11-28T11:58:58.1230000Z", "DeviceVendor": "Palo Alto Networks", "DeviceProduct": "PAN-OS",
			"Activity": "TRAFFIC", "LogSeverity": "1", "DeviceCustomString1": "Allow-Outbound",
			"DeviceCustomString1Label": "Rule", "StartTime": "2026-11-28T11:58:58.1230000Z", "Reason": "tcp-fin",
			"SourceTranslatedAddress": "198.51.100.10", "ReceiptTime": "2026/11/28 12:58:59",
		}},
		{parse.VendorPANOS, "panos.log", 3, cet, map[string]any{
			"SourceIP": "192.168.1.100", "DestinationIP": "198.51.100.99", "SourcePort": json.Number("52881"),
			"DestinationPort": json.Number("80"), "Protocol": "tcp", "DeviceAction": "block-url", "DeviceEventClassID": "url",
			"TimeGenerated": "2026-11-28T11:58:58.5000000Z", "RequestURL": "malware-cdn.example.net/payload.bin?a=1,b=2",
			"LogSeverity": "4",
		}},
		{parse.VendorCiscoASA, "asa.log", 1, time.UTC, map[string]any{
			"SourceIP": "203.0.113.5", "DestinationIP": "10.0.0.5", "SourcePort": json.Number("51234"),
			"DestinationPort": json.Number("443"), "Protocol": "TCP", "DeviceAction": "Built", "DeviceEventClassID": "302013",
			"TimeGenerated": "2026-11-28T12:58:59.0000000Z", "DeviceVendor": "Cisco", "DeviceProduct": "ASA",
			"LogSeverity": "6", "CommunicationDirection": "0", "ProcessName": "ASA",
		}},
		{parse.VendorCiscoASA, "asa.log", 8, time.UTC, map[string]any{
			"SourceIP": "2001:db8::5", "DestinationIP": "2001:db8:1::10", "SourcePort": json.Number("51234"),
			"DestinationPort": json.Number("443"), "Protocol": "tcp", "DeviceAction": "Deny", "DeviceEventClassID": "106023",
			"TimeGenerated": "2026-11-28T12:59:06.0000000Z",
		}},
		{parse.VendorCheckPoint, "checkpoint.log", 1, time.UTC, map[string]any{
			"SourceIP": "192.168.96.27", "DestinationIP": "192.168.96.80", "SourcePort": json.Number("63945"),
			"DestinationPort": json.Number("443"), "Protocol": "6", "DeviceAction": "Accept", "DeviceEventClassID": "Log",
			"TimeGenerated": "2026-11-28T12:58:59.0000000Z", "DeviceVendor": "Check Point",
			"DeviceProduct": "VPN-1 & FireWall-1", "DeviceVersion": "Check Point", "Activity": "https",
			"LogSeverity": "Unknown", "CommunicationDirection": "1", "DeviceCustomString2": "Outgoing",
			"Computer": "gw-01", "ReceiptTime": "1795870739000",
		}},
		{parse.VendorCheckPoint, "checkpoint.log", 2, time.UTC, map[string]any{
			"SourceIP": "2001:db8:ffff::7", "DestinationIP": "2001:db8::80", "SourcePort": json.Number("5353"),
			"DestinationPort": json.Number("161"), "Protocol": "17", "DeviceAction": "Drop", "DeviceEventClassID": "Log",
			"TimeGenerated": "2026-11-28T12:59:00.0000000Z",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.vendor+"/"+tt.file, func(t *testing.T) {
			e, err := syslogThenVendor(t, newVendor(t, tt.vendor, tt.loc), line(t, tt.file, tt.line))
			require.NoError(t, err)
			row := decodeRow(t, sink.AppendEvent(nil, &e))
			for col, want := range tt.cols {
				assert.Equal(t, want, row[col], col)
			}
			if tt.vendor == parse.VendorCiscoASA {
				assert.Equal(t, mustField(t, &e, "msg"), row["Message"], "the message text")
			}
			for col := range row {
				assert.Contains(t, schema, col, "column %q is not in CommonSecurityLog", col)
			}
		})
	}
}

// TestVendorCommonSecurityLogNothingLost: a line a step does not recognise
// reaches CommonSecurityLog with its raw message in Message; one it maps
// keeps the device's other fields in AdditionalExtensions; an unknown ASA
// message keeps its text in Message.
func TestVendorCommonSecurityLogNothingLost(t *testing.T) {
	sink := commonSecurityLog(t)
	e, err := syslogThenVendor(t, newVendor(t, parse.VendorFortiGate, time.UTC), line(t, "fortigate.log", 8))
	require.ErrorIs(t, err, parse.ErrNoMatch)
	row := decodeRow(t, sink.AppendEvent(nil, &e))
	assert.Equal(t, "this is not a FortiGate line", row["Message"])

	e, err = syslogThenVendor(t, newVendor(t, parse.VendorFortiGate, time.UTC), line(t, "fortigate.log", 1))
	require.NoError(t, err)
	row = decodeRow(t, sink.AppendEvent(nil, &e))
	assert.Contains(t, row["AdditionalExtensions"], "FTNTFGTappcat=Web.Client")
	assert.Contains(t, row["AdditionalExtensions"], "FTNTFGTdstcountry=United States")

	e, err = syslogThenVendor(t, newVendor(t, parse.VendorCiscoASA, time.UTC), line(t, "asa.log", 18))
	require.NoError(t, err)
	row = decodeRow(t, sink.AppendEvent(nil, &e))
	assert.Equal(t, "User 'enable_15' executed the 'write memory' command.", row["Message"])
	assert.Equal(t, "111008", row["DeviceEventClassID"])
}

// TestFortiGateSuppress: suppress keyed on the parsed src, dst and dpt
// after the FortiGate step collapses a burst of denies of one flow into
// the first event and a summary, and lets other flows through.
func TestFortiGateSuppress(t *testing.T) {
	sup, err := pipeline.NewSuppress(pipeline.SuppressConfig{Key: []string{"src", "dst", "dpt"}, Window: time.Minute})
	require.NoError(t, err)
	p := pipeline.NewPipeline(newVendor(t, parse.VendorFortiGate, time.UTC), sup)
	deny := line(t, "fortigate.log", 2)
	other := bytes.Replace([]byte(deny), []byte("dstport=3389"), []byte("dstport=22"), 1)
	start := time.Date(2026, 11, 28, 12, 59, 0, 0, time.UTC).UnixNano()
	var kept []relaykit.Event
	for i := range 6 {
		raw := []byte(deny)
		if i == 3 {
			raw = other
		}
		e := relaykit.Event{ReceiveTime: start + int64(i)*int64(time.Second)}
		syslog.NewParser(syslog.Config{Location: time.UTC}).Parse(&e, raw)
		keep, err := p.Run(&e)
		require.NoError(t, err)
		if keep {
			kept = append(kept, e.Clone())
		}
	}
	require.Len(t, kept, 2)
	for i, dpt := range []string{"3389", "22"} {
		v, _ := kept[i].Field("dpt")
		assert.Equal(t, dpt, string(v))
	}
	summaries, err := p.Flush(nil, pipeline.FlushAll)
	require.NoError(t, err)
	require.Len(t, summaries, 1)
	n, _ := summaries[0].Field(pipeline.FieldSuppressedCount)
	assert.Equal(t, "4", string(n))
	dpt, _ := summaries[0].Field("dpt")
	assert.Equal(t, "3389", string(dpt))
}
