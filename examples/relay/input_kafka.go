package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/valyala/fastjson"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/forward/kafka"
)

// kafkaInput consumes topics as a member of a consumer group and pushes the
// records into the worker rings, at least once:
//
//   - One partition always goes to the same ring (its shard), so its
//     records stay in order.
//   - After pushing a partition's records, the input takes a mark
//     (engine.Input.Mark): once it is done, every record up to it is
//     finished: every destination delivered, spooled or dead-lettered it.
//     A mark that reports a failure (the shutdown deadline cut a batch
//     short) stops commits for the partition: offsets are positional.
//   - Only finished offsets are committed, every commit_interval, when
//     partitions are revoked (rebalance, or leaving the group at shutdown:
//     the revoke waits for in-flight records to finish first), and never
//     past a record that is not finished. A crash (kill -9) therefore
//     redelivers at most what was polled but not yet committed: the
//     records of the last commit_interval plus what the rings and batch
//     collectors held.
//   - Records whose value does not decode are written to the dead-letter
//     file and counted (relay_kafka_decode_errors_total and
//     dropped{invalid_json}); they are finished at once.
type kafkaInput struct {
	cfg    KafkaInputConfig
	stats  *inputStats
	dl     *deadLetter
	log    *slog.Logger
	cl     *kgo.Client
	parser fastjson.Parser // poll goroutine only
	hard   atomic.Pointer[context.Context]
	closed sync.Once

	mu    sync.Mutex
	parts map[topicPart]*partState

	records, decodeErrors, commits, commitErrors, revokes, lost, fetchErrors atomic.Int64
	assigned                                                                 atomic.Int64 // partitions owned now
}

type topicPart struct {
	topic string
	part  int32
}

// partMark says: the records of a partition before offset next are finished
// once the mark is done.
type partMark struct {
	next  int64
	epoch int32
	mark  engine.Mark
}

type partState struct {
	shard     uint64
	failed    bool // a mark failed: nothing more is committed
	pending   []partMark
	ready     kgo.EpochOffset // finished, to commit; Offset -1 when none
	committed int64           // next offset committed (at first: the first polled)
	hw        int64           // high watermark of the last fetch
}

func newKafkaInput(cfg KafkaInputConfig, stats *inputStats, dl *deadLetter, log *slog.Logger) (*kafkaInput, error) {
	k := &kafkaInput{cfg: cfg, stats: stats, dl: dl, log: log.With("input", cfg.Name), parts: map[topicPart]*partState{}}
	f := "inputs.kafka " + cfg.Name
	start := kgo.NewOffset().AtStart()
	if cfg.Start == "latest" {
		start = kgo.NewOffset().AtEnd()
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ClientID("relaykit-" + cfg.Name),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topics...),
		kgo.ConsumeResetOffset(start),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.SessionTimeout(cfg.SessionTimeout),
		kgo.OnPartitionsRevoked(k.onRevoked),
		kgo.OnPartitionsLost(k.onLost),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { k.assigned.Add(count(m)) }),
		kgo.FetchMaxWait(500 * time.Millisecond),
		kgo.MetadataMinAge(time.Second),
	}
	tc, err := cfg.TLS.build()
	if err != nil {
		return nil, fmt.Errorf("%s: tls: %w", f, err)
	}
	if tc != nil {
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	mech, err := kafka.SASLMechanism(cfg.SASL.lib())
	if err != nil {
		return nil, fmt.Errorf("%s: sasl: %w", f, err)
	}
	if mech != nil {
		opts = append(opts, kgo.SASL(mech))
	}
	if k.cl, err = kgo.NewClient(opts...); err != nil {
		return nil, fmt.Errorf("%s: %w", f, err)
	}
	return k, nil
}

// Run polls until ctx ends, then leaves the group: the revoke that causes
// waits (until hard ends) for the records already pushed to finish and
// commits them.
func (k *kafkaInput) Run(ctx, hard context.Context) error {
	k.hard.Store(&hard)
	commitCtx, stopCommits := context.WithCancel(ctx)
	var bg sync.WaitGroup
	bg.Go(func() {
		t := time.NewTicker(k.cfg.CommitInterval)
		defer t.Stop()
		for {
			select {
			case <-commitCtx.Done():
				return
			case <-t.C:
				k.commit(commitCtx, nil)
			}
		}
	})
	for {
		fs := k.cl.PollRecords(ctx, k.cfg.MaxPollRecords)
		if fs.IsClientClosed() || ctx.Err() != nil {
			break
		}
		fs.EachError(func(topic string, p int32, err error) {
			if errors.Is(err, context.Canceled) {
				return
			}
			if k.fetchErrors.Add(1)%100 == 1 {
				k.log.Warn("kafka fetch error", "topic", topic, "partition", p, "err", err)
			}
		})
		fs.EachPartition(func(p kgo.FetchTopicPartition) { k.take(ctx, p) })
		k.cl.AllowRebalance()
	}
	stopCommits()
	bg.Wait()
	k.close()
	return nil
}

