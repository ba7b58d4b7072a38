package service

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/dest"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward/forwardtest"
)

// TestDestinationOptionsThatDoNothingAreRejected: every destination
// setting that the destination's type would ignore is a config error that
// names the field and says why.
func TestDestinationOptionsThatDoNothingAreRejected(t *testing.T) {
	hec := "    type: hec\n    url: https://splunk.example:8088\n    token: t\n"
	sentinel := "    type: sentinel\n    endpoint: https://dce.example\n    dcr_immutable_id: dcr-0123456789abcdef0123456789abcdef\n" +
		"    stream: Custom-X_CL\n    tenant_id: t\n    client_id: c\n    client_secret: s\n"
	syslogTCP := "    type: syslog\n    network: tcp\n    address: 127.0.0.1:6514\n"
	archive := "    type: archive\n    dir: /tmp/x\n"
	const routeToD = "routes:\n  - name: r\n    final: true\n    destinations: [d]\n"
	tests := []struct {
		name, base, extra, want string
	}{
		{"syslog concurrency", syslogTCP, "    concurrency: 4\n", "destinations.d.concurrency: is set, but syslog destinations do not use it (only hec or sentinel destinations do)"},
		{"syslog gzip", syslogTCP, "    gzip: true\n", "destinations.d.gzip: is set, but syslog destinations"},
		{"syslog sourcetype", syslogTCP, "    sourcetype: x\n", "destinations.d.sourcetype: is set, but syslog destinations do not use it (only hec destinations do)"},
		{"syslog ca_file without tls", syslogTCP, "    ca_file: /etc/ca.pem\n", "destinations.d.ca_file: is set, but syslog destinations use it only with network: tls (network is tcp)"},
		{"syslog insecure without tls", syslogTCP, "    insecure_skip_verify: true\n", "destinations.d.insecure_skip_verify: is set, but syslog destinations use it only with network: tls"},
		{"hec stream", hec, "    stream: Custom-X_CL\n", "destinations.d.stream: is set, but hec destinations do not use it (only sentinel destinations do)"},
		{"hec columns", hec, "    columns:\n      host: Computer\n", "destinations.d.columns: is set, but hec destinations"},
		{"hec dir", hec, "    dir: /tmp\n", "destinations.d.dir: is set, but hec destinations do not use it (only archive destinations do)"},
		{"sentinel index", sentinel, "    index: main\n", "destinations.d.index: is set, but sentinel destinations do not use it (only hec destinations do)"},
		{"sentinel sourcetype", sentinel, "    sourcetype: x\n", "destinations.d.sourcetype: is set, but sentinel destinations"},
		{"sentinel address", sentinel, "    address: 127.0.0.1:1\n", "destinations.d.address: is set, but sentinel destinations"},
		{"archive timeout", archive, "    timeout: 5s\n", "destinations.d.timeout: is set, but archive destinations do not use it (only hec, sentinel, syslog, kafka or otlp destinations do)"},
		{"archive url", archive, "    url: https://x\n", "destinations.d.url: is set, but archive destinations"},
		{"hec table", hec, "    table: syslog\n", "destinations.d.table: is set, but hec destinations do not use it (only sentinel destinations do)"},
		{"sentinel indexed_fields", sentinel, "    indexed_fields: [msgid]\n", "destinations.d.indexed_fields: is set, but sentinel destinations do not use it (only hec destinations do)"},
		{"archive spool", archive, "    spool:\n      mode: on_failure\n", "destinations.d.spool: is set, but archive destinations do not use it (only hec, sentinel, syslog, kafka or otlp destinations do)"},
		{"hec fsync false", hec, "    fsync: false\n", "destinations.d.fsync: is set, but hec destinations do not use it (only archive destinations do)"},
		{"archive queue", archive, "    queue: 4\n", "destinations.d.queue: is set, but archive destinations"},
		{"archive retry", archive, "    retry:\n      max_attempts: 3\n", "destinations.d.retry: is set, but archive destinations do not use it (only hec, sentinel, syslog or otlp destinations do)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			yaml := routeToD + "destinations:\n  d:\n" + tt.base + tt.extra
			_, err := config.LoadConfig(relaytest.WriteConfig(t, yaml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)

			// The same destination without the setting is valid.
			_, err = config.LoadConfig(relaytest.WriteConfig(t, routeToD+"destinations:\n  d:\n"+tt.base))
			assert.NoError(t, err)
		})
	}
	// Settings a type uses are accepted, including TLS options for syslog
	// over tls.
	_, err := config.LoadConfig(relaytest.WriteConfig(t, routeToD+"destinations:\n  d:\n    type: syslog\n    network: tls\n    address: 127.0.0.1:6514\n"+
		"    ca_file: /etc/ca.pem\n    timeout: 5s\n    retry:\n      max_attempts: 3\n"))
	assert.NoError(t, err)
}

