package tap

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit/internal/httpauth"
	"github.com/relaykit/relaykit/pipeline"
)

// Defaults of [HandlerConfig].
const (
	DefaultMaxPerSecond = 1000
	DefaultWriteTimeout = 30 * time.Second
)

// Query parameters of the [Handler].
const (
	ParamAt     = "at"     // point name, required
	ParamFilter = "filter" // SubscribeConfig.Filter
	ParamField  = "field"  // SubscribeConfig.Field
	ParamSample = "sample" // SubscribeConfig.Sample, >= 1
	ParamLimit  = "limit"  // events to send before ending the response, >= 1
	ParamRate   = "rate"   // events per second, 1..HandlerConfig.MaxPerSecond
)

// maxGroup bounds the bytes of observations written and flushed together.
const maxGroup = 64 << 10

// HandlerConfig configures a [Handler]. The zero value serves without
// authentication, capped at [DefaultMaxPerSecond] events per second per
// request.
type HandlerConfig struct {
	// Token, when not empty, is the token every request must present:
	// as "Authorization: Bearer <Token>", or as the password of HTTP
	// Basic credentials (any user name), which a browser asks for and
	// then sends by itself, to an EventSource too. Other requests get 401
	// with both challenges and read nothing. The comparison takes the
	// same time whatever the token presented. Empty means no
	// authentication.
	Token string
	// MaxPerSecond caps the events each request receives per second
	// (SubscribeConfig.MaxPerSecond); a request may ask for less with
	// rate=N. It bounds the copies a tap makes on the data path, so there
	// is always one. Zero means [DefaultMaxPerSecond]; negative is an
	// error.
	MaxPerSecond int
	// Buffer is each request's subscription buffer, in events. Zero means
	// [DefaultBuffer]; negative is an error.
	Buffer int
	// WriteTimeout bounds each write of the stream: a client that stops
	// reading for that long is disconnected. Zero means
	// [DefaultWriteTimeout]; negative is an error.
	WriteTimeout time.Duration
}

// HandlerStats is a snapshot of a [Handler]'s counters.
type HandlerStats struct {
	// Streams is the number of responses streaming now.
	Streams int
	// Started counts the streams started; Events the events they sent.
	Started, Events uint64
	// BadRequests counts requests answered 400 or 405; Unauthorized those
	// answered 401.
	BadRequests, Unauthorized uint64
}

// Handler serves the points of a [Registry] over HTTP:
//
//	GET ?at=POINT&filter=REGEX&field=FIELD&sample=N&limit=N&rate=N
//
// subscribes to POINT and streams the events that pass, one JSON object
// per event ([AppendJSON]): as NDJSON (application/x-ndjson, one object
// per line), or as server-sent events (text/event-stream, one "data:"
// line per event followed by a blank line) when the Accept header names
// text/event-stream, as a browser's EventSource does. Events are flushed
// as they come, in small groups when several are waiting. The response
// ends after limit events (no limit when absent), when the client goes
// away, or when the point is removed; the subscription ends with it.
//
// The response headers are sent as soon as the subscription is open, so a
// client that has them sees every event published afterwards that passes
// (up to the rate cap and its buffer: a client that reads too slowly loses
// events, and the data path never waits for it).
//
// A bad request gets 400 with a plain-text message: a missing or unknown
// point (the message lists the known ones), a filter that is not a valid
// regular expression, a parameter that is not a positive integer, or an
// unknown parameter. A method other than GET gets 405. With a Token
// configured, a request without it (as a bearer token or a Basic
// password) gets 401 before anything else is read.
//
// A Handler is safe for concurrent use by multiple goroutines; each request
// is served on its own goroutine by net/http and starts no other.
type Handler struct {
	reg   *Registry
	cfg   HandlerConfig
	token httpauth.Token

	streams                                    atomic.Int64
	started, events, badRequests, unauthorized atomic.Uint64
}

