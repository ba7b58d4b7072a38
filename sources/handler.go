package sources

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit/internal/httpauth"
)

// HandlerConfig configures a [Handler]. The zero value serves without
// authentication.
type HandlerConfig struct {
	// Token, when not empty, is the token every request must present: as
	// "Authorization: Bearer <Token>", or as the password of HTTP Basic
	// credentials (any user name), as tap.Handler takes it. Other
	// requests get 401 with both challenges. The comparison takes the
	// same time whatever the token presented. Empty means no
	// authentication.
	Token string
}

// HandlerStats is a snapshot of a [Handler]'s counters.
type HandlerStats struct {
	// Requests counts the lists served; BadRequests the requests answered
	// 400 or 405; Unauthorized those answered 401.
	Requests, BadRequests, Unauthorized uint64
}

// Handler serves a [Tracker]'s sources over HTTP, as the relay's GET
// /api/sources does:
//
//	GET ?state=STATE&input=NAME&sort=ORDER&top=N
//
// answers a JSON array, one object per source:
//
//	{"source":"10.0.0.5","input":"syslog","events":1200,"bytes":98000,
//	 "first_seen":"2026-11-28T12:00:00Z","last_seen":"2026-11-28T12:58:59Z",
//	 "rate":3.2,"state":"active","dropped":0,"paced":0,"expected":false}
//
// first_seen and last_seen are RFC 3339 in UTC, null for a source that
// never sent (an expected one); rate is in events per second. The
// parameters are optional: state selects active, silent, limited or
// waiting sources; input those last seen on that input; sort orders by
// source (the default), events, bytes, rate, dropped, limited or
// last_seen, all but source largest first; top keeps the first N. A bad
// parameter gets 400 with a plain-text message, a method other than GET
// or HEAD gets 405. With a Token configured, a request without it gets
// 401 before anything else is read.
//
// A Handler is safe for concurrent use by multiple goroutines. Each
// request takes a snapshot of the tracker ([Tracker.Sources]): O(keys).
type Handler struct {
	t     *Tracker
	token httpauth.Token

	requests, badRequests, unauthorized atomic.Uint64
}

// NewHandler returns a Handler serving t's sources, or an error wrapping
// [ErrInvalidConfig] for a nil t.
func NewHandler(t *Tracker, cfg HandlerConfig) (*Handler, error) {
	if t == nil {
		return nil, fmt.Errorf("%w: nil Tracker", ErrInvalidConfig)
	}
	return &Handler{t: t, token: httpauth.New(cfg.Token)}, nil
}

// Stats returns a snapshot of the handler's counters.
func (h *Handler) Stats() HandlerStats {
	return HandlerStats{Requests: h.requests.Load(), BadRequests: h.badRequests.Load(), Unauthorized: h.unauthorized.Load()}
}

// handlerOrders are the values of ?sort=.
var handlerOrders = map[string]Order{
	"": ByKey, "source": ByKey, "events": ByEvents, "bytes": ByBytes,
	"rate": ByRate, "dropped": ByDropped, "limited": ByLimited, "last_seen": ByLastSeen,
}

// sourceJSON is one source of the list.
type sourceJSON struct {
	Source    string     `json:"source"`
	Input     string     `json:"input"`
	Events    uint64     `json:"events"`
	Bytes     uint64     `json:"bytes"`
	FirstSeen *time.Time `json:"first_seen"` // null: never sent (expected)
	LastSeen  *time.Time `json:"last_seen"`
	Rate      float64    `json:"rate"`
	State     string     `json:"state"`
	Dropped   uint64     `json:"dropped"`
	Paced     uint64     `json:"paced"`
	Expected  bool       `json:"expected"`
}

// ServeHTTP serves the list; see [Handler].
func (h *Handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if !h.token.Authorized(req) {
		h.unauthorized.Add(1)
		httpauth.Challenge(w, "sources")
		h.fail(w, http.StatusUnauthorized, "sources: unauthorized")
		return
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		h.badRequests.Add(1)
		w.Header().Set("Allow", "GET, HEAD")
		h.fail(w, http.StatusMethodNotAllowed, "sources: method not allowed")
		return
	}
	q, msg := parseQuery(req)
	if msg != "" {
		h.badRequests.Add(1)
		h.fail(w, http.StatusBadRequest, msg)
		return
	}
	h.requests.Add(1)
	list := h.t.Sources(nil, q)
	out := make([]sourceJSON, len(list))
	for i := range list {
		src := &list[i]
		out[i] = sourceJSON{
			Source: src.Key.String(), Input: src.Input, Events: src.Events, Bytes: src.Bytes,
			Rate: src.Rate, State: src.State.String(), Dropped: src.Dropped, Paced: src.Paced, Expected: src.Expected,
		}
		if !src.FirstSeen.IsZero() {
			f, l := src.FirstSeen.UTC(), src.LastSeen.UTC()
			out[i].FirstSeen, out[i].LastSeen = &f, &l
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
}

// parseQuery reads the query parameters of req, or returns the message of
// a 400 answer.
func parseQuery(req *http.Request) (Query, string) {
	qv := req.URL.Query()
	var q Query
	var ok bool
	if q.State, ok = ParseState(qv.Get("state")); !ok {
		return q, "state: want active, silent, limited or waiting"
	}
	if q.By, ok = handlerOrders[qv.Get("sort")]; !ok {
		return q, "sort: want source, events, bytes, rate, dropped, limited or last_seen"
	}
	if t := qv.Get("top"); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil || n < 0 {
			return q, "top: want a number of sources"
		}
		q.Top = n
	}
	q.Input = qv.Get("input")
	return q, ""
}

func (h *Handler) fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}
