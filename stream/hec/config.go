package hec

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/internal/cfgerr"
	"github.com/relaykit/relaykit/internal/hecwire"
)

// HEC status codes, as Splunk documents them ("Troubleshoot HTTP Event
// Collector") and as the handler answers them in {"text":...,"code":N}
// bodies, with the HTTP status of each.
const (
	CodeSuccess             = hecwire.Success             // 200 "Success"
	CodeTokenDisabled       = hecwire.TokenDisabled       // 403 "Token disabled"
	CodeTokenRequired       = hecwire.TokenRequired       // 401 "Token is required"
	CodeInvalidAuthz        = hecwire.InvalidAuthz        // 401 "Invalid authorization"
	CodeInvalidToken        = hecwire.InvalidToken        // 403 "Invalid token"
	CodeNoData              = hecwire.NoData              // 400 "No data"
	CodeInvalidDataFormat   = hecwire.InvalidDataFormat   // 400 "Invalid data format", with invalid-event-number
	CodeIncorrectIndex      = hecwire.IncorrectIndex      // 400 "Incorrect index"
	CodeInternalError       = hecwire.InternalError       // 500 "Internal server error"
	CodeServerBusy          = hecwire.ServerBusy          // 503 "Server is busy"
	CodeChannelMissing      = hecwire.ChannelMissing      // 400 "Data channel is missing"
	CodeInvalidChannel      = hecwire.InvalidChannel      // 400 "Invalid data channel"
	CodeEventRequired       = hecwire.EventRequired       // 400 "Event field is required"
	CodeEventBlank          = hecwire.EventBlank          // 400 "Event field cannot be blank"
	CodeAckDisabled         = hecwire.AckDisabled         // 400 "ACK is disabled"
	CodeIndexedFieldsError  = hecwire.IndexedFieldsError  // 400 "Error in handling indexed fields"
	CodeQueryStringDisabled = hecwire.QueryStringDisabled // 400 "Query string authorization is not enabled"
	CodeHealthy             = hecwire.Healthy             // 200 "HEC is healthy"
	CodeUnhealthyQueuesFull = hecwire.UnhealthyQueuesFull // 503 "HEC is unhealthy, queues are full"
	CodeUnhealthyAck        = hecwire.UnhealthyAck        // 503 "HEC is unhealthy, ack service unavailable"
	CodeUnhealthyQueueHigh  = hecwire.UnhealthyQueueHigh  // 503 "HEC is unhealthy, queue utilization is high"

	// NumCodes is one more than the highest code: the length of
	// [Stats].Responses.
	NumCodes = hecwire.NumCodes
)

// Status returns the HTTP status and text the handler sends with an HEC
// code, and false for an unknown code.
func Status(code int) (status int, text string, ok bool) { return hecwire.Status(code) }

// ErrInvalidConfig is wrapped by the errors [New] returns for a bad
// [Config].
var ErrInvalidConfig = errors.New("hec: invalid config")

// Defaults of [Config].
const (
	DefaultMaxBodyBytes   = 8 << 20
	DefaultSendTimeout    = 30 * time.Second
	DefaultBodyTimeout    = 30 * time.Second
	DefaultAckConcurrency = 4
	DefaultMaxPendingAcks = 10000
	DefaultMaxAckChannels = 10000
	DefaultAckChannelIdle = 10 * time.Minute
)

// Token is one HEC token the handler accepts, with what it pins.
type Token struct {
	// Name identifies the token in [Stats], [Hooks], logs and [Request]
	// (never the token itself, which is a secret). Zero means "token-N",
	// N its position in [Config].Tokens, from 1.
	Name string
	// Token is the secret the sender presents: "Authorization: Splunk
	// <Token>" (or HTTP Basic authentication with the token as the
	// password). Required, unique.
	Token string
	// Disabled makes the token answer code 1, "Token disabled" (403).
	Disabled bool
	// Host, Source, SourceType and Index are the defaults of the token's
	// events: each is set on an event that does not carry its own, as
	// Splunk applies a token's default index and sourcetype. Empty means
	// none.
	Host, Source, SourceType, Index string
	// Indexes lists the indexes the token may write to: an event for
	// another is refused with code 7, "Incorrect index" (HEC's "allowed
	// indexes"). Nil means any index.
	Indexes []string
	// Route is a hint for the caller's routing, read with [FromContext]
	// in the Sink, and set on each event as the field named by
	// [Config].RouteField when that is not empty. Empty means none.
	Route string
	// Ack enables indexer acknowledgement for the token (HEC's useACK):
	// requests must name a channel, are answered with an ackId at once,
	// and /services/collector/ack reports the id true once the Sink
	// accepted the batch. See the package documentation.
	Ack bool
}