// close leaves the group (revoking, so committing, every partition) and
// closes the client. It is idempotent.
func (k *kafkaInput) close() {
	k.closed.Do(k.cl.CloseAllowingRebalance)
}

func (k *kafkaInput) state(topic string, part int32, first int64) *partState {
	tp := topicPart{topic, part}
	k.mu.Lock()
	defer k.mu.Unlock()
	st := k.parts[tp]
	if st == nil {
		h := fnv.New64a()
		h.Write([]byte(topic))
		shard := h.Sum64() + uint64(part)
		st = &partState{shard: shard, ready: kgo.EpochOffset{Offset: -1}, committed: first}
		k.parts[tp] = st
	}
	return st
}

// take pushes one partition's fetched records and marks them.
func (k *kafkaInput) take(ctx context.Context, p kgo.FetchTopicPartition) {
	if len(p.Records) == 0 {
		return
	}
	st := k.state(p.Topic, p.Partition, p.Records[0].Offset)
	var last *kgo.Record
	for _, r := range p.Records {
		k.records.Add(1)
		k.stats.bytes.Add(int64(len(r.Value)))
		ev := engine.NewEvent()
		if err := k.decode(r, ev); err != nil {
			ev.Reset()
			engine.ReleaseEvent(ev)
			k.stats.invalid.Add(1)
			k.decodeErrors.Add(1)
			k.stats.in.Drop(relaykit.ReasonInvalidJSON, 1)
			_ = k.dl.Write(k.cfg.Name, r.Topic+"/"+strconv.Itoa(int(r.Partition))+"@"+strconv.FormatInt(r.Offset, 10), err.Error(), r.Value)
			last = r
			continue
		}
		if err := k.stats.in.PushOwned(ctx, st.shard, ev); err != nil {
			break // shutting down: the rest is neither pushed nor committed
		}
		last = r
	}
	if last == nil {
		return
	}
	m := k.stats.in.Mark(st.shard)
	k.mu.Lock()
	st.pending = append(st.pending, partMark{next: last.Offset + 1, epoch: last.LeaderEpoch, mark: m})
	st.hw = p.HighWatermark
	k.mu.Unlock()
}

// advance moves finished marks to ready, up to the first that is not
// done; a failed mark stops the partition's commits. Called with k.mu
// held.
func (k *kafkaInput) advance(st *partState) {
	n := 0
	for n < len(st.pending) && !st.failed {
		ok, err := st.pending[n].mark.Done()
		if !ok {
			break
		}
		if err != nil {
			st.failed = true
			break
		}
		st.ready = kgo.EpochOffset{Epoch: st.pending[n].epoch, Offset: st.pending[n].next}
		n++
	}
	if n > 0 {
		st.pending = append(st.pending[:0], st.pending[n:]...)
	}
}

// commit commits the finished offsets of the partitions in only (every
// partition when only is nil).
func (k *kafkaInput) commit(ctx context.Context, only map[string][]int32) {
	offsets := map[string]map[int32]kgo.EpochOffset{}
	k.mu.Lock()
	for tp, st := range k.parts {
		if only != nil && !contains(only[tp.topic], tp.part) {
			continue
		}
		k.advance(st)
		if st.ready.Offset > st.committed {
			if offsets[tp.topic] == nil {
				offsets[tp.topic] = map[int32]kgo.EpochOffset{}
			}
			offsets[tp.topic][tp.part] = st.ready
		}
	}
	k.mu.Unlock()
	if len(offsets) == 0 {
		return
	}
	k.cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			k.commitFailed(err)
			return
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					defer k.commitFailed(err)
					continue
				}
				if st := k.parts[topicPart{t.Topic, p.Partition}]; st != nil {
					st.committed = max(st.committed, offsets[t.Topic][p.Partition].Offset)
				}
			}
		}
		k.commits.Add(1)
	})
}

func (k *kafkaInput) commitFailed(err error) {
	if k.commitErrors.Add(1)%20 == 1 && !errors.Is(err, context.Canceled) {
		k.log.Warn("kafka offset commit failed (retried next interval)", "err", err)
	}
}

func contains(ps []int32, p int32) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// maxRevokeWait bounds how long a revoke waits for in-flight records.
const maxRevokeWait = 30 * time.Second

