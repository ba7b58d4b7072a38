package service

import (
	"io"
	"net/http"
	"net/netip"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/dest"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/stream"
)

func TestDefaultConfig(t *testing.T) {
	cfg, err := config.LoadConfig("")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:5514", cfg.Inputs.SyslogUDP[0].Listen)
	assert.Equal(t, "127.0.0.1:5514", cfg.Inputs.SyslogTCP[0].Listen)
	assert.Equal(t, "127.0.0.1:9464", cfg.Metrics.Listen)
	assert.Equal(t, "./data/archive", relaytest.ArchiveOf(cfg).Dir)
	assert.Len(t, cfg.Destinations, 1, "destinations are off until configured")
	assert.Equal(t, config.ByteSize(64<<10), cfg.Inputs.SyslogTCP[0].MaxMessageSize)
	assert.Equal(t, config.SpoolAlways, cfg.Spool.Mode, "write-ahead spooling by default")
	assert.Equal(t, config.FullBlock, cfg.Spool.Full)
	assert.Equal(t, time.Second, cfg.Spool.ReplayInterval, "probe backoff cap")
}

// TestDestinationDefaults: a network destination gets the outage defaults
// (2 s in-memory budget, spool settings of the spool section) unless it
// sets its own.
func TestDestinationDefaults(t *testing.T) {
	cfg, err := config.LoadConfig(relaytest.WriteConfig(t, `
spool:
  full: drop_oldest
destinations:
  h: {type: hec, url: "https://x", token: t}
  s: {type: syslog, address: "127.0.0.1:1", spool: {mode: on_failure, full: drop_newest}, retry: {max_elapsed: 5s}}
  archive: {type: archive, dir: ./a}
routes:
  - {name: r, destinations: [h, s, archive]}
`))
	require.NoError(t, err)
	h, s := relaytest.SpecOf[*dest.HECDestination](cfg, "h"), relaytest.SpecOf[*dest.SyslogDestination](cfg, "s")
	assert.Equal(t, config.DestSpoolConfig{Mode: config.SpoolAlways, Full: config.FullDropOldest}, h.Spool)
	assert.Equal(t, config.RetryConfig{MaxAttempts: 10, MaxElapsed: 2 * time.Second, InitialBackoff: 200 * time.Millisecond, MaxBackoff: time.Second}, h.Retry)
	assert.Equal(t, 8, h.Queue)
	assert.Equal(t, config.DestSpoolConfig{Mode: config.SpoolOnFailure, Full: config.FullDropNewest}, s.Spool)
	assert.Equal(t, 5*time.Second, s.Retry.MaxElapsed)
	q, _ := relaytest.ArchiveOf(cfg).QueueConfig()
	assert.Nil(t, q, "the archive has no spool")
}

