package kafka

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/valyala/fastjson"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/internal/cfgerr"
	"github.com/relaykit/relaykit/internal/eventjson"
)

// ErrClosed is returned by [Consumer.Serve] when the consumer was closed, or
// had already run: a Consumer runs once.
var ErrClosed = errors.New("kafka: consumer closed")

// Ack reports whether the events of one [PushFunc] call are finished:
// delivered, durably accepted or dead-lettered, by the acknowledgement
// contract of [relaykit.Sink]. engine.Mark (from engine.Input.PushBatch)
// satisfies it.
//
// Done must not block. It returns ok false while some of the events are
// still on their way; ok true once all are settled, with err nil when
// every one was finished and non-nil when some will not be (the Sink
// refused their batch, or the engine stopped before routing them).
// A nil Ack is finished.
type Ack interface {
	Done() (ok bool, err error)
}

// PushFunc hands the events decoded from one partition's records to an
// engine, in the order of their offsets, and returns an [Ack] that tells
// when they are finished. shard is a stable hash of the topic and the
// partition: every record of a partition comes with the same shard, so an
// engine that keeps a shard's events in order keeps the partition's.
//
// evs, their byte slices included, are valid only until Push returns: Push
// copies what it keeps (engine.Input.PushBatch does). Push may block for
// back-pressure, and must return when ctx ends. An error means the events
// were not all taken: none of them is committed, and unless ctx has ended
// the consumer stops (see [Consumer.Serve]).
type PushFunc func(ctx context.Context, shard uint64, evs []relaykit.Event) (Ack, error)

// DeadLetterFunc receives a record whose value could not be decoded, with
// its position and the reason. value is valid only until the call returns.
// The record counts as finished once the call returned: its offset is
// committed past with the records around it. A relay writes it to its
// dead-letter file and counts it (engine.Input.Drop with
// relaykit.ReasonInvalidJSON keeps the engine's ledger balanced).
type DeadLetterFunc func(ctx context.Context, topic string, partition int32, offset int64, value []byte, err error)

// ConsumerHooks are optional callbacks. They run synchronously on the
// consumer's goroutines, must be fast, and must not call the Consumer.
type ConsumerHooks struct {
	// OnStalled is called when a partition stops committing: an [Ack]
	// of its events reported that some were not finished. offset is the
	// partition's last committable offset (the next record to read);
	// records from it on are consumed again by the partition's next
	// owner. It is called once per partition and assignment.
	OnStalled func(topic string, partition int32, offset int64, err error)
}

// Defaults of [ConsumerConfig].
const (
	// DefaultCommitInterval is how often finished offsets are committed.
	DefaultCommitInterval = time.Second
	// DefaultSessionTimeout is how long the group waits for a silent
	// member before giving its partitions to the others.
	DefaultSessionTimeout = 10 * time.Second
	// DefaultMaxPollRecords bounds the records taken per poll.
	DefaultMaxPollRecords = 10_000
	// DefaultRevokeTimeout bounds how long a revocation waits for the
	// records already pushed to finish.
	DefaultRevokeTimeout = 30 * time.Second
)

// Internal timings of the consumer.
const (
	pushChunk          = 256                    // events decoded per Push at most
	revokePoll         = 5 * time.Millisecond   // how often a revocation checks its acks
	finalCommitTimeout = 10 * time.Second       // the commit after a revocation's wait
	fetchMaxWait       = 500 * time.Millisecond // a fetch's wait for records at the broker
)

