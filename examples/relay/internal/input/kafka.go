package input

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"
	"github.com/relaykit/relaykit/examples/relay/internal/metrics"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward/kafka"
	"github.com/relaykit/relaykit/sources"
	"github.com/relaykit/relaykit/tap"
)

// kafkaInput consumes topics as a member of a consumer group with the
// library's consumer (forward/kafka.Consumer), which hands each partition's
// records to the engine and commits an offset only once the engine's mark
// for the records before it is done: every destination delivered, spooled
// or dead-lettered them. A crash (kill -9) therefore redelivers at most
// what was polled but not committed: the records of the last
// commit_interval plus what the engine held. A batch the shutdown deadline
// cut short stalls its partition's commits (offsets are positional); the
// next owner reads from there. Records whose value does not decode are
// written to the dead-letter file and counted
// (relay_kafka_decode_errors_total and dropped{invalid_json}); they are
// finished at once.
//
// With sources tracked, each record counts for the host its event names
// (a record has no sender address): statistics and silence, no rate limit
// (a partition's records are committed in order, so holding back one host
// would hold back every host that shares its partitions).
type KafkaInput struct {
	cfg   config.KafkaInputConfig
	stats *ledger.InputStats
	c     *kafka.Consumer
	tap   *tap.Point // input:NAME (taps.go): each Push's records, decoded
}

