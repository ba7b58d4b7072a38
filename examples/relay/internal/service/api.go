package service

import (
	"fmt"
	"net/http"

	"github.com/relaykit/relaykit/examples/relay/internal/api"
	"github.com/relaykit/relaykit/examples/relay/internal/dest"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relaykit/relaykit/tap"
)

// setupAPI returns the handlers of
// the metrics listener's /api/ paths: handlers (by path, such as
// /api/sources) and, when api.enabled, /api/tap and /api/status, all
// behind one "/api/" handler that checks api.token first, with the status
// page at "/{$}" behind the same check (statusPageHandler); and the tap's
// metrics collector when api.enabled (nil otherwise). With no handler it
// returns a nil map: every /api/ path is 404.
func (r *Relay) setupAPI(handlers map[string]http.Handler) (map[string]http.Handler, prometheus.Collector, error) {
	mux := http.NewServeMux()
	for path, h := range handlers {
		mux.Handle(path, h)
	}
	var col prometheus.Collector
	if r.cfg.API.Enabled {
		th, err := tap.NewHandler(&r.taps, tap.HandlerConfig{Token: string(r.cfg.API.Token)})
		if err != nil {
			return nil, nil, fmt.Errorf("api: %w", err)
		}
		mux.Handle("/api/tap", th)
		mux.HandleFunc("/api/status", r.serveStatus) // status.go
		col = api.TapCollector{Registry: &r.taps}
	} else if len(handlers) == 0 {
		return nil, nil, nil
	}
	out := map[string]http.Handler{"/api/": api.RequireToken(string(r.cfg.API.Token), mux)}
	if r.cfg.API.Enabled {
		out["/{$}"] = api.RequireToken(string(r.cfg.API.Token), api.StatusPage())
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

// destCollector exports the destinations' own metrics: those of the
// kafka destinations' sinks (the ledger has every destination's counts).
func (r *Relay) destCollector() prometheus.Collector { return dest.Collector(r.dests) }
