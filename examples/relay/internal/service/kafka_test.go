package service

import (
	"strings"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/dest"
	"github.com/relaykit/relaykit/examples/relay/internal/input"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/valyala/fastjson"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/kafka"
)

// kafkaHopLines are syslog frames with every part the relay carries, for
// the Kafka hop tests: the edge parses them, writes the archive JSON to
// Kafka, and the SIEM tier reads it back.
var kafkaHopLines = []string{
	"<165>1 2026-11-23T10:00:00.123456+02:00 fw-1.example.com sshd 4242 LOGIN " +
		`[exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][meta sequenceId="7" note="a \"quoted\" \] value"] ` +
		"\xef\xbb\xbfAccepted password for root from 192.0.2.7 port 52814 ssh2",
	"<38>Nov 23 10:00:01 host-3 sudo[1234]: pam_unix(sudo:session): session opened for user root, index me",
	"<134>Nov 23 10:00:02 fw-2 CEF:0|Fortinet|Fortigate|v6.0.3|00013|traffic:forward close|3|src=10.1.100.11 dst=52.53.140.235 " +
		`spt=54190 dpt=443 proto=6 act=close app=HTTPS out=3652 in=146668 deviceExternalId=FGT5HD3915800610 cs1=a\=b cs1Label=eq`,
	"<189>: %LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to up",
	"<14>1 - - - - - - no timestamp, no host, tab\tand \u00e9",
	"<13>1 2026-11-23T10:00:03.5Z h app - - - bad \xff\xfe bytes",
	"just a line without a priority",
}

