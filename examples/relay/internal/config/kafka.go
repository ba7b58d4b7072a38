package config

import (
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"time"

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

func (t *KafkaTLSConfig) Build() (*tls.Config, error) {
	if t == nil {
		return nil, nil
	}
	return forward.TLSConfig{CAFile: t.CAFile, DangerousInsecureSkipVerify: t.InsecureSkipVerify}.Build()
}

func (s *KafkaSASLConfig) Lib() kafka.SASLConfig {
	if s == nil {
		return kafka.SASLConfig{}
	}
	return kafka.SASLConfig{Mechanism: s.Mechanism, User: s.User, Password: string(s.Password)}
}

func (in *KafkaInputConfig) Key() string       { return "kafka" }
func (in *KafkaInputConfig) InputName() string { return in.Name }
func (in *KafkaInputConfig) Kind() string      { return "kafka" }

// Files: a Kafka input listens on nothing; its client holds a fetch,
// a group coordinator and a metadata connection per broker.
func (in *KafkaInputConfig) Files() (listeners, conns int) { return 3 * len(in.Brokers), 0 }

// SourceKeys: a record has no sender address; its source is the host
// its event names.
func (in *KafkaInputConfig) SourceKeys() []string { return keysHost }

func (in *KafkaInputConfig) Summary() string {
	return fmt.Sprintf("input %s: kafka %s topics=%s group=%s (%s)", in.Name, strings.Join(in.Brokers, ","), strings.Join(in.Topics, ","), in.Group, in.Format)
}

// validate checks and fills a Kafka input.
func (in *KafkaInputConfig) validate(f string, ck *Checker) {
	bad := ck.Bad
	ck.name(f+".name", in.Name)
	CheckBrokers(bad, f+".brokers", in.Brokers)
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
	if _, err := kafka.SASLMechanism(in.SASL.Lib()); err != nil {
		bad(f+".sasl", "%v", err)
	}
	CheckSASLOverTLS(bad, f, in.SASL, in.TLS, in.AllowPlaintextSASL)
}

// checkSASLOverTLS refuses SASL without TLS unless allowed explicitly.
func CheckSASLOverTLS(bad func(field, format string, args ...any), f string, s *KafkaSASLConfig, t *KafkaTLSConfig, allow bool) {
	if s == nil || s.Mechanism == "" || t != nil || allow {
		return
	}
	what := "the password"
	if s.Mechanism != kafka.SASLPlain {
		what = "an exchange an eavesdropper can guess the password from offline"
	}
	bad(f+".sasl", "SASL %s without tls sends %s, and every record, in the clear: add tls (tls: {} verifies the brokers against the system roots), or set allow_plaintext_sasl: true to accept that", s.Mechanism, what)
}

func CheckBrokers(bad func(field, format string, args ...any), f string, brokers []string) {
	if len(brokers) == 0 {
		bad(f, "at least one broker (host:port) is required")
	}
	for _, b := range brokers {
		if _, _, err := net.SplitHostPort(b); err != nil {
			bad(f, "invalid address %q (want host:port)", b)
		}
	}
}
