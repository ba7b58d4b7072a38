package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/internal/cfgerr"
)

// KeyMode selects the record key.
type KeyMode uint8

const (
	// KeyNone produces records without a key: franz-go's sticky
	// partitioner fills one partition's batch, then moves on. The default,
	// and the cheapest.
	KeyNone KeyMode = iota
	// KeyHost keys records by [relaykit.Event.Host]: one host's events land
	// in one partition, in order. Events without a host have no key.
	KeyHost
	// KeyField keys records by the value of Config.KeyField. Events without
	// that field have no key.
	KeyField
)

// Encoding selects the record value.
type Encoding uint8

const (
	// EncodingJSON writes the archive's JSON object (see [AppendJSON]):
	// time, host, source, sourcetype, index, message and fields. The
	// default: a consumer (the relay's Kafka input) restores the event.
	EncodingJSON Encoding = iota
	// EncodingRaw writes [relaykit.Event.Raw] as it is; host, source and
	// sourcetype travel only in the headers; the event time, index and
	// fields are not sent.
	EncodingRaw
)

// Compression selects the codec of produced record batches.
type Compression uint8

const (
	// CompressionSnappy is franz-go's default: cheap on CPU, about half
	// the size of syslog text.
	CompressionSnappy Compression = iota
	// CompressionNone sends batches uncompressed.
	CompressionNone
	// CompressionGzip uses gzip (slow; for brokers that only take gzip).
	CompressionGzip
	// CompressionLZ4 uses LZ4.
	CompressionLZ4
	// CompressionZstd uses zstd (Kafka 2.1+): the smallest batches for
	// more CPU than snappy or LZ4.
	CompressionZstd
)

// Acks selects how many replicas must confirm a produce request.
type Acks uint8

const (
	// AcksAll waits for every in-sync replica (acks=-1). The default, and
	// the only setting the idempotent producer allows.
	AcksAll Acks = iota
	// AcksLeader waits for the partition leader only (acks=1): a record the
	// leader lost before replication is gone. Needs DisableIdempotence.
	AcksLeader
	// AcksNone waits for nothing (acks=0): records may be lost without an
	// error. Needs DisableIdempotence.
	AcksNone
)

// SASL mechanisms accepted in [SASLConfig].Mechanism.
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
)

// SASLConfig selects SASL authentication to the brokers.
type SASLConfig struct {
	// Mechanism is "" (no SASL), [SASLPlain], [SASLScramSHA256] or
	// [SASLScramSHA512].
	Mechanism string
	// User is the SASL user name.
	User string
	// Password is the SASL password. It never appears in errors or logs.
	Password string
}

// Defaults.
const (
	// DefaultMaxRecordBytes is the default limit of one record's key, value
	// and headers, in bytes: below the broker's default message.max.bytes
	// (1 048 588) with room for the record batch overhead.
	DefaultMaxRecordBytes = 1_000_000
	// DefaultDeliveryTimeout is how long a record may wait for delivery,
	// retries included, before it fails: 30 s.
	DefaultDeliveryTimeout = 30 * time.Second
)

