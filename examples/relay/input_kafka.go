package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"

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
type kafkaInput struct {
	cfg   KafkaInputConfig
	stats *inputStats
	c     *kafka.Consumer
	tap   *tap.Point // input:NAME (api.go): each Push's records, decoded
}

func newKafkaInput(cfg KafkaInputConfig, stats *inputStats, dl *deadLetter, src sources.Input, log *slog.Logger) (*kafkaInput, error) {
	f := "inputs.kafka " + cfg.Name
	tc, err := cfg.TLS.build()
	if err != nil {
		return nil, fmt.Errorf("%s: tls: %w", f, err)
	}
	enc := kafka.EncodingJSON
	if cfg.Format == "raw" {
		enc = kafka.EncodingRaw
	}
	k := &kafkaInput{cfg: cfg, stats: stats}
	track := src != sources.Input{}
	k.c, err = kafka.NewConsumer(kafka.ConsumerConfig{
		Name: cfg.Name, Brokers: cfg.Brokers, ClientID: "relaykit-" + cfg.Name,
		Topics: cfg.Topics, Group: cfg.Group, Encoding: enc, StartAtEnd: cfg.Start == "latest",
		CommitInterval: cfg.CommitInterval, SessionTimeout: cfg.SessionTimeout, MaxPollRecords: cfg.MaxPollRecords,
		TLS: tc, SASL: cfg.SASL.lib(),
		Push: func(ctx context.Context, shard uint64, evs []relaykit.Event) (kafka.Ack, error) {
			for i := range evs {
				stats.bytes.Add(int64(len(evs[i].Raw)))
			}
			if track {
				observeHosts(src, evs)
			}
			k.tap.Publish(evs) // before the push: the records as decoded
			return stats.in.PushBatch(ctx, shard, evs)
		},
		DeadLetter: func(_ context.Context, topic string, partition int32, offset int64, value []byte, err error) {
			stats.invalid.Add(1)
			stats.in.Drop(relaykit.ReasonInvalidJSON, 1)
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
func (k *kafkaInput) Run(ctx, hard context.Context) error {
	stop := context.AfterFunc(ctx, func() { _ = k.c.Shutdown(hard) })
	defer stop()
	return k.c.Serve(context.Background())
}

func (k *kafkaInput) close() { _ = k.c.Close() }

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

// kafkaInputs is the Prometheus collector of every Kafka input: one
// collector, since a registry takes each metric description once.
type kafkaInputs []*kafkaInput

func (ks kafkaInputs) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descKafkaRecords, descKafkaDecodeErrors, descKafkaCommits, descKafkaCommitErrors,
		descKafkaRevokes, descKafkaLost, descKafkaFetchErrors, descKafkaStalls, descKafkaLag, descKafkaUncommitted, descKafkaAssigned} {
		ch <- d
	}
}

func (ks kafkaInputs) Collect(ch chan<- prometheus.Metric) {
	for _, k := range ks {
		k.collect(ch)
	}
}

func (k *kafkaInput) collect(ch chan<- prometheus.Metric) {
	s := k.c.Stats()
	c := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), k.cfg.Name)
	}
	c(descKafkaRecords, s.Records)
	c(descKafkaDecodeErrors, s.DecodeErrors)
	c(descKafkaCommits, s.Commits)
	c(descKafkaCommitErrors, s.CommitErrors)
	c(descKafkaRevokes, s.Revokes)
	c(descKafkaLost, s.Lost)
	c(descKafkaFetchErrors, s.FetchErrors)
	c(descKafkaStalls, s.Stalls)
	ch <- prometheus.MustNewConstMetric(descKafkaAssigned, prometheus.GaugeValue, float64(s.Assigned), k.cfg.Name)
	var uncommitted int64
	for _, p := range s.Partitions {
		ch <- prometheus.MustNewConstMetric(descKafkaLag, prometheus.GaugeValue, float64(p.Lag),
			k.cfg.Name, p.Topic, strconv.Itoa(int(p.Partition)))
		uncommitted += p.Uncommitted
	}
	ch <- prometheus.MustNewConstMetric(descKafkaUncommitted, prometheus.GaugeValue, float64(uncommitted), k.cfg.Name)
}
