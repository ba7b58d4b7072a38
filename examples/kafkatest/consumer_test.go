package kafkatest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/forward/kafka"
	"github.com/relaykit/relaykit/syslog"
)

// recorder is a Sink that keeps a copy of every event it accepted. before,
// when set, runs first; its error refuses the batch.
type recorder struct {
	before func(ctx context.Context, batch []relaykit.Event) error
	mu     sync.Mutex
	evs    []relaykit.Event
}

func (r *recorder) Send(ctx context.Context, batch []relaykit.Event) error {
	if r.before != nil {
		if err := r.before(ctx, batch); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range batch {
		r.evs = append(r.evs, batch[i].Clone())
	}
	return nil
}

func (r *recorder) events() []relaykit.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.evs)
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.evs)
}

// seqs returns the sequence numbers of the events' messages (seqMsg).
func seqs(t *testing.T, evs []relaykit.Event) []int {
	t.Helper()
	out := make([]int, len(evs))
	for i := range evs {
		out[i] = seqOf(t, evs[i].Raw)
	}
	return out
}

// seqOf returns the sequence number of a seqMsg message, or -1. It may
// be called from any goroutine.
func seqOf(t *testing.T, raw []byte) int {
	t.Helper()
	if !assert.GreaterOrEqual(t, len(raw), 7, "message %q", raw) {
		return -1
	}
	n, err := strconv.Atoi(string(raw[len(raw)-7:]))
	if !assert.NoError(t, err, "message %q", raw) {
		return -1
	}
	return n
}

// relayTier is what a SIEM-tier relay runs: a consumer pushing into an
// engine whose Sink is sink.
type relayTier struct {
	eng      *engine.Engine
	in       *engine.Input
	c        *kafka.Consumer
	cancel   context.CancelFunc // ends the consumer's Run (graceful)
	runErr   chan error
	engErr   chan error
	stopOnce sync.Once
}

// startTier starts an engine over sink and a consumer of cfg (Brokers,
// Topics and Group set by the caller) feeding it. It is stopped when the
// test ends, if it still runs.
func startTier(t *testing.T, cfg kafka.ConsumerConfig, sink relaykit.Sink) *relayTier {
	t.Helper()
	eng, err := engine.New(engine.Config{Sink: sink, Workers: 2, BatchMaxEvents: 16, BatchMaxWait: 5 * time.Millisecond})
	require.NoError(t, err)
	r := &relayTier{eng: eng, in: eng.NewInput("kafka"), runErr: make(chan error, 1), engErr: make(chan error, 1)}
	engCtx, stopEng := context.WithCancel(context.Background())
	go func() { r.engErr <- eng.Run(engCtx) }()
	cfg.Push = func(ctx context.Context, shard uint64, evs []relaykit.Event) (kafka.Ack, error) {
		return r.in.PushBatch(ctx, shard, evs)
	}
	if cfg.CommitInterval == 0 {
		cfg.CommitInterval = 20 * time.Millisecond
	}
	r.c, err = kafka.NewConsumer(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.runErr <- r.c.Serve(ctx) }()
	t.Cleanup(func() {
		r.stop(t)
		stopEng()
	})
	return r
}

// stop ends the consumer gracefully (it leaves the group, committing what
// finished), then the engine. It may be called from any goroutine.
func (r *relayTier) stop(t *testing.T) {
	t.Helper()
	r.stopOnce.Do(func() {
		r.cancel()
		assert.NoError(t, <-r.runErr)
		assert.NoError(t, r.eng.Shutdown(context.Background()))
		assert.NoError(t, <-r.engErr)
	})
}

// kill stops the consumer as a crash would: no final commit. The engine
// is stopped with its deadline already passed.
func (r *relayTier) kill(t *testing.T) {
	t.Helper()
	r.stopOnce.Do(func() {
		require.NoError(t, r.c.Close())
		assert.NoError(t, <-r.runErr)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = r.eng.Shutdown(ctx)
		<-r.engErr
	})
}