// ConsumerConfig configures a [Consumer]. Brokers, Topics, Group and Push
// are required; every other zero field means the documented default.
type ConsumerConfig struct {
	// Name names the consumer in errors and logs. Zero means "kafka".
	Name string
	// Brokers are the seed brokers, "host:port". At least one is required.
	Brokers []string
	// ClientID is the Kafka client.id. Zero means "relaykit-" + Name.
	ClientID string
	// Topics are the topics consumed. At least one is required.
	Topics []string
	// Group is the consumer group id: every consumer of one tier uses the
	// same, and the group spreads the partitions over them. Required.
	Group string
	// Encoding is the record value: [EncodingJSON] (the default: the
	// object [AppendJSON] writes, decoded back into the event) or
	// [EncodingRaw] (the value is the message; host, source and sourcetype
	// come from the record headers of those names).
	Encoding Encoding
	// StartAtEnd makes a group that has no committed offset for a
	// partition begin at its end (new records only). False begins at the
	// start of the partition.
	StartAtEnd bool
	// CommitInterval is how often finished offsets are committed; it
	// bounds what a crash redelivers. Zero means [DefaultCommitInterval].
	CommitInterval time.Duration
	// SessionTimeout is how long the group waits for a silent member (a
	// crashed process) before giving its partitions to the others. Zero
	// means [DefaultSessionTimeout].
	SessionTimeout time.Duration
	// MaxPollRecords bounds the records taken per poll. Zero means
	// [DefaultMaxPollRecords].
	MaxPollRecords int
	// RevokeTimeout bounds how long a revocation (a rebalance, or leaving
	// the group when Serve ends) waits for the records already pushed to
	// finish before committing what did; Shutdown's context bounds it too.
	// Zero means [DefaultRevokeTimeout].
	RevokeTimeout time.Duration

	// TLS, when not nil, enables TLS to the brokers with this
	// configuration (cloned).
	TLS *tls.Config
	// SASL selects SASL authentication, as for the [Sink].
	SASL SASLConfig

	// Push hands decoded events to the engine. Required.
	Push PushFunc
	// DeadLetter receives the records whose value does not decode. Nil
	// means they are only counted (ConsumerStats.DecodeErrors).
	DeadLetter DeadLetterFunc
	// Hooks observe the consumer.
	Hooks ConsumerHooks
	// Logger logs state changes and errors (fetch errors once per 100,
	// commit errors once per 20, stalled partitions, revocations that gave
	// up waiting), never records or secrets. Nil means no logging.
	Logger *slog.Logger
}

// ConsumerStats is a snapshot of a [Consumer]'s counters. Counters only
// grow; Assigned and Partitions describe the present.
type ConsumerStats struct {
	// Records counts records polled; Bytes their value bytes.
	Records, Bytes int64
	// DecodeErrors counts records whose value did not decode (given to
	// DeadLetter).
	DecodeErrors int64
	// Commits counts offset commits that succeeded; CommitErrors those
	// that failed (retried at the next interval).
	Commits, CommitErrors int64
	// Revokes counts revocations (rebalances, leaving the group); Lost
	// counts times partitions were lost without one (session expired).
	Revokes, Lost int64
	// FetchErrors counts fetch errors (retried by the client).
	FetchErrors int64
	// Stalls counts partitions that stopped committing (see
	// ConsumerHooks.OnStalled).
	Stalls int64
	// Assigned is the number of partitions this member owns now.
	Assigned int64
	// Partitions describes the partitions this member has polled records
	// of since they were assigned, sorted by topic and partition.
	Partitions []PartitionStats
}

// PartitionStats describes one partition of a [Consumer].
type PartitionStats struct {
	Topic     string
	Partition int32
	// Committed is the next offset committed by this member: at first the
	// offset of the first record polled (where the group had committed,
	// or where StartAtEnd put it).
	Committed int64
	// HighWatermark is the partition's high watermark at the last fetch.
	HighWatermark int64
	// Lag is HighWatermark - Committed: the records a new owner would
	// read, at least 0.
	Lag int64
	// Uncommitted counts records polled whose offsets are not committed:
	// what a crash would redeliver.
	Uncommitted int64
	// Stalled is true once the partition stopped committing.
	Stalled bool
}

// Consumer consumes topics as a member of a Kafka consumer group, hands
// the records' events to an engine through [ConsumerConfig].Push, and
// commits a record's offset only once its events are finished; see the
// package documentation. Serve, Shutdown, Stats, Commit and Close are safe for
// concurrent use by multiple goroutines.
type Consumer struct {
	cfg    ConsumerConfig
	name   string
	cl     *kgo.Client
	log    *slog.Logger
	parser fastjson.Parser                 // Serve's goroutine only
	evs    []relaykit.Event                // Serve's goroutine only: the chunk being decoded
	hard   atomic.Pointer[context.Context] // Shutdown's: bounds a revocation's wait

	life    sync.Mutex // started, closed, cancel
	started bool
	closed  bool
	cancel  context.CancelFunc
	runDone chan struct{}
	aborted atomic.Bool // Close: revocations neither wait nor commit
	leave   sync.Once

	mu    sync.Mutex
	parts map[topicPart]*partState

	records, bytes, decodeErrors, commits, commitErrors, revokes, lost, fetchErrors, stalls atomic.Int64
	assigned                                                                                atomic.Int64
}