// Config configures a [Sink]. The zero value is not valid: Brokers and
// Topic (or TopicField) are required. Every other zero field means the
// documented default.
type Config struct {
	// Name names the destination in errors and logs.
	// Zero means "kafka".
	Name string
	// Brokers are the seed brokers, "host:port". At least one is required.
	Brokers []string
	// ClientID is the Kafka client.id. Zero means "relaykit".
	ClientID string

	// Topic is the topic records are produced to, or, with TopicField, the
	// topic of events that do not have that field. Required unless
	// TopicField is set.
	Topic string
	// TopicField names an event field whose value is the topic. Events
	// without it go to Topic; with neither, or with an invalid topic name,
	// they fail permanently with [relaykit.ReasonRejected].
	TopicField string

	// Key selects the record key; see [KeyMode]. Zero means [KeyNone].
	Key KeyMode
	// KeyField names the field used with [KeyField].
	KeyField string
	// Encoding selects the record value; see [Encoding]. Zero means
	// [EncodingJSON].
	Encoding Encoding
	// Compression selects the batch codec. Zero means [CompressionSnappy].
	Compression Compression
	// OmitHeaders sends no "host", "source" and "sourcetype" headers.
	OmitHeaders bool

	// MaxRecordBytes is the largest key + value + headers of one record,
	// in bytes. A larger event is not produced: it fails permanently with
	// [relaykit.ReasonTooLarge]. Zero means [DefaultMaxRecordBytes]. The
	// topic's max.message.bytes must allow it.
	MaxRecordBytes int

	// Acks selects the acknowledgement level. Zero means [AcksAll].
	Acks Acks
	// DisableIdempotence turns the idempotent producer off. It is on by
	// default (with AcksAll): retries then never duplicate or reorder
	// records. Required for AcksLeader and AcksNone.
	DisableIdempotence bool
	// Linger is how long a partition's batch waits for more records before
	// it is sent. Zero means none: Send hands the client a whole batch and
	// waits for its acknowledgement, so lingering would only add latency
	// (with a 5 ms linger one sender delivered 3.5× fewer events per
	// second); records of concurrent Sends still share produce requests
	// while earlier ones are in flight.
	Linger time.Duration
	// DeliveryTimeout bounds the time a record may take, from Send until
	// acknowledged, the client's own produce retries included; past it
	// the record is reported undelivered, retryable
	// ([relaykit.ReasonSinkError]). Zero means [DefaultDeliveryTimeout].
	DeliveryTimeout time.Duration
	// MaxBufferedRecords caps the records buffered in the client across
	// concurrent Send calls; Send waits for room. Zero means 100 000.
	MaxBufferedRecords int

	// TLS, when not nil, enables TLS to the brokers with this
	// configuration (cloned; a nil ServerName is filled from the broker
	// address).
	TLS *tls.Config
	// SASL selects SASL authentication.
	SASL SASLConfig

	// Logger logs the client's warnings and errors (broker connections,
	// produce errors that are retried), never events or secrets. Nil means
	// no logging.
	Logger *slog.Logger
}

// Stats is a snapshot of a [Sink]'s counters since it was created. Counters
// only grow.
type Stats struct {
	// EventsSent counts events whose records were acknowledged.
	EventsSent int64
	// BytesSent counts the value bytes of acknowledged records, before
	// compression.
	BytesSent int64
	// EventsFailed counts events reported undelivered by Send's error.
	EventsFailed int64
	// TooLarge counts the events of EventsFailed that exceeded
	// MaxRecordBytes.
	TooLarge int64
	// ProduceErrors counts produce requests and partitions that failed
	// and were retried by the client (leader changes, broker restarts,
	// network errors). A retried record is still delivered once.
	ProduceErrors int64
	// Batches counts Send calls with at least one event.
	Batches int64
}

// Sink is a [relaykit.Sink] that produces events to Kafka. It is safe for
// concurrent use by multiple goroutines.
type Sink struct {
	cfg    Config
	name   string
	cl     *kgo.Client
	log    *slog.Logger
	topic  string
	pool   sync.Pool // *call
	closed sync.Once

	topicMu sync.RWMutex
	topics  map[string]string // field value -> topic string, bounded

	sent, bytes, failed, tooLarge, produceErrs, batches atomic.Int64
}

var _ relaykit.Sink = (*Sink)(nil)

// maxTopics bounds the cache of topic names taken from a field.
const maxTopics = 1024

