package main

import (
	"crypto/tls"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/kafka"
)

// KafkaInputConfig is a Kafka consumer-group input (inputs.kafka[]).
type KafkaInputConfig struct {
	Name    string   `yaml:"name"`
	Brokers []string `yaml:"brokers"` // seed brokers, host:port
	Topics  []string `yaml:"topics"`
	Group   string   `yaml:"group"` // consumer group id; every relay of one tier uses the same
	// Format is the record value: json (the archive JSON object the kafka
	// destination writes by default) or raw (the message; host, source and
	// sourcetype from the record headers). Default json.
	Format string `yaml:"format"`
	// Start is where a group without committed offsets begins: earliest or
	// latest. Default earliest.
	Start string `yaml:"start"`
	// CommitInterval is how often finished offsets are committed; it bounds
	// what a crash redelivers (see the README). Default 1s.
	CommitInterval time.Duration `yaml:"commit_interval"`
	// SessionTimeout is how long the group waits for a silent member (a
	// crashed relay) before giving its partitions to the others. Default 10s.
	SessionTimeout time.Duration `yaml:"session_timeout"`
	// MaxPollRecords bounds the records taken per poll. Default 10000.
	MaxPollRecords int              `yaml:"max_poll_records"`
	TLS            *KafkaTLSConfig  `yaml:"tls"`
	SASL           *KafkaSASLConfig `yaml:"sasl"`
	// AllowPlaintextSASL accepts SASL without TLS (see
	// KafkaSASLConfig); without it such a config is an error.
	AllowPlaintextSASL bool `yaml:"allow_plaintext_sasl"`
}

