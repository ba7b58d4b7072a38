package pipeline

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/relaykit/relaykit"
)

// ErrInvalidConfig is wrapped by every error [NewRouter] and the function
// constructors return for a bad configuration, including a bad pattern.
var ErrInvalidConfig = errors.New("pipeline: invalid config")

// Route maps the events its filter matches to a pipeline and sinks.
type Route struct {
	// Name identifies the route in errors, hooks and [Stats]. It must be
	// unique within a router and not empty.
	Name string
	// Filter selects events: "" or "true" takes every event; anything else
	// is a Go regular expression (RE2 syntax) that must match somewhere in
	// the value named by Field. See [Filter] for the literal prefilter.
	Filter string
	// Field names the value Filter reads: "" or [FieldRaw] for the raw
	// message, [FieldHost], [FieldSource], [FieldSourceType], [FieldIndex],
	// or else the name of an extracted field (a missing field reads as
	// empty).
	Field string
	// Pipeline runs over each event the route takes, before the sinks. Nil
	// means none.
	Pipeline *Pipeline
	// Sinks receive the events the route takes, after the pipeline. A route
	// without sinks takes events to nowhere: they are counted as dropped
	// ([relaykit.ReasonNoSink]). A sink listed by several routes (the same value,
	// compared with ==) still gets one Send per batch.
	Sinks []relaykit.Sink
	// Final makes the route consume the events it takes: evaluation stops
	// there. A non-final route takes a copy of the event and evaluation
	// goes on with the original.
	Final bool
	// Observer, when not nil, is shown the events the route takes, after
	// its pipeline and before its sinks (see [Observer]): one Publish per
	// Route or Flush call that has such events, and one Active call per
	// call when it has none to show. A *tap.Point is one.
	Observer Observer
}

// Config configures a [Router]. The zero value is valid: unmatched events
// are dropped and counted, no hooks run.
type Config struct {
	// Default receives the events no Final route consumed, unchanged. Nil
	// means they are dropped and counted as [relaykit.ReasonUnrouted].
	Default relaykit.Sink
	// DefaultName names Default in [Stats] and hooks. Empty means
	// "default".
	DefaultName string
	// Hooks are called synchronously from Route; nil hooks are skipped.
	Hooks Hooks
}

// Hooks observe a router. They run synchronously on the goroutine that
// called [Router.Route] or [Router.Flush], possibly on several goroutines at once, so they
// must be fast and safe for concurrent use, and must not retain the events
// they are given (copy what must outlive the call, e.g. with
// relaykit.Event.Clone).
type Hooks struct {
	// OnSendFailure receives every sub-batch a sink's Send refused, with
	// the error. This is where a caller spills or retries: the events are
	// exactly those the sink did not accept, in order. (It hands over the
	// events themselves, so it is not an OnSendError hook, whose shape
	// across relaykit is func(err error, events int).)
	OnSendFailure func(ctx context.Context, f SendFailure)
	// OnFunctionError receives every error a pipeline function returned,
	// with the route and function names. The event was kept.
	OnFunctionError func(route, function string, err error)
	// OnDrop is called once per Route call for each route, step and
	// reason with drops in that call: events were dropped at the route
	// named name for reason: [relaykit.ReasonFiltered] (a pipeline step
	// such as drop or sample removed them; RouteStats.DroppedBy names the
	// step), [relaykit.ReasonNoSink], or [relaykit.ReasonUnrouted] with
	// name "". It has the shape of every OnDrop hook in relaykit.
	OnDrop func(name, reason string, events int)
	// OnReduce is called once per Route or Flush call for each route and
	// [Reducer] step that absorbed events in that call: n events of the
	// route were absorbed by the step named step ("suppress",
	// "aggregate"). They are not drops: the summaries stand for them.
	OnReduce func(route, step string, n int)
	// OnProduce is called once per Route or Flush call for each route and
	// Reducer step that emitted summaries in that call: n summary events,
	// new events that then ran through the route's later steps.
	OnProduce func(route, step string, n int)
}

