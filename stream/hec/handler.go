package hec

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/episode"
	"github.com/relaykit/relaykit/internal/hecwire"
)

// Handler is a Splunk HTTP Event Collector receiver: an http.Handler that
// serves the HEC endpoints under /services/collector and hands the events
// of each request, as one batch, to a [relaykit.Sink]. It answers success
// only after the Sink's Send returned nil. Its methods are safe for
// concurrent use; see the package documentation.
type Handler struct {
	cfg       Config
	errPrefix string // "hec: NAME: "
	tokens    map[string]*token
	pool      sync.Pool // *reqState
	acks      ackState

	// Background sends of acknowledged requests.
	ctx    context.Context
	cancel context.CancelFunc
	sem    chan struct{}
	mu     sync.Mutex // guards closed and wg.Add
	closed bool
	wg     sync.WaitGroup

	requests, ackQueries, bytes, decoded                   atomic.Int64
	events, accepted, refused                              atomic.Int64
	responses                                              [NumCodes]atomic.Int64
	tooLarge, badEncoding, bodyTimeouts, bodyErrors, sendE atomic.Int64
	refusing                                               episode.Log
}

var _ http.Handler = (*Handler)(nil)

// token is a configured token with its defaults in bytes.
type token struct {
	Token
	indexes                         map[string]struct{} // nil: any
	host, source, sourceType, index []byte
	route                           []byte
}

// New returns a handler for cfg, or an error wrapping [ErrInvalidConfig].
// The handler starts no goroutine until an acknowledged request arrives;
// [Handler.Close] (or Shutdown) stops and waits for those it started.
func New(cfg Config) (*Handler, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg, errPrefix: "hec: ", tokens: make(map[string]*token, len(cfg.Tokens)), sem: make(chan struct{}, cfg.AckConcurrency)}
	if cfg.Name != "" {
		h.errPrefix += cfg.Name + ": "
	}
	for i := range cfg.Tokens {
		t := &token{Token: cfg.Tokens[i]}
		if t.Indexes != nil {
			t.indexes = make(map[string]struct{}, len(t.Indexes))
			for _, idx := range t.Indexes {
				t.indexes[idx] = struct{}{}
			}
		}
		t.host, t.source, t.sourceType, t.index = bytesOrNil(t.Host), bytesOrNil(t.Source), bytesOrNil(t.SourceType), bytesOrNil(t.Index)
		t.route = bytesOrNil(t.Route)
		h.tokens[t.Token.Token] = t
	}
	h.acks.init(&h.cfg)
	h.ctx, h.cancel = context.WithCancel(context.Background())
	return h, nil
}

func bytesOrNil(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// Stats returns a snapshot of the handler's counters.
func (h *Handler) Stats() Stats {
	s := Stats{
		Requests: h.requests.Load(), AckQueries: h.ackQueries.Load(), Bytes: h.bytes.Load(), DecodedBytes: h.decoded.Load(),
		Events: h.events.Load(), EventsAccepted: h.accepted.Load(), EventsRefused: h.refused.Load(),
		TooLarge: h.tooLarge.Load(), BadEncoding: h.badEncoding.Load(), BodyTimeouts: h.bodyTimeouts.Load(),
		BodyErrors: h.bodyErrors.Load(), SendErrors: h.sendE.Load(),
	}
	for i := range h.responses {
		s.Responses[i] = h.responses[i].Load()
	}
	h.acks.stats(&s)
	return s
}

// Close stops the handler: later data requests are answered code 9
// (server busy), the Sends of acknowledged requests still running see
// their ctx canceled (their ackIds stay false, so their senders send them
// again), and Close waits for them to return. It is idempotent and
// returns nil. The http.Server serving the handler is the caller's to
// shut down, before Close so that no request is cut.
func (h *Handler) Close() error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
	return nil
}

// Shutdown stops the handler as Close does, but first lets the Sends of
// acknowledged requests finish until ctx ends. It returns ctx.Err() when
// it had to cancel them, nil otherwise.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	h.cancel()
	<-done
	return err
}

