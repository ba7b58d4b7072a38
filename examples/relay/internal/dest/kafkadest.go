package dest

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"

	"github.com/relaykit/relaykit/forward/kafka"
)

// KafkaDestination (type: kafka) produces the events to a Kafka topic. The
// Kafka client does its own retries, TLS and compression: the network
// destinations' retry, ca_file, insecure_skip_verify, gzip and concurrency
// are not among its settings.
type KafkaDestination struct {
	Brokers        []string        `yaml:"brokers"`
	Topic          string          `yaml:"topic"`
	TopicField     string          `yaml:"topic_field"`
	Key            string          `yaml:"key"`         // none (default), host, or field:<name>
	Compression    string          `yaml:"compression"` // none, gzip, snappy (default), lz4, zstd
	MaxRecordBytes config.ByteSize `yaml:"max_record_bytes"`
	Acks           string          `yaml:"acks"`   // all (default, idempotent), leader, none
	Format         string          `yaml:"format"` // the record value: json (default) or raw
	OmitHeaders    bool            `yaml:"omit_headers"`
	// Timeout bounds the delivery of a record, retries included (default
	// 30s).
	Timeout time.Duration           `yaml:"timeout"`
	TLS     *config.KafkaTLSConfig  `yaml:"tls"`
	SASL    *config.KafkaSASLConfig `yaml:"sasl"`
	// AllowPlaintextSASL accepts SASL without TLS (see KafkaSASLConfig).
	AllowPlaintextSASL   bool `yaml:"allow_plaintext_sasl"`
	config.QueueSettings `yaml:",inline"`
}

func (k *KafkaDestination) Kind() string { return "kafka" }

// queueSettings: the queue makes one attempt per batch at a time, the
// client retrying within timeout (retry.* are not settings of kafka).
func (k *KafkaDestination) QueueConfig() (*config.QueueSettings, config.RetryConfig) {
	return &k.QueueSettings, config.RetryConfig{}
}

func (k *KafkaDestination) Summary() string {
	return fmt.Sprintf("kafka %s topic=%s%s key=%s format=%s", strings.Join(k.Brokers, ","), k.Topic, k.TopicField, k.Key, k.Format)
}

func (k *KafkaDestination) Validate(f string, ck *config.Checker, spool *config.SpoolConfig) {
	k.QueueSettings.Validate(f, ck, spool)
	config.CheckBrokers(ck.Bad, f+".brokers", k.Brokers)
	if k.Topic == "" && k.TopicField == "" {
		ck.Bad(f+".topic", "required (or topic_field)")
	}
	k.Format = cmp.Or(k.Format, "json")
	if _, ok := KafkaEncodings[k.Format]; !ok {
		ck.Bad(f+".format", "unknown format %q (want json or raw)", k.Format)
	}
	if _, _, err := KafkaKey(k.Key); err != nil {
		ck.Bad(f+".key", "%v", err)
	}
	if _, ok := KafkaCompressions[k.Compression]; !ok {
		ck.Bad(f+".compression", "unknown compression %q (want none, gzip, snappy, lz4 or zstd)", k.Compression)
	}
	if _, ok := KafkaAcks[k.Acks]; !ok {
		ck.Bad(f+".acks", "unknown acks %q (want all, leader or none)", k.Acks)
	}
	if _, err := kafka.SASLMechanism(k.SASL.Lib()); err != nil {
		ck.Bad(f+".sasl", "%v", err)
	}
	config.CheckSASLOverTLS(ck.Bad, f, k.SASL, k.TLS, k.AllowPlaintextSASL)
}

func KafkaKey(s string) (kafka.KeyMode, string, error) {
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

var KafkaCompressions = map[string]kafka.Compression{
	"": kafka.CompressionSnappy, "snappy": kafka.CompressionSnappy, "none": kafka.CompressionNone,
	"gzip": kafka.CompressionGzip, "lz4": kafka.CompressionLZ4, "zstd": kafka.CompressionZstd,
}

var KafkaEncodings = map[string]kafka.Encoding{"json": kafka.EncodingJSON, "raw": kafka.EncodingRaw}

var KafkaAcks = map[string]kafka.Acks{"": kafka.AcksAll, "all": kafka.AcksAll, "leader": kafka.AcksLeader, "none": kafka.AcksNone}
