package service

import (
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The hec and relp sections load with their defaults, and the summary
// names their tokens, never their secrets.
func TestAckInputsConfig(t *testing.T) {
	t.Setenv("TEST_HEC_SECRET", "4a6e1f0c-secret-token")
	cfg, err := config.LoadConfig(relaytest.WriteConfig(t, `
inputs:
  hec:
    - name: hec
      listen: 127.0.0.1:8088
      tokens:
        - {name: apps, token: "${TEST_HEC_SECRET}", index: main, indexes: [main, web], sourcetype: app, route: sentinel}
        - {name: fwd, token: other-token, ack: true}
  relp:
    - name: relp
      listen: 127.0.0.1:2514
`))
	require.NoError(t, err)
	h := cfg.Inputs.HEC[0]
	assert.Equal(t, config.ByteSize(8<<20), h.MaxBodySize)
	assert.Equal(t, 30*time.Second, h.AckTimeout)
	assert.Equal(t, 16, h.AckConcurrency)
	assert.Equal(t, config.Secret("4a6e1f0c-secret-token"), h.Tokens[0].Token)
	assert.Equal(t, 1024, h.MaxConnections)
	assert.Equal(t, config.ConnLimits{MaxConnectionsPerSource: 64, HandshakeTimeout: 10 * time.Second}, h.ConnLimits)
	assert.Equal(t, 2*time.Minute, h.IdleTimeout)
	r := cfg.Inputs.RELP[0]
	assert.Equal(t, 128, r.Window)
	assert.Equal(t, config.ByteSize(128<<10), r.MaxMessageSize)
	assert.Equal(t, 60*time.Second, r.AckTimeout)
	assert.Equal(t, 30*time.Second, r.FrameTimeout)
	sum := cfg.Summary()
	assert.Contains(t, sum, "input hec: hec http://127.0.0.1:8088/services/collector tokens=apps(index=main sourcetype=app route=sentinel),fwd(ack) (body max 8388608 B, ack timeout 30s, 1024 conns, 64 per source)")
	assert.Contains(t, sum, "input relp: relp tcp 127.0.0.1:2514 (window 128")
	assert.NotContains(t, sum, "secret-token")
	assert.NotContains(t, sum, "other-token")
}

// A validated config validates again, unchanged: the defaults Validate
// fills in are not taken for settings on a second pass.
func TestAckInputsValidateTwice(t *testing.T) {
	for _, tokens := range []string{"[{token: a}]", "[{token: a, ack: true}]"} {
		cfg, err := config.LoadConfig(relaytest.WriteConfig(t, `
inputs:
  hec: [{name: h, listen: "127.0.0.1:1", tokens: `+tokens+`}]
  relp: [{name: r, listen: "127.0.0.1:2"}]
`))
		require.NoError(t, err, tokens)
		before := cfg.Summary()
		require.NoError(t, cfg.Validate(), tokens)
		assert.Equal(t, before, cfg.Summary(), tokens)
	}
}

// Settings the hec and relp inputs do not use, or cannot keep their
// promise with, are errors naming the field.
func TestAckInputsConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"ack settings without an ack token", `
inputs:
  hec: [{name: h, listen: "127.0.0.1:1", tokens: [{token: a}], max_pending_acks: 10}]`, "inputs.hec[0].max_pending_acks: applies to tokens with ack: true"},
		{"no token", `
inputs:
  hec: [{name: h, listen: "127.0.0.1:1"}]`, "inputs.hec[0].tokens: at least one token is required"},
		{"token twice", `
inputs:
  hec: [{name: h, listen: "127.0.0.1:1", tokens: [{token: a}, {token: a}]}]`, "inputs.hec[0].tokens[1].token: the same token is listed twice"},
		{"token with a space", `
inputs:
  hec: [{name: h, listen: "127.0.0.1:1", tokens: [{token: "a b"}]}]`, "inputs.hec[0].tokens[0].token: contains white space"},
		{"default index not allowed", `
inputs:
  hec: [{name: h, listen: "127.0.0.1:1", tokens: [{token: a, index: x, indexes: [y]}]}]`, `inputs.hec[0].tokens[0].index: "x" is not in the token's indexes`},
		{"hec max_connections", `
inputs:
  hec: [{name: h, listen: "127.0.0.1:1", tokens: [{token: a}], max_connections: -1}]`, "inputs.hec[0].max_connections: must be positive"},
		{"hec max_connections_per_source", `
inputs:
  hec: [{name: h, listen: "127.0.0.1:1", tokens: [{token: a}], max_connections_per_source: -2}]`, "inputs.hec[0].max_connections_per_source: must be positive"},
		{"hec handshake_timeout", `
inputs:
  hec: [{name: h, listen: "127.0.0.1:1", tokens: [{token: a}], handshake_timeout: -1s}]`, "inputs.hec[0].handshake_timeout: must be positive"},
		{"hec frame_timeout", `
inputs:
  hec: [{name: h, listen: "127.0.0.1:1", tokens: [{token: a}], frame_timeout: 5s}]`, "field frame_timeout not found"},
		{"tls without key", `
inputs:
  relp: [{name: r, listen: "127.0.0.1:1", tls: {cert_file: c}}]`, "inputs.relp[0].tls: cert_file and key_file are required"},
		{"window", `
inputs:
  relp: [{name: r, listen: "127.0.0.1:1", window: 100000}]`, "inputs.relp[0].window: 100000 out of range"},
		{"unknown key", `
inputs:
  relp: [{name: r, listen: "127.0.0.1:1", windw: 10}]`, "field windw not found"},
		{"read size", `
inputs:
  relp: [{name: r, listen: "127.0.0.1:1", read_size: 16KiB}]`, "inputs.relp[0].read_size: not used by relp inputs"},
		{"on_failure destination", `
inputs:
  relp: [{name: r, listen: "127.0.0.1:1"}]
destinations:
  h: {type: hec, url: "https://x", token: t, spool: {mode: on_failure}}
routes:
  - {name: r, destinations: [h]}`, "destinations.h.spool.mode: on_failure cannot be used with an hec or relp input"},
		{"drop policy", `
inputs:
  hec: [{name: h, listen: "127.0.0.1:1", tokens: [{token: a}]}]
spool:
  full: drop_newest
destinations:
  h: {type: hec, url: "https://x", token: t}
routes:
  - {name: r, destinations: [h]}`, "destinations.h.spool.full: drop_newest cannot be used with an hec or relp input"},
		{"duplicate input name", `
inputs:
  syslog_udp: [{name: x, listen: "127.0.0.1:1"}]
  relp: [{name: x, listen: "127.0.0.1:2"}]`, `inputs.relp[0].name: duplicate input name "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.LoadConfig(relaytest.WriteConfig(t, tc.yaml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A relay with two inputs of each kind that has metrics of its own
// (kafka, hec, relp) starts, and its metrics name each input.
func TestMetricsOfSeveralInputs(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	cfg.Inputs.Kafka = []config.KafkaInputConfig{
		{Name: "k1", Brokers: []string{"127.0.0.1:1"}, Topics: []string{"a"}, Group: "g"},
		{Name: "k2", Brokers: []string{"127.0.0.1:1"}, Topics: []string{"b"}, Group: "g"},
	}
	cfg.Inputs.HEC = []config.HECInputConfig{
		{Name: "h1", Listen: "127.0.0.1:0", Tokens: []config.HECTokenConfig{{Token: "a"}}},
		{Name: "h2", Listen: "127.0.0.1:0", Tokens: []config.HECTokenConfig{{Token: "b"}}},
	}
	cfg.Inputs.RELP = []config.RELPInputConfig{{Name: "r1", Listen: "127.0.0.1:0"}, {Name: "r2", Listen: "127.0.0.1:0"}}
	tr := startRelay(t, cfg)
	metrics := "http://" + tr.addr("metrics") + "/metrics"
	for _, s := range []string{`relay_kafka_records_total{input="k1"}`, `relay_kafka_records_total{input="k2"}`,
		`relay_hec_requests_total{input="h1"}`, `relay_hec_requests_total{input="h2"}`,
		`relay_relp_sessions_total{input="r1"}`, `relay_relp_sessions_total{input="r2"}`,
		`relay_hec_acks_pending{input="h1"}`, `relay_ack_abandoned_events_total{input="r2"}`} {
		assert.Equal(t, float64(0), scrapeSample(metrics, s), s)
	}
}