// TestHECDestinationSettingsWin: a HEC destination's sourcetype and index
// are what HEC receives for syslog events, which the relay stamps with
// sourcetype "syslog"; without them the event's own values go through.
func TestHECDestinationSettingsWin(t *testing.T) {
	tests := []struct {
		name, sourceType, index string
		wantST, wantIndex       string
	}{
		{"sourcetype", "linux_secure", "", "linux_secure", ""},
		{"index", "", "security", "syslog", "security"},
		{"both", "linux_secure", "security", "linux_secure", "security"},
		{"neither", "", "", "syslog", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
			cfg := relaytest.TestConfig(t)
			cfg.Destinations["hec"] = config.DestinationConfig{Spec: &dest.HECDestination{URL: hec.URL, Token: config.Secret(hec.Token()),
				SourceType: tt.sourceType, Index: tt.index, NetworkSettings: dest.NetworkSettings{Timeout: 5 * time.Second}}}
			cfg.Routes = append([]config.RouteConfig{{Name: "to-hec", Destinations: []string{"hec"}}}, cfg.Routes...)
			tr := startRelay(t, cfg)

			c, err := net.Dial("tcp", tr.addr("tcp"))
			require.NoError(t, err)
			w := bufio.NewWriter(c)
			for i := range 3 {
				fmt.Fprintf(w, "<38>1 2026-01-02T03:04:05Z web-1 sshd 42 - - attempt %d\n", i)
			}
			require.NoError(t, w.Flush())
			require.NoError(t, c.Close())
			relaytest.WaitFor(t, 10*time.Second, func() bool { return len(hec.Events()) == 3 }, "three events at HEC")
			s := tr.stop(t)
			checkBalanced(t, s)
			for _, e := range hec.Events() {
				assert.Equal(t, tt.wantST, e.SourceType)
				assert.Equal(t, tt.wantIndex, e.Index)
				assert.Equal(t, "web-1", e.Host)
				assert.Equal(t, "sshd", e.Source)
			}
		})
	}
}

// TestSentinelColumnsHonoured: each Sentinel column setting names the
// column the event's part lands in, "-" leaves the part out, and the
// stream setting is the stream the rows are posted to.
func TestSentinelColumnsHonoured(t *testing.T) {
	dcr := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{Stream: "Custom-Syslog_CL"})
	dc := dcr.Config()
	cfg := relaytest.TestConfig(t)
	cfg.Destinations["sentinel"] = config.DestinationConfig{Spec: &dest.SentinelDestination{
		Endpoint: dcr.URL, AuthorityHost: dcr.AuthorityHost,
		DCRImmutableID: dc.DCRImmutableID, Stream: "Custom-Syslog_CL", TenantID: dc.TenantID, ClientID: dc.ClientID,
		ClientSecret: config.Secret(dc.ClientSecret), NetworkSettings: dest.NetworkSettings{Timeout: 5 * time.Second},
		Columns: dest.ColumnsConfig{Time: "EventTime", Message: "SyslogMessage", Host: "HostName", Source: "-",
			SourceType: "Type", Facility: "Fac", Severity: "Sev", Fields: "-"},
	}}
	cfg.Routes = append([]config.RouteConfig{{Name: "to-sentinel", Destinations: []string{"sentinel"}}}, cfg.Routes...)
	tr := startRelay(t, cfg)

	c, err := net.Dial("tcp", tr.addr("tcp"))
	require.NoError(t, err)
	_, err = fmt.Fprintf(c, "<38>1 2026-01-02T03:04:05Z web-1 sshd 42 - - login failed\n")
	require.NoError(t, err)
	require.NoError(t, c.Close())
	relaytest.WaitFor(t, 10*time.Second, func() bool { return len(dcr.Rows()) == 1 }, "one row at the DCR")
	checkBalanced(t, tr.stop(t))

	row := dcr.Rows()[0]
	keys := make([]string, 0, len(row))
	for k := range row {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, []string{"EventTime", "SyslogMessage", "HostName", "Type", "Fac", "Sev"}, keys)
	assert.Equal(t, "login failed", row["SyslogMessage"])
	assert.Equal(t, "web-1", row["HostName"])
	assert.Equal(t, "syslog", row["Type"])
	assert.Equal(t, "2026-01-02T03:04:05.0000000Z", row["EventTime"])
	assert.Equal(t, json.Number("4"), row["Fac"])
	assert.Equal(t, json.Number("6"), row["Sev"])
}
