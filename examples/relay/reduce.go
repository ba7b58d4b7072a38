package main

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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

// reduce counts n events a step absorbed into a summary to come.
func (l *Ledger) reduce(step string, n int64) { l.reduced.add(step, n) }

// produce counts n summary events a step emitted.
func (l *Ledger) produce(step string, n int64) { l.produced.add(step, n) }

// routeTable is a route table the ledger reads the copies of: events a
// route adds to what was routed, a non-final route's copy of an event and
// each extra destination listed by the route that takes it.
type routeTable struct {
	r        *pipeline.Router
	listings []int        // per route, the destinations it lists
	keyed    []*keyedStep // its steps that keep state by key
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
func (l *Ledger) addTable(r *pipeline.Router, cfg []RouteConfig, keyed []*keyedStep) {
	t := routeTable{r: r, keyed: keyed}
	for _, rc := range cfg {
		t.listings = append(t.listings, len(rc.Destinations))
	}
	l.mu.Lock()
	l.tables = append(l.tables, t)
	l.mu.Unlock()
}

// retireTable stops reading r's counters once no batch runs on it: its
// copies are added to the ledger's total for good. r was swapped out.
func (l *Ledger) retireTable(r *pipeline.Router) {
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
func (l *Ledger) copiesLocked() int64 {
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

// keyedStep is a step of a route table that keeps state by key
// (suppress, aggregate, a keyed sample): its counters, for the metrics
// and the warning about key fields no event carries.
type keyedStep struct {
	route, step string
	position    int // in the route's pipeline
	stats       func() pipeline.StepStats
	warned      atomic.Bool
}

// unseenAfter is the number of events a keyed step misses a key field
// in before the relay warns that no event carries it (a misspelt field
// name puts every event of a window under one key).
const unseenAfter = 1000

// keyedSteps returns the keyed steps of the tables in use (not those
// reloads retired).
func (l *Ledger) keyedSteps() []*keyedStep {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*keyedStep
	for _, t := range l.tables {
		out = append(out, t.keyed...)
	}
	return out
}

// checkKeys logs, once per step, a keyed step whose key names a field
// that no event has carried after unseenAfter events missed it. The
// engine's window ticks call it (windowedRoutes).
func (l *Ledger) checkKeys(log *slog.Logger) {
	for _, k := range l.keyedSteps() {
		if k.warned.Load() {
			continue
		}
		st := k.stats()
		if len(st.UnseenKeys) == 0 || st.KeyMisses < unseenAfter || !k.warned.CompareAndSwap(false, true) {
			continue
		}
		log.Warn("a step's key names fields no event has carried: every event lacking them falls under one key (a misspelt field name?)",
			"route", k.route, "step", k.step, "position", k.position, "fields", strings.Join(st.UnseenKeys, ","), "key_misses", st.KeyMisses)
	}
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

var (
	descStepKeys    = prometheus.NewDesc("relay_step_keys", "Keys a keyed step (suppress, aggregate, keyed sample) holds now, by route, step and its position in the route's pipeline.", []string{"route", "step", "position"}, nil)
	descStepEvicted = prometheus.NewDesc("relay_step_evicted_keys_total", "Keys a keyed step evicted to make room at max_keys (their pending summaries emitted).", []string{"route", "step", "position"}, nil)
	descStepMisses  = prometheus.NewDesc("relay_step_key_misses_total", "Events a keyed step saw without one of the fields its key names (the field read as empty).", []string{"route", "step", "position"}, nil)
	descStepUnseen  = prometheus.NewDesc("relay_step_unseen_key_fields", "1 for each field a keyed step's key names that no event has carried so far (a misspelt name makes every event a key miss).", []string{"route", "step", "position", "field"}, nil)
)

// stepTable exports pipeline.StepStats, per keyed step.
var stepTable = metricTable[pipeline.StepStats]{
	gauge(descStepKeys, func(s *pipeline.StepStats) int64 { return int64(s.Keys) }),
	counter(descStepEvicted, func(s *pipeline.StepStats) int64 { return int64(s.Evicted) }),
	counter(descStepMisses, func(s *pipeline.StepStats) int64 { return int64(s.KeyMisses) }),
	{desc: descStepUnseen, typ: prometheus.GaugeValue, each: func(s *pipeline.StepStats, emit func(float64, ...string)) {
		for _, f := range s.UnseenKeys {
			emit(1, f)
		}
	}},
}

// collectSteps sends the keyed steps' metrics.
func (l *Ledger) collectSteps(ch chan<- prometheus.Metric) {
	for _, k := range l.keyedSteps() {
		st := k.stats()
		stepTable.collect(ch, &st, k.route, k.step, strconv.Itoa(k.position))
	}
}
