package service

import (
	"strings"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/route"
)

// removeRoutePoints removes the points of routes not in routes (after a
// reload took them away), ending their tap streams; the points of the
// routes that stay keep their subscriptions.
func (r *Relay) removeRoutePoints(routes []config.RouteConfig) {
	keep := make(map[string]bool, len(routes))
	for _, rc := range routes {
		keep[route.TapRoute+rc.Name] = true
	}
	for _, n := range r.taps.Names() {
		if strings.HasPrefix(n, route.TapRoute) && !keep[n] {
			r.taps.Remove(n)
		}
	}
}