func TestConfigErrorsNameTheField(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"bad address", "inputs:\n  syslog_tcp:\n    - name: t\n      listen: nowhere\n", "inputs.syslog_tcp[0].listen: invalid address"},
		{"unknown key", "inputs:\n  syslog_tcp:\n    - name: t\n      listen: 127.0.0.1:1\n      max_conections: 3\n", "max_conections"},
		{"json max_connections", "inputs:\n  json_tcp:\n    - name: j\n      listen: 127.0.0.1:1\n      max_connections: -1\n", "inputs.json_tcp[0].max_connections: must be positive"},
		{"bad size", "inputs:\n  syslog_tcp:\n    - name: t\n      listen: 127.0.0.1:1\n      max_message_size: lots\n", "invalid size"},
		{"unknown destination", "routes:\n  - name: r\n    destinations: [nope]\n", `routes[0].destinations[0]: unknown destination "nope"`},
		{"bad regex", "routes:\n  - name: r\n    filter: '(['\n    destinations: [archive]\n", "routes[0].filter"},
		{"sentinel fields", "destinations:\n  s:\n    type: sentinel\n    dcr_immutable_id: abc\n", "destinations.s.endpoint: required"},
		{"dcr id", "destinations:\n  s:\n    type: sentinel\n    dcr_immutable_id: abc\n", `destinations.s.dcr_immutable_id: "abc" is not an immutable ID`},
		{"hec token", "destinations:\n  h:\n    type: hec\n    url: https://x\n", "destinations.h.token: required"},
		{"ring size", "workers:\n  ring_size: 1000\n", "workers.ring_size: 1000 is not a power of two"},
		{"read size", "inputs:\n  syslog_tcp:\n    - name: t\n      listen: 127.0.0.1:1\n      read_size: 2MiB\n", "inputs.syslog_tcp[0].read_size: 2097152 out of range 4KiB..1MiB"},
		{"read buffers", "inputs:\n  json_tcp:\n    - name: j\n      listen: 127.0.0.1:1\n      read_size: 1MiB\n      read_buffers: 64KiB\n", "inputs.json_tcp[0].read_buffers: 65536 is less than read_size"},
		{"step", "routes:\n  - name: r\n    destinations: [archive]\n    pipeline:\n      - type: sample\n", "routes[0].pipeline[0]: line 5: sample: n must be at least 1"},
		{"spool mode", "spool:\n  mode: sometimes\n", `spool.mode: unknown mode "sometimes"`},
		{"spool full", "spool:\n  full: overflow\n", `spool.full: unknown policy "overflow"`},
		{"dest spool mode", "destinations:\n  h:\n    type: hec\n    url: https://x\n    token: t\n    spool: {mode: never}\n", `destinations.h.spool.mode: unknown mode "never"`},
		{"missing env", "destinations:\n  h:\n    type: hec\n    url: https://x\n    token: ${RELAY_TEST_UNSET_VAR}\n", "RELAY_TEST_UNSET_VAR"},
		{"dest unknown key", "destinations:\n  h:\n    type: hec\n    url: https://x\n    token: t\n    tokn: t\n", "destinations.h.tokn: unknown setting (line 6; the settings of hec destinations are ca_file, compression_level, concurrency, gzip, index,"},
		{"dest unknown nested key", "destinations:\n  h:\n    type: hec\n    url: https://x\n    token: t\n    retry:\n      max_atempts: 3\n", "destinations.h.retry.max_atempts: unknown setting (line 7; the settings of retry are initial_backoff, max_attempts, max_backoff, max_elapsed)"},
		{"dest unknown key in a pointer section", "destinations:\n  k:\n    type: kafka\n    brokers: [127.0.0.1:1]\n    topic: t\n    tls: {ca_fle: /x}\n", "destinations.k.tls.ca_fle: unknown setting (line 6; the settings of tls are ca_file, insecure_skip_verify)"},
		{"dest bad value", "destinations:\n  h:\n    type: hec\n    url: https://x\n    token: t\n    queue: lots\n", "line 6: cannot unmarshal !!str `lots` into int"},
		{"dest unknown type", "destinations:\n  x:\n    type: s3\n", `destinations.x.type: unknown type "s3" (want archive, hec, sentinel, syslog, kafka or otlp)`},
		{"dest no type", "destinations:\n  x:\n    dir: /tmp\n", "destinations.x.type: required (archive, hec, sentinel, syslog, kafka or otlp)"},
		{"dest empty", "destinations:\n  x:\n", "destinations.x.type: required"},
		{"merged key of another type", "destinations:\n  h1: &h {type: hec, url: \"https://x\", token: t}\n  h2:\n    <<: *h\n    stream: Custom-X_CL\n", "destinations.h2.stream: is set, but hec destinations do not use it (only sentinel destinations do)"},
		{"key of another type merged", "destinations:\n  h1: &h {type: hec, url: \"https://x\", token: t, table: syslog}\n  h2: {<<: [*h], index: main}\n", "destinations.h2.table: is set, but hec destinations do not use it (only sentinel destinations do)"},
		{"sources off", "sources:\n  silent_after: 5s\n", `sources.silent_after: line 2: set, but the sources section is off: add "enabled: true" to sources`},
		{"sources off explicitly", "sources:\n  enabled: false\n  rate_limit: {events_per_second: 100}\n", "sources.rate_limit: line 3: set, but the sources section is off"},
		{"sources keys otlp host", "inputs:\n  otlp: [{name: o, http_listen: 127.0.0.1:1}]\nsources:\n  enabled: true\n  keys: {o: host}\n", "sources.keys.o: json_tcp, relp, hec and otlp inputs are keyed by address only"},
		{"api off", "api:\n  token: s3cret\n", "api.token: line 2: set, but the api section is off"},
		{"proxy without allowed", "inputs:\n  relp: [{name: r, listen: 127.0.0.1:1, proxy_protocol: required}]\n", "inputs.relp[0].proxy_allowed: proxy_protocol required needs the addresses allowed to send the header"},
		{"proxy allowed while off", "inputs:\n  hec: [{name: h, listen: 127.0.0.1:1, tokens: [{token: t}], proxy_allowed: [10.0.0.1]}]\n", "inputs.hec[0].proxy_allowed: set, but proxy_protocol is off"},
		{"proxy bad address", "inputs:\n  json_tcp: [{name: j, listen: 127.0.0.1:1, proxy_protocol: optional, proxy_allowed: [10.0.0.300]}]\n", `inputs.json_tcp[0].proxy_allowed: stream: invalid config: PROXY allowed address "10.0.0.300"`},
		{"proxy bad mode", "inputs:\n  syslog_tcp: [{name: t, listen: 127.0.0.1:1, proxy_protocol: sometimes}]\n", `PROXY protocol mode "sometimes", want off, optional or required`},
		{"tls auto and files", "inputs:\n  otlp: [{name: o, http_listen: 127.0.0.1:1, tls: {auto: true, cert_file: /c}}]\n", "inputs.otlp[0].tls.auto: excludes cert_file and key_file"},
		{"tls without files", "inputs:\n  syslog_tcp: [{name: t, listen: 127.0.0.1:1, tls: {client_ca_file: /ca}}]\n", "inputs.syslog_tcp[0].tls: cert_file and key_file are required (or auto: true)"},
		{"tls auto directory", "inputs:\n  relp: [{name: r, listen: 127.0.0.1:1, tls: {auto: true}}]\ndestinations:\n  tls: {type: hec, url: https://x, token: t}\n", `destinations.tls: its spool directory "tls" is where the inputs with tls auto keep their certificate`},
		{"shared spool directory", "destinations:\n  a/b:\n    type: hec\n    url: https://x\n    token: t\n  a_b:\n    type: hec\n    url: https://y\n    token: t\n", `destinations.a_b: its spool directory "a_b" is also that of destination "a/b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.LoadConfig(relaytest.WriteConfig(t, tt.yaml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestProxyAndTLSConfig: proxy_protocol and proxy_allowed on every
// listening stream input, tls: {auto: true} kept in spool.dir/tls, and
// the summary lines that name them.
func TestProxyAndTLSConfig(t *testing.T) {
	cfg, err := config.LoadConfig(relaytest.WriteConfig(t, `
inputs:
  syslog_tcp: [{name: t, listen: 127.0.0.1:1, proxy_protocol: required, proxy_allowed: [10.0.0.5, 10.0.1.0/24], tls: {auto: true}}]
  json_tcp: [{name: j, listen: 127.0.0.1:2, proxy_protocol: off}]
  relp: [{name: r, listen: 127.0.0.1:3, proxy_protocol: optional, proxy_allowed: ["::/0", 0.0.0.0/0]}]
  hec: [{name: h, listen: 127.0.0.1:4, tokens: [{token: t}], proxy_protocol: required, proxy_allowed: [127.0.0.1]}]
  otlp: [{name: o, grpc_listen: 127.0.0.1:5, proxy_protocol: required, proxy_allowed: [127.0.0.1], tls: {auto: true}}]
spool: {dir: /var/lib/relay/spool}
`))
	require.NoError(t, err)
	assert.Equal(t, stream.ProxyRequired, cfg.Inputs.SyslogTCP[0].ProxyProtocol)
	assert.Equal(t, stream.ProxyOff, cfg.Inputs.JSONTCP[0].ProxyProtocol)
	assert.Equal(t, stream.ProxyOptional, cfg.Inputs.RELP[0].ProxyProtocol)
	assert.Equal(t, stream.ProxyRequired, cfg.Inputs.HEC[0].ProxyProtocol)
	var sc stream.Config
	cfg.Inputs.SyslogTCP[0].ConnLimits.Apply(&sc)
	assert.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.0.0.5/32"), netip.MustParsePrefix("10.0.1.0/24")}, sc.ProxyAllowed)
	assert.Equal(t, 10*time.Second, sc.HandshakeTimeout, "the PROXY header's deadline, with the TLS handshake's")
	assert.Equal(t, "/var/lib/relay/spool/tls", cfg.AutoTLSDir())
	sum := cfg.Summary()
	assert.Contains(t, sum, "frame 30s, proxy required from 10.0.0.5 10.0.1.0/24, self-signed certificate)")
	assert.Contains(t, sum, "64 per source, tls, proxy required from 127.0.0.1, self-signed certificate)")
	assert.Contains(t, sum, "input j: json lines tcp 127.0.0.1:2 (max 1048576 B)\n")
}

// TestOffSectionDefaults: a section that is off may still list its
// settings with the default values (a copy of -print-default-config), and
// an enabled one may set anything.
func TestOffSectionDefaults(t *testing.T) {
	_, err := config.LoadConfig(relaytest.WriteConfig(t, string(config.DefaultYAML)))
	require.NoError(t, err, "the default config, as printed, loads as a file")
	cfg, err := config.LoadConfig(relaytest.WriteConfig(t, "sources:\n  enabled: true\n  silent_after: 5s\napi:\n  enabled: true\n  token: s3cret\n"))
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, cfg.Sources.SilentAfter)
}

func TestConfigEnvAndRedaction(t *testing.T) {
	t.Setenv("RELAY_TEST_SECRET", "hunter2-very-secret")
	t.Setenv("RELAY_TEST_TOKEN", "tok-abcdef")
	cfg, err := config.LoadConfig(relaytest.WriteConfig(t, `
destinations:
  archive:
    type: archive
    dir: ${RELAY_TEST_DIR:-/tmp/relay-archive}
  sentinel:
    type: sentinel
    endpoint: https://dce.example.ingest.monitor.azure.com
    dcr_immutable_id: dcr-00000000000000000000000000000001
    stream: Custom-Syslog_CL
    tenant_id: 00000000-0000-0000-0000-000000000001
    client_id: 00000000-0000-0000-0000-000000000002
    client_secret: ${RELAY_TEST_SECRET}
  hec:
    type: hec
    url: https://splunk.example.com:8088
    token: ${RELAY_TEST_TOKEN}
routes:
  - name: all
    final: true
    destinations: [sentinel, hec, archive]
`))
	require.NoError(t, err)
	assert.Equal(t, config.Secret("hunter2-very-secret"), relaytest.SpecOf[*dest.SentinelDestination](cfg, "sentinel").ClientSecret)
	assert.Equal(t, "/tmp/relay-archive", relaytest.ArchiveOf(cfg).Dir)
	sum := cfg.Summary()
	assert.NotContains(t, sum, "hunter2")
	assert.NotContains(t, sum, "tok-abcdef")
	assert.Contains(t, sum, "secret=<redacted>")
	assert.Contains(t, sum, "token=<redacted>")
	assert.Contains(t, sum, "dcr=dcr-00000000000000000000000000000001")
	// The file's sections replace the defaults'; the others stay.
	assert.Equal(t, "127.0.0.1:5514", cfg.Inputs.SyslogTCP[0].Listen)
}

// TestMetricsAndHealth scrapes /metrics and /healthz over HTTP.
func TestMetricsAndHealth(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	tr := startRelay(t, cfg)
	relaytest.Send(t, "tcp", tr.addr("tcp"), []byte("<13>1 - h a - - - metered\n"))
	relaytest.WaitFor(t, 5*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == 1 }, "event archived")
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	get := func(path string) (int, string) {
		resp, err := client.Get("http://" + tr.addr("metrics") + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, body := get("/healthz")
	assert.Equal(t, 200, code)
	assert.Equal(t, "ok\n", body)
	code, body = get("/metrics")
	assert.Equal(t, 200, code)
	for _, want := range []string{
		`relay_input_received_events_total{input="tcp",kind="syslog_tcp"} 1`,
		`relay_destination_delivered_events_total{destination="archive",type="archive"} 1`,
		`relay_routed_events_total 1`,
		`relay_dropped_events_total{reason="queue_full"} 0`,
		`relay_destination_healthy{destination="archive"} 1`,
	} {
		assert.Contains(t, body, want)
	}
}

// TestReadmeConfig keeps the full example in README.md valid.
func TestReadmeConfig(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	blocks := strings.Split(string(readme), "```yaml\n")
	require.Len(t, blocks, 23, "twenty-two yaml blocks in README.md: reduction, the device logs' destinations, parse steps and four recipes, per-source statistics (its section, Prometheus rules, the route to Sentinel), the full example, the table plans recipe, the edge and the SIEM tier, TLS certificates, the PROXY protocol, the relays behind HAProxy, the HEC and RELP inputs, the Splunk to Sentinel migration, the operator API, OTLP")
	t.Setenv("RELAY_API_TOKEN", "api-token")
	t.Setenv("SENTINEL_CLIENT_SECRET", "x")
	t.Setenv("HEC_TOKEN", "y")
	t.Setenv("KAFKA_PASSWORD", "z")
	t.Setenv("HEC_TOKEN_APPS", "apps-token")
	t.Setenv("HEC_TOKEN_FWD", "fwd-token")
	t.Setenv("HEC_TOKEN_SYSLOG", "syslog-token")
	t.Setenv("OTLP_TOKEN", "otlp-token")
	t.Setenv("OTLP_API_KEY", "otlp-key")
	var cfgs []config.Config
	for i, b := range blocks[1:] {
		yaml, _, ok := strings.Cut(b, "```")
		require.True(t, ok)
		if m := regexp.MustCompile(`<!-- (device-|parse-steps)[^>]*-->\s*$`); m.MatchString(blocks[i]) {
			continue // the device logs' blocks, read together: TestDeviceRecipes, TestParseStepsReadme
		}
		if strings.Contains(yaml, "${SENTINEL_AUX_ENDPOINT}") { // the table plans recipe: TestPlansRecipe runs it
			continue
		}
		if strings.HasPrefix(yaml, "groups:") { // Prometheus rules, not a relay config
			assert.Contains(t, yaml, "expr: relay_sources_silent > 0")
			assert.Contains(t, yaml, `relay_sources_rate_limited_events_total{mode="drop"}`)
			continue
		}
		cfg, err := config.LoadConfig(relaytest.WriteConfig(t, yaml))
		require.NoError(t, err)
		cfgs = append(cfgs, cfg)
	}
	red := cfgs[0]
	require.Len(t, red.Routes, 3, "reduction")
	assert.Equal(t, "suppress", red.Routes[0].Pipeline[0].Type)
	assert.Equal(t, []string{"src", "dst", "dpt", "act"}, red.Routes[1].Pipeline[0].Key)
	assert.Equal(t, "keep", red.Routes[2].Pipeline[1].Type)
	src := cfgs[1].Sources
	assert.True(t, src.Enabled, "per-source statistics")
	assert.Equal(t, 2000.0, src.RateLimit.EventsPerSecond)
	assert.Len(t, src.Overrides, 2)
	health := cfgs[2]
	assert.Equal(t, "^relay:source_health$", health.Routes[0].Filter)
	assert.Equal(t, "Custom-RelaySourceHealth_CL", relaytest.SpecOf[*dest.SentinelDestination](health, "sentinel-health").Stream)
	cfgs = cfgs[3:]
	cfg := cfgs[0]
	assert.Len(t, cfg.Destinations, 4)
	assert.Len(t, cfg.Routes, 4)
	assert.Equal(t, "Microsoft-Syslog", relaytest.SpecOf[*dest.SentinelDestination](cfg, "sentinel-syslog").Stream)
	assert.Equal(t, "Microsoft-CommonSecurityLog", relaytest.SpecOf[*dest.SentinelDestination](cfg, "sentinel-cef").Stream)
	assert.NotNil(t, cfg.Inputs.SyslogTCP[1].TLS)
	assert.Equal(t, "kafka", cfgs[1].Destinations["kafka"].Spec.Kind(), "edge tier")
	assert.Len(t, cfgs[2].Inputs.Kafka, 1, "SIEM tier")
	tlsCfg := cfgs[3]
	assert.Equal(t, "/etc/relay/tls.crt", tlsCfg.Inputs.RELP[0].TLS.CertFile, "TLS certificates")
	assert.True(t, tlsCfg.Inputs.SyslogTCP[0].TLS.Auto)
	assert.Equal(t, stream.ProxyRequired, cfgs[4].Inputs.RELP[0].ProxyProtocol, "PROXY protocol")
	ha := cfgs[5]
	for _, l := range []config.ConnLimits{ha.Inputs.SyslogTCP[0].ConnLimits, ha.Inputs.RELP[0].ConnLimits, ha.Inputs.HEC[0].ConnLimits} {
		assert.Equal(t, stream.ProxyRequired, l.ProxyProtocol, "the relays behind HAProxy")
		assert.Equal(t, []string{"10.0.0.10"}, l.ProxyAllowed)
	}
	assert.Empty(t, ha.Inputs.SyslogUDP)
	cfgs = append(cfgs[:3], cfgs[6:]...)
	assert.Len(t, cfgs[3].Inputs.HEC[0].Tokens, 2, "HEC input")
	assert.Equal(t, 128, cfgs[4].Inputs.RELP[0].Window, "RELP input")
	mig := cfgs[5]
	assert.Len(t, mig.Inputs.HEC, 1, "migration")
	assert.Len(t, mig.Inputs.RELP, 1)
	assert.Empty(t, mig.Inputs.SyslogUDP)
	assert.Equal(t, "Microsoft-Syslog", relaytest.SpecOf[*dest.SentinelDestination](mig, "sentinel-syslog").Stream)
	assert.Equal(t, "Custom-AppEvents_CL", relaytest.SpecOf[*dest.SentinelDestination](mig, "sentinel-apps").Stream)
	assert.Equal(t, config.APIConfig{Enabled: true, Token: "api-token"}, cfgs[6].API, "operator API")
	assert.Len(t, cfgs[7].Inputs.OTLP, 1, "OTLP")
	assert.Equal(t, "grpc", relaytest.SpecOf[*dest.OTLPDestination](cfgs[7], "backend").Protocol)
}