// New returns a Sink for cfg, or a *relaykit.FieldError wrapping
// [forward.ErrInvalidConfig]. It does not connect: the client connects to
// the brokers on the first Send.
func New(cfg Config) (*Sink, error) {
	if cfg.Name == "" {
		cfg.Name = "kafka"
	}
	name := cfg.Name
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(forward.ErrInvalidConfig, field, format, args...)
	}
	switch {
	case len(cfg.Brokers) == 0:
		return nil, bad("Brokers", "at least one broker is required")
	case cfg.Topic == "" && cfg.TopicField == "":
		return nil, bad("Topic", "required (or TopicField)")
	case cfg.Topic != "" && !validTopic([]byte(cfg.Topic)):
		return nil, bad("Topic", "invalid topic %q: 1-249 bytes of [a-zA-Z0-9._-]", cfg.Topic)
	case cfg.Key > KeyField:
		return nil, bad("Key", "unknown key mode %d", cfg.Key)
	case cfg.Key == KeyField && cfg.KeyField == "":
		return nil, bad("KeyField", "required with Key KeyField")
	case cfg.Encoding > EncodingRaw:
		return nil, bad("Encoding", "unknown encoding %d", cfg.Encoding)
	case cfg.Compression > CompressionZstd:
		return nil, bad("Compression", "unknown compression %d", cfg.Compression)
	case cfg.Acks > AcksNone:
		return nil, bad("Acks", "unknown acks %d", cfg.Acks)
	case cfg.Acks != AcksAll && !cfg.DisableIdempotence:
		return nil, bad("Acks", "other than AcksAll needs DisableIdempotence")
	case cfg.MaxRecordBytes < 0:
		return nil, bad("MaxRecordBytes", "must not be negative")
	case cfg.DeliveryTimeout < 0:
		return nil, bad("DeliveryTimeout", "must not be negative")
	case cfg.MaxBufferedRecords < 0:
		return nil, bad("MaxBufferedRecords", "must not be negative")
	case cfg.Linger < 0:
		return nil, bad("Linger", "must not be negative")
	}
	for i, b := range cfg.Brokers {
		if j := strings.LastIndexByte(b, ':'); j <= 0 || j == len(b)-1 {
			return nil, bad(fmt.Sprintf("Brokers[%d]", i), "%q is not host:port", b)
		}
	}
	if cfg.MaxRecordBytes == 0 {
		cfg.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if cfg.DeliveryTimeout == 0 {
		cfg.DeliveryTimeout = DefaultDeliveryTimeout
	}
	if cfg.MaxBufferedRecords == 0 {
		cfg.MaxBufferedRecords = 100_000
	}
	if cfg.ClientID == "" {
		cfg.ClientID = "relaykit"
	}
	s := &Sink{cfg: cfg, name: name, topic: cfg.Topic, topics: make(map[string]string), log: cfg.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.pool.New = func() any { return s.newCall() }

	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ClientID(cfg.ClientID),
		kgo.ProducerBatchMaxBytes(int32(max(cfg.MaxRecordBytes+4096, 1_000_012))),
		kgo.MaxBufferedRecords(cfg.MaxBufferedRecords),
		kgo.RecordDeliveryTimeout(cfg.DeliveryTimeout),
		kgo.ProducerLinger(cfg.Linger),
		kgo.WithLogger(&clientLogger{s: s}),
		// A produce error such as NOT_LEADER_FOR_PARTITION waits for a
		// metadata refresh; franz-go's default minimum age of 5 s would
		// stall every batch of a partition that long after a leader change.
		kgo.MetadataMinAge(time.Second),
	}
	switch cfg.Acks {
	case AcksAll:
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case AcksLeader:
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()))
	case AcksNone:
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()))
	}
	if cfg.DisableIdempotence {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	switch cfg.Compression {
	case CompressionSnappy:
		opts = append(opts, kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	case CompressionNone:
		opts = append(opts, kgo.ProducerBatchCompression(kgo.NoCompression()))
	case CompressionGzip:
		opts = append(opts, kgo.ProducerBatchCompression(kgo.GzipCompression()))
	case CompressionLZ4:
		opts = append(opts, kgo.ProducerBatchCompression(kgo.Lz4Compression()))
	case CompressionZstd:
		opts = append(opts, kgo.ProducerBatchCompression(kgo.ZstdCompression()))
	}
	if cfg.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(cfg.TLS.Clone()))
	}
	mech, err := SASLMechanism(cfg.SASL)
	if err != nil {
		return nil, bad("SASL", "%v", err)
	}
	if mech != nil {
		opts = append(opts, kgo.SASL(mech))
	}
	s.cl, err = kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", forward.ErrInvalidConfig, name, err)
	}
	return s, nil
}

