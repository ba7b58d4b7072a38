package enrich

import (
	"context"

	"github.com/relaykit/relaykit"
)

// Enricher adds information to an event in place.
//
// Enrich reads what it needs from e and sets or replaces fields on it. It
// must not retain e or any of its slices after returning. An error means
// the enricher could not run at all (a closed database, a cancelled ctx);
// missing input or "no data" is not an error: the event is left unchanged
// and the enricher counts it. Implementations in this package are safe for
// concurrent use by multiple goroutines (each with its own event).
type Enricher interface {
	Enrich(ctx context.Context, e *relaykit.Event) error
}

// EnricherFunc adapts an ordinary function to an [Enricher], like
// http.HandlerFunc.
type EnricherFunc func(ctx context.Context, e *relaykit.Event) error

// Enrich calls f(ctx, e).
func (f EnricherFunc) Enrich(ctx context.Context, e *relaykit.Event) error { return f(ctx, e) }

var _ Enricher = EnricherFunc(nil)

// Chain returns an Enricher that runs each of enrichers on the event in
// order. It stops at the first error and returns it; later enrichers do not
// run. Nil entries are skipped. The returned func is safe for concurrent
// use if every enricher is.
func Chain(enrichers ...Enricher) EnricherFunc {
	list := make([]Enricher, 0, len(enrichers))
	for _, en := range enrichers {
		if en != nil {
			list = append(list, en)
		}
	}
	return func(ctx context.Context, e *relaykit.Event) error {
		for _, en := range list {
			if err := en.Enrich(ctx, e); err != nil {
				return err
			}
		}
		return nil
	}
}

// Step runs an [Enricher] as a pipeline step: its Name and Apply methods
// make a *Step a pipeline.Function (package pipeline matches it by method
// set; this package does not import pipeline). Any Enricher fits, such as
// an [EnricherFunc] or a [Chain]; [GeoEnricher] and [LookupEnricher] are
// pipeline functions themselves, and need a Step only to be given another
// name.
//
// A Step never drops an event: enrichment that finds nothing leaves the
// event unchanged, and an error from the Enricher is returned with
// keep=true, so a pipeline counts it and passes the event on. A Step is
// safe for concurrent use if its Enricher is, and adds no allocation.
type Step struct {
	name string
	en   Enricher
}

// NewStep returns a Step named name (the label in pipeline counters, such
// as "geoip_dst") that runs en. It panics if en is nil.
func NewStep(name string, en Enricher) *Step {
	if en == nil {
		panic("enrich: NewStep with a nil Enricher")
	}
	return &Step{name: name, en: en}
}

// Name returns the step's name.
func (s *Step) Name() string { return s.name }

// Apply runs the Enricher on e with a background context and returns
// keep=true and its error. Enrichers that call a remote store bound the
// call by their own timeout (see [Cache] and [Memcached]).
func (s *Step) Apply(e *relaykit.Event) (keep bool, err error) {
	return true, s.en.Enrich(context.Background(), e)
}