// committed returns the group's committed offset of topic/partition at
// the broker, or -1 when there is none. It may be called from any
// goroutine (in require.Eventually, in a Sink).
func committed(t *testing.T, addrs []string, group, topic string, partition int32) int64 {
	t.Helper()
	at, err := committedOffset(context.Background(), addrs, group, topic, partition)
	assert.NoError(t, err)
	return at
}

// committedOffset returns the group's committed offset, or -1.
func committedOffset(ctx context.Context, addrs []string, group, topic string, partition int32) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	os, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return -1, nil
	}
	if err != nil {
		return 0, err
	}
	o, ok := os.Lookup(topic, partition)
	if !ok {
		return -1, nil
	}
	return o.At, o.Err
}

// produce sends evs through the package's Sink (the encoder the consumer's
// decoder must match).
func produce(t *testing.T, addrs []string, topic string, enc kafka.Encoding, evs []relaykit.Event) {
	t.Helper()
	s := newSink(t, kafka.Config{Brokers: addrs, Topic: topic, Encoding: enc})
	require.NoError(t, s.Send(t.Context(), evs))
	require.Equal(t, int64(len(evs)), s.Stats().EventsSent)
}

// hopView is an event as the consumer's Sink sees it, less what does not
// cross the hop (the receive time of events with a time of their own, the
// parse-error and truncation flags) and with empty slices as nil.
func hopView(e relaykit.Event) relaykit.Event {
	e = e.Clone()
	if e.Time != 0 {
		e.ReceiveTime = 0
	}
	e.Flags &= relaykit.FlagPriority | relaykit.FlagPriorityAssumed
	for _, b := range []*[]byte{&e.Host, &e.Source, &e.SourceType, &e.Index, &e.Raw} {
		if len(*b) == 0 {
			*b = nil
		}
	}
	if len(e.Fields) == 0 {
		e.Fields = nil
	}
	return e
}

// TestConsumerHop: events produced by the Sink, JSON and raw, come out of
// the consumer, through a real engine, as they went in: the encoder and
// the decoder meet over a broker. Every batch the engine's Sink is given
// finds the group's committed offset at or before its first record: an
// offset is committed only after the Sink returned.
func TestConsumerHop(t *testing.T) {
	c := newCluster(t, 1, 1, "json", "raw")
	addrs := c.ListenAddrs()

	recv := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC).UnixNano()
	sp := syslog.NewParser(syslog.Config{Location: time.UTC, CEF: true})
	var evs []relaykit.Event
	for _, f := range hopFrames {
		e := relaykit.Event{ReceiveTime: recv, Index: []byte("main")}
		sp.Parse(&e, []byte(f))
		evs = append(evs, e)
	}
	for i, e := range testEvents("hop", 300) {
		e.SetFieldString("seq", strconv.Itoa(len(hopFrames)+i))
		evs = append(evs, e)
	}
	for i := range hopFrames {
		evs[i].SetFieldString("seq", strconv.Itoa(i))
	}

	t.Run("json", func(t *testing.T) {
		produce(t, addrs, "json", kafka.EncodingJSON, evs)
		var checks int
		sink := &recorder{before: func(_ context.Context, batch []relaykit.Event) error {
			first := len(evs)
			for i := range batch {
				v, _ := batch[i].Field("seq")
				n, err := strconv.Atoi(string(v))
				assert.NoError(t, err)
				first = min(first, n)
			}
			// One partition, produced in order: a record's offset is its seq.
			assert.LessOrEqual(t, committed(t, addrs, "hop-json", "json", 0), int64(first), "nothing committed before the Sink returned")
			checks++ // one worker holds the partition: Sends never overlap
			return nil
		}}
		tier := startTier(t, kafka.ConsumerConfig{Brokers: addrs, Topics: []string{"json"}, Group: "hop-json", CommitInterval: time.Millisecond}, sink)
		require.Eventually(t, func() bool { return sink.len() == len(evs) }, 20*time.Second, 5*time.Millisecond)
		require.Eventually(t, func() bool { return committed(t, addrs, "hop-json", "json", 0) == int64(len(evs)) },
			10*time.Second, 10*time.Millisecond, "everything committed once delivered")
		tier.stop(t)
		assert.Greater(t, checks, 10, "many batches checked")

		got := sink.events()
		for i := range got {
			assert.Equal(t, hopView(evs[i]), hopView(got[i]), "event %d", i)
			assert.NotZero(t, got[i].ReceiveTime, "the engine stamps a receive time")
		}
		st := tier.c.Stats()
		assert.Equal(t, int64(len(evs)), st.Records)
		assert.Zero(t, st.DecodeErrors)
		assert.Positive(t, st.Commits)
		assert.Zero(t, st.CommitErrors)
		assert.Zero(t, st.Assigned, "left the group")
	})

	t.Run("raw", func(t *testing.T) {
		produce(t, addrs, "raw", kafka.EncodingRaw, evs)
		sink := &recorder{}
		tier := startTier(t, kafka.ConsumerConfig{Brokers: addrs, Topics: []string{"raw"}, Group: "hop-raw", Encoding: kafka.EncodingRaw}, sink)
		require.Eventually(t, func() bool { return sink.len() == len(evs) }, 20*time.Second, 5*time.Millisecond)
		tier.stop(t)
		assert.Equal(t, int64(len(evs)), committed(t, addrs, "hop-raw", "raw", 0), "the final commit")
		got := sink.events()
		for i := range got {
			want := relaykit.Event{Host: evs[i].Host, Source: evs[i].Source, SourceType: evs[i].SourceType, Raw: evs[i].Raw}
			g := relaykit.Event{Host: got[i].Host, Source: got[i].Source, SourceType: got[i].SourceType, Raw: got[i].Raw}
			assert.Equal(t, hopView(want), hopView(g), "event %d: the message, host, source and sourcetype from the headers", i)
		}
	})
}