func (h *Handler) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// ServeHTTP serves the HEC endpoints, recognised by the end of the path,
// so the handler may be mounted at any prefix:
//
//   - /services/collector, /services/collector/event and
//     /services/collector/event/1.0: stacked JSON event objects;
//   - /services/collector/raw and /services/collector/raw/1.0: raw text,
//     one event per line;
//   - /services/collector/ack: indexer acknowledgement queries;
//   - /services/collector/health and /services/collector/health/1.0.
//
// Any other path is answered 404.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimSuffix(r.URL.Path, "/")
	p = strings.TrimSuffix(p, "/1.0")
	switch {
	case strings.HasSuffix(p, "/services/collector/event"), strings.HasSuffix(p, "/services/collector"):
		h.serveData(w, r, endpointEvent)
	case strings.HasSuffix(p, "/services/collector/raw"):
		h.serveData(w, r, endpointRaw)
	case strings.HasSuffix(p, "/services/collector/ack"):
		h.serveAck(w, r)
	case strings.HasSuffix(p, "/services/collector/health"):
		h.serveHealth(w)
	default:
		w.Header()["Content-Type"] = jsonType
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"text":"The requested URL was not found on this server.","code":404}`))
	}
}

var (
	jsonType = []string{"application/json; charset=UTF-8"}
	textType = []string{"text/plain; charset=UTF-8"}
)

// reply answers code with its status and body; extra members go before
// the closing brace.
func (h *Handler) reply(w http.ResponseWriter, st *reqState, code int, extra []byte) {
	status, _, _ := hecwire.Status(code)
	w.Header()["Content-Type"] = jsonType
	w.WriteHeader(status)
	st.out = hecwire.AppendReply(st.out[:0], code, true)
	st.out = append(st.out, extra...)
	st.out = append(st.out, '}')
	_, _ = w.Write(st.out)
	h.responses[code].Add(1)
}

// replyStatus answers a status without an HEC code (408, 413, 415).
func replyStatus(w http.ResponseWriter, status int, text []byte) {
	w.Header()["Content-Type"] = textType
	w.WriteHeader(status)
	_, _ = w.Write(text)
}

// auth finds the request's token, or returns the HEC code of the
// failure.
func (h *Handler) auth(r *http.Request) (*token, int) {
	a := r.Header["Authorization"]
	var secret string
	switch {
	case len(a) == 0 || a[0] == "":
		q := queryValue(r.URL.RawQuery, "token")
		if q == "" {
			return nil, CodeTokenRequired
		}
		if !h.cfg.AllowQueryStringToken {
			return nil, CodeQueryStringDisabled
		}
		secret = q
	case strings.HasPrefix(a[0], "Splunk "):
		secret = strings.TrimSpace(a[0][len("Splunk "):])
	case len(a[0]) > 6 && strings.EqualFold(a[0][:6], "Basic "):
		// HTTP Basic authentication with any user and the token as the
		// password ("Format events for HTTP Event Collector").
		dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(a[0][6:]))
		if err != nil {
			return nil, CodeInvalidAuthz
		}
		_, pw, ok := strings.Cut(string(dec), ":")
		if !ok {
			return nil, CodeInvalidAuthz
		}
		secret = pw
	default:
		return nil, CodeInvalidAuthz
	}
	t := h.tokens[secret]
	switch {
	case t == nil:
		return nil, CodeInvalidToken
	case t.Disabled:
		return nil, CodeTokenDisabled
	}
	return t, CodeSuccess
}

// channel returns the request's channel (header X-Splunk-Request-Channel,
// or query parameter "channel"), or the HEC code of a missing (when
// required) or malformed one.
func channel(r *http.Request, required bool) (string, int) {
	ch := ""
	if v := r.Header["X-Splunk-Request-Channel"]; len(v) > 0 {
		ch = v[0]
	}
	if ch == "" {
		ch = queryValue(r.URL.RawQuery, "channel")
	}
	switch {
	case ch == "" && required:
		return "", CodeChannelMissing
	case ch != "" && !hecwire.IsChannel(ch):
		return "", CodeInvalidChannel
	}
	return ch, CodeSuccess
}

// queryValue returns the first value of key in a raw query, unescaped;
// it allocates only for a value that needs unescaping.
func queryValue(raw, key string) string {
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(kv, "=")
		if k != key {
			continue
		}
		if strings.ContainsAny(v, "%+") {
			if u, err := url.QueryUnescape(v); err == nil {
				return u
			}
			return ""
		}
		return v
	}
	return ""
}

// Request describes the request a batch came from; the Sink reads it
// with [FromContext].
type Request struct {
	// Token is the name of the token ([Token].Name), never its secret.
	Token string
	// Route is the token's [Token].Route.
	Route string
	// Endpoint is "event" or "raw".
	Endpoint string
	// Channel is the request's channel, or "".
	Channel string
	// RemoteAddr is the sender's address (http.Request.RemoteAddr).
	RemoteAddr string
}

type ctxKey struct{}

// FromContext returns the [Request] of the batch whose Send received ctx.
// The Request is valid only until Send returns.
func FromContext(ctx context.Context) (*Request, bool) {
	r, ok := ctx.Value(ctxKey{}).(*Request)
	return r, ok
}

// send hands batch to the Sink under SendTimeout and counts the outcome.
func (h *Handler) send(ctx context.Context, st *reqState, batch []relaykit.Event) error {
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, ctxKey{}, &st.req), h.cfg.SendTimeout)
	defer cancel()
	err := h.cfg.Sink.Send(ctx, batch)
	if err != nil {
		h.sendE.Add(1)
		h.refused.Add(int64(len(batch)))
		h.refusing.Fail(h.cfg.Logger, "hec: the sink refuses batches, answering server busy (further refusals are counted, not logged)", "input", h.cfg.Name, "err", err)
		if f := h.cfg.Hooks.OnSendError; f != nil {
			f(fmt.Errorf("%stoken %s: %w", h.errPrefix, st.req.Token, err), len(batch))
		}
		return err
	}
	h.refusing.OK(h.cfg.Logger, "hec: the sink accepts batches again", "input", h.cfg.Name)
	h.accepted.Add(int64(len(batch)))
	return nil
}
