package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward/kafka"
)

func TestKafkaConfig(t *testing.T) {
	cfg, err := LoadConfig(writeConfig(t, `
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
    sasl: {mechanism: SCRAM-SHA-512, user: relay, password: s3cret}
`))
	require.NoError(t, err)
	in := cfg.Inputs.Kafka[0]
	assert.Equal(t, "json", in.Format)
	assert.Equal(t, "earliest", in.Start)
	assert.Equal(t, time.Second, in.CommitInterval)
	assert.Equal(t, 10*time.Second, in.SessionTimeout)
	d := cfg.Destinations["out"]
	assert.Equal(t, "json", d.Format)
	assert.Equal(t, []string{"127.0.0.1:9092", "127.0.0.1:9093"}, d.Kafka.Brokers)
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadConfig(writeConfig(t, tt.yaml+"\nroutes: [{name: r, final: true, destinations: [archive]}]\n"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestKafkaDecode: what the kafka destination writes, the input reads back.
func TestKafkaDecode(t *testing.T) {
	var src relaykit.Event
	src.Time = time.Date(2026, 11, 23, 10, 0, 0, 123456000, time.UTC).UnixNano()
	src.Host = []byte("fw-1")
	src.Source = []byte("sshd")
	src.SourceType = []byte("syslog")
	src.Index = []byte("net")
	src.Raw = []byte("Accepted \"key\" for root \u00e9")
	src.SetFieldString("src_ip", "192.0.2.7")
	src.SetFieldString("tenant", "red")

	k := &kafkaInput{cfg: KafkaInputConfig{Format: "json"}}
	var got relaykit.Event
	require.NoError(t, k.decode(&kgo.Record{Value: kafka.AppendJSON(nil, &src)}, &got))
	assert.Equal(t, src, got)

	rec := &kgo.Record{Value: kafka.AppendJSON(nil, &src)}
	allocs := testing.AllocsPerRun(100, func() {
		got.Reset()
		_ = k.decode(rec, &got)
	})
	if !raceEnabled {
		assert.LessOrEqual(t, allocs, 1.0, "decoding a record allocates at most once once warm")
	}

	for _, bad := range []string{`not json`, `[1,2]`, `{"host":"h"}`, `{"message":"m","time":"yesterday"}`, `{"message":"m","fields":{"a":1}}`} {
		got.Reset()
		assert.Error(t, k.decode(&kgo.Record{Value: []byte(bad)}, &got), bad)
	}

	raw := &kafkaInput{cfg: KafkaInputConfig{Format: "raw"}}
	got.Reset()
	require.NoError(t, raw.decode(&kgo.Record{Value: []byte("hello"), Headers: []kgo.RecordHeader{{Key: "host", Value: []byte("h1")}, {Key: "sourcetype", Value: []byte("st")}}}, &got))
	assert.Equal(t, "hello", string(got.Raw))
	assert.Equal(t, "h1", string(got.Host))
	assert.Equal(t, "st", string(got.SourceType))
}

func TestParseRFC3339UTC(t *testing.T) {
	for _, s := range []string{"2026-11-23T10:00:00Z", "2026-11-23T10:00:00.1Z", "2026-11-23T10:00:00.123456789Z", "1999-12-31T23:59:59.000001Z"} {
		want, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		got, ok := parseRFC3339UTC([]byte(s))
		assert.True(t, ok, s)
		assert.Equal(t, want.UnixNano(), got, s)
	}
	for _, s := range []string{"2026-11-23T10:00:00+01:00", "2026-11-23 10:00:00Z", "2026-13-23T10:00:00Z", "2026-11-23T10:00:00.Z", "2026-11-23T10:00:00.1234567890Z"} {
		_, ok := parseRFC3339UTC([]byte(s))
		assert.False(t, ok, s)
	}
}
