package forward

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"
)

// DeliveryConfig holds the delivery settings every HTTP sink of this package
// shares ([HECConfig.Delivery], SentinelConfig.Delivery): client, TLS,
// timeouts, concurrency, size limits, compression, retries, the failure
// handler, hooks and logging. The zero value gives the documented defaults.
type DeliveryConfig struct {
	// Name names the destination in errors, [Failure], [Hooks] and logs,
	// e.g. "splunk-prod". Zero means the sink's kind ("hec", "sentinel").
	Name string

	// HTTPClient sends the requests. Nil means a client owned by the sink,
	// built from TLS and RequestTimeout, with connection timeouts and idle
	// pooling (never http.DefaultClient, which has no timeout). A supplied
	// client is used as is; TLS must then be zero.
	HTTPClient *http.Client
	// TLS configures server verification and client certificates of the
	// sink's own client. Ignored when zero.
	TLS TLSConfig

	// RequestTimeout bounds one HTTP attempt, from sending the request
	// until the response body is read. Zero means 30 s.
	RequestTimeout time.Duration
	// Concurrency is the maximum number of requests the sink has in flight
	// at once, across all concurrent Send calls. Zero means 4. With more
	// than one, the requests of one batch may be sent in parallel, so
	// their events may arrive out of order across requests; set 1 for
	// strict order.
	Concurrency int

	// MaxRequestBytes is the maximum size of one request body before
	// compression, in bytes; larger batches are split into several
	// requests. Zero means the sink's default (1 MiB for HEC and Sentinel).
	MaxRequestBytes int
	// MaxEventBytes is the maximum encoded size of one event, in bytes. A
	// larger event goes to OnFailure with [ReasonTooLarge]. Zero means the
	// sink's default (HEC: 5 MiB, but never more than MaxRequestBytes).
	MaxEventBytes int

	// DisableGzip sends bodies uncompressed. By default bodies are gzipped
	// (Content-Encoding: gzip) with pooled writers.
	DisableGzip bool
	// GzipLevel is the compression level, 1 (fastest) to 9 (smallest).
	// Zero means 1: on a relay CPU is scarcer than bandwidth.
	GzipLevel int

	// Retry bounds retries of retryable failures.
	Retry RetryConfig

	// OnFailure receives every event the sink gives up on, with the reason.
	// Nil means such events are counted in Stats and reported by Send's
	// error instead, as a *relaykit.BatchError listing exactly the
	// undelivered events (leave it nil behind a delivery.Queue).
	OnFailure FailureFunc
	// Hooks observe requests and retries. Nil hooks cost nothing.
	Hooks Hooks
	// Logger logs state changes (destination unauthorized, unhealthy,
	// recovered), never events or secrets. Nil means no logging.
	Logger *slog.Logger
}

// RetryConfig bounds the retries of one request: exponential backoff with
// full jitter (the wait before retry n is uniform in [0, min(MaxBackoff,
// InitialBackoff·2ⁿ⁻¹)]), except that a Retry-After (or retry-after-ms)
// sent by the destination is honoured as the wait.
type RetryConfig struct {
	// MaxAttempts is the maximum number of attempts per request, the first
	// included. Zero means 10. Use 1 to disable retries.
	MaxAttempts int
	// MaxElapsed bounds the time spent on one request, from its first
	// attempt; a wait that would end past it is not started. Zero means
	// 5 minutes.
	MaxElapsed time.Duration
	// InitialBackoff is the backoff ceiling of the first retry. Zero means
	// 200 ms.
	InitialBackoff time.Duration
	// MaxBackoff caps the backoff ceiling. Zero means 30 s.
	MaxBackoff time.Duration
}

// Hooks are optional callbacks that observe a sink, like
// net/http/httptrace.ClientTrace. They run synchronously on the sending
// goroutine, possibly on several goroutines at once: they must be fast, safe
// for concurrent use, and must not retain their arguments beyond the call.
type Hooks struct {
	// OnSend is called after a request was accepted by the destination,
	// with the number of events and body bytes (before compression) it
	// carried and the duration of the successful attempt.
	OnSend func(dest string, events, bytes int, took time.Duration)
	// OnSendError is called after every failed attempt, retryable or not.
	// err is a *SendError and never holds secrets.
	OnSendError func(dest string, err error)
	// OnRetry is called before waiting to retry a request: attempt is the
	// number of the attempt that failed (1 for the first), wait the backoff.
	OnRetry func(dest string, attempt int, wait time.Duration)
}