// TestConsumerBlockedSink: while the Sink blocks, the committed offset
// stays at or before what the Sink returned; a graceful stop waits for
// the blocked records (the revocation) and then commits all of them.
func TestConsumerBlockedSink(t *testing.T) {
	c := newCluster(t, 1, 1, "logs")
	addrs := c.ListenAddrs()
	const n = 200
	produce(t, addrs, "logs", kafka.EncodingJSON, testEvents("blocked", n))

	gate := make(chan struct{})
	blocked := make(chan struct{})
	var blockOnce sync.Once
	var mu sync.Mutex
	delivered := 0
	sink := &recorder{before: func(ctx context.Context, batch []relaykit.Event) error {
		mu.Lock()
		d := delivered
		mu.Unlock()
		if d >= 50 {
			blockOnce.Do(func() { close(blocked) })
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		mu.Lock()
		delivered += len(batch)
		mu.Unlock()
		return nil
	}}
	// Polls of at most 10 records: a mark every 10 records or fewer.
	tier := startTier(t, kafka.ConsumerConfig{Brokers: addrs, Topics: []string{"logs"}, Group: "blocked", MaxPollRecords: 10}, sink)
	<-blocked
	// The consumer goes on polling while the Sink blocks (the engine's
	// rings hold the records): the stop below must find all of them
	// pushed, or records it never polled would rightly stay uncommitted.
	require.Eventually(t, func() bool { return tier.c.Stats().Records == n }, 10*time.Second, time.Millisecond, "every record polled while the Sink blocks")

	require.NoError(t, tier.c.Commit(t.Context()))
	mu.Lock()
	d := delivered
	mu.Unlock()
	at := committed(t, addrs, "blocked", "logs", 0)
	assert.LessOrEqual(t, at, int64(d), "never past what the Sink returned")
	assert.GreaterOrEqual(t, at, int64(10), "the records the Sink returned are committed (in marks of up to 10)")
	assert.Less(t, at, int64(n))
	st := tier.c.Stats()
	require.Len(t, st.Partitions, 1)
	assert.Equal(t, at, st.Partitions[0].Committed)
	assert.Positive(t, st.Partitions[0].Uncommitted)

	// A graceful stop: the revocation waits for the blocked records.
	revokes := tier.c.Stats().Revokes
	stopped := make(chan struct{})
	go func() {
		tier.stop(t)
		close(stopped)
	}()
	require.Eventually(t, func() bool { return tier.c.Stats().Revokes > revokes }, 10*time.Second, time.Millisecond, "the revocation began")
	close(gate)
	<-stopped
	assert.Equal(t, int64(n), committed(t, addrs, "blocked", "logs", 0), "the revocation waited, then committed everything")
	assert.Equal(t, seqRange(0, n), seqs(t, sink.events()))
}

func seqRange(from, to int) []int {
	s := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// TestConsumerKill: a consumer that stops without committing (a crash) is
// followed by one that reads again exactly the records not committed.
func TestConsumerKill(t *testing.T) {
	c := newCluster(t, 1, 1, "logs")
	addrs := c.ListenAddrs()
	evs := testEvents("kill", 100)
	cfg := kafka.ConsumerConfig{Brokers: addrs, Topics: []string{"logs"}, Group: "kill"}

	// The first 40, consumed and committed by a graceful stop.
	produce(t, addrs, "logs", kafka.EncodingJSON, evs[:40])
	first := &recorder{}
	a := startTier(t, cfg, first)
	require.Eventually(t, func() bool { return first.len() == 40 }, 20*time.Second, 5*time.Millisecond)
	a.stop(t)
	require.Equal(t, int64(40), committed(t, addrs, "kill", "logs", 0))

	// The next 60, delivered by a consumer that never commits and dies.
	produce(t, addrs, "logs", kafka.EncodingJSON, evs[40:])
	second := &recorder{}
	never := cfg
	never.CommitInterval = time.Hour
	b := startTier(t, never, second)
	require.Eventually(t, func() bool { return second.len() == 60 }, 20*time.Second, 5*time.Millisecond)
	b.kill(t)
	assert.Equal(t, int64(40), committed(t, addrs, "kill", "logs", 0), "Close commits nothing")
	assert.Equal(t, seqRange(40, 100), seqs(t, second.events()))

	// The next owner reads exactly those 60 again, and commits them.
	third := &recorder{}
	d := startTier(t, cfg, third)
	require.Eventually(t, func() bool { return committed(t, addrs, "kill", "logs", 0) == 100 }, 20*time.Second, 10*time.Millisecond)
	d.stop(t)
	assert.Equal(t, seqRange(40, 100), seqs(t, third.events()), "exactly the uncommitted records, once")
}

// TestConsumerRebalance: a second consumer joins the group midway, then
// the first leaves. Each revocation waits for the records already pushed
// and commits them, so nothing is lost and nothing is read twice.
func TestConsumerRebalance(t *testing.T) {
	c := newCluster(t, 1, 6, "logs")
	addrs := c.ListenAddrs()
	cfg := kafka.ConsumerConfig{Brokers: addrs, Topics: []string{"logs"}, Group: "rebalance"}
	s := newSink(t, kafka.Config{Brokers: addrs, Topic: "logs", Key: kafka.KeyField, KeyField: "k"})
	const batches, per = 30, 100
	sent := 0
	send := func(b int) {
		evs := testEvents(fmt.Sprintf("b%02d", b), per)
		for i := range evs {
			evs[i].SetFieldString("k", strconv.Itoa(i%12))
		}
		require.NoError(t, s.Send(t.Context(), evs))
		sent += per
	}

	ra, rb := &recorder{}, &recorder{}
	a := startTier(t, cfg, ra)
	require.Eventually(t, func() bool { return a.c.Stats().Assigned == 6 }, 20*time.Second, 5*time.Millisecond)
	var b *relayTier
	for i := range batches {
		send(i)
		switch i {
		case batches / 3:
			b = startTier(t, cfg, rb)
			require.Eventually(t, func() bool {
				sa, sb := a.c.Stats(), b.c.Stats()
				return sa.Assigned > 0 && sb.Assigned > 0 && sa.Assigned+sb.Assigned == 6 && sa.Revokes >= 1
			}, 30*time.Second, 5*time.Millisecond, "the join moved partitions from a to b through a revocation")
		case 2 * batches / 3:
			a.stop(t)
		}
	}
	require.Eventually(t, func() bool { return ra.len()+rb.len() >= sent }, 30*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return b.c.Stats().Assigned == 6 }, 20*time.Second, 5*time.Millisecond)
	b.stop(t)

	seen := map[string]int{}
	for _, e := range append(ra.events(), rb.events()...) {
		seen[string(e.Raw)]++
	}
	assert.Len(t, seen, sent, "nothing lost")
	for m, k := range seen {
		assert.Equal(t, 1, k, "%s read %d times", m, k)
	}
	assert.Positive(t, ra.len())
	assert.Positive(t, rb.len())
	assert.Zero(t, a.c.Stats().Lost+b.c.Stats().Lost, "no partition lost without a revocation")
}

// TestConsumerDeadLetter: records that do not decode go to DeadLetter
// with their position, are counted, and are committed past, also when
// they end a fetch.
func TestConsumerDeadLetter(t *testing.T) {
	c := newCluster(t, 1, 1, "logs")
	addrs := c.ListenAddrs()
	good := testEvents("dl", 3)
	values := [][]byte{
		kafka.AppendJSON(nil, &good[0]),
		[]byte("this is not json"),
		kafka.AppendJSON(nil, &good[1]),
		kafka.AppendJSON(nil, &good[2]),
		[]byte(`{"message":1}`),
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic("logs"))
	require.NoError(t, err)
	defer cl.Close()
	for _, v := range values {
		require.NoError(t, cl.ProduceSync(t.Context(), &kgo.Record{Value: v}).FirstErr())
	}

	type letter struct {
		topic     string
		partition int32
		offset    int64
		value     string
		err       string
	}
	var mu sync.Mutex
	var letters []letter
	sink := &recorder{}
	cfg := kafka.ConsumerConfig{Brokers: addrs, Topics: []string{"logs"}, Group: "dl",
		DeadLetter: func(_ context.Context, topic string, partition int32, offset int64, value []byte, err error) {
			mu.Lock()
			defer mu.Unlock()
			letters = append(letters, letter{topic, partition, offset, string(value), err.Error()})
		}}
	tier := startTier(t, cfg, sink)
	require.Eventually(t, func() bool { return committed(t, addrs, "dl", "logs", 0) == 5 }, 20*time.Second, 10*time.Millisecond,
		"committed past both bad records, the last one included")
	tier.stop(t)

	assert.Equal(t, seqRange(0, 3), seqs(t, sink.events()))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, letters, 2)
	assert.Equal(t, letter{"logs", 0, 1, "this is not json", letters[0].err}, letters[0])
	assert.Contains(t, letters[0].err, "invalid json")
	assert.Equal(t, letter{"logs", 0, 4, `{"message":1}`, letters[1].err}, letters[1])
	assert.Contains(t, letters[1].err, `no "message" string`)
	assert.Equal(t, int64(2), tier.c.Stats().DecodeErrors)
}