func TestKafkaConfig(t *testing.T) {
	cfg, err := config.LoadConfig(relaytest.WriteConfig(t, `
inputs:
  kafka:
    - name: k
      brokers: [127.0.0.1:9092]
      topics: [syslog]
      group: siem
routes:
  - name: all
    final: true
    destinations: [out]
destinations:
  out:
    type: kafka
    brokers: [127.0.0.1:9092, 127.0.0.1:9093]
    topic: syslog
    key: field:tenant
    compression: zstd
    tls: {}
    sasl: {mechanism: SCRAM-SHA-512, user: relay, password: s3cret}
`))
	require.NoError(t, err)
	in := cfg.Inputs.Kafka[0]
	assert.Equal(t, "json", in.Format)
	assert.Equal(t, "earliest", in.Start)
	assert.Equal(t, time.Second, in.CommitInterval)
	assert.Equal(t, 10*time.Second, in.SessionTimeout)
	d := relaytest.SpecOf[*dest.KafkaDestination](cfg, "out")
	assert.Equal(t, "json", d.Format)
	assert.Equal(t, []string{"127.0.0.1:9092", "127.0.0.1:9093"}, d.Brokers)
	assert.NotContains(t, cfg.Summary(), "s3cret")
	assert.Contains(t, cfg.Summary(), "destination out: kafka")
	assert.Contains(t, cfg.Summary(), "input k: kafka")

	tests := []struct{ name, yaml, want string }{
		{"no brokers", "destinations: {out: {type: kafka, topic: t}}", "destinations.out.brokers: at least one broker"},
		{"no topic", "destinations: {out: {type: kafka, brokers: [127.0.0.1:1]}}", "destinations.out.topic: required"},
		{"bad key", "destinations: {out: {type: kafka, brokers: [127.0.0.1:1], topic: t, key: ip}}", "destinations.out.key: unknown key"},
		{"bad compression", "destinations: {out: {type: kafka, brokers: [127.0.0.1:1], topic: t, compression: brotli}}", "destinations.out.compression"},
		{"bad acks", "destinations: {out: {type: kafka, brokers: [127.0.0.1:1], topic: t, acks: two}}", "destinations.out.acks"},
		{"bad sasl", "destinations: {out: {type: kafka, brokers: [127.0.0.1:1], topic: t, sasl: {mechanism: GSSAPI}}}", "destinations.out.sasl"},
		{"input group", "inputs: {kafka: [{name: k, brokers: [127.0.0.1:1], topics: [t]}]}", "inputs.kafka[0].group: required"},
		{"input topics", "inputs: {kafka: [{name: k, brokers: [127.0.0.1:1], group: g}]}", "inputs.kafka[0].topics"},
		{"input with on_failure", "inputs: {kafka: [{name: k, brokers: [127.0.0.1:1], topics: [t], group: g}]}\ndestinations: {out: {type: hec, url: 'http://127.0.0.1:1', token: t, spool: {mode: on_failure}}}",
			"destinations.out.spool.mode: on_failure cannot be used with a kafka input"},
		{"input with a drop policy", "inputs: {kafka: [{name: k, brokers: [127.0.0.1:1], topics: [t], group: g}]}\ndestinations: {out: {type: hec, url: 'http://127.0.0.1:1', token: t, spool: {full: drop_oldest}}}",
			"destinations.out.spool.full: drop_oldest cannot be used with a kafka input"},
		{"input format", "inputs: {kafka: [{name: k, brokers: [127.0.0.1:1], topics: [t], group: g, format: xml}]}", "inputs.kafka[0].format"},
		{"plain without tls", "destinations: {out: {type: kafka, brokers: [127.0.0.1:1], topic: t, sasl: {mechanism: PLAIN, user: u, password: p}}}",
			"destinations.out.sasl: SASL PLAIN without tls sends the password, and every record, in the clear"},
		{"scram without tls", "destinations: {out: {type: kafka, brokers: [127.0.0.1:1], topic: t, sasl: {mechanism: SCRAM-SHA-256, user: u, password: p}}}",
			"destinations.out.sasl: SASL SCRAM-SHA-256 without tls"},
		{"input plain without tls", "inputs: {kafka: [{name: k, brokers: [127.0.0.1:1], topics: [t], group: g, sasl: {mechanism: PLAIN, user: u, password: p}}]}",
			"inputs.kafka[0].sasl: SASL PLAIN without tls"},
		{"input scram without tls", "inputs: {kafka: [{name: k, brokers: [127.0.0.1:1], topics: [t], group: g, sasl: {mechanism: SCRAM-SHA-512, user: u, password: p}}]}",
			"inputs.kafka[0].sasl: SASL SCRAM-SHA-512 without tls"},
		{"allow_plaintext_sasl on hec", "destinations: {out: {type: hec, url: 'http://127.0.0.1:1', token: t, allow_plaintext_sasl: true}}",
			"destinations.out.allow_plaintext_sasl: is set, but hec destinations do not use it (only kafka destinations do)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.LoadConfig(relaytest.WriteConfig(t, tt.yaml+"\nroutes: [{name: r, final: true, destinations: [archive]}]\n"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}

	// SASL over TLS, or without it when allowed explicitly, passes.
	for _, yaml := range []string{
		"destinations: {out: {type: kafka, brokers: [127.0.0.1:1], topic: t, tls: {}, sasl: {mechanism: PLAIN, user: u, password: p}}}",
		"destinations: {out: {type: kafka, brokers: [127.0.0.1:1], topic: t, allow_plaintext_sasl: true, sasl: {mechanism: PLAIN, user: u, password: p}}}",
		"inputs: {kafka: [{name: k, brokers: [127.0.0.1:1], topics: [t], group: g, tls: {ca_file: /etc/ca.pem}, sasl: {mechanism: SCRAM-SHA-512, user: u, password: p}}]}",
		"inputs: {kafka: [{name: k, brokers: [127.0.0.1:1], topics: [t], group: g, allow_plaintext_sasl: true, sasl: {mechanism: SCRAM-SHA-256, user: u, password: p}}]}",
	} {
		route := "archive"
		if strings.HasPrefix(yaml, "destinations") {
			route = "out"
		}
		_, err := config.LoadConfig(relaytest.WriteConfig(t, yaml+"\nroutes: [{name: r, final: true, destinations: ["+route+"]}]\n"))
		assert.NoError(t, err, yaml)
	}
}

// TestKafkaDecodeAllocs: what the kafka destination writes, the input reads back,
// for every field the relay carries: events parsed by the relay's own
// syslog parser (RFC 5424 with zone, fraction, procid, msgid, structured
// data and a BOM; RFC 3164 with a pid; CEF; a Cisco tag; no PRI; a frame
// that does not parse; no timestamp) decode to the event the edge had, and
// HEC is sent the same bytes either way.
func TestKafkaDecodeAllocs(t *testing.T) {
	sp := input.NewSyslogParser(time.UTC)
	var parser fastjson.Parser
	decode := func(r *kgo.Record, e *relaykit.Event) error { return kafka.DecodeJSON(&parser, r.Value, e) }
	hec, err := forward.NewHEC(forward.HECConfig{URL: "http://127.0.0.1:1", Token: "t"})
	require.NoError(t, err)
	t.Cleanup(func() { hec.Close() })
	for _, line := range kafkaHopLines {
		var src relaykit.Event
		sp.Parse(&src, []byte(line), "192.0.2.1")
		if strings.Contains(line, "index me") {
			src.Index = append(src.Index, "net"...)
		}
		var got relaykit.Event
		require.NoError(t, decode(&kgo.Record{Value: kafka.AppendJSON(nil, &src)}, &got), line)

		// The hop keeps what destinations see. It carries the receive
		// time only for an event without a time of its own (the record's
		// time is then the receive time, and says so), and not the flags
		// that only the edge's counters use.
		want := src
		if src.Time != 0 {
			want.ReceiveTime = 0
		}
		want.Flags &= relaykit.FlagPriority | relaykit.FlagPriorityAssumed
		assert.Equal(t, want, got, line)
		direct, err := hec.AppendEvent(nil, &src)
		require.NoError(t, err)
		hop, err := hec.AppendEvent(nil, &got)
		require.NoError(t, err)
		assert.Equal(t, string(direct), string(hop), "HEC event: %s", line)
	}

	// Priority members: codes win over names; names or numbers alone are
	// read too; a half or an unknown value is an error (dead-lettered).
	for _, c := range []struct {
		json string
		pri  int // -1: no priority
	}{
		{`{"message":"m","facility":"auth","facility_code":4,"severity":"err","severity_code":3}`, 4<<3 | 3},
		{`{"message":"m","facility":"local7","severity":"debug"}`, 23<<3 | 7},
		{`{"message":"m","facility":4,"severity":3}`, 4<<3 | 3},
		{`{"message":"m","facility_code":0,"severity_code":0}`, 0},
		{`{"message":"m"}`, -1},
		{`{"message":"m","facility":"user","facility_code":1,"severity":"notice","severity_code":5,"priority_assumed":true}`, 13},
	} {
		var got relaykit.Event
		require.NoError(t, decode(&kgo.Record{Value: []byte(c.json)}, &got), c.json)
		if c.pri < 0 {
			assert.Zero(t, got.Flags&relaykit.FlagPriority, c.json)
			continue
		}
		assert.NotZero(t, got.Flags&relaykit.FlagPriority, c.json)
		assert.Equal(t, uint8(c.pri), got.Priority, c.json)
		assert.Equal(t, strings.Contains(c.json, "priority_assumed"), got.Flags&relaykit.FlagPriorityAssumed != 0, c.json)
	}

	var src relaykit.Event
	sp.Parse(&src, []byte(kafkaHopLines[0]), "192.0.2.1")
	var got relaykit.Event
	rec := &kgo.Record{Value: kafka.AppendJSON(nil, &src)}
	allocs := testing.AllocsPerRun(100, func() {
		got.Reset()
		_ = decode(rec, &got)
	})
	if !raceEnabled {
		assert.LessOrEqual(t, allocs, 1.0, "decoding a record allocates at most once once warm")
	}

	for _, bad := range []string{`not json`, `[1,2]`, `{"host":"h"}`, `{"message":"m","time":"yesterday"}`, `{"message":"m","fields":{"a":1}}`,
		`{"message":"m","facility":"auth"}`, `{"message":"m","severity_code":3}`, `{"message":"m","facility":"bogus","severity":"err"}`,
		`{"message":"m","facility_code":4,"severity_code":"3"}`, `{"message":"m","facility":-1,"severity":3}`,
		`{"message":"m","message_base64":"not base64!"}`, `{"message":"m","message_base64":7}`} {
		got.Reset()
		assert.Error(t, decode(&kgo.Record{Value: []byte(bad)}, &got), bad)
	}
}

// TestKafkaDestinationOptions: a kafka destination rejects the settings it
// would ignore (those of the HTTP and syslog destinations: the Kafka
// client has its own retries, TLS and compression), and the other types
// reject the kafka-only settings; what kafka uses is accepted.
func TestKafkaDestinationOptions(t *testing.T) {
	const routeToD = "routes:\n  - name: r\n    final: true\n    destinations: [d]\n"
	kafkaDest := "    type: kafka\n    brokers: [127.0.0.1:9092]\n    topic: syslog\n"
	hec := "    type: hec\n    url: https://splunk.example:8088\n    token: t\n"
	archive := "    type: archive\n    dir: /tmp/x\n"
	syslogTCP := "    type: syslog\n    network: tcp\n    address: 127.0.0.1:6514\n"
	tests := []struct {
		name, base, extra, want string
	}{
		{"kafka url", kafkaDest, "    url: https://x\n", "destinations.d.url: is set, but kafka destinations do not use it (only hec destinations do)"},
		{"kafka token", kafkaDest, "    token: t\n", "destinations.d.token: is set, but kafka destinations do not use it"},
		{"kafka retry.max_attempts", kafkaDest, "    retry:\n      max_attempts: 3\n", "destinations.d.retry: is set, but kafka destinations do not use it (only hec, sentinel, syslog or otlp destinations do)"},
		{"kafka retry.max_elapsed", kafkaDest, "    retry:\n      max_elapsed: 5s\n", "destinations.d.retry: is set, but kafka destinations"},
		{"kafka retry.initial_backoff", kafkaDest, "    retry:\n      initial_backoff: 1s\n", "destinations.d.retry: is set, but kafka destinations"},
		{"kafka retry.max_backoff", kafkaDest, "    retry:\n      max_backoff: 1s\n", "destinations.d.retry: is set, but kafka destinations"},
		{"kafka concurrency", kafkaDest, "    concurrency: 4\n", "destinations.d.concurrency: is set, but kafka destinations do not use it (only hec or sentinel destinations do)"},
		{"kafka gzip", kafkaDest, "    gzip: true\n", "destinations.d.gzip: is set, but kafka destinations"},
		{"kafka index", kafkaDest, "    index: main\n", "destinations.d.index: is set, but kafka destinations"},
		{"kafka insecure_skip_verify", kafkaDest, "    insecure_skip_verify: true\n", "destinations.d.insecure_skip_verify: is set, but kafka destinations"},
		{"kafka ca_file", kafkaDest, "    ca_file: /etc/ca.pem\n", "destinations.d.ca_file: is set, but kafka destinations"},
		{"kafka dir", kafkaDest, "    dir: /tmp\n", "destinations.d.dir: is set, but kafka destinations do not use it (only archive destinations do)"},
		{"kafka sourcetype", kafkaDest, "    sourcetype: x\n", "destinations.d.sourcetype: is set, but kafka destinations"},
		{"kafka address", kafkaDest, "    address: 127.0.0.1:1\n", "destinations.d.address: is set, but kafka destinations"},
		{"kafka endpoint", kafkaDest, "    endpoint: https://dce.example\n", "destinations.d.endpoint: is set, but kafka destinations"},
		{"hec brokers", hec, "    brokers: [127.0.0.1:9092]\n", "destinations.d.brokers: is set, but hec destinations do not use it (only kafka destinations do)"},
		{"hec topic", hec, "    topic: t\n", "destinations.d.topic: is set, but hec destinations"},
		{"hec compression", hec, "    compression: zstd\n", "destinations.d.compression: is set, but hec destinations"},
		{"hec sasl", hec, "    sasl: {mechanism: PLAIN, user: u, password: p}\n", "destinations.d.sasl: is set, but hec destinations"},
		{"archive key", archive, "    key: host\n", "destinations.d.key: is set, but archive destinations"},
		{"syslog tls", syslogTCP, "    tls: {ca_file: /etc/ca.pem}\n", "destinations.d.tls: is set, but syslog destinations"},
		{"syslog acks", syslogTCP, "    acks: all\n", "destinations.d.acks: is set, but syslog destinations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.LoadConfig(relaytest.WriteConfig(t, routeToD+"destinations:\n  d:\n"+tt.base+tt.extra))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			_, err = config.LoadConfig(relaytest.WriteConfig(t, routeToD+"destinations:\n  d:\n"+tt.base))
			assert.NoError(t, err, "the same destination without the setting is valid")
		})
	}

	// What a kafka destination uses passes, and its retry settings stay
	// unset (no defaults are filled in).
	cfg, err := config.LoadConfig(relaytest.WriteConfig(t, routeToD+"destinations:\n  d:\n"+kafkaDest+
		"    format: raw\n    timeout: 10s\n    queue: 4\n    spool: {mode: always, full: drop_oldest}\n"+
		"    key: host\n    compression: lz4\n    acks: leader\n    max_record_bytes: 100000\n    omit_headers: true\n"+
		"    tls: {ca_file: /etc/ca.pem}\n    sasl: {mechanism: SCRAM-SHA-256, user: u, password: p}\n"))
	require.NoError(t, err)
	_, retry := cfg.Destinations["d"].Spec.QueueConfig()
	assert.Equal(t, config.RetryConfig{}, retry)
}