// SendFailure describes a sub-batch a sink refused.
type SendFailure struct {
	// Sink is the sink's name (see [Named]).
	Sink string
	// Events are the events of the failed Send, in order. The slice and
	// the events' bytes are valid only until the hook returns.
	Events []relaykit.Event
	// Err is the error Send returned.
	Err error
}

// SinkError is the error Route returns for each failed Send (joined with
// errors.Join when several sinks fail).
type SinkError struct {
	// Sink is the sink's name (see [Named]).
	Sink string
	// Events is how many events the failed Send carried.
	Events int
	// Err is the error Send returned.
	Err error
}

// Error names the sink, the number of events and the cause.
func (e *SinkError) Error() string {
	return fmt.Sprintf("pipeline: sink %s: send %d events: %v", e.Sink, e.Events, e.Err)
}

// Unwrap returns Err, for errors.Is and errors.As.
func (e *SinkError) Unwrap() error { return e.Err }

// Named returns s with a name for [Stats], hooks and errors. Without it a
// sink is named by its Name method if it has one (func() string), or else
// "<route>[<i>]" after the first route listing it.
func Named(name string, s relaykit.Sink) relaykit.Sink {
	return &namedSink{name: name, Sink: s}
}

type namedSink struct {
	relaykit.Sink
	name string
}

func (n *namedSink) Name() string { return n.name }

// Router evaluates routes over batches of events and hands each sink its
// share.
//
// A Router is immutable once built and safe for concurrent use by multiple
// goroutines; its counters are shared. To change routes, build a new
// Router and swap it in with a [Swapper].
type Router struct {
	routes []route
	sinks  []*sinkState
	def    int // index into sinks, or -1
	defSub int // lane of the default sink, or -1
	nLanes int
	nDrops int // total pipeline steps across routes
	hasRed bool
	obs    []int // indices of the routes with an Observer
	hooks  Hooks
	pool   sync.Pool // *scratch

	in        atomic.Uint64
	unrouted  atomic.Uint64
	defaulted atomic.Uint64
}

type route struct {
	name     string
	flt      *Filter
	sel      selector
	fns      []Function
	sinks    []int
	lanes    []int // sub-batches the route appends to, once per listing
	final    bool
	dropBase int       // index of this route's first step in the drop counters
	isRed    []bool    // per step: a Reducer
	reds     []int     // indices of the Reducer steps, in order
	redFns   []Reducer // the Reducer steps, in order
	obs      Observer  // nil: the route is not observed

	matched  atomic.Uint64
	out      atomic.Uint64
	noSink   atomic.Uint64
	errs     atomic.Uint64
	drops    []atomic.Uint64 // per pipeline step
	reduced  []atomic.Uint64 // per pipeline step
	produced []atomic.Uint64 // per pipeline step
}

type sinkState struct {
	name    string
	sink    relaykit.Sink
	lane    int // index of the sub-batch the sink is sent
	batches atomic.Uint64
	sent    atomic.Uint64
	failed  atomic.Uint64
	errs    atomic.Uint64
}

// scratch is the per-call state, pooled so steady-state routing does not
// allocate. Counters are summed locally and added to the shared atomics
// once per call.
type scratch struct {
	sub       []lane           // per lane (sinks listed by the same routes share one)
	clones    []relaykit.Event // copies for non-final routes
	nClones   int
	matched   []uint64 // per route
	out       []uint64
	noSink    []uint64
	errs      []uint64
	drops     []uint64         // per pipeline step, all routes
	reduced   []uint64         // likewise
	produced  []uint64         // likewise
	sums      []relaykit.Event // summaries of reducers, reused
	watching  bool             // an Observer of this call is active (observe.go)
	watch     []bool           // per route: its Observer is active
	seen      []lane           // per route: the events shown to its Observer
	unrouted  uint64
	defaulted uint64
}

