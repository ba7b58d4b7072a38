package main

import (
	"context"
	"fmt"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/syslog"
	"github.com/relaykit/relaykit/tap"
)

// buildRouter turns the configured routes into a pipeline.Router whose
// sinks are the relay's destinations. Drops the router counts (no final
// route took the event, a pipeline step dropped it) go to the ledger.
func buildRouter(cfg []RouteConfig, dests map[string]*destination, steps stepBuilder, l *ledger, taps *tap.Registry) (*pipeline.Router, error) {
	routes, err := routeSpecs(cfg, steps, func(name string) (relaykit.Sink, bool) {
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
			OnReduce:  func(_, step string, n int) { l.reduce(step, int64(n)) },
			OnProduce: func(_, step string, n int) { l.produce(step, int64(n)) },
			OnDrop: func(_, reason string, n int) {
				switch reason {
				case relaykit.ReasonUnrouted:
					l.drop(dropUnrouted, int64(n))
				default: // a pipeline function (drop, sample) or no_sink
					l.drop(dropFiltered, int64(n))
				}
			},
			// A destination that did not accept its share: a delivery
			// queue's Send cut short by the shutdown deadline, or a batch
			// its full policy dropped (counted by the queue). The engine
			// does not retry: the queues are the one retry loop.
			OnSendFailure: func(_ context.Context, f pipeline.SendFailure) {
				if d, ok := dests[f.Sink]; ok {
					d.refused(f.Events, f.Err)
					return
				}
				l.drop(dropSinkError, int64(len(f.Events)))
			},
		},
	})
	if err != nil {
		return nil, err
	}
	l.addTable(rt, cfg)
	return rt, nil
}

// routeSpecs builds the pipeline routes of cfg: each route's steps with
// steps, its sinks with sink (by destination name). The relay's router
// and `relay test` (configtest.go) are built from the same specs.
func routeSpecs(cfg []RouteConfig, steps stepBuilder, sink func(name string) (relaykit.Sink, bool)) ([]pipeline.Route, error) {
	routes := make([]pipeline.Route, 0, len(cfg))
	for i, rc := range cfg {
		r := pipeline.Route{Name: rc.Name, Filter: rc.Filter, Field: rc.Field, Final: rc.Final}
		var fns []pipeline.Function
		for j, sc := range rc.Pipeline {
			fn, err := steps(sc)
			if err != nil {
				return nil, fmt.Errorf("routes[%d].pipeline[%d] (%s): %w", i, j, rc.Name, err)
			}
			fns = append(fns, fn)
		}
		if len(fns) > 0 {
			r.Pipeline = pipeline.NewPipeline(fns...)
		}
		for j, name := range rc.Destinations {
			d, ok := sink(name)
			if !ok {
				return nil, fmt.Errorf("routes[%d].destinations[%d]: unknown destination %q", i, j, name)
			}
			r.Sinks = append(r.Sinks, d)
		}
		routes = append(routes, r)
	}
	return routes, nil
}

// stepBuilder builds one pipeline function from its config.
type stepBuilder func(StepConfig) (pipeline.Function, error)

// builtinStep builds the pipeline package's functions; enrichment steps
// are added by the relay (see enrichStep).
func builtinStep(sc StepConfig) (pipeline.Function, error) {
	switch sc.Type {
	case "set":
		return pipeline.Set(sc.Field, sc.Value), nil
	case "rename":
		return pipeline.Rename(sc.Field, sc.To), nil
	case "remove":
		return pipeline.Remove(sc.Field), nil
	case "mask":
		return pipeline.Mask(sc.Field, sc.Pattern, sc.Replace)
	case "drop":
		return pipeline.Drop(sc.Field, sc.Pattern)
	case "sample":
		if !sc.Dynamic && len(sc.Key) == 0 {
			return pipeline.Sample(sc.N), nil // one in n overall, as before: no sample_rate field
		}
		return pipeline.NewSample(pipeline.SampleConfig{N: sc.N, Key: sc.Key, Dynamic: sc.Dynamic, Window: sc.Window,
			MinEvents: sc.MinEvents, MaxRate: sc.MaxRate, MaxKeys: sc.MaxKeys})
	case "suppress":
		return pipeline.NewSuppress(pipeline.SuppressConfig{Key: sc.Key, Allow: sc.Allow, Window: sc.Window, MaxKeys: sc.MaxKeys})
	case "aggregate":
		return pipeline.NewAggregate(pipeline.AggregateConfig{Key: sc.Key, Window: sc.Window, Sum: sc.Sum, Min: sc.Min, Max: sc.Max,
			SourceType: sc.SourceType, MaxKeys: sc.MaxKeys})
	case "keep":
		return pipeline.Keep(sc.Fields...), nil
	case "parse_json":
		return pipeline.ParseJSON(pipeline.JSONConfig{Field: sc.Field, Prefix: sc.Prefix})
	case "parse_cef":
		return syslog.ParseCEF(), nil
	}
	return nil, fmt.Errorf("unknown step type %q", sc.Type)
}

var _ relaykit.Sink = (*destination)(nil)
