package main

import (
	"strings"
)

// removeRoutePoints removes the points of routes not in routes (after a
// reload took them away), ending their tap streams; the points of the
// routes that stay keep their subscriptions.
func (r *Relay) removeRoutePoints(routes []RouteConfig) {
	keep := make(map[string]bool, len(routes))
	for _, rc := range routes {
		keep[TapRoute+rc.Name] = true
	}
	for _, n := range r.taps.Names() {
		if strings.HasPrefix(n, TapRoute) && !keep[n] {
			r.taps.Remove(n)
		}
	}
}