// NewRouter builds a router evaluating routes in order. The routes slice is
// copied; the sinks and pipelines it refers to are shared, not copied, and
// must stay usable for the router's life.
//
// It returns an error wrapping [ErrInvalidConfig] for an empty or duplicate
// route name, a nil sink, or a bad filter; the error names the route and
// the pattern.
func NewRouter(routes []Route, cfg Config) (*Router, error) {
	r := &Router{def: -1, hooks: cfg.Hooks}
	names := make(map[string]bool, len(routes))
	reducers := map[any]string{} // each Reducer's route: its state belongs to one
	r.routes = make([]route, len(routes))
	for i, rt := range routes {
		if rt.Name == "" {
			return nil, fmt.Errorf("%w: route %d has no name", ErrInvalidConfig, i)
		}
		if names[rt.Name] {
			return nil, fmt.Errorf("%w: duplicate route name %q", ErrInvalidConfig, rt.Name)
		}
		names[rt.Name] = true
		flt, err := CompileFilter(rt.Filter)
		if err != nil {
			return nil, errFilter(fmt.Sprintf("route %q", rt.Name), rt.Filter, err)
		}
		c := &r.routes[i]
		c.name, c.flt, c.sel, c.final = rt.Name, flt, newSelector(rt.Field), rt.Final
		if rt.Pipeline != nil {
			c.fns = rt.Pipeline.fns
		}
		if rt.Observer != nil {
			c.obs = rt.Observer
			r.obs = append(r.obs, i)
		}
		c.dropBase = r.nDrops
		r.nDrops += len(c.fns)
		c.drops = make([]atomic.Uint64, len(c.fns))
		c.reduced = make([]atomic.Uint64, len(c.fns))
		c.produced = make([]atomic.Uint64, len(c.fns))
		c.isRed = make([]bool, len(c.fns))
		for j, f := range c.fns {
			if red, ok := f.(Reducer); ok {
				if reflect.TypeOf(red).Comparable() {
					if other, dup := reducers[red]; dup {
						return nil, fmt.Errorf("%w: route %q: its %s step is also a step of route %q: a reducer's windows hold one route's events, so each route needs a step of its own", ErrInvalidConfig, rt.Name, red.Name(), other)
					}
					reducers[red] = rt.Name
				}
				c.isRed[j] = true
				c.reds = append(c.reds, j)
				c.redFns = append(c.redFns, red)
				r.hasRed = true
			}
		}
		for j, s := range rt.Sinks {
			if s == nil {
				return nil, fmt.Errorf("%w: route %q: sink %d is nil", ErrInvalidConfig, rt.Name, j)
			}
			c.sinks = append(c.sinks, r.sinkIndex(s, fmt.Sprintf("%s[%d]", rt.Name, j)))
		}
	}
	if cfg.Default != nil {
		name := cfg.DefaultName
		if name == "" {
			name = "default"
		}
		r.def = r.sinkIndex(cfg.Default, name)
	}
	r.assignLanes()
	r.pool.New = func() any {
		return &scratch{
			sub:      make([]lane, r.nLanes),
			matched:  make([]uint64, len(r.routes)),
			out:      make([]uint64, len(r.routes)),
			noSink:   make([]uint64, len(r.routes)),
			errs:     make([]uint64, len(r.routes)),
			drops:    make([]uint64, r.nDrops),
			reduced:  make([]uint64, r.nDrops),
			produced: make([]uint64, r.nDrops),
			watch:    make([]bool, len(r.routes)),
			seen:     make([]lane, len(r.routes)),
		}
	}
	return r, nil
}

