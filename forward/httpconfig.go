package forward

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/cfgerr"
)

// HTTPConfig holds the settings every HTTP sink of this package shares
// ([HECConfig].HTTP, [SentinelConfig].HTTP): the HTTP client and its TLS,
// timeouts, concurrency, size limits, compression, hooks and logging. The
// zero value gives the documented defaults.
//
// There are no retry settings: a sink makes one attempt per request and
// reports what it did not deliver (see the package documentation). Put it
// behind a delivery.Queue to retry.
type HTTPConfig struct {
	// Name names the destination in errors, [Hooks] and logs, e.g.
	// "splunk-prod". Zero means the sink's kind ("hec", "sentinel").
	Name string

	// HTTPClient sends the requests. Nil means a client owned by the sink,
	// built from TLS and Timeout, with connection timeouts and idle
	// pooling (never http.DefaultClient, which has no timeout). A supplied
	// client is used as is; TLS must then be nil.
	HTTPClient *http.Client
	// TLS configures server verification and client certificates of the
	// sink's own client; [TLSConfig.Build] makes one from files. Nil
	// means the system roots and TLS 1.2 at least.
	TLS *tls.Config

	// Timeout bounds one HTTP request, from sending it until the response
	// body is read. Zero means 30 s.
	Timeout time.Duration
	// Concurrency is the maximum number of requests the sink has in flight
	// at once, across all concurrent Send calls. Zero means 4. With more
	// than one, the requests of one batch may be sent in parallel, so
	// their events may arrive out of order across requests; set 1 for
	// strict order.
	Concurrency int

	// MaxRequestBytes is the maximum size of one request body before
	// compression, in bytes; larger batches are split into several
	// requests. Zero means the sink's default (1 MiB for HEC; 1,000,000
	// bytes for Sentinel, which also keeps the compressed body within it).
	MaxRequestBytes int
	// MaxEventBytes is the maximum encoded size of one event, in bytes. A
	// larger event is not sent: Send reports it as a permanent failure
	// with [relaykit.ReasonTooLarge]. Zero means the sink's default (HEC:
	// 5 MiB, but never more than MaxRequestBytes).
	MaxEventBytes int

	// DisableGzip sends bodies uncompressed. By default bodies are gzipped
	// (Content-Encoding: gzip) with pooled writers.
	DisableGzip bool
	// GzipLevel is the compression level: 1 (fastest) to 9 (smallest),
	// [GzipHuffmanOnly] or [GzipStateless]. Zero means 1. The level changes
	// the CPU a request costs and the bytes it puts on the wire, never
	// what the destination stores or bills (Sentinel and Splunk count the
	// uncompressed data); the package documentation's "Compression"
	// section has measured figures per level.
	GzipLevel int

	// Hooks observe requests. Nil hooks cost nothing.
	Hooks Hooks
	// Logger logs state changes (destination unauthorized and accepting
	// the credentials again, an index refused), never events or secrets.
	// Nil means no logging.
	Logger *slog.Logger
}

// Hooks are optional callbacks that observe a sink, like
// net/http/httptrace.ClientTrace. They run synchronously on the sending
// goroutine, possibly on several goroutines at once: they must be fast, safe
// for concurrent use, and must not retain their arguments beyond the call.
type Hooks struct {
	// OnSend is called after a request was accepted by the destination,
	// with the number of events and body bytes (before compression) it
	// carried and the duration of the request.
	OnSend func(dest string, events, bytes int, took time.Duration)
	// OnSendError is called after every failed request, retryable or not,
	// with its error and the number of events it carried. err is a
	// *SendError (naming the destination) and never holds secrets. It has
	// the shape of every OnSendError hook in relaykit.
	OnSendError func(err error, events int)
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
	// every request.
	WireBytes int64
	// Requests counts HTTP requests with events (not health checks or
	// acknowledgement polls), the halves of a split request and the
	// repetition after a re-authentication included.
	Requests int64
	// Splits counts requests split in two after a 413, or before sending
	// because their compressed body exceeded the destination's limit.
	Splits int64
	// EventsFailed counts events reported undelivered by Send's error, by
	// reason: [relaykit.ReasonRejected], [relaykit.ReasonTooLarge] and
	// [relaykit.ReasonUnauthorized] (permanent), [relaykit.ReasonSinkError]
	// (retryable: network errors, 408, 429, 5xx, a missing
	// acknowledgement) and [relaykit.ReasonShutdown] (ctx ended first).
	// An event reported by several Sends is counted each time.
	EventsFailed map[string]int64
	// InFlight is the number of requests being sent now.
	InFlight int64
}

// reasons lists the reasons of counters.failed, in order.
var reasons = [...]string{
	relaykit.ReasonRejected, relaykit.ReasonTooLarge, relaykit.ReasonUnauthorized,
	relaykit.ReasonSinkError, relaykit.ReasonShutdown,
}

type counters struct {
	eventsSent atomic.Int64
	bytesSent  atomic.Int64
	wireBytes  atomic.Int64
	requests   atomic.Int64
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
// validation: a *relaykit.FieldError wrapping [ErrInvalidConfig], its
// path relative to the HTTPConfig. kind is the sink kind ("hec"); maxReq
// and maxEvent the sink's default limits.
func (c HTTPConfig) withDefaults(kind string, maxReq, maxEvent int) (HTTPConfig, error) {
	if c.Name == "" {
		c.Name = kind
	}
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(ErrInvalidConfig, field, format, args...)
	}
	switch {
	case c.Timeout < 0:
		return c, bad("Timeout", "%v is negative", c.Timeout)
	case c.Concurrency < 0:
		return c, bad("Concurrency", "%d is negative", c.Concurrency)
	case c.MaxRequestBytes < 0:
		return c, bad("MaxRequestBytes", "%d is negative", c.MaxRequestBytes)
	case c.MaxEventBytes < 0:
		return c, bad("MaxEventBytes", "%d is negative", c.MaxEventBytes)
	case c.GzipLevel != 0 && !validGzipLevel(c.GzipLevel):
		return c, bad("GzipLevel", "%d is not 1..9, GzipHuffmanOnly or GzipStateless", c.GzipLevel)
	case c.HTTPClient != nil && c.TLS != nil:
		return c, bad("TLS", "set while HTTPClient is supplied; configure TLS on the client")
	}
	if c.Timeout == 0 {
		c.Timeout = 30 * time.Second
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
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}