// SASLMechanism returns the franz-go mechanism for c, nil when
// c.Mechanism is empty, or an error naming an unknown mechanism or a
// missing user. It is exported for programs that build their own clients
// (a consumer) from the same settings.
func SASLMechanism(c SASLConfig) (sasl.Mechanism, error) {
	switch c.Mechanism {
	case "":
		return nil, nil
	case SASLPlain, SASLScramSHA256, SASLScramSHA512:
		if c.User == "" {
			return nil, fmt.Errorf("SASL %s needs a user", c.Mechanism)
		}
	default:
		return nil, fmt.Errorf("unknown SASL mechanism %q (want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)", c.Mechanism)
	}
	switch c.Mechanism {
	case SASLPlain:
		return plain.Auth{User: c.User, Pass: c.Password}.AsMechanism(), nil
	case SASLScramSHA256:
		return scram.Auth{User: c.User, Pass: c.Password}.AsSha256Mechanism(), nil
	default:
		return scram.Auth{User: c.User, Pass: c.Password}.AsSha512Mechanism(), nil
	}
}

// Client returns the franz-go client the sink produces with, for
// administration (topic creation, metadata) and tests. Producing through it
// bypasses the sink's accounting.
func (s *Sink) Client() *kgo.Client { return s.cl }

// Stats returns a snapshot of the sink's counters.
func (s *Sink) Stats() Stats {
	return Stats{
		EventsSent:    s.sent.Load(),
		BytesSent:     s.bytes.Load(),
		EventsFailed:  s.failed.Load(),
		TooLarge:      s.tooLarge.Load(),
		ProduceErrors: s.produceErrs.Load(),
		Batches:       s.batches.Load(),
	}
}

// Close closes the client and its connections. Records of Send calls still
// in progress fail with [relaykit.ReasonShutdown]. Close is idempotent and
// returns nil.
func (s *Sink) Close() error {
	s.closed.Do(s.cl.Close)
	return nil
}

// call is the state of one Send: the records (reused across calls through
// the pool, with their value buffers) and the failures the promises saw.
type call struct {
	recs    []kgo.Record
	vals    [][]byte // JSON value buffer per record
	hdrs    [][]byte // header value buffer per record
	wg      sync.WaitGroup
	mu      sync.Mutex
	fails   []recFail
	promise func(*kgo.Record, error)
}

type recFail struct {
	r   *kgo.Record
	err error
}

func (s *Sink) newCall() *call {
	c := &call{}
	c.promise = func(r *kgo.Record, err error) {
		if err != nil {
			c.mu.Lock()
			c.fails = append(c.fails, recFail{r, err})
			c.mu.Unlock()
		}
		c.wg.Done()
	}
	return c
}

// grow sets the call's buffers to n entries, reusing their arrays when large enough. Each
// grows on its own: the allocator rounds their capacities differently.
func (c *call) grow(n int) {
	c.recs = slices.Grow(c.recs[:0], n)[:n]
	c.vals = slices.Grow(c.vals[:0], n)[:n]
	c.hdrs = slices.Grow(c.hdrs[:0], n)[:n]
}

// errTooLarge is the error of events larger than MaxRecordBytes.
type errTooLarge struct{ size, limit int }

func (e errTooLarge) Error() string {
	return fmt.Sprintf("record of %d bytes exceeds MaxRecordBytes %d", e.size, e.limit)
}

// errNoTopic is the error of events without a usable topic.
type errNoTopic struct{ topic string }

func (e errNoTopic) Error() string {
	if e.topic == "" {
		return "event has no topic field and no default Topic is set"
	}
	return fmt.Sprintf("invalid topic %q", e.topic)
}