// assignLanes gives sinks that are listed by exactly the same routes (the
// same number of times each, and the default or not) one shared
// sub-batch: they receive the same events in the same order, so each
// event is appended once per lane instead of once per sink. Sinks only
// read what they are sent, so one slice serves them all in turn.
func (r *Router) assignLanes() {
	key := func(k int) string {
		b := make([]byte, 0, len(r.routes)+1)
		for ri := range r.routes {
			n := 0
			for _, sk := range r.routes[ri].sinks {
				if sk == k {
					n++
				}
			}
			b = append(b, byte(min(n, 255)))
		}
		if k == r.def {
			b = append(b, 1)
		}
		return string(b)
	}
	lanes := map[string]int{}
	for k, st := range r.sinks {
		l, ok := lanes[key(k)]
		if !ok {
			l = len(lanes)
			lanes[key(k)] = l
		}
		st.lane = l
	}
	r.nLanes = len(lanes)
	r.defSub = -1
	if r.def >= 0 {
		r.defSub = r.sinks[r.def].lane
	}
	for ri := range r.routes {
		rt := &r.routes[ri]
		seen := map[int]bool{}
		for _, k := range rt.sinks {
			l := r.sinks[k].lane
			if seen[l] {
				continue
			}
			seen[l] = true
			for _, k2 := range rt.sinks {
				if k2 == k {
					rt.lanes = append(rt.lanes, l) // once per listing of the sink
				}
			}
		}
	}
}

// sinkIndex returns the index of s in r.sinks, adding it if it is new.
func (r *Router) sinkIndex(s relaykit.Sink, fallback string) int {
	for i, st := range r.sinks {
		if sameSink(st.sink, s) {
			return i
		}
	}
	name := fallback
	if n, ok := s.(interface{ Name() string }); ok && n.Name() != "" {
		name = n.Name()
	}
	r.sinks = append(r.sinks, &sinkState{name: name, sink: s})
	return len(r.sinks) - 1
}