// Stats is a snapshot of a sink's counters since it was created. Counters
// only grow, except InFlight.
type Stats struct {
	// EventsSent counts events the destination accepted (for HEC with
	// indexer acknowledgement: acknowledged).
	EventsSent int64
	// BytesSent counts request body bytes before compression of accepted
	// requests.
	BytesSent int64
	// WireBytes counts body bytes put on the wire (after compression), for
	// every attempt.
	WireBytes int64
	// Requests counts HTTP attempts, retries included.
	Requests int64
	// Retries counts waits before a retry.
	Retries int64
	// Splits counts requests split in two after a 413.
	Splits int64
	// EventsFailed counts events handed to OnFailure (or reported by Send's
	// error), by Reason constant.
	EventsFailed map[string]int64
	// InFlight is the number of requests being sent now.
	InFlight int64
}

// reasons lists the Reason constants in the order of counters.failed.
var reasons = [...]string{
	ReasonRetriesExhausted, ReasonRejected, ReasonTooLarge, ReasonUnauthorized, ReasonShutdown,
}

type counters struct {
	eventsSent atomic.Int64
	bytesSent  atomic.Int64
	wireBytes  atomic.Int64
	requests   atomic.Int64
	retries    atomic.Int64
	splits     atomic.Int64
	inFlight   atomic.Int64
	failed     [len(reasons) + 1]atomic.Int64 // last: any other reason
}

func (c *counters) addFailed(reason string, n int) {
	for i, r := range reasons {
		if r == reason {
			c.failed[i].Add(int64(n))
			return
		}
	}
	c.failed[len(reasons)].Add(int64(n))
}

func (c *counters) snapshot() Stats {
	s := Stats{
		EventsSent:   c.eventsSent.Load(),
		BytesSent:    c.bytesSent.Load(),
		WireBytes:    c.wireBytes.Load(),
		Requests:     c.requests.Load(),
		Retries:      c.retries.Load(),
		Splits:       c.splits.Load(),
		InFlight:     c.inFlight.Load(),
		EventsFailed: make(map[string]int64, len(reasons)+1),
	}
	for i, r := range reasons {
		s.EventsFailed[r] = c.failed[i].Load()
	}
	if n := c.failed[len(reasons)].Load(); n > 0 {
		s.EventsFailed["other"] = n
	}
	return s
}

// withDefaults returns c with zero fields replaced by defaults, after
// validation. kind is the sink kind ("hec"); maxReq and maxEvent the sink's
// default limits.
func (c DeliveryConfig) withDefaults(kind string, maxReq, maxEvent int) (DeliveryConfig, error) {
	if c.Name == "" {
		c.Name = kind
	}
	switch {
	case c.RequestTimeout < 0:
		return c, fmt.Errorf("%w: %s: RequestTimeout %v is negative", ErrInvalidConfig, c.Name, c.RequestTimeout)
	case c.Concurrency < 0:
		return c, fmt.Errorf("%w: %s: Concurrency %d is negative", ErrInvalidConfig, c.Name, c.Concurrency)
	case c.MaxRequestBytes < 0:
		return c, fmt.Errorf("%w: %s: MaxRequestBytes %d is negative", ErrInvalidConfig, c.Name, c.MaxRequestBytes)
	case c.MaxEventBytes < 0:
		return c, fmt.Errorf("%w: %s: MaxEventBytes %d is negative", ErrInvalidConfig, c.Name, c.MaxEventBytes)
	case c.GzipLevel < 0 || c.GzipLevel > 9:
		return c, fmt.Errorf("%w: %s: GzipLevel %d is outside 1..9", ErrInvalidConfig, c.Name, c.GzipLevel)
	case c.HTTPClient != nil && !c.TLS.isZero():
		return c, fmt.Errorf("%w: %s: TLS is set but HTTPClient is supplied; configure TLS on the client", ErrInvalidConfig, c.Name)
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.Concurrency == 0 {
		c.Concurrency = 4
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = maxReq
	}
	if c.MaxEventBytes == 0 {
		c.MaxEventBytes = maxEvent
	}
	if c.MaxEventBytes > c.MaxRequestBytes {
		c.MaxEventBytes = c.MaxRequestBytes
	}
	if c.GzipLevel == 0 {
		c.GzipLevel = 1
	}
	r, err := c.Retry.withDefaults()
	if err != nil {
		return c, fmt.Errorf("%w: %s: %w", ErrInvalidConfig, c.Name, err)
	}
	c.Retry = r
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}