// Send produces one record per event of batch and returns when every record
// was acknowledged or failed; see the package documentation. It returns
// nil when every event was delivered, else a [*relaykit.BatchError]
// listing the undelivered events with their reasons (too large, rejected
// and unauthorized ones Permanent, the rest retryable), wrapped with
// ctx.Err() when ctx ended before all were written. It reads batch only
// until it returns.
func (s *Sink) Send(ctx context.Context, batch []relaykit.Event) error {
	if len(batch) == 0 {
		return nil
	}
	s.batches.Add(1)
	c := s.pool.Get().(*call)
	defer s.pool.Put(c)
	c.grow(len(batch))
	c.fails = c.fails[:0]
	var pre []recFail // failed before producing, by index
	var preIdx []int
	if err := ctx.Err(); err != nil {
		return s.finish(ctx, batch, c, nil, nil, err)
	}
	var valueBytes int64
	// One clock read per batch: the records' timestamp (CreateTime), from
	// which franz-go also measures DeliveryTimeout. The event's own time
	// travels in the JSON value.
	now := time.Now()
	for i := range batch {
		r, err := s.fill(c, i, &batch[i], now)
		if err != nil {
			pre = append(pre, recFail{nil, err})
			preIdx = append(preIdx, i)
			continue
		}
		valueBytes += int64(len(r.Value))
		c.wg.Add(1)
		s.cl.Produce(ctx, r, c.promise)
	}
	c.wg.Wait()
	if len(c.fails) == 0 && len(pre) == 0 {
		n := int64(len(batch))
		s.sent.Add(n)
		s.bytes.Add(valueBytes)
		c.clear()
		return nil
	}
	return s.finish(ctx, batch, c, pre, preIdx, nil)
}

// fill encodes event i into the call's record i.
func (s *Sink) fill(c *call, i int, e *relaykit.Event, now time.Time) (*kgo.Record, error) {
	topic := s.topic
	if s.cfg.TopicField != "" {
		if v, ok := e.Field(s.cfg.TopicField); ok && len(v) > 0 {
			t, err := s.topicName(v)
			if err != nil {
				return nil, err
			}
			topic = t
		}
		if topic == "" {
			return nil, errNoTopic{}
		}
	}
	r := &c.recs[i]
	*r = kgo.Record{Topic: topic, Headers: r.Headers[:0]}
	switch s.cfg.Key {
	case KeyHost:
		r.Key = e.Host
	case KeyField:
		r.Key, _ = e.Field(s.cfg.KeyField)
	}
	if len(r.Key) == 0 {
		r.Key = nil
	}
	if s.cfg.Encoding == EncodingRaw {
		r.Value = e.Raw
	} else {
		c.vals[i] = AppendJSON(c.vals[i][:0], e)
		r.Value = c.vals[i]
	}
	size := len(r.Key) + len(r.Value)
	if !s.cfg.OmitHeaders {
		h := c.hdrs[i][:0]
		for _, kv := range [...]struct {
			k string
			v []byte
		}{{"host", e.Host}, {"source", e.Source}, {"sourcetype", e.SourceType}} {
			if len(kv.v) == 0 {
				continue
			}
			from := len(h)
			h = append(h, kv.v...)
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: kv.k, Value: h[from:len(h):len(h)]})
			size += len(kv.k) + len(kv.v)
		}
		// When h grew, earlier headers point into the old buffer, which
		// stays valid; the grown one is kept for reuse.
		c.hdrs[i] = h
	}
	if size > s.cfg.MaxRecordBytes {
		return nil, errTooLarge{size, s.cfg.MaxRecordBytes}
	}
	r.Timestamp = now
	return r, nil
}

// topicName returns v as a topic string, from a bounded cache so a steady
// set of topics costs no allocation per event.
func (s *Sink) topicName(v []byte) (string, error) {
	s.topicMu.RLock()
	t, ok := s.topics[string(v)]
	s.topicMu.RUnlock()
	if ok {
		return t, nil
	}
	if !validTopic(v) {
		return "", errNoTopic{string(v)}
	}
	t = string(v)
	s.topicMu.Lock()
	if len(s.topics) < maxTopics {
		s.topics[t] = t
	}
	s.topicMu.Unlock()
	return t, nil
}

// clear drops the references the records hold into the caller's events,
// so the pooled call does not pin them.
func (c *call) clear() {
	for i := range c.recs {
		c.recs[i] = kgo.Record{Headers: c.recs[i].Headers[:0]}
	}
	c.fails = c.fails[:0]
}

