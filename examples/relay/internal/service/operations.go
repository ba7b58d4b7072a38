package service

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"
	"github.com/relaykit/relaykit/examples/relay/internal/route"
	"github.com/relaykit/relaykit/tap"
)

// The relay's operations besides NewRelay and Run: its addresses and
// ledger, reloads (SIGHUP), and closing what NewRelay opened.

// Addrs returns the bound address of every listener by input name, and
// "metrics".
func (r *Relay) Addrs() map[string]net.Addr {
	m := map[string]net.Addr{}
	for _, in := range r.inputs {
		in.Addrs(func(name string, a net.Addr) { m[name] = a })
	}
	if r.metrics.Listener != nil {
		m["metrics"] = r.metrics.Listener.Addr()
	}
	return m
}

// Ledger returns a snapshot of the relay's accounting.
func (r *Relay) Ledger() ledger.Snapshot { return r.ledger.Snapshot() }

// ReloadRoutes builds a new route table from routes and swaps it in
// atomically; batches being routed finish on the old table. It then ends
// every window of the old table's suppress and aggregate steps and sends
// their summaries (the new table starts with empty state), waiting for
// the engine's batches in flight first.
func (r *Relay) ReloadRoutes(routes []config.RouteConfig) error {
	for _, rc := range routes {
		for _, d := range rc.Destinations {
			if _, ok := r.dests[d]; !ok {
				return fmt.Errorf("route %s: destination %q does not exist (destinations are not reloaded)", rc.Name, d)
			}
		}
	}
	rt, err := route.NewRouter(routes, r.routeDests(), r.enrich.Step, r.ledger, &r.taps)
	if err != nil {
		return err
	}
	defer r.removeRoutePoints(routes) // of the routes that are gone (taps.go)
	// The previous table's open windows end now: their summaries go out
	// through it, once no batch runs on it (see retire).
	r.retire(r.routes.Swap(rt))
	r.log.Info("routes reloaded", "routes", len(routes))
	return nil
}

// ReloadSources replaces the sources section's silence thresholds,
// expected sources, overrides and rate limits while the relay runs.
// Turning tracking on or off, max_sources, rate_limit.mode, keys and
// state_file need a restart: a change to them is refused.
func (r *Relay) ReloadSources(sc config.SourcesConfig) error {
	if r.sources == nil {
		if sc.Enabled {
			return errors.New("sources: enabling them needs a restart")
		}
		return nil
	}
	old := r.sources.Config
	if !sc.Enabled || sc.MaxSources != old.MaxSources || sc.RateLimit.Mode != old.RateLimit.Mode ||
		!maps.Equal(sc.Keys, old.Keys) || sc.StateFile != old.StateFile {
		return errors.New("sources: enabled, max_sources, rate_limit.mode, keys and state_file change only with a restart")
	}
	if err := r.sources.Tracker.SetPolicy(sc.Policy()); err != nil {
		return err
	}
	r.log.Info("sources reloaded", "silent_after", sc.SilentAfter, "expected", len(sc.Expected), "overrides", len(sc.Overrides),
		"events_per_second", sc.RateLimit.EventsPerSecond)
	return nil
}

// ReloadCertificates reads the certificate and key files of every TLS
// input again (SIGHUP), and serves each new pair from the next handshake
// on; open connections keep theirs. An input whose new pair cannot be
// read, or is not a pair, keeps the certificate it has: the error is
// logged, counted and shown on the status page, and returned.
func (r *Relay) ReloadCertificates() error {
	var errs []error
	for _, in := range r.ledger.Inputs() {
		if in.Certs == nil {
			continue
		}
		if err := in.Certs.Reload(); err != nil {
			errs = append(errs, fmt.Errorf("input %s: %w", in.Name, err))
		}
	}
	return errors.Join(errs...)
}

// logCertificates logs the certificate each TLS input serves, with the
// SHA-256 fingerprint senders pin.
func (r *Relay) logCertificates() {
	for _, in := range r.ledger.Inputs() {
		if in.Certs != nil {
			leaf := in.Certs.Leaf()
			r.log.Info("TLS certificate", "input", in.Name, "sha256", in.Certs.Fingerprint().String(),
				"subject", leaf.Subject.String(), "not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
		}
	}
}

// closeAll closes destinations, spools and the dead-letter file.
func (r *Relay) closeAll() error {
	var errs []error
	for _, d := range r.dests {
		errs = append(errs, d.Close())
	}
	if r.enrich != nil {
		errs = append(errs, r.enrich.Close())
	}
	if r.dlw != nil {
		errs = append(errs, r.dlw.Close())
	}
	for _, in := range r.inputs {
		in.Close()
	}
	if r.metrics != nil && r.metrics.Listener != nil {
		r.metrics.Listener.Close()
	}
	return errors.Join(errs...)
}

// Taps is the relay's tap registry: its points, input:NAME,
// route:NAME and destination:NAME.
func (r *Relay) Taps() *tap.Registry { return &r.taps }