// TestConsumerStall: when the Sink refuses a batch, the engine's mark
// reports it and the partition stops committing before it (offsets are
// positional); the next owner reads again from there.
func TestConsumerStall(t *testing.T) {
	c := newCluster(t, 1, 1, "logs")
	addrs := c.ListenAddrs()
	const n = 100
	produce(t, addrs, "logs", kafka.EncodingJSON, testEvents("stall", n))

	refused := errors.New("destination refused the batch")
	var failOnce sync.Once
	var mu sync.Mutex
	var failedFrom int
	sink := &recorder{}
	sink.before = func(_ context.Context, batch []relaykit.Event) error {
		var err error
		for i := range batch {
			if seqOf(t, batch[i].Raw) == 50 {
				failOnce.Do(func() {
					mu.Lock()
					failedFrom = seqOf(t, batch[0].Raw)
					mu.Unlock()
					err = refused
				})
			}
		}
		return err
	}
	type stall struct {
		topic     string
		partition int32
		offset    int64
	}
	stalls := make(chan stall, 1)
	cfg := kafka.ConsumerConfig{Brokers: addrs, Topics: []string{"logs"}, Group: "stall", MaxPollRecords: 10,
		Hooks: kafka.ConsumerHooks{OnStalled: func(topic string, partition int32, offset int64, err error) {
			assert.ErrorIs(t, err, engine.ErrNotFinished)
			assert.ErrorIs(t, err, refused)
			stalls <- stall{topic, partition, offset}
		}}}
	a := startTier(t, cfg, sink)
	s := <-stalls
	require.Eventually(t, func() bool { return sink.len() >= n-16 }, 20*time.Second, 5*time.Millisecond, "the rest is still delivered")
	a.stop(t)
	mu.Lock()
	from := int64(failedFrom)
	mu.Unlock()
	at := committed(t, addrs, "stall", "logs", 0)
	assert.Equal(t, stall{"logs", 0, s.offset}, s)
	assert.LessOrEqual(t, at, from, "nothing of the refused batch is committed")
	assert.LessOrEqual(t, s.offset, at, "what was finished before it is")
	assert.Equal(t, int64(1), a.c.Stats().Stalls)

	again := &recorder{}
	b := startTier(t, cfg, again)
	require.Eventually(t, func() bool { return committed(t, addrs, "stall", "logs", 0) == n }, 20*time.Second, 10*time.Millisecond)
	b.stop(t)
	assert.Equal(t, seqRange(int(at), n), seqs(t, again.events()), "read again from the stalled offset")
}