// sameSink reports whether a and b are the same comparable value. A value
// whose type is comparable but holds an incomparable value (an interface
// field holding a func) counts as different rather than panicking.
func sameSink(a, b relaykit.Sink) (same bool) {
	if reflect.TypeOf(a) != reflect.TypeOf(b) || !reflect.TypeOf(a).Comparable() {
		return false
	}
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// Send is Route: it makes a Router a relaykit.Sink.
func (r *Router) Send(ctx context.Context, batch []relaykit.Event) error { return r.Route(ctx, batch) }

// Route routes a batch: for each event, in order, the routes are evaluated
// in order (see the package documentation); then each sink that got events
// receives them in one Send, in batch order, sinks in the order they first
// appear in the routes (the default last if it is new).
//
// Pipelines of Final routes run on the events of batch in place, so the
// caller's events may be modified; non-final routes work on copies. The
// slices given to the sinks are valid only during their Send.
//
// Route returns nil when every Send succeeded; otherwise, after trying
// every sink, a *[SinkError] per failed Send (joined with errors.Join).
// A failure affects only that sink's events: the others were delivered. To
// spill or retry exactly the refused events, use [Hooks.OnSendFailure]; the
// returned error is for logging. ctx is passed to the sinks.
//
// Once warm, Route does not allocate unless a sink, hook or function does
// (a failed Send allocates its error).
func (r *Router) Route(ctx context.Context, batch []relaykit.Event) error {
	s := r.pool.Get().(*scratch)
	r.arm(s)
	for i := range batch {
		e := &batch[i]
		consumed := false
		for ri := range r.routes {
			rt := &r.routes[ri]
			if !rt.flt.all && !rt.flt.Match(rt.sel.get(e)) {
				continue
			}
			s.matched[ri]++
			if rt.final {
				r.deliver(s, ri, batch, i, e, 0)
				consumed = true
				break
			}
			c := s.clone(e)
			if r.deliver(s, ri, batch, -1, c, 0) {
				s.nClones++ // keep the copy until the sinks have it
			}
		}
		if consumed {
			continue
		}
		if r.defSub >= 0 {
			s.sub[r.defSub].add(batch, i, e)
			s.defaulted++
		} else {
			s.unrouted++
		}
	}
	if r.hasRed {
		r.collect(s, batch, flushPending)
	}
	err := r.send(ctx, s, batch)
	r.flush(s, len(batch))
	r.pool.Put(s)
	return err
}

// Flush ends the windows of the routes' [Reducer] steps that ended at or
// before now (nanoseconds since the Unix epoch; [FlushAll] ends them all)
// and delivers their summaries as Route delivers events: each summary
// runs through the steps after its reducer in that route's pipeline, and
// those kept go to the route's sinks, one Send per sink, with the same
// counters, hooks, [Hooks.OnSendFailure] and returned [*SinkError] values.
// Summaries of keys evicted since the last call are included whatever
// now is.
//
// The steps never read the clock: an engine calls Flush from a ticker
// with the current time (a period well below the shortest window, such
// as a second), so that a quiet key's summary leaves when its window
// ends and not when the key's next event comes; it calls
// Flush(ctx, FlushAll) at shutdown, and on the old router after a reload
// once the batches running on it have returned. Routes without reducers
// cost nothing. Flush is safe to call concurrently with Route; ctx is
// passed to the sinks.
func (r *Router) Flush(ctx context.Context, now int64) error {
	if !r.hasRed {
		return nil
	}
	s := r.pool.Get().(*scratch)
	r.arm(s)
	r.collect(s, nil, now)
	err := r.send(ctx, s, nil)
	r.flush(s, 0)
	r.pool.Put(s)
	return err
}

// collect gathers the summaries of every route's reducers (windows ended
// at or before now, and those already complete), runs each through the
// rest of its route's pipeline and queues those kept for the route's
// sinks. A reducer's summaries go through the later reducers of the same
// route before those are collected.
func (r *Router) collect(s *scratch, batch []relaykit.Event, now int64) {
	for ri := range r.routes {
		rt := &r.routes[ri]
		for n, j := range rt.reds {
			start := len(s.sums)
			s.sums = rt.redFns[n].Flush(s.sums, now)
			for k := start; k < len(s.sums); k++ {
				s.produced[rt.dropBase+j]++
				r.deliver(s, ri, batch, -1, &s.sums[k], j+1)
			}
		}
	}
}

// send hands each sink its lane's events and resets the lanes.
func (r *Router) send(ctx context.Context, s *scratch, batch []relaykit.Event) error {
	if s.watching {
		r.show(s, batch)
	}
	var errs []error
	for _, st := range r.sinks {
		sub := s.sub[st.lane].events(batch)
		if len(sub) == 0 {
			continue
		}
		st.batches.Add(1)
		if err := st.sink.Send(ctx, sub); err != nil {
			st.errs.Add(1)
			st.failed.Add(uint64(len(sub)))
			if h := r.hooks.OnSendFailure; h != nil {
				h(ctx, SendFailure{Sink: st.name, Events: sub, Err: err})
			}
			errs = append(errs, &SinkError{Sink: st.name, Events: len(sub), Err: err})
		} else {
			st.sent.Add(uint64(len(sub)))
		}
	}
	for l := range s.sub {
		s.sub[l].reset()
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// lane is the sub-batch of the sinks that share it. As long as its events
// are a contiguous run of the caller's batch, batch[lo:hi], it refers to
// them there and copies nothing; only when a gap or a copy from a
// non-final route breaks the run are they copied into buf.
type lane struct {
	lo, hi int              // the run in the caller's batch, while !copied
	copied bool             // buf holds the events
	buf    []relaykit.Event // reused across calls
}

// add appends batch[i] (the original event, i >= 0) or *e (a copy, i < 0).
func (l *lane) add(batch []relaykit.Event, i int, e *relaykit.Event) {
	if !l.copied {
		switch {
		case i >= 0 && l.lo == l.hi:
			l.lo, l.hi = i, i+1
			return
		case i >= 0 && i == l.hi:
			l.hi++
			return
		}
		l.buf = append(l.buf[:0], batch[l.lo:l.hi]...)
		l.copied = true
	}
	l.buf = append(l.buf, *e)
}

// events returns the lane's events for Send.
func (l *lane) events(batch []relaykit.Event) []relaykit.Event {
	if l.copied {
		return l.buf
	}
	return batch[l.lo:l.hi]
}

// reset empties the lane, dropping references to the caller's memory.
func (l *lane) reset() {
	if l.copied {
		clear(l.buf)
		l.buf = l.buf[:0]
	}
	l.lo, l.hi, l.copied = 0, 0, false
}

// clone copies e into the next free pooled event.
func (s *scratch) clone(e *relaykit.Event) *relaykit.Event {
	if s.nClones == len(s.clones) {
		s.clones = append(s.clones, relaykit.Event{})
	}
	c := &s.clones[s.nClones]
	e.CopyTo(c)
	return c
}

// deliver runs route ri's pipeline from step from on over e and, if it is
// kept, queues it for the route's sinks. e is batch[i], or a copy or a
// summary when i < 0. It reports whether e was queued.
func (r *Router) deliver(s *scratch, ri int, batch []relaykit.Event, i int, e *relaykit.Event, from int) bool {
	rt := &r.routes[ri]
	for j := from; j < len(rt.fns); j++ {
		f := rt.fns[j]
		keep, err := f.Apply(e)
		if err != nil {
			s.errs[ri]++
			if h := r.hooks.OnFunctionError; h != nil {
				h(rt.name, f.Name(), err)
			}
		}
		if !keep {
			if rt.isRed[j] {
				s.reduced[rt.dropBase+j]++
			} else {
				s.drops[rt.dropBase+j]++
			}
			return false
		}
	}
	if s.watching && s.watch[ri] {
		s.seen[ri].add(batch, i, e)
	}
	if len(rt.lanes) == 0 {
		s.noSink[ri]++
		return false
	}
	for _, l := range rt.lanes {
		s.sub[l].add(batch, i, e)
	}
	s.out[ri]++
	return true
}

// flush adds the call's counters to the router's and resets them.
func (r *Router) flush(s *scratch, n int) {
	r.in.Add(uint64(n))
	onDrop := r.hooks.OnDrop
	for ri := range r.routes {
		rt := &r.routes[ri]
		if v := s.matched[ri]; v != 0 {
			rt.matched.Add(v)
			s.matched[ri] = 0
		}
		if v := s.out[ri]; v != 0 {
			rt.out.Add(v)
			s.out[ri] = 0
		}
		if v := s.errs[ri]; v != 0 {
			rt.errs.Add(v)
			s.errs[ri] = 0
		}
		if v := s.noSink[ri]; v != 0 {
			rt.noSink.Add(v)
			s.noSink[ri] = 0
			if onDrop != nil {
				onDrop(rt.name, relaykit.ReasonNoSink, int(v))
			}
		}
		for j := range rt.drops {
			if v := s.drops[rt.dropBase+j]; v != 0 {
				rt.drops[j].Add(v)
				s.drops[rt.dropBase+j] = 0
				if onDrop != nil {
					onDrop(rt.name, relaykit.ReasonFiltered, int(v))
				}
			}
		}
		for _, j := range rt.reds {
			if v := s.reduced[rt.dropBase+j]; v != 0 {
				rt.reduced[j].Add(v)
				s.reduced[rt.dropBase+j] = 0
				if h := r.hooks.OnReduce; h != nil {
					h(rt.name, rt.fns[j].Name(), int(v))
				}
			}
			if v := s.produced[rt.dropBase+j]; v != 0 {
				rt.produced[j].Add(v)
				s.produced[rt.dropBase+j] = 0
				if h := r.hooks.OnProduce; h != nil {
					h(rt.name, rt.fns[j].Name(), int(v))
				}
			}
		}
	}
	s.sums = s.sums[:0]
	if v := s.defaulted; v != 0 {
		r.defaulted.Add(v)
		s.defaulted = 0
	}
	if v := s.unrouted; v != 0 {
		r.unrouted.Add(v)
		s.unrouted = 0
		if onDrop != nil {
			onDrop("", relaykit.ReasonUnrouted, int(v))
		}
	}
	s.nClones = 0
}

// Stats is a snapshot of a router's counters, since it was built.
//
// The ledger balances once the Route and Flush calls being counted have
// returned. For every route:
//
//	Matched + sum of Produced = Out + sum of Dropped + sum of Reduced
//
// (the summaries a route's reducers produce are new events: they are sent
// or dropped, or absorbed by a later reducer, like the events matched).
// For the router:
//
//	In = Default + Unrouted + sum over Final routes of
//	     (Out + sum of Dropped + sum of Reduced - sum of Produced)
//
// Copies taken by non-final routes are extra: they appear in those routes'
// counters only. A caller's own ledger therefore balances as
// in + produced = sent + dropped + reduced.
type Stats struct {
	// In is the number of events passed to Route.
	In uint64
	// Default is the number of events handed to Config.Default.
	Default uint64
	// Unrouted is the number of events no Final route consumed, dropped
	// because there is no default sink.
	Unrouted uint64
	// Dropped sums drops by reason over all routes, plus Unrouted under
	// [relaykit.ReasonUnrouted]: the relaykit.Reason* names.
	Dropped map[string]uint64
	// Reduced sums, by step name, the events [Reducer] steps absorbed,
	// over all routes.
	Reduced map[string]uint64
	// Produced sums, by step name, the summary events Reducer steps
	// emitted, over all routes.
	Produced map[string]uint64
	// Routes holds one entry per route, in evaluation order.
	Routes []RouteStats
	// Sinks holds one entry per distinct sink, the default last if it is
	// not also a route's sink.
	Sinks []SinkStats
}

// RouteStats counts one route's events.
type RouteStats struct {
	// Name is the route's name.
	Name string
	// Final is the route's Final flag.
	Final bool
	// Matched is the number of events the filter matched (for a non-final
	// route, the number of copies taken).
	Matched uint64
	// Out is the number of events queued to the route's sinks (once per
	// event, however many sinks).
	Out uint64
	// Dropped counts the route's drops by reason: [relaykit.ReasonFiltered]
	// (a pipeline step dropped them) or [relaykit.ReasonNoSink].
	Dropped map[string]uint64
	// DroppedBy counts the route's filtered drops by the name of the
	// pipeline step that dropped them ([Function.Name]: "drop", "sample",
	// ...); they sum to Dropped[relaykit.ReasonFiltered].
	DroppedBy map[string]uint64
	// Reduced counts, by step name, the route's events absorbed by its
	// [Reducer] steps (not drops: summaries stand for them).
	Reduced map[string]uint64
	// Produced counts, by step name, the summary events the route's
	// Reducer steps emitted.
	Produced map[string]uint64
	// Errors is the number of errors pipeline functions returned.
	Errors uint64
}

// SinkStats counts one sink's deliveries.
type SinkStats struct {
	// Name is the sink's name (see [Named]).
	Name string
	// Batches is the number of Send calls.
	Batches uint64
	// Sent is the number of events in Send calls that returned nil.
	Sent uint64
	// Failed is the number of events in Send calls that returned an error.
	Failed uint64
	// Errors is the number of Send calls that returned an error.
	Errors uint64
}

// Stats returns a snapshot of the router's counters. Counters are updated
// once per Route or Flush call, when it returns; the snapshot is not atomic across
// counters while Route runs concurrently. It allocates.
func (r *Router) Stats() Stats {
	st := Stats{
		In:       r.in.Load(),
		Default:  r.defaulted.Load(),
		Unrouted: r.unrouted.Load(),
		Dropped:  map[string]uint64{},
		Reduced:  map[string]uint64{},
		Produced: map[string]uint64{},
	}
	if st.Unrouted != 0 {
		st.Dropped[relaykit.ReasonUnrouted] = st.Unrouted
	}
	for ri := range r.routes {
		rt := &r.routes[ri]
		rs := RouteStats{
			Name:      rt.name,
			Final:     rt.final,
			Matched:   rt.matched.Load(),
			Out:       rt.out.Load(),
			Errors:    rt.errs.Load(),
			Dropped:   map[string]uint64{},
			DroppedBy: map[string]uint64{},
			Reduced:   map[string]uint64{},
			Produced:  map[string]uint64{},
		}
		if v := rt.noSink.Load(); v != 0 {
			rs.Dropped[relaykit.ReasonNoSink] += v
		}
		for j := range rt.drops {
			if v := rt.drops[j].Load(); v != 0 {
				rs.Dropped[relaykit.ReasonFiltered] += v
				rs.DroppedBy[rt.fns[j].Name()] += v
			}
		}
		for _, j := range rt.reds {
			if v := rt.reduced[j].Load(); v != 0 {
				rs.Reduced[rt.fns[j].Name()] += v
			}
			if v := rt.produced[j].Load(); v != 0 {
				rs.Produced[rt.fns[j].Name()] += v
			}
		}
		for k, v := range rs.Dropped {
			st.Dropped[k] += v
		}
		for k, v := range rs.Reduced {
			st.Reduced[k] += v
		}
		for k, v := range rs.Produced {
			st.Produced[k] += v
		}
		st.Routes = append(st.Routes, rs)
	}
	for _, s := range r.sinks {
		st.Sinks = append(st.Sinks, SinkStats{
			Name:    s.name,
			Batches: s.batches.Load(),
			Sent:    s.sent.Load(),
			Failed:  s.failed.Load(),
			Errors:  s.errs.Load(),
		})
	}
	return st
}

// Swapper holds the current [Router] for lock-free reloads: Route loads the
// router with one atomic read, so a batch runs entirely on the router that
// was current when it started, while [Swapper.Swap] installs a new one for
// the batches that start after it.
//
// Create it with [NewSwapper]. It is safe for concurrent use by multiple
// goroutines.
type Swapper struct {
	p atomic.Pointer[Router]
}

// NewSwapper returns a Swapper holding r. It panics if r is nil.
func NewSwapper(r *Router) *Swapper {
	if r == nil {
		panic("pipeline: NewSwapper: nil router")
	}
	s := &Swapper{}
	s.p.Store(r)
	return s
}

// Load returns the current router.
func (s *Swapper) Load() *Router { return s.p.Load() }

// Swap installs r and returns the previous router. Batches already running
// on the previous router finish there and update its counters; read its
// Stats once those calls have returned to account for them. It panics if r
// is nil.
func (s *Swapper) Swap(r *Router) *Router {
	if r == nil {
		panic("pipeline: Swapper.Swap: nil router")
	}
	return s.p.Swap(r)
}

// Route routes batch on the current router; see [Router.Route].
func (s *Swapper) Route(ctx context.Context, batch []relaykit.Event) error {
	return s.p.Load().Route(ctx, batch)
}

// Send is Route: it makes a Swapper a relaykit.Sink, for an engine whose
// batches go through the route table.
func (s *Swapper) Send(ctx context.Context, batch []relaykit.Event) error {
	return s.p.Load().Route(ctx, batch)
}

// Flush flushes the current router's reducers; see [Router.Flush]. After
// a Swap, flush the previous router itself, with [FlushAll], once the
// batches running on it have returned.
func (s *Swapper) Flush(ctx context.Context, now int64) error {
	return s.p.Load().Flush(ctx, now)
}
