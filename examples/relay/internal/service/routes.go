package service

import (
	"context"

	"github.com/relaykit/relaykit/examples/relay/internal/route"
	"github.com/relaykit/relaykit/pipeline"
)

// retire ends every window of a route table swapped out by a reload, once
// no batch runs on it any more, and sends the summaries. The engine's
// Flush is the barrier: it takes each worker's flush turn, so the batches
// that were being routed on the old table have returned (and the open
// ones go to the new table).
func (r *Relay) retire(old *pipeline.Router) {
	ctx := context.Background()
	if err := r.eng.Flush(ctx); err != nil {
		r.log.Debug("engine flush on reload", "err", err)
	}
	if err := old.Flush(ctx, pipeline.FlushAll); err != nil {
		r.log.Warn("summaries of the previous routes not accepted", "err", err)
	}
	r.ledger.RetireTable(old)
}

// windowedRoutes is the engine's sink: the route table in use, whose
// windows the engine ends every reduceTick (engine.WindowFlusher); after
// each tick the keyed steps are checked for key fields no event carries.
type windowedRoutes struct {
	*pipeline.Swapper
	after func()
}

// Flush ends the windows over at now, then runs after.
func (w windowedRoutes) Flush(ctx context.Context, now int64) error {
	err := w.Swapper.Flush(ctx, now)
	w.after()
	return err
}

// routeDests are the destinations as the route tables see them.
func (r *Relay) routeDests() map[string]route.Destination {
	m := make(map[string]route.Destination, len(r.dests))
	for name, d := range r.dests {
		m[name] = d
	}
	return m
}