// Validate reports whether [NewConsumer] would accept cfg, without
// connecting: nil, or a *relaykit.FieldError wrapping
// [forward.ErrInvalidConfig].
func (cfg ConsumerConfig) Validate() error { return cfg.fill() }

func (cfg *ConsumerConfig) fill() error {
	if cfg.Name == "" {
		cfg.Name = "kafka"
	}
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(forward.ErrInvalidConfig, field, format, args...)
	}
	switch {
	case len(cfg.Brokers) == 0:
		return bad("Brokers", "at least one broker is required")
	case len(cfg.Topics) == 0:
		return bad("Topics", "at least one topic is required")
	case cfg.Group == "":
		return bad("Group", "required")
	case cfg.Push == nil:
		return bad("Push", "required")
	case cfg.Encoding > EncodingRaw:
		return bad("Encoding", "unknown encoding %d", cfg.Encoding)
	case cfg.CommitInterval < 0:
		return bad("CommitInterval", "must not be negative")
	case cfg.SessionTimeout < 0:
		return bad("SessionTimeout", "must not be negative")
	case cfg.MaxPollRecords < 0:
		return bad("MaxPollRecords", "must not be negative")
	case cfg.RevokeTimeout < 0:
		return bad("RevokeTimeout", "must not be negative")
	}
	for i, b := range cfg.Brokers {
		if j := strings.LastIndexByte(b, ':'); j <= 0 || j == len(b)-1 {
			return bad(fmt.Sprintf("Brokers[%d]", i), "%q is not host:port", b)
		}
	}
	for i, t := range cfg.Topics {
		if !validTopic([]byte(t)) {
			return bad(fmt.Sprintf("Topics[%d]", i), "invalid topic %q: 1-249 bytes of [a-zA-Z0-9._-]", t)
		}
	}
	if _, err := SASLMechanism(cfg.SASL); err != nil {
		return bad("SASL", "%v", err)
	}
	if cfg.ClientID == "" {
		cfg.ClientID = "relaykit-" + cfg.Name
	}
	if cfg.CommitInterval == 0 {
		cfg.CommitInterval = DefaultCommitInterval
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.MaxPollRecords == 0 {
		cfg.MaxPollRecords = DefaultMaxPollRecords
	}
	if cfg.RevokeTimeout == 0 {
		cfg.RevokeTimeout = DefaultRevokeTimeout
	}
	return nil
}

// NewConsumer returns a Consumer for cfg, or a *relaykit.FieldError
// wrapping [forward.ErrInvalidConfig]. It does not connect: the client
// joins the group when [Consumer.Serve] polls. Close releases the client
// of a Consumer that never serves.
func NewConsumer(cfg ConsumerConfig) (*Consumer, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	cfg.Brokers, cfg.Topics = slices.Clone(cfg.Brokers), slices.Clone(cfg.Topics)
	c := &Consumer{cfg: cfg, name: cfg.Name, log: cfg.Logger, parts: map[topicPart]*partState{}, runDone: make(chan struct{})}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	start := kgo.NewOffset().AtStart()
	if cfg.StartAtEnd {
		start = kgo.NewOffset().AtEnd()
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ClientID(cfg.ClientID),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topics...),
		kgo.ConsumeResetOffset(start),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.SessionTimeout(cfg.SessionTimeout),
		kgo.OnPartitionsAssigned(c.onAssigned),
		kgo.OnPartitionsRevoked(c.onRevoked),
		kgo.OnPartitionsLost(c.onLost),
		kgo.FetchMaxWait(fetchMaxWait),
		kgo.MetadataMinAge(time.Second),
	}
	if cfg.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(cfg.TLS.Clone()))
	}
	mech, _ := SASLMechanism(cfg.SASL) // checked by fill
	if mech != nil {
		opts = append(opts, kgo.SASL(mech))
	}
	var err error
	if c.cl, err = kgo.NewClient(opts...); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", forward.ErrInvalidConfig, cfg.Name, err)
	}
	return c, nil
}

// Client returns the franz-go client the consumer polls with, for
// administration and tests. Polling or committing through it breaks the
// consumer's accounting.
func (c *Consumer) Client() *kgo.Client { return c.cl }

