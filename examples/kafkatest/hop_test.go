package kafkatest

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward/forwardtest"
)

// hopFrames are syslog frames with every part the relay carries: priority,
// time with zone and fraction, host, app, procid, msgid, structured data
// (escapes included), a BOM, CEF extensions, a Cisco tag, a message without
// PRI, one without a timestamp or host, and one that is not UTF-8.
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
}

// TestKafkaHopFidelity: an edge relay sends every event both straight to
// HEC and Sentinel (the Syslog table) and through Kafka to a SIEM-tier
// relay that sends it to a second HEC and Sentinel. What the two pairs
// receive is the same, field by field: the hop loses nothing the
// destinations see (facility and severity included).
func TestKafkaHopFidelity(t *testing.T) {
	c := newCluster(t, 1, 2, "syslog")
	broker := c.ListenAddrs()[0]
	direct := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	hop := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	directDCR := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{Stream: "Microsoft-Syslog"})
	hopDCR := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{Stream: "Microsoft-Syslog"})

	dests := func(hec *forwardtest.HECServer, dcr *forwardtest.DCRServer) string {
		cfg := dcr.Config()
		return fmt.Sprintf(`
  hec:
    type: hec
    url: %s
    token: %s
  sentinel:
    type: sentinel
    table: syslog
    collector_host_name: relay-test
    endpoint: %s
    authority_host: %s
    dcr_immutable_id: %s
    stream: Microsoft-Syslog
    tenant_id: %s
    client_id: %s
    client_secret: %s`, hec.URL, hec.Token(), dcr.URL, dcr.AuthorityHost, cfg.DCRImmutableID, cfg.TenantID, cfg.ClientID, cfg.ClientSecret)
	}
	common := func(dir, metrics string) string {
		return fmt.Sprintf("spool:\n  dir: %s/spool\ndead_letter:\n  dir: %s/deadletter\nmetrics:\n  listen: %s\ntimezone: UTC\nworkers:\n  count: 2\n", dir, dir, metrics)
	}
	edgeTCP, edgeM, siemM := freePort(t), freePort(t), freePort(t)
	edge := startRelay(t, "edge", fmt.Sprintf(`
inputs:
  syslog_tcp:
    - name: tcp
      listen: %s
routes:
  - name: all
    final: true
    destinations: [hec, sentinel, kafka]
destinations:%s
  kafka:
    type: kafka
    brokers: [%s]
    topic: syslog
`, edgeTCP, dests(direct, directDCR), broker)+common(t.TempDir(), edgeM), edgeM)
	siem := startRelay(t, "siem", fmt.Sprintf(`
inputs:
  kafka:
    - name: kafka
      brokers: [%s]
      topics: [syslog]
      group: siem
routes:
  - name: all
    final: true
    destinations: [hec, sentinel]
destinations:%s
`, broker, dests(hop, hopDCR))+common(t.TempDir(), siemM), siemM)

	conn, err := net.Dial("tcp", edgeTCP)
	require.NoError(t, err)
	for _, f := range hopFrames {
		_, err := fmt.Fprintf(conn, "%d %s", len(f), f)
		require.NoError(t, err)
	}
	require.NoError(t, conn.Close())

	n := len(hopFrames)
	require.Eventually(t, func() bool {
		return len(direct.Events()) == n && len(hop.Events()) == n && len(directDCR.Rows()) == n && len(hopDCR.Rows()) == n
	}, 30*time.Second, 20*time.Millisecond, "every event at both HEC servers and both DCRs")

	// HEC: everything but the request bookkeeping.
	hecView := func(s *forwardtest.HECServer) []forwardtest.HECEvent {
		evs := s.Events()
		for i := range evs {
			evs[i].Channel, evs[i].Request = "", 0
		}
		slices.SortFunc(evs, func(a, b forwardtest.HECEvent) int { return strings.Compare(a.Event, b.Event) })
		return evs
	}
	want, got := hecView(direct), hecView(hop)
	assert.Equal(t, want, got, "HEC receives the same events through Kafka as directly")
	for _, e := range got {
		if strings.Contains(e.Event, "Accepted password") {
			assert.Equal(t, "local4", e.Fields["facility"], "facility behind Kafka")
			assert.Equal(t, "notice", e.Fields["severity"], "severity behind Kafka")
			assert.Equal(t, "LOGIN", e.Fields["msgid"])
			assert.Equal(t, `a "quoted" ] value`, e.Fields["sd.meta.note"])
			assert.Equal(t, "1795420800.123", e.Time, "10:00:00.123456+02:00 is 08:00:00.123456Z")
		}
		if strings.Contains(e.Event, "Fortinet") {
			assert.Equal(t, "cef", e.SourceType)
			assert.Equal(t, "Fortinet", e.Fields["cef.device_vendor"])
			assert.Equal(t, "a=b", e.Fields["cs1"], "CEF extension with an escaped =")
		}
	}

	// Sentinel's Syslog table: every column (Facility and SeverityLevel
	// included), row by row.
	rowView := func(s *forwardtest.DCRServer) []map[string]any {
		rows := s.Rows()
		slices.SortFunc(rows, func(a, b map[string]any) int {
			return strings.Compare(fmt.Sprint(a["SyslogMessage"]), fmt.Sprint(b["SyslogMessage"]))
		})
		return rows
	}
	wantRows, gotRows := rowView(directDCR), rowView(hopDCR)
	assert.Equal(t, wantRows, gotRows, "Sentinel receives the same rows through Kafka as directly")
	for _, r := range gotRows {
		if strings.Contains(fmt.Sprint(r["SyslogMessage"]), "Accepted password") {
			assert.Equal(t, "local4", r["Facility"], "Facility behind Kafka")
			assert.Equal(t, "notice", r["SeverityLevel"], "SeverityLevel behind Kafka")
		}
	}

	edge.stop(t)
	siem.stop(t)
	for _, p := range []*relayProc{edge, siem} {
		assert.Contains(t, p.log.String(), "dropped=0", "%s final ledger", p.name)
	}
}