// onRevoked runs when partitions leave this member (rebalance, or leaving
// the group at shutdown): it waits until the records already pushed from
// them have finished, commits them, and forgets the partitions. What does
// not finish in time (destinations stuck past the shutdown deadline or
// maxRevokeWait) is not committed and is consumed again by the next owner.
func (k *kafkaInput) onRevoked(ctx context.Context, _ *kgo.Client, revoked map[string][]int32) {
	k.revokes.Add(1)
	var hardDone <-chan struct{}
	if h := k.hard.Load(); h != nil {
		hardDone = (*h).Done()
	}
	limit := time.NewTimer(maxRevokeWait)
	defer limit.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		k.mu.Lock()
		left := false
		for tp, st := range k.parts {
			if contains(revoked[tp.topic], tp.part) {
				k.advance(st)
				left = left || len(st.pending) > 0 && !st.failed
			}
		}
		k.mu.Unlock()
		if !left {
			break
		}
		select {
		case <-tick.C:
		case <-hardDone:
			break wait
		case <-limit.C:
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	k.commit(cctx, revoked)
	k.forget(revoked)
	k.assigned.Add(-count(revoked))
}

func count(m map[string][]int32) int64 {
	n := 0
	for _, ps := range m {
		n += len(ps)
	}
	return int64(n)
}

// onLost forgets partitions the group took away without a revoke (session
// expired): their offsets cannot be committed by this member any more.
func (k *kafkaInput) onLost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	k.lost.Add(1)
	k.forget(lost)
	k.assigned.Add(-count(lost))
}

func (k *kafkaInput) forget(ps map[string][]int32) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for t, parts := range ps {
		for _, p := range parts {
			delete(k.parts, topicPart{t, p})
		}
	}
}

var (
	descKafkaRecords      = prometheus.NewDesc("relay_kafka_records_total", "Records polled per Kafka input.", []string{"input"}, nil)
	descKafkaDecodeErrors = prometheus.NewDesc("relay_kafka_decode_errors_total", "Records that failed to decode (dead-lettered).", []string{"input"}, nil)
	descKafkaCommits      = prometheus.NewDesc("relay_kafka_commits_total", "Offset commits that succeeded.", []string{"input"}, nil)
	descKafkaCommitErrors = prometheus.NewDesc("relay_kafka_commit_errors_total", "Offset commits that failed (retried).", []string{"input"}, nil)
	descKafkaRevokes      = prometheus.NewDesc("relay_kafka_revocations_total", "Partition revocations (rebalances, leaving the group).", []string{"input"}, nil)
	descKafkaLost         = prometheus.NewDesc("relay_kafka_partitions_lost_total", "Times partitions were lost without a revoke (session expired).", []string{"input"}, nil)
	descKafkaFetchErrors  = prometheus.NewDesc("relay_kafka_fetch_errors_total", "Fetch errors (retried by the client).", []string{"input"}, nil)
	descKafkaLag          = prometheus.NewDesc("relay_kafka_consumer_lag", "Records between the partition's high watermark and the group's committed offset.", []string{"input", "topic", "partition"}, nil)
	descKafkaAssigned     = prometheus.NewDesc("relay_kafka_assigned_partitions", "Partitions this member owns now.", []string{"input"}, nil)
	descKafkaUncommitted  = prometheus.NewDesc("relay_kafka_uncommitted_records", "Records polled whose offsets are not committed yet (what a crash would redeliver).", []string{"input"}, nil)
)

// kafkaInputs is the Prometheus collector of every Kafka input: one
// collector, since a registry takes each metric description once.
type kafkaInputs []*kafkaInput

func (ks kafkaInputs) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descKafkaRecords, descKafkaDecodeErrors, descKafkaCommits, descKafkaCommitErrors,
		descKafkaRevokes, descKafkaLost, descKafkaFetchErrors, descKafkaLag, descKafkaUncommitted, descKafkaAssigned} {
		ch <- d
	}
}

func (ks kafkaInputs) Collect(ch chan<- prometheus.Metric) {
	for _, k := range ks {
		k.collect(ch)
	}
}

func (k *kafkaInput) collect(ch chan<- prometheus.Metric) {
	c := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), k.cfg.Name)
	}
	c(descKafkaRecords, k.records.Load())
	c(descKafkaDecodeErrors, k.decodeErrors.Load())
	c(descKafkaCommits, k.commits.Load())
	c(descKafkaCommitErrors, k.commitErrors.Load())
	c(descKafkaRevokes, k.revokes.Load())
	c(descKafkaLost, k.lost.Load())
	c(descKafkaFetchErrors, k.fetchErrors.Load())
	ch <- prometheus.MustNewConstMetric(descKafkaAssigned, prometheus.GaugeValue, float64(k.assigned.Load()), k.cfg.Name)
	var uncommitted int64
	k.mu.Lock()
	defer k.mu.Unlock()
	for tp, st := range k.parts {
		ch <- prometheus.MustNewConstMetric(descKafkaLag, prometheus.GaugeValue, float64(max(st.hw-st.committed, 0)),
			k.cfg.Name, tp.topic, strconv.Itoa(int(tp.part)))
		if n := len(st.pending); n > 0 {
			uncommitted += st.pending[n-1].next - st.committed
		} else if st.ready.Offset > st.committed {
			uncommitted += st.ready.Offset - st.committed
		}
	}
	ch <- prometheus.MustNewConstMetric(descKafkaUncommitted, prometheus.GaugeValue, float64(uncommitted), k.cfg.Name)
}
