package route

import (
	"context"
	"fmt"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/tap"
)

// buildRouter turns the configured routes into a pipeline.Router whose
// sinks are the relay's destinations. Drops the router counts (no final
// route took the event, a pipeline step dropped it) go to the ledger.
func NewRouter(cfg []config.RouteConfig, dests map[string]Destination, steps config.StepBuilder, l *ledger.Ledger, taps *tap.Registry) (*pipeline.Router, error) {
	routes, counted, err := Specs(cfg, steps, func(name string) (relaykit.Sink, bool) {
		d, ok := dests[name]
		return d, ok
	})
	if err != nil {
		return nil, err
	}
	for i := range routes {
		routes[i].Observer = routePoint(taps, routes[i].Name) // the tap point route:NAME (taps.go)
	}
	rt, err := pipeline.NewRouter(routes, pipeline.Config{
		Hooks: pipeline.Hooks{
			// Events a suppress or aggregate step absorbed, and the
			// summaries standing for them: not drops (see ledger).
			OnReduce:  func(_, step string, n int) { l.Reduce(step, int64(n)) },
			OnProduce: func(_, step string, n int) { l.Produce(step, int64(n)) },
			OnDrop: func(_, reason string, n int) {
				switch reason {
				case relaykit.ReasonUnrouted:
					l.Drop(ledger.DropUnrouted, int64(n))
				default: // a pipeline function (drop, sample) or no_sink
					l.Drop(ledger.DropFiltered, int64(n))
				}
			},
			// A destination that did not accept its share: a delivery
			// queue's Send cut short by the shutdown deadline, or a batch
			// its full policy dropped (counted by the queue). The engine
			// does not retry: the queues are the one retry loop.
			OnSendFailure: func(_ context.Context, f pipeline.SendFailure) {
				if d, ok := dests[f.Sink]; ok {
					d.Refused(f.Events, f.Err)
					return
				}
				l.Drop(ledger.DropSinkError, int64(len(f.Events)))
			},
		},
	})
	if err != nil {
		return nil, err
	}
	listings := make([]int, len(cfg))
	for i, rc := range cfg {
		listings[i] = len(rc.Destinations)
	}
	l.AddTable(rt, listings, counted)
	return rt, nil
}

// routeSpecs builds the pipeline routes of cfg: each route's steps with
// steps, its sinks with sink (by destination name), and the keyed and
// parse steps among them, whose counters the ledger exports. The relay's router and `relay test` (package configtest) are
// built from the same specs.
func Specs(cfg []config.RouteConfig, steps config.StepBuilder, sink func(name string) (relaykit.Sink, bool)) ([]pipeline.Route, ledger.Steps, error) {
	routes := make([]pipeline.Route, 0, len(cfg))
	var counted ledger.Steps
	for i, rc := range cfg {
		r := pipeline.Route{Name: rc.Name, Filter: rc.Filter, Field: rc.Field, Final: rc.Final}
		var fns []pipeline.Function
		for j, sc := range rc.Pipeline {
			fn, err := steps(sc)
			if err != nil {
				return nil, ledger.Steps{}, fmt.Errorf("routes[%d].pipeline[%d] (%s): %w", i, j, rc.Name, err)
			}
			fns = append(fns, fn)
			if st, ok := fn.(interface{ Stats() pipeline.StepStats }); ok && sc.Keyed() {
				counted.Keyed = append(counted.Keyed, &ledger.KeyedStep{Route: rc.Name, Step: sc.Type, Position: j, Stats: st.Stats})
			}
			if _, ok := parseSteps[sc.Type]; ok {
				name := sc.Type
				if sc.Type == "vendor" {
					name += ":" + sc.Name
				}
				counted.Parse = append(counted.Parse, &ledger.ParseStep{Route: rc.Name, Step: name, Position: j, Fn: fn})
			}
		}
		if len(fns) > 0 {
			r.Pipeline = pipeline.NewPipeline(fns...)
		}
		for j, name := range rc.Destinations {
			d, ok := sink(name)
			if !ok {
				return nil, ledger.Steps{}, fmt.Errorf("routes[%d].destinations[%d]: unknown destination %q", i, j, name)
			}
			r.Sinks = append(r.Sinks, d)
		}
		routes = append(routes, r)
	}
	return routes, counted, nil
}

// Destination is a destination as the routes see it: a sink that counts
// what it refused (dest.Destination).
type Destination interface {
	relaykit.Sink
	// Refused counts the events of a Send the destination did not accept.
	Refused(evs []relaykit.Event, err error)
}
