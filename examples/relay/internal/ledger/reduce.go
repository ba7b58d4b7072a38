package ledger

import (
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/relaykit/relaykit/examples/relay/internal/metrics"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/relaykit/relaykit/pipeline"
)

// reduceSteps are the step labels of relay_reduced_events_total and
// relay_produced_events_total: the pipeline's reducers. Another step name
// (none today) is counted under "other".
var reduceSteps = []string{"suppress", "aggregate"}

// reduce counts n events a step absorbed into a summary to come.
func (l *Ledger) Reduce(step string, n int64) { l.reduced.add(step, n) }

// produce counts n summary events a step emitted.
func (l *Ledger) Produce(step string, n int64) { l.produced.add(step, n) }

// routeTable is a route table the ledger reads the copies of: events a
// route adds to what was routed, a non-final route's copy of an event and
// each extra destination listed by the route that takes it.
type routeTable struct {
	r        *pipeline.Router
	listings []int // per route, the destinations it lists
	steps    Steps
}

// Steps are the steps of a route table the ledger exports counters of.
type Steps struct {
	Keyed []*KeyedStep // the steps that keep state by key
	Parse []*ParseStep // package parse's steps
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
// listings are, per route, the destinations it lists.
func (l *Ledger) AddTable(r *pipeline.Router, listings []int, steps Steps) {
	t := routeTable{r: r, listings: listings, steps: steps}
	l.mu.Lock()
	l.tables = append(l.tables, t)
	l.mu.Unlock()
}

// retireTable stops reading r's counters once no batch runs on it: its
// copies are added to the ledger's total for good. r was swapped out.
func (l *Ledger) RetireTable(r *pipeline.Router) {
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

// keyedStep is a step of a route table that keeps state by key
// (suppress, aggregate, a keyed sample): its counters, for the metrics
// and the warning about key fields no event carries.
type KeyedStep struct {
	Route, Step string
	Position    int // in the route's pipeline
	Stats       func() pipeline.StepStats
	warned      atomic.Bool
}

// unseenAfter is the number of events a keyed step misses a key field
// in before the relay warns that no event carries it (a misspelt field
// name puts every event of a window under one key).
const unseenAfter = 1000

// keyedSteps returns the keyed steps of the tables in use (not those
// reloads retired).
func (l *Ledger) keyedSteps() []*KeyedStep {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*KeyedStep
	for _, t := range l.tables {
		out = append(out, t.steps.Keyed...)
	}
	return out
}

// stepLabels are the labels of a step's metrics; while a reload's new
// table and the table it replaces are both in use, the newer's steps
// stand for a route's position (a metric is sent once per label set).
type stepLabels struct {
	route, step string
	position    int
}

// newestFirst returns the steps of the tables in use, the newest
// table's first, each of steps' labels once.
func newestFirst[S any](l *Ledger, steps func(Steps) []S, labels func(S) stepLabels) []S {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []S
	seen := map[stepLabels]bool{}
	for i := len(l.tables) - 1; i >= 0; i-- {
		for _, s := range steps(l.tables[i].steps) {
			if k := labels(s); !seen[k] {
				seen[k] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// checkKeys logs, once per step, a keyed step whose key names a field
// that no event has carried after unseenAfter events missed it. The
// engine's window ticks call it (windowedRoutes).
func (l *Ledger) CheckKeys(log *slog.Logger) {
	for _, k := range l.keyedSteps() {
		if k.warned.Load() {
			continue
		}
		st := k.Stats()
		if len(st.UnseenKeys) == 0 || st.KeyMisses < unseenAfter || !k.warned.CompareAndSwap(false, true) {
			continue
		}
		log.Warn("a step's key names fields no event has carried: every event lacking them falls under one key (a misspelt field name?)",
			"route", k.Route, "step", k.Step, "position", k.Position, "fields", strings.Join(st.UnseenKeys, ","), "key_misses", st.KeyMisses)
	}
}

var (
	descStepKeys    = prometheus.NewDesc("relay_step_keys", "Keys a keyed step (suppress, aggregate, keyed sample) holds now, by route, step and its position in the route's pipeline.", []string{"route", "step", "position"}, nil)
	descStepEvicted = prometheus.NewDesc("relay_step_evicted_keys_total", "Keys a keyed step evicted to make room at max_keys (their pending summaries emitted).", []string{"route", "step", "position"}, nil)
	descStepMisses  = prometheus.NewDesc("relay_step_key_misses_total", "Events a keyed step saw without one of the fields its key names (the field read as empty).", []string{"route", "step", "position"}, nil)
	descStepUnseen  = prometheus.NewDesc("relay_step_unseen_key_fields", "1 for each field a keyed step's key names that no event has carried so far (a misspelt name makes every event a key miss).", []string{"route", "step", "position", "field"}, nil)
)

// stepTable exports pipeline.StepStats, per keyed step.
var stepTable = metrics.Table[pipeline.StepStats]{
	metrics.Gauge(descStepKeys, func(s *pipeline.StepStats) int64 { return int64(s.Keys) }),
	metrics.Counter(descStepEvicted, func(s *pipeline.StepStats) int64 { return int64(s.Evicted) }),
	metrics.Counter(descStepMisses, func(s *pipeline.StepStats) int64 { return int64(s.KeyMisses) }),
	{Desc: descStepUnseen, Type: prometheus.GaugeValue, Each: func(s *pipeline.StepStats, emit func(float64, ...string)) {
		for _, f := range s.UnseenKeys {
			emit(1, f)
		}
	}},
}

// collectSteps sends the keyed steps' metrics.
func (l *Ledger) collectSteps(ch chan<- prometheus.Metric) {
	for _, k := range newestFirst(l, func(s Steps) []*KeyedStep { return s.Keyed },
		func(k *KeyedStep) stepLabels { return stepLabels{k.Route, k.Step, k.Position} }) {
		st := k.Stats()
		stepTable.Collect(ch, &st, k.Route, k.Step, strconv.Itoa(k.Position))
	}
}