// newKafkaInput makes the consumer of cfg (it connects when it runs).
func newKafkaInput(in *config.KafkaInputConfig, env Env) (*KafkaInput, error) {
	cfg, dl, src, log := *in, env.DeadLetter, env.Sources.input(in.Name), env.Log
	stats := env.Ledger.Input(cfg.Name, cfg.Kind())
	f := "inputs.kafka " + cfg.Name
	tc, err := cfg.TLS.Build()
	if err != nil {
		return nil, fmt.Errorf("%s: tls: %w", f, err)
	}
	enc := kafka.EncodingJSON
	if cfg.Format == "raw" {
		enc = kafka.EncodingRaw
	}
	k := &KafkaInput{cfg: cfg, stats: stats, tap: env.Taps.Point(tapInput + cfg.Name)}
	track := src != sources.Input{}
	k.c, err = kafka.NewConsumer(kafka.ConsumerConfig{
		Name: cfg.Name, Brokers: cfg.Brokers, ClientID: "relaykit-" + cfg.Name,
		Topics: cfg.Topics, Group: cfg.Group, Encoding: enc, StartAtEnd: cfg.Start == "latest",
		CommitInterval: cfg.CommitInterval, SessionTimeout: cfg.SessionTimeout, MaxPollRecords: cfg.MaxPollRecords,
		TLS: tc, SASL: cfg.SASL.Lib(),
		Push: func(ctx context.Context, shard uint64, evs []relaykit.Event) (kafka.Ack, error) {
			for i := range evs {
				stats.Bytes.Add(int64(len(evs[i].Raw)))
			}
			if track {
				observeHosts(src, evs)
			}
			k.tap.Publish(evs) // before the push: the records as decoded
			return stats.In.PushBatch(ctx, shard, evs)
		},
		DeadLetter: func(_ context.Context, topic string, partition int32, offset int64, value []byte, err error) {
			stats.Invalid.Add(1)
			stats.In.Drop(relaykit.ReasonInvalidJSON, 1)
			_ = dl.Write(cfg.Name, topic+"/"+strconv.Itoa(int(partition))+"@"+strconv.FormatInt(offset, 10), err.Error(), value)
		},
		Logger: log.With("input", cfg.Name),
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	return k, nil
}

// observeHosts counts evs for their hosts: one call per run of events
// from one host (a partition's records often come from few hosts).
func observeHosts(src sources.Input, evs []relaykit.Event) {
	for i := 0; i < len(evs); {
		host, n := evs[i].Host, len(evs[i].Raw)
		j := i + 1
		for ; j < len(evs) && bytes.Equal(evs[j].Host, host); j++ {
			n += len(evs[j].Raw)
		}
		src.ObserveHost(host, j-i, n)
		i = j
	}
}

// Run consumes until ctx ends, then leaves the group: the partitions'
// in-flight records are waited for (until hard) and committed.
func (k *KafkaInput) Run(ctx, hard context.Context) error {
	stop := context.AfterFunc(ctx, func() { _ = k.c.Shutdown(hard) })
	defer stop()
	return k.c.Serve(context.Background())
}

// Close releases the client of an input that never ran.
func (k *KafkaInput) Close() error { return k.c.Close() }

// Addrs: a Kafka input listens on nothing.
func (k *KafkaInput) Addrs(func(string, net.Addr)) {}

var (
	descKafkaRecords      = prometheus.NewDesc("relay_kafka_records_total", "Records polled per Kafka input.", []string{"input"}, nil)
	descKafkaDecodeErrors = prometheus.NewDesc("relay_kafka_decode_errors_total", "Records that failed to decode (dead-lettered).", []string{"input"}, nil)
	descKafkaCommits      = prometheus.NewDesc("relay_kafka_commits_total", "Offset commits that succeeded.", []string{"input"}, nil)
	descKafkaCommitErrors = prometheus.NewDesc("relay_kafka_commit_errors_total", "Offset commits that failed (retried).", []string{"input"}, nil)
	descKafkaRevokes      = prometheus.NewDesc("relay_kafka_revocations_total", "Partition revocations (rebalances, leaving the group).", []string{"input"}, nil)
	descKafkaLost         = prometheus.NewDesc("relay_kafka_partitions_lost_total", "Times partitions were lost without a revoke (session expired).", []string{"input"}, nil)
	descKafkaFetchErrors  = prometheus.NewDesc("relay_kafka_fetch_errors_total", "Fetch errors (retried by the client).", []string{"input"}, nil)
	descKafkaStalls       = prometheus.NewDesc("relay_kafka_partition_stalls_total", "Partitions that stopped committing because a batch of theirs was not finished (the shutdown deadline); the next owner reads from there.", []string{"input"}, nil)
	descKafkaLag          = prometheus.NewDesc("relay_kafka_consumer_lag", "Records between the partition's high watermark and the group's committed offset.", []string{"input", "topic", "partition"}, nil)
	descKafkaAssigned     = prometheus.NewDesc("relay_kafka_assigned_partitions", "Partitions this member owns now.", []string{"input"}, nil)
	descKafkaUncommitted  = prometheus.NewDesc("relay_kafka_uncommitted_records", "Records polled whose offsets are not committed yet (what a crash would redeliver).", []string{"input"}, nil)
)

// kafkaTable exports kafka.ConsumerStats, per input.
var kafkaTable = metrics.Table[kafka.ConsumerStats]{
	metrics.Counter(descKafkaRecords, func(s *kafka.ConsumerStats) int64 { return s.Records }),
	metrics.Counter(descKafkaDecodeErrors, func(s *kafka.ConsumerStats) int64 { return s.DecodeErrors }),
	metrics.Counter(descKafkaCommits, func(s *kafka.ConsumerStats) int64 { return s.Commits }),
	metrics.Counter(descKafkaCommitErrors, func(s *kafka.ConsumerStats) int64 { return s.CommitErrors }),
	metrics.Counter(descKafkaRevokes, func(s *kafka.ConsumerStats) int64 { return s.Revokes }),
	metrics.Counter(descKafkaLost, func(s *kafka.ConsumerStats) int64 { return s.Lost }),
	metrics.Counter(descKafkaFetchErrors, func(s *kafka.ConsumerStats) int64 { return s.FetchErrors }),
	metrics.Counter(descKafkaStalls, func(s *kafka.ConsumerStats) int64 { return s.Stalls }),
	metrics.Gauge(descKafkaAssigned, func(s *kafka.ConsumerStats) int64 { return int64(s.Assigned) }),
	{Desc: descKafkaLag, Type: prometheus.GaugeValue, Each: func(s *kafka.ConsumerStats, emit func(float64, ...string)) {
		for _, p := range s.Partitions {
			emit(float64(p.Lag), p.Topic, strconv.Itoa(int(p.Partition)))
		}
	}},
	metrics.Gauge(descKafkaUncommitted, func(s *kafka.ConsumerStats) int64 {
		var n int64
		for _, p := range s.Partitions {
			n += p.Uncommitted
		}
		return n
	}),
}

// Collect sends the consumer's counters.
func (k *KafkaInput) Collect(ch chan<- prometheus.Metric) {
	s := k.c.Stats()
	kafkaTable.Collect(ch, &s, k.cfg.Name)
}