// finish accounts for a batch with failures: the acknowledged events count
// as sent, every other one goes into the returned *relaykit.BatchError.
// ctxErr is set when nothing was produced because ctx had already ended.
func (s *Sink) finish(ctx context.Context, batch []relaykit.Event, c *call, pre []recFail, preIdx []int, ctxErr error) error {
	defer c.clear()
	errs := make([]error, len(batch))
	if ctxErr != nil {
		for i := range errs {
			errs[i] = ctxErr
		}
	}
	for k, i := range preIdx {
		errs[i] = pre[k].err
	}
	if len(c.fails) > 0 {
		idx := make(map[*kgo.Record]int, len(batch))
		for i := range c.recs {
			idx[&c.recs[i]] = i
		}
		for _, f := range c.fails {
			errs[idx[f.r]] = f.err
		}
	}
	var (
		sent, bytes int64
		be          relaykit.BatchError // the undelivered runs
		shutdown    bool
	)
	for i, err := range errs {
		if err == nil {
			sent++
			bytes += int64(len(c.recs[i].Value))
			continue
		}
		reason, perm := classify(ctx, err)
		if reason == relaykit.ReasonTooLarge {
			s.tooLarge.Add(1)
		}
		if reason == relaykit.ReasonShutdown {
			shutdown = true
		}
		if n := len(be.Failed); n > 0 && be.Failed[n-1].To == i && be.Failed[n-1].Reason == reason {
			be.Failed[n-1].To++
		} else {
			be.Failed = append(be.Failed, relaykit.FailedRange{From: i, To: i + 1, Permanent: perm, Reason: reason,
				Err: &forward.SendError{Destination: s.name, Code: -1, Retryable: !perm, Err: err}})
		}
	}
	s.sent.Add(sent)
	s.bytes.Add(bytes)
	s.failed.Add(int64(len(batch)) - sent)
	if len(be.Failed) == 0 {
		return nil
	}
	if shutdown && ctx.Err() != nil {
		return fmt.Errorf("kafka: send to %s: %w (%w)", s.name, ctx.Err(), &be)
	}
	return &be
}

// classify maps a produce error to a failure reason and whether it is
// permanent (sending the record again cannot succeed).
func classify(ctx context.Context, err error) (reason string, permanent bool) {
	var tl errTooLarge
	var nt errNoTopic
	switch {
	case errors.As(err, &tl), errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge):
		return relaykit.ReasonTooLarge, true
	case errors.As(err, &nt), errors.Is(err, kerr.InvalidTopicException), errors.Is(err, kerr.InvalidRecord),
		errors.Is(err, kerr.CorruptMessage):
		return relaykit.ReasonRejected, true
	case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed),
		errors.Is(err, kerr.TransactionalIDAuthorizationFailed), errors.Is(err, kerr.SaslAuthenticationFailed):
		return relaykit.ReasonUnauthorized, true
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, kgo.ErrClientClosed),
		ctx.Err() != nil:
		return relaykit.ReasonShutdown, false
	default:
		return relaykit.ReasonSinkError, false
	}
}

// clientLogger passes franz-go's warnings and errors to the sink's logger
// and counts the produce errors the client retries.
type clientLogger struct{ s *Sink }

// Level is Debug because franz-go reports partition errors it retries
// ("retrying@" in the "produced" message) only at that level; the message
// is built once per produce response, not per record.
func (l *clientLogger) Level() kgo.LogLevel { return kgo.LogLevelDebug }

func (l *clientLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	if msg == "produced" {
		for i := 0; i+1 < len(keyvals); i += 2 {
			if k, _ := keyvals[i].(string); k == "to" {
				if v, _ := keyvals[i+1].(string); v != "" {
					l.s.produceErrs.Add(int64(strings.Count(v, "retrying@")))
				}
			}
		}
		return
	}
	if strings.HasPrefix(msg, "produce partition load error") ||
		strings.HasPrefix(msg, "produce request failed") ||
		strings.HasPrefix(msg, "random error while producing") ||
		strings.HasPrefix(msg, "batch in a produce request failed") {
		l.s.produceErrs.Add(1)
	}
	switch level {
	case kgo.LogLevelError:
		l.s.log.Error("kafka: "+msg, append(keyvals, "destination", l.s.name)...)
	case kgo.LogLevelWarn:
		l.s.log.Warn("kafka: "+msg, append(keyvals, "destination", l.s.name)...)
	}
}