// Hooks observe the handler. They run synchronously on request
// goroutines, possibly several at once: they must be fast, safe for
// concurrent use and must not retain their arguments.
type Hooks struct {
	// OnRequest is called after a data request (event or raw endpoint)
	// was answered, with the token's name ("" when authentication
	// failed), the endpoint ("event" or "raw"), the HEC code answered (or
	// -1 for an answer without one: 408, 413, 415), the events decoded
	// and the body bytes read (before decompression), and the time from
	// the start of the request to the answer.
	OnRequest func(token, endpoint string, code, events, bytes int, took time.Duration)
	// OnSendError is called when the Sink returned an error for a batch
	// of events (answered with code 9, or, with indexer acknowledgement,
	// left unacknowledged): err wraps the Sink's error and names the
	// token.
	OnSendError func(err error, events int)
}

// Config configures a [Handler]. Tokens and Sink are required; every
// other zero field means the documented default.
type Config struct {
	// Name identifies the handler in log records and errors.
	Name string
	// Tokens lists the tokens accepted; at least one.
	Tokens []Token
	// Sink receives the events of each request as one batch. A nil error
	// from Send is the only thing the handler acknowledges (see the
	// package documentation).
	Sink relaykit.Sink

	// RouteField names the field set to [Token].Route on every event of a
	// token with a Route. Zero means no field (the Sink reads the route
	// with [FromContext]).
	RouteField string
	// KeepPriorityFields keeps the fields "facility" and "severity" as
	// fields. By default an event whose fields hold both, named as
	// syslog.conf names them (what forward.HEC sends for an event with a
	// syslog priority), gets [relaykit.Event.Priority] from them instead,
	// and the two fields are removed.
	KeepPriorityFields bool

	// MaxBodyBytes is the largest request body accepted, in bytes, both as
	// received and after gzip decompression; a larger one is answered 413
	// (what HEC's max_content_length does) and counted in
	// [Stats].TooLarge. Decompression stops at the limit, so a gzip bomb
	// costs no more memory than MaxBodyBytes. Zero means 8 MiB.
	MaxBodyBytes int64
	// BodyTimeout bounds the reading of one request body, from the start
	// of the request: a sender that trickles its body is answered 408 and
	// counted in [Stats].BodyTimeouts. It moves the connection's read
	// deadline (http.ResponseController), so it applies over any
	// http.Server whose connections support it. Zero means 30 s; negative
	// means no bound from the handler.
	BodyTimeout time.Duration
	// SendTimeout bounds the Sink's Send of one batch (its ctx
	// deadline). A Send still running then is answered code 9 (server
	// busy), so the sender retries. Zero means 30 s.
	SendTimeout time.Duration

	// AckConcurrency is the most batches of acknowledged requests the
	// handler sends at once in the background; a request that finds no
	// free slot waits for one up to SendTimeout, then is answered code 9.
	// Zero means 4.
	AckConcurrency int
	// MaxPendingAcks is the most ackIds one channel holds that the sender
	// has not yet seen true (in flight or acknowledged and not yet
	// queried); a request beyond it is answered code 9, server busy, as
	// Splunk does at max_number_of_acked_requests_pending_query_per_ack_channel.
	// Zero means 10000.
	MaxPendingAcks int
	// MaxAckChannels is the most channels holding ack state; a request on
	// a new channel beyond it is answered code 9. Zero means 10000.
	MaxAckChannels int
	// AckChannelIdle is how long a channel may go without a request or
	// an ack query before its state is dropped (HEC's maxIdleTime); its
	// ids then answer false. Zero means 10 minutes.
	AckChannelIdle time.Duration

	// AllowQueryStringToken accepts the token as the query parameter
	// "token" (HEC's allowQueryStringAuth). By default such a request is
	// answered code 16, as Splunk does unless enabled.
	AllowQueryStringToken bool

	// Health, when not nil, is asked by /services/collector/health: a
	// non-nil error is answered 503, code 18 ("HEC is unhealthy, queues
	// are full"). Nil means healthy while the handler is open.
	Health func() error

	// Clock stamps ReceiveTime (one read per request) and ages the ack
	// channels. Nil means [clock.Default].
	Clock *clock.Clock

	// Hooks observe requests and Sink errors. Nil hooks cost nothing.
	Hooks Hooks
	// Logger logs state changes (the Sink refusing batches and accepting
	// them again, once per episode; ack state limits reached), never
	// events or tokens. Nil means no logging.
	Logger *slog.Logger
}