// Serve joins the group and consumes until ctx ends or [Consumer.Shutdown]
// is called, then leaves the group: the revocation that causes waits for
// the records already pushed to finish, until ConsumerConfig.RevokeTimeout
// passes or Shutdown's context ends, commits those that did, and Serve
// returns nil.
//
// Serve returns an error wrapping the Push error when Push fails while it
// was not told to stop (the engine closed), after leaving the group the
// same way. It returns [ErrClosed] when the consumer was closed or has
// served before. Serve commits every ConsumerConfig.CommitInterval on a
// goroutine of its own, which has returned when Serve returns.
func (c *Consumer) Serve(ctx context.Context) error {
	c.life.Lock()
	if c.started || c.closed {
		c.life.Unlock()
		return ErrClosed
	}
	c.started = true
	ctx, cancel := context.WithCancel(ctx)
	c.cancel = cancel
	c.life.Unlock()
	defer close(c.runDone)
	defer cancel()

	var bg sync.WaitGroup
	bg.Go(func() {
		t := time.NewTicker(c.cfg.CommitInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = c.commit(ctx, nil)
			}
		}
	})
	var runErr error
	for {
		fs := c.cl.PollRecords(ctx, c.cfg.MaxPollRecords)
		if fs.IsClientClosed() || ctx.Err() != nil {
			// A poll blocks rebalances until AllowRebalance, and leaving
			// the group is one: also when Close's leave began before
			// this poll returned.
			c.cl.AllowRebalance()
			break
		}
		fs.EachError(func(topic string, p int32, err error) {
			if errors.Is(err, context.Canceled) {
				return
			}
			if c.fetchErrors.Add(1)%100 == 1 {
				c.log.Warn("kafka: fetch error (retried)", "consumer", c.name, "topic", topic, "partition", p, "err", err)
			}
		})
		var pushErr error
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if pushErr == nil {
				pushErr = c.take(ctx, p)
			}
		})
		c.cl.AllowRebalance()
		if pushErr != nil {
			if ctx.Err() == nil {
				runErr = fmt.Errorf("kafka: consumer %s: push: %w", c.name, pushErr)
				c.log.Error("kafka: push failed, leaving the group", "consumer", c.name, "err", pushErr)
			}
			break
		}
	}
	cancel()
	bg.Wait()
	c.leaveGroup()
	return runErr
}

// leaveGroup leaves the group (revoking, so committing, every partition
// unless aborted) and closes the client. It is idempotent.
func (c *Consumer) leaveGroup() {
	c.leave.Do(c.cl.CloseAllowingRebalance)
}

// Shutdown stops the consumer gracefully: Serve stops polling and leaves
// the group, the revocation waiting for the records already pushed to
// finish until ctx ends (or ConsumerConfig.RevokeTimeout passes) and
// committing those that did. Shutdown returns once Serve has returned; it
// returns ctx's error if ctx ended first, after the revocation gave up
// waiting. Without a Serve under way it releases the client, as Close
// does. Shutdown is idempotent; it must not be called from a callback.
func (c *Consumer) Shutdown(ctx context.Context) error {
	c.hard.Store(&ctx)
	c.life.Lock()
	started, cancel := c.started, c.cancel
	c.closed = true
	c.life.Unlock()
	if !started {
		c.leaveGroup()
		return nil
	}
	if cancel != nil {
		cancel()
	}
	<-c.runDone
	return ctx.Err()
}

// Close stops the consumer at once, as a crash would: Serve stops polling,
// the client leaves the group without waiting for in-flight records and
// without committing, so the partitions' next owners read again every
// record not committed before. It waits for Serve to return (Push must
// honour its context) and must not be called from a callback. To stop
// with a final commit, call Shutdown (or end Serve's ctx and wait for
// Serve) instead; Close afterwards is then a no-op. Close is idempotent
// and returns nil.
func (c *Consumer) Close() error {
	c.life.Lock()
	c.closed = true
	started, cancel := c.started, c.cancel
	c.life.Unlock()
	c.aborted.Store(true)
	if cancel != nil {
		cancel()
	}
	c.leaveGroup()
	if started {
		<-c.runDone
	}
	return nil
}

// Commit commits the offsets of the records finished so far, now, and
// returns the error of the commit request (which the periodic commit
// retries). Serve commits on its own; Commit is for a caller that wants a
// checkpoint at a moment of its choosing.
func (c *Consumer) Commit(ctx context.Context) error { return c.commit(ctx, nil) }

