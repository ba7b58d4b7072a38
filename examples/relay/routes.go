package main

import (
	"context"
	"fmt"
	"regexp"

	"github.com/relaykit/relaykit"
)

// routeTable routes a batch through the configured routes. It is immutable;
// SIGHUP builds a new one and swaps it atomically.
//
// TEMPORARY stand-in until the pipeline package lands.
type routeTable struct {
	routes []tmpRoute
	ledger *ledger
}

type tmpRoute struct {
	name  string
	re    *regexp.Regexp
	field string
	final bool
	sinks []relaykit.Sink
	buf   []relaykit.Event
}

func buildRoutes(cfg []RouteConfig, dests map[string]*destination, l *ledger) (*routeTable, error) {
	t := &routeTable{ledger: l}
	for _, rc := range cfg {
		r := tmpRoute{name: rc.Name, field: rc.Field, final: rc.Final}
		if rc.Filter != "" && rc.Filter != "true" {
			re, err := regexp.Compile(rc.Filter)
			if err != nil {
				return nil, fmt.Errorf("route %s: %w", rc.Name, err)
			}
			r.re = re
		}
		for _, d := range rc.Destinations {
			r.sinks = append(r.sinks, dests[d])
		}
		t.routes = append(t.routes, r)
	}
	return t, nil
}

// Route sends every event of batch to the routes it matches.
func (t *routeTable) Route(ctx context.Context, batch []relaykit.Event) {
	sub := make([][]relaykit.Event, len(t.routes))
	var unrouted int64
	for i := range batch {
		ev := &batch[i]
		taken := false
		for j := range t.routes {
			r := &t.routes[j]
			if r.re != nil {
				v := ev.Raw
				if r.field != "" {
					v, _ = ev.Field(r.field)
				}
				if !r.re.Match(v) {
					continue
				}
			}
			taken = true
			if r.final {
				sub[j] = append(sub[j], *ev)
				break
			}
			sub[j] = append(sub[j], ev.Clone())
		}
		if !taken {
			unrouted++
		}
	}
	if unrouted > 0 {
		t.ledger.drop(dropUnrouted, unrouted)
	}
	for j := range t.routes {
		if len(sub[j]) == 0 {
			continue
		}
		for _, s := range t.routes[j].sinks {
			_ = s.Send(ctx, sub[j])
		}
	}
}