// KafkaTLSConfig enables TLS to the brokers; empty fields verify against the
// system roots.
type KafkaTLSConfig struct {
	CAFile             string `yaml:"ca_file"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// KafkaSASLConfig selects SASL authentication: PLAIN, SCRAM-SHA-256 or
// SCRAM-SHA-512. Without tls, PLAIN sends the password in the clear
// (RFC 4616 section 4 requires a protected channel) and SCRAM's exchange
// can be recorded and the password guessed offline (RFC 5802 section 9),
// besides every record crossing the network in the clear: a config with
// SASL and no tls is refused unless allow_plaintext_sasl is true.
type KafkaSASLConfig struct {
	Mechanism string `yaml:"mechanism"`
	User      string `yaml:"user"`
	Password  Secret `yaml:"password"`
}

// KafkaDestinationConfig holds the fields of a destination of type kafka;
// it is inlined in DestinationConfig. The record value format is the
// destination's format (json or raw) and timeout bounds the delivery of a
// record, retries included (default 30s).
type KafkaDestinationConfig struct {
	Brokers        []string         `yaml:"brokers"`
	Topic          string           `yaml:"topic"`
	TopicField     string           `yaml:"topic_field"`
	Key            string           `yaml:"key"`         // none (default), host, or field:<name>
	Compression    string           `yaml:"compression"` // none, gzip, snappy (default), lz4, zstd
	MaxRecordBytes ByteSize         `yaml:"max_record_bytes"`
	Acks           string           `yaml:"acks"` // all (default, idempotent), leader, none
	OmitHeaders    bool             `yaml:"omit_headers"`
	TLS            *KafkaTLSConfig  `yaml:"tls"`
	SASL           *KafkaSASLConfig `yaml:"sasl"`
	// AllowPlaintextSASL accepts SASL without TLS (see KafkaSASLConfig).
	AllowPlaintextSASL bool `yaml:"allow_plaintext_sasl"`
}

func (t *KafkaTLSConfig) build() (*tls.Config, error) {
	if t == nil {
		return nil, nil
	}
	return forward.TLSConfig{CAFile: t.CAFile, DangerousInsecureSkipVerify: t.InsecureSkipVerify}.Build()
}

func (s *KafkaSASLConfig) lib() kafka.SASLConfig {
	if s == nil {
		return kafka.SASLConfig{}
	}
	return kafka.SASLConfig{Mechanism: s.Mechanism, User: s.User, Password: string(s.Password)}
}

// validateKafka checks and fills the Kafka inputs.
func (c *Config) validateKafka(bad func(field, format string, args ...any), checkName func(field, name string)) {
	for i := range c.Inputs.Kafka {
		in := &c.Inputs.Kafka[i]
		f := fmt.Sprintf("inputs.kafka[%d]", i)
		checkName(f+".name", in.Name)
		checkBrokers(bad, f+".brokers", in.Brokers)
		if len(in.Topics) == 0 {
			bad(f+".topics", "at least one topic is required")
		}
		if in.Group == "" {
			bad(f+".group", "required (the consumer group id)")
		}
		if in.Format == "" {
			in.Format = "json"
		}
		if in.Format != "json" && in.Format != "raw" {
			bad(f+".format", "unknown format %q (want json or raw)", in.Format)
		}
		if in.Start == "" {
			in.Start = "earliest"
		}
		if in.Start != "earliest" && in.Start != "latest" {
			bad(f+".start", "unknown start %q (want earliest or latest)", in.Start)
		}
		if in.CommitInterval == 0 {
			in.CommitInterval = time.Second
		}
		if in.SessionTimeout == 0 {
			in.SessionTimeout = 10 * time.Second
		}
		if in.MaxPollRecords == 0 {
			in.MaxPollRecords = 10000
		}
		if in.CommitInterval < 0 || in.SessionTimeout < 0 || in.MaxPollRecords < 0 {
			bad(f, "commit_interval, session_timeout and max_poll_records must not be negative")
		}
		if _, err := kafka.SASLMechanism(in.SASL.lib()); err != nil {
			bad(f+".sasl", "%v", err)
		}
		checkSASLOverTLS(bad, f, in.SASL, in.TLS, in.AllowPlaintextSASL)
	}
}

// checkSASLOverTLS refuses SASL without TLS unless allowed explicitly.
func checkSASLOverTLS(bad func(field, format string, args ...any), f string, s *KafkaSASLConfig, t *KafkaTLSConfig, allow bool) {
	if s == nil || s.Mechanism == "" || t != nil || allow {
		return
	}
	what := "the password"
	if s.Mechanism != kafka.SASLPlain {
		what = "an exchange an eavesdropper can guess the password from offline"
	}
	bad(f+".sasl", "SASL %s without tls sends %s, and every record, in the clear: add tls (tls: {} verifies the brokers against the system roots), or set allow_plaintext_sasl: true to accept that", s.Mechanism, what)
}

// validateKafkaDest checks and fills a destination of type kafka.
func validateKafkaDest(bad func(field, format string, args ...any), f string, d *DestinationConfig) {
	k := &d.Kafka
	checkBrokers(bad, f+".brokers", k.Brokers)
	if k.Topic == "" && k.TopicField == "" {
		bad(f+".topic", "required (or topic_field)")
	}
	if d.Format == "" {
		d.Format = "json"
	}
	if d.Format != "json" && d.Format != "raw" {
		bad(f+".format", "unknown format %q (want json or raw)", d.Format)
	}
	if _, _, err := kafkaKey(k.Key); err != nil {
		bad(f+".key", "%v", err)
	}
	if _, err := kafkaCompression(k.Compression); err != nil {
		bad(f+".compression", "%v", err)
	}
	if _, err := kafkaAcks(k.Acks); err != nil {
		bad(f+".acks", "%v", err)
	}
	if _, err := kafka.SASLMechanism(k.SASL.lib()); err != nil {
		bad(f+".sasl", "%v", err)
	}
	checkSASLOverTLS(bad, f, k.SASL, k.TLS, k.AllowPlaintextSASL)
}

// kafkaUsesOption lists the settings of destOptions that a kafka
// destination uses; the Kafka client does its own retries, TLS and
// compression (retry.*, ca_file, insecure_skip_verify, gzip and
// concurrency do nothing for it).
var kafkaUsesOption = map[string]bool{"format": true, "spool": true, "queue": true, "timeout": true}

// kafkaDestOptions are the settings only kafka destinations use.
var kafkaDestOptions = []destOption{
	{name: "brokers", set: func(d *DestinationConfig) bool { return len(d.Kafka.Brokers) != 0 }, types: "kafka"},
	{name: "topic", set: func(d *DestinationConfig) bool { return d.Kafka.Topic != "" }, types: "kafka"},
	{name: "topic_field", set: func(d *DestinationConfig) bool { return d.Kafka.TopicField != "" }, types: "kafka"},
	{name: "key", set: func(d *DestinationConfig) bool { return d.Kafka.Key != "" }, types: "kafka"},
	{name: "compression", set: func(d *DestinationConfig) bool { return d.Kafka.Compression != "" }, types: "kafka"},
	{name: "max_record_bytes", set: func(d *DestinationConfig) bool { return d.Kafka.MaxRecordBytes != 0 }, types: "kafka"},
	{name: "acks", set: func(d *DestinationConfig) bool { return d.Kafka.Acks != "" }, types: "kafka"},
	{name: "omit_headers", set: func(d *DestinationConfig) bool { return d.Kafka.OmitHeaders }, types: "kafka"},
	{name: "tls", set: func(d *DestinationConfig) bool { return d.Kafka.TLS != nil }, types: "kafka"},
	{name: "sasl", set: func(d *DestinationConfig) bool { return d.Kafka.SASL != nil }, types: "kafka"},
	{name: "allow_plaintext_sasl", set: func(d *DestinationConfig) bool { return d.Kafka.AllowPlaintextSASL }, types: "kafka"},
}

// checkKafkaApplies reports, through bad, the settings of d (at field f)
// that do nothing: on a kafka destination every destOptions setting but
// kafkaUsesOption's, on the other types the kafka-only settings. It is
// checkApplies (destopts.go) for the kafka type.
func checkKafkaApplies(f string, d DestinationConfig, bad func(field, format string, args ...any)) {
	switch d.Type {
	case "kafka":
		for _, o := range destOptions {
			if o.set(&d) && !kafkaUsesOption[o.name] {
				list := strings.Join(strings.Fields(o.types), ", ")
				if i := strings.LastIndex(list, ", "); i >= 0 {
					list = list[:i] + " or " + list[i+2:]
				}
				bad(f+"."+o.name, "is set, but kafka destinations do not use it (only %s destinations do)", list)
			}
		}
	case "archive", "hec", "sentinel", "syslog":
		for _, o := range kafkaDestOptions {
			if o.set(&d) {
				bad(f+"."+o.name, "is set, but %s destinations do not use it (only kafka destinations do)", d.Type)
			}
		}
	}
}

func checkBrokers(bad func(field, format string, args ...any), f string, brokers []string) {
	if len(brokers) == 0 {
		bad(f, "at least one broker (host:port) is required")
	}
	for _, b := range brokers {
		if _, _, err := net.SplitHostPort(b); err != nil {
			bad(f, "invalid address %q (want host:port)", b)
		}
	}
}

func kafkaKey(s string) (kafka.KeyMode, string, error) {
	switch {
	case s == "" || s == "none":
		return kafka.KeyNone, "", nil
	case s == "host":
		return kafka.KeyHost, "", nil
	case strings.HasPrefix(s, "field:") && len(s) > len("field:"):
		return kafka.KeyField, strings.TrimPrefix(s, "field:"), nil
	}
	return 0, "", fmt.Errorf("unknown key %q (want none, host or field:<name>)", s)
}

var kafkaCompressions = map[string]kafka.Compression{
	"": kafka.CompressionSnappy, "snappy": kafka.CompressionSnappy, "none": kafka.CompressionNone,
	"gzip": kafka.CompressionGzip, "lz4": kafka.CompressionLZ4, "zstd": kafka.CompressionZstd,
}

func kafkaCompression(s string) (kafka.Compression, error) {
	c, ok := kafkaCompressions[s]
	if !ok {
		return 0, fmt.Errorf("unknown compression %q (want none, gzip, snappy, lz4 or zstd)", s)
	}
	return c, nil
}

func kafkaAcks(s string) (kafka.Acks, error) {
	switch s {
	case "", "all":
		return kafka.AcksAll, nil
	case "leader":
		return kafka.AcksLeader, nil
	case "none":
		return kafka.AcksNone, nil
	}
	return 0, fmt.Errorf("unknown acks %q (want all, leader or none)", s)
}

// newKafkaSink builds the sink of a kafka destination.
func (r *Relay) newKafkaSink(name string, dc DestinationConfig) (*kafka.Sink, error) {
	k := dc.Kafka
	key, keyField, _ := kafkaKey(k.Key)
	comp, _ := kafkaCompression(k.Compression)
	acks, _ := kafkaAcks(k.Acks)
	tc, err := k.TLS.build()
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	enc := kafka.EncodingJSON
	if dc.Format == "raw" {
		enc = kafka.EncodingRaw
	}
	return kafka.New(kafka.Config{
		Name: name, Brokers: slices.Clone(k.Brokers), Topic: k.Topic, TopicField: k.TopicField,
		Key: key, KeyField: keyField, Encoding: enc, Compression: comp, OmitHeaders: k.OmitHeaders,
		MaxRecordBytes: int(k.MaxRecordBytes), Acks: acks, DisableIdempotence: acks != kafka.AcksAll,
		DeliveryTimeout: dc.Timeout, TLS: tc, SASL: k.SASL.lib(),
		Logger: r.log.With("destination", name),
	})
}

// kafkaSinkStats names the sink of one kafka destination.
type kafkaSinkStats struct {
	name string
	sink *kafka.Sink
}

// kafkaSinkCollector exports the kafka destinations' own counters (the
// ledger has the delivered/spooled/dropped ones).
type kafkaSinkCollector []kafkaSinkStats

var (
	descKafkaProduceErrors = prometheus.NewDesc("relay_kafka_produce_errors_total", "Produce requests or partitions that failed and were retried by the Kafka client (leader changes, broker restarts).", []string{"destination"}, nil)
	descKafkaTooLarge      = prometheus.NewDesc("relay_kafka_too_large_total", "Events over max_record_bytes (dead-lettered).", []string{"destination"}, nil)
)

func (c kafkaSinkCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descKafkaProduceErrors
	ch <- descKafkaTooLarge
}

func (c kafkaSinkCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c {
		st := s.sink.Stats()
		ch <- prometheus.MustNewConstMetric(descKafkaProduceErrors, prometheus.CounterValue, float64(st.ProduceErrors), s.name)
		ch <- prometheus.MustNewConstMetric(descKafkaTooLarge, prometheus.CounterValue, float64(st.TooLarge), s.name)
	}
}
