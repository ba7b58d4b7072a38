package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/relaykit/relaykit/examples/relay/internal/metrics"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relaykit/relaykit/tap"
)

// requireToken answers 401 to a request that does not present token, and
// passes the others to next. A request presents it as "Authorization:
// Bearer <token>" or as HTTP Basic credentials whose password is token
// (any user name): a browser that opens the status page gets the 401's
// Basic challenge, asks its user once, and sends the credentials with
// the page's own requests by itself. An empty token lets every request
// through. The comparison takes the same time whatever was presented
// (hashes of equal length compared in constant time).
func RequireToken(token string, next http.Handler) http.Handler {
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
var tapTable = metrics.Table[tap.Stats]{
	metrics.Gauge(descTapSubscribers, func(s *tap.Stats) int64 { return int64(s.Subscribers) }),
	metrics.Counter(descTapEvents, func(s *tap.Stats) int64 { return int64(s.Events) }),
	metrics.Counter(descTapDelivered, func(s *tap.Stats) int64 { return int64(s.Delivered) }),
	metrics.Counter(descTapDropped, func(s *tap.Stats) int64 { return int64(s.Dropped) }),
	metrics.Counter(descTapLimited, func(s *tap.Stats) int64 { return int64(s.Limited) }),
}

// tapCollector exports the tap points' counters (registered when the API
// is on).
type TapCollector struct{ Registry *tap.Registry }

func (c TapCollector) Describe(ch chan<- *prometheus.Desc) { metrics.DescribeAll(ch, tapTable) }

func (c TapCollector) Collect(ch chan<- prometheus.Metric) {
	for name, st := range c.Registry.Stats() {
		tapTable.Collect(ch, &st, name)
	}
}