// Stats returns a snapshot of the consumer's counters.
func (c *Consumer) Stats() ConsumerStats {
	s := ConsumerStats{
		Records: c.records.Load(), Bytes: c.bytes.Load(), DecodeErrors: c.decodeErrors.Load(),
		Commits: c.commits.Load(), CommitErrors: c.commitErrors.Load(), Revokes: c.revokes.Load(),
		Lost: c.lost.Load(), FetchErrors: c.fetchErrors.Load(), Stalls: c.stalls.Load(), Assigned: c.assigned.Load(),
	}
	c.mu.Lock()
	for tp, st := range c.parts {
		s.Partitions = append(s.Partitions, PartitionStats{
			Topic: tp.topic, Partition: tp.part, Committed: st.committed, HighWatermark: st.hw,
			Lag: max(st.hw-st.committed, 0), Uncommitted: max(st.polled-st.committed, 0), Stalled: st.stalled,
		})
	}
	c.mu.Unlock()
	slices.SortFunc(s.Partitions, func(a, b PartitionStats) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
	return s
}

// take decodes one partition's fetched records and pushes their events in
// chunks, marking each chunk with the offset after its last record. A
// record that does not decode goes to DeadLetter and is covered by the
// next mark. It returns Push's error: the records of that chunk and after
// it are neither marked nor committed.
func (c *Consumer) take(ctx context.Context, p kgo.FetchTopicPartition) error {
	if len(p.Records) == 0 {
		return nil
	}
	st := c.state(p.Topic, p.Partition, p.Records[0].Offset)
	c.mu.Lock()
	st.hw = p.HighWatermark
	st.polled = max(st.polled, p.Records[len(p.Records)-1].Offset+1)
	c.mu.Unlock()
	var (
		last    *kgo.Record // the last record taken since the last mark
		n       int         // events decoded into c.evs
		records int64
		bytes   int64
	)
	defer func() {
		c.records.Add(records)
		c.bytes.Add(bytes)
	}()
	for _, r := range p.Records {
		records++
		bytes += int64(len(r.Value))
		if n == len(c.evs) {
			c.evs = append(c.evs, relaykit.Event{})
		}
		if err := c.decode(r, &c.evs[n]); err != nil {
			c.decodeErrors.Add(1)
			if c.cfg.DeadLetter != nil {
				c.cfg.DeadLetter(ctx, r.Topic, r.Partition, r.Offset, r.Value, err)
			}
			last = r
			continue
		}
		n++
		last = r
		if n == pushChunk {
			if err := c.push(ctx, st, last, n); err != nil {
				return err
			}
			n, last = 0, nil
		}
	}
	if last != nil {
		return c.push(ctx, st, last, n)
	}
	return nil
}

// push pushes the first n decoded events, if any, and marks the partition
// up to last: finished when the Ack is, or, with no events, when the
// marks before it are.
func (c *Consumer) push(ctx context.Context, st *partState, last *kgo.Record, n int) error {
	var ack Ack
	if n > 0 {
		a, err := c.cfg.Push(ctx, st.shard, c.evs[:n])
		if err != nil {
			return err
		}
		ack = a
	}
	c.mu.Lock()
	if !st.stalled {
		st.pending = append(st.pending, partMark{next: last.Offset + 1, epoch: last.LeaderEpoch, ack: ack})
	}
	c.mu.Unlock()
	return nil
}

// decode fills e from the value (and, for EncodingRaw, the headers) of r.
func (c *Consumer) decode(r *kgo.Record, e *relaykit.Event) error {
	if c.cfg.Encoding != EncodingRaw {
		return eventjson.Decode(&c.parser, r.Value, e)
	}
	e.Reset()
	e.Raw = append(e.Raw, r.Value...)
	for _, h := range r.Headers {
		switch h.Key {
		case "host":
			e.Host = append(e.Host[:0], h.Value...)
		case "source":
			e.Source = append(e.Source[:0], h.Value...)
		case "sourcetype":
			e.SourceType = append(e.SourceType[:0], h.Value...)
		}
	}
	return nil
}

// shardOf returns the shard of a partition: FNV-1a of the topic plus the
// partition number.
func shardOf(topic string, part int32) uint64 {
	h := fnv.New64a()
	h.Write([]byte(topic))
	return h.Sum64() + uint64(part)
}
