package main

import (
	"context"
	"slices"
	"time"

	"github.com/relaykit/relaykit/pipeline"
)

// reduceTick is the period at which the engine ends the windows of the
// routes' suppress and aggregate steps (engine.Config.WindowTick): a summary leaves at most one tick after its window
// ends, however quiet its key. It is also the shortest window a step may
// have (minReduceWindow): a finer tick would cost a pass over every
// step's keys more often for windows nobody needs below a second.
const reduceTick = time.Second

// reduceSteps are the step labels of relay_reduced_events_total and
// relay_produced_events_total: the pipeline's reducers. Another step name
// (none today) is counted under "other".
var reduceSteps = []string{"suppress", "aggregate"}

// stepIndex returns the index of step in reduceSteps, or len(reduceSteps)
// ("other").
func stepIndex(step string) int {
	if i := slices.Index(reduceSteps, step); i >= 0 {
		return i
	}
	return len(reduceSteps)
}

// stepLabel is the label of index i of the reduced and produced counters.
func stepLabel(i int) string {
	if i < len(reduceSteps) {
		return reduceSteps[i]
	}
	return "other"
}

// reduce counts n events a step absorbed into a summary to come.
func (l *ledger) reduce(step string, n int64) { l.reduced[stepIndex(step)].Add(n) }

// produce counts n summary events a step emitted.
func (l *ledger) produce(step string, n int64) { l.produced[stepIndex(step)].Add(n) }

// routeTable is a route table the ledger reads the copies of: events a
// route adds to what was routed, a non-final route's copy of an event and
// each extra destination listed by the route that takes it.
type routeTable struct {
	r        *pipeline.Router
	listings []int // per route, the destinations it lists
}

// copies reads the table's copies from its router's counters.
func (t routeTable) copies() int64 {
	var n int64
	for i, rs := range t.r.Stats().Routes {
		if !rs.Final {
			n += int64(rs.Matched)
		}
		if t.listings[i] > 1 {
			n += int64(rs.Out) * int64(t.listings[i]-1)
		}
	}
	return n
}

// addTable registers a route table built for the relay; its copies count
// from now on.
func (l *ledger) addTable(r *pipeline.Router, cfg []RouteConfig) {
	t := routeTable{r: r}
	for _, rc := range cfg {
		t.listings = append(t.listings, len(rc.Destinations))
	}
	l.mu.Lock()
	l.tables = append(l.tables, t)
	l.mu.Unlock()
}

// retireTable stops reading r's counters once no batch runs on it: its
// copies are added to the ledger's total for good. r was swapped out.
func (l *ledger) retireTable(r *pipeline.Router) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, t := range l.tables {
		if t.r == r {
			l.retiredCopies += t.copies()
			l.tables = slices.Delete(l.tables, i, i+1)
			return
		}
	}
}

// copiesLocked returns the copies of every table, retired ones included.
// The caller holds l.mu.
func (l *ledger) copiesLocked() int64 {
	n := l.retiredCopies
	for _, t := range l.tables {
		n += t.copies()
	}
	return n
}

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
	r.ledger.retireTable(old)
}