// Validate reports whether [New] would accept cfg: nil, or a
// *relaykit.FieldError wrapping [ErrInvalidConfig]. Errors about a token
// name it by its index ("Tokens[1].Token") and never show its value.
func (cfg Config) Validate() error { return cfg.fill() }

func (cfg *Config) fill() error {
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(ErrInvalidConfig, field, format, args...)
	}
	switch {
	case len(cfg.Tokens) == 0:
		return bad("Tokens", "at least one token is required")
	case cfg.Sink == nil:
		return bad("Sink", "required")
	}
	for _, v := range []struct {
		field string
		n     int64
	}{
		{"MaxBodyBytes", cfg.MaxBodyBytes}, {"SendTimeout", int64(cfg.SendTimeout)},
		{"AckConcurrency", int64(cfg.AckConcurrency)}, {"MaxPendingAcks", int64(cfg.MaxPendingAcks)},
		{"MaxAckChannels", int64(cfg.MaxAckChannels)}, {"AckChannelIdle", int64(cfg.AckChannelIdle)},
	} {
		if v.n < 0 {
			return bad(v.field, "must not be negative")
		}
	}
	seen := make(map[string]bool, len(cfg.Tokens))
	toks := make([]Token, len(cfg.Tokens))
	copy(toks, cfg.Tokens)
	for i := range toks {
		t := &toks[i]
		if t.Name == "" {
			t.Name = fmt.Sprintf("token-%d", i+1)
		}
		field := fmt.Sprintf("Tokens[%d].Token", i)
		switch {
		case t.Token == "":
			return bad(field, "token %q has no value", t.Name)
		case strings.ContainsAny(t.Token, " \t\r\n"):
			return bad(field, "token %q contains white space", t.Name)
		case seen[t.Token]:
			return bad(field, "token %q is listed twice", t.Name)
		}
		seen[t.Token] = true
	}
	cfg.Tokens = toks
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.BodyTimeout == 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	if cfg.SendTimeout == 0 {
		cfg.SendTimeout = DefaultSendTimeout
	}
	if cfg.AckConcurrency == 0 {
		cfg.AckConcurrency = DefaultAckConcurrency
	}
	if cfg.MaxPendingAcks == 0 {
		cfg.MaxPendingAcks = DefaultMaxPendingAcks
	}
	if cfg.MaxAckChannels == 0 {
		cfg.MaxAckChannels = DefaultMaxAckChannels
	}
	if cfg.AckChannelIdle == 0 {
		cfg.AckChannelIdle = DefaultAckChannelIdle
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Default()
	}
	return nil
}

// Stats is a snapshot of a handler's counters. Counters only grow, except
// AcksPending and AckChannels.
type Stats struct {
	// Requests counts data requests (event and raw endpoints) that passed
	// authentication; AckQueries counts requests to the ack endpoint.
	Requests, AckQueries int64
	// Bytes counts request body bytes read, as received (compressed);
	// DecodedBytes the same bodies after decompression.
	Bytes, DecodedBytes int64
	// Events counts events decoded; EventsAccepted those the Sink
	// accepted (Send returned nil); EventsRefused those in batches the
	// Sink refused or that were not sent (answered code 9 or left
	// unacknowledged: the sender keeps them and sends them again). Events
	// = EventsAccepted + EventsRefused once no Send is in flight.
	Events, EventsAccepted, EventsRefused int64
	// Responses counts answers by HEC code (Responses[CodeSuccess] is
	// successes, Responses[CodeServerBusy] back-pressure), for every
	// endpoint.
	Responses [NumCodes]int64
	// TooLarge counts bodies over MaxBodyBytes (413), as received or
	// after decompression (a gzip bomb); BadEncoding bodies that are not
	// valid gzip or have another Content-Encoding (400, 415);
	// BodyTimeouts bodies not read within BodyTimeout (408); BodyErrors
	// bodies broken off by the sender.
	TooLarge, BadEncoding, BodyTimeouts, BodyErrors int64
	// SendErrors counts batches the Sink refused (or did not accept within
	// SendTimeout).
	SendErrors int64
	// AcksPending is the number of ackIds issued and not yet reported
	// true to their sender (in flight, or accepted and not yet queried);
	// AckChannels the channels holding them.
	AcksPending, AckChannels int64
	// AcksAccepted counts ackIds whose batch the Sink accepted; AcksFailed
	// those whose batch it refused (they stay false); AcksExpired those
	// dropped with an idle channel before they were reported true.
	AcksAccepted, AcksFailed, AcksExpired int64
}
