package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/tap"
)

// APIConfig is the operator API (the api: section): the live tap at
// /api/tap, the counters at /api/status and the status page at /
// (status.go), served on the metrics listener. The zero value is off.
type APIConfig struct {
	// Enabled serves /api/ and the status page on metrics.listen. False
	// (the default): / and every /api/ path are 404.
	Enabled bool `yaml:"enabled"`
	// Token, when not empty, is the token every request for / and /api/
	// must present: "Authorization: Bearer <token>" (relay tap, relay
	// top, curl), or HTTP Basic credentials with the token as the
	// password and any user name (a browser's login prompt); others get
	// 401. Empty: no authentication (whoever reaches the listener reads
	// the events).
	Token Secret `yaml:"token"`
}

// validateAPI checks the api section: it is served on the metrics
// listener, so that must be on.
func (c *Config) validateAPI(ck *checker) {
	if c.API.Enabled && c.Metrics.Listen == "" {
		ck.bad("api.enabled", "needs metrics.listen (the API is served there)")
	}
}

// Names of the relay's tap points (tap.Registry): "destination:NAME" (each
// batch a destination's Send was given, with its outcome), "input:NAME"
// (each input's batches after parsing: HEC and OTLP requests, RELP
// windows, the events of a stream read or of a UDP receive, a Kafka
// input's records as handed to the engine, each generated event; the
// generator's point is "input:generator") and "route:NAME" (taps.go).
const (
	tapDestination = "destination:"
	tapInput       = "input:"
)

// setupAPI returns the handlers of
// the metrics listener's /api/ paths: handlers (by path, such as
// /api/sources) and, when api.enabled, /api/tap and /api/status, all
// behind one "/api/" handler that checks api.token first, with the status
// page at "/{$}" behind the same check (statusPageHandler); and the tap's
// metrics collector when api.enabled (nil otherwise). With no handler it
// returns a nil map: every /api/ path is 404.
func (r *Relay) setupAPI(handlers map[string]http.Handler) (map[string]http.Handler, prometheus.Collector, error) {
	api := http.NewServeMux()
	for path, h := range handlers {
		api.Handle(path, h)
	}
	var col prometheus.Collector
	if r.cfg.API.Enabled {
		th, err := tap.NewHandler(&r.taps, tap.HandlerConfig{Token: string(r.cfg.API.Token)})
		if err != nil {
			return nil, nil, fmt.Errorf("api: %w", err)
		}
		api.Handle("/api/tap", th)
		api.HandleFunc("/api/status", r.serveStatus) // status.go
		col = tapCollector{&r.taps}
	} else if len(handlers) == 0 {
		return nil, nil, nil
	}
	out := map[string]http.Handler{"/api/": requireToken(string(r.cfg.API.Token), api)}
	if r.cfg.API.Enabled {
		out["/{$}"] = requireToken(string(r.cfg.API.Token), statusPageHandler())
	}
	return out, col, nil
}

// closeTaps removes every point, ending the tap streams (the API's
// responses end with them), so that the metrics server can shut down.
func (r *Relay) closeTaps() {
	for _, n := range r.taps.Names() {
		r.taps.Remove(n)
	}
}

// publishPtrs publishes a batch held as pointers (RELP's window) to p.
// With no subscription it costs one atomic load; with one, the events are
// copied (shallowly: Publish deep-copies those it hands over) into a
// slice for the call.
func publishPtrs(p *tap.Point, evs []*relaykit.Event) {
	if !p.Active() {
		return
	}
	batch := make([]relaykit.Event, len(evs))
	for i, e := range evs {
		batch[i] = *e
	}
	p.Publish(batch)
}

// requireToken answers 401 to a request that does not present token, and
// passes the others to next. A request presents it as "Authorization:
// Bearer <token>" or as HTTP Basic credentials whose password is token
// (any user name): a browser that opens the status page gets the 401's
// Basic challenge, asks its user once, and sends the credentials with
// the page's own requests by itself. An empty token lets every request
// through. The comparison takes the same time whatever was presented
// (hashes of equal length compared in constant time).
func requireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := presentedToken(r)
		sum := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 || !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="relay", charset="UTF-8"`)
			w.Header().Add("WWW-Authenticate", `Bearer realm="relay"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// presentedToken returns the token r presents: a Basic password, or a
// bearer token; false when it presents neither.
func presentedToken(r *http.Request) (string, bool) {
	if _, pass, ok := r.BasicAuth(); ok {
		return pass, true
	}
	return strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
}

var (
	descTapSubscribers = prometheus.NewDesc("relay_tap_subscribers", "Open tap subscriptions (GET /api/tap streams) per point.", []string{"point"}, nil)
	descTapEvents      = prometheus.NewDesc("relay_tap_published_events_total", "Events a tap point was offered while at least one subscription was open (with none, nothing is counted: the point costs one atomic load per batch).", []string{"point"}, nil)
	descTapDelivered   = prometheus.NewDesc("relay_tap_delivered_events_total", "Events handed to tap subscribers (copies), per point.", []string{"point"}, nil)
	descTapDropped     = prometheus.NewDesc("relay_tap_dropped_events_total", "Events tap subscribers lost because they read too slowly (their buffer was full), per point; the data path never waits for them.", []string{"point"}, nil)
	descTapLimited     = prometheus.NewDesc("relay_tap_limited_events_total", "Events over a tap stream's events-per-second cap, per point.", []string{"point"}, nil)
)

// tapTable exports tap.Stats, per point.
var tapTable = metricTable[tap.Stats]{
	gauge(descTapSubscribers, func(s *tap.Stats) int64 { return int64(s.Subscribers) }),
	counter(descTapEvents, func(s *tap.Stats) int64 { return int64(s.Events) }),
	counter(descTapDelivered, func(s *tap.Stats) int64 { return int64(s.Delivered) }),
	counter(descTapDropped, func(s *tap.Stats) int64 { return int64(s.Dropped) }),
	counter(descTapLimited, func(s *tap.Stats) int64 { return int64(s.Limited) }),
}

// tapCollector exports the tap points' counters (registered when the API
// is on).
type tapCollector struct{ reg *tap.Registry }

func (c tapCollector) Describe(ch chan<- *prometheus.Desc) { describeAll(ch, tapTable) }

func (c tapCollector) Collect(ch chan<- prometheus.Metric) {
	for name, st := range c.reg.Stats() {
		tapTable.collect(ch, &st, name)
	}
}