// TestConsumerTLSSASL: the consumer reaches brokers over TLS with SCRAM.
func TestConsumerTLSSASL(t *testing.T) {
	srv, roots := testCert(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "logs"), kfake.TLS(srv), kfake.EnableSASL(),
		kfake.Superuser(kafka.SASLScramSHA512, "relay", "s3cret"))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	addrs := c.ListenAddrs()
	tc := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	sasl := kafka.SASLConfig{Mechanism: kafka.SASLScramSHA512, User: "relay", Password: "s3cret"}
	s := newSink(t, kafka.Config{Brokers: addrs, Topic: "logs", TLS: tc, SASL: sasl})
	require.NoError(t, s.Send(t.Context(), testEvents("tls", 5)))

	sink := &recorder{}
	tier := startTier(t, kafka.ConsumerConfig{Brokers: addrs, Topics: []string{"logs"}, Group: "tls", TLS: tc, SASL: sasl}, sink)
	require.Eventually(t, func() bool { return sink.len() == 5 }, 20*time.Second, 5*time.Millisecond)
	tier.stop(t)
	assert.Equal(t, seqRange(0, 5), seqs(t, sink.events()))
}

// TestConsumerFetchErrors: fetch errors the broker returns are counted,
// and consumption goes on once they stop.
func TestConsumerFetchErrors(t *testing.T) {
	c := newCluster(t, 1, 1, "logs")
	addrs := c.ListenAddrs()
	produce(t, addrs, "logs", kafka.EncodingJSON, testEvents("fetch", 10))
	sink := &recorder{}
	tier := startTier(t, kafka.ConsumerConfig{Brokers: addrs, Topics: []string{"logs"}, Group: "fetch"}, sink)
	require.Eventually(t, func() bool { return sink.len() == 10 }, 20*time.Second, 5*time.Millisecond)

	h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: "logs", Err: kerr.TopicAuthorizationFailed, Count: 3})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	require.NoError(t, h.Wait(ctx, 3), "fetch errors injected")
	produce(t, addrs, "logs", kafka.EncodingJSON, testEvents("fetch", 20)[10:])
	require.Eventually(t, func() bool { return sink.len() == 20 }, 20*time.Second, 5*time.Millisecond)
	tier.stop(t)
	assert.Equal(t, seqRange(0, 20), seqs(t, sink.events()))
	assert.GreaterOrEqual(t, tier.c.Stats().FetchErrors, int64(1), "fetch errors counted")
}