// NewHandler returns a Handler serving reg's points. It returns an error
// wrapping [ErrInvalidConfig] for a nil reg or a negative cfg value.
func NewHandler(reg *Registry, cfg HandlerConfig) (*Handler, error) {
	if reg == nil {
		return nil, fmt.Errorf("%w: nil Registry", ErrInvalidConfig)
	}
	if cfg.MaxPerSecond < 0 || cfg.Buffer < 0 || cfg.WriteTimeout < 0 {
		return nil, fmt.Errorf("%w: negative MaxPerSecond, Buffer or WriteTimeout", ErrInvalidConfig)
	}
	if cfg.MaxPerSecond == 0 {
		cfg.MaxPerSecond = DefaultMaxPerSecond
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	h := &Handler{reg: reg, cfg: cfg, token: httpauth.New(cfg.Token)}
	return h, nil
}

// Stats returns a snapshot of the handler's counters.
func (h *Handler) Stats() HandlerStats {
	return HandlerStats{
		Streams:      int(h.streams.Load()),
		Started:      h.started.Load(),
		Events:       h.events.Load(),
		BadRequests:  h.badRequests.Load(),
		Unauthorized: h.unauthorized.Load(),
	}
}

// errBadRequest marks a message for a 400 answer.
type errBadRequest string

func (e errBadRequest) Error() string { return string(e) }

// request is a parsed tap request.
type request struct {
	point  *Point
	sub    SubscribeConfig
	filter *pipeline.Filter
	limit  int
}

// parse validates the query of r.
func (h *Handler) parse(r *http.Request) (request, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return request{}, errBadRequest("tap: bad query: " + err.Error())
	}
	for k := range q {
		switch k {
		case ParamAt, ParamFilter, ParamField, ParamSample, ParamLimit, ParamRate:
		default:
			return request{}, errBadRequest(fmt.Sprintf("tap: unknown parameter %q (known: at, filter, field, sample, limit, rate)", k))
		}
	}
	var req request
	at := q.Get(ParamAt)
	if at == "" {
		return request{}, errBadRequest("tap: missing parameter at; points: " + h.known())
	}
	if req.point = h.reg.Lookup(at); req.point == nil {
		return request{}, errBadRequest(fmt.Sprintf("tap: unknown point %q; points: %s", at, h.known()))
	}
	positive := func(name string, dflt int) (int, error) {
		v := q.Get(name)
		if v == "" {
			return dflt, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, errBadRequest(fmt.Sprintf("tap: %s=%q: want a positive integer", name, v))
		}
		return n, nil
	}
	if req.sub.Sample, err = positive(ParamSample, 1); err != nil {
		return request{}, err
	}
	if req.limit, err = positive(ParamLimit, 0); err != nil {
		return request{}, err
	}
	if req.sub.MaxPerSecond, err = positive(ParamRate, h.cfg.MaxPerSecond); err != nil {
		return request{}, err
	}
	req.sub.MaxPerSecond = min(req.sub.MaxPerSecond, h.cfg.MaxPerSecond)
	req.sub.Filter = q.Get(ParamFilter)
	if req.filter, err = pipeline.NewFilter(req.sub.Filter); err != nil {
		return request{}, errBadRequest(fmt.Sprintf("tap: bad filter %q: %v", req.sub.Filter, err))
	}
	req.sub.Field = q.Get(ParamField)
	req.sub.Buffer = h.cfg.Buffer
	return req, nil
}

// known lists the registry's point names for an error message.
func (h *Handler) known() string {
	names := h.reg.Names()
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// wantsSSE reports whether an Accept header asks for text/event-stream.
func wantsSSE(accept string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && mt == "text/event-stream" {
			return true
		}
	}
	return false
}

func (h *Handler) fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}

// ServeHTTP streams the events of one point; see [Handler].
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.token.Authorized(r) {
		h.unauthorized.Add(1)
		httpauth.Challenge(w, "tap")
		h.fail(w, http.StatusUnauthorized, "tap: unauthorized")
		return
	}
	if r.Method != http.MethodGet {
		h.badRequests.Add(1)
		w.Header().Set("Allow", http.MethodGet)
		h.fail(w, http.StatusMethodNotAllowed, "tap: method not allowed")
		return
	}
	req, err := h.parse(r)
	if err != nil {
		h.badRequests.Add(1)
		h.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	sub, err := req.point.subscribe(req.sub, req.filter)
	if err != nil {
		// The point was removed since parse looked it up.
		h.badRequests.Add(1)
		h.fail(w, http.StatusBadRequest, fmt.Sprintf("tap: unknown point %q; points: %s", req.point.Name(), h.known()))
		return
	}
	defer sub.Close()
	h.started.Add(1)
	h.streams.Add(1)
	defer h.streams.Add(-1)
	h.stream(w, r, sub, req.limit, wantsSSE(r.Header.Get("Accept")))
}

// stream writes sub's observations until limit (0: none), the client going
// away, a write failing, or the subscription's end.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, sub *Subscription, limit int, sse bool) {
	hd := w.Header()
	if sse {
		hd.Set("Content-Type", "text/event-stream")
	} else {
		hd.Set("Content-Type", "application/x-ndjson")
	}
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Accel-Buffering", "no") // proxies: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	var (
		buf  []byte
		sent int
		ctx  = r.Context()
	)
	frame := func(o *Observation) {
		if sse {
			buf = append(buf, "data: "...)
		}
		buf = AppendJSON(buf, o)
		if sse {
			buf = append(buf, "\n\n"...)
		} else {
			buf = append(buf, '\n')
		}
		sent++
	}
	for {
		var o Observation
		var ok bool
		select {
		case <-ctx.Done():
			return
		case o, ok = <-sub.C():
			if !ok {
				return
			}
		}
		buf = buf[:0]
		before := sent
		frame(&o)
		// Take what is already waiting, up to the limit and a group size.
	group:
		for (limit == 0 || sent < limit) && len(buf) < maxGroup {
			select {
			case o, ok = <-sub.C():
				if !ok {
					break group
				}
				frame(&o)
			default:
				break group
			}
		}
		_ = rc.SetWriteDeadline(time.Now().Add(h.cfg.WriteTimeout))
		_, err := w.Write(buf)
		if err == nil {
			err = rc.Flush()
		}
		h.events.Add(uint64(sent - before))
		if err != nil || !ok || (limit != 0 && sent >= limit) {
			return
		}
	}
}
