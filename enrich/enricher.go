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
