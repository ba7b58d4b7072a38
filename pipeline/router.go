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
// called [Router.Route], possibly on several goroutines at once, so they
// must be fast and safe for concurrent use, and must not retain the events
// they are given (copy what must outlive the call, e.g. with
// relaykit.Event.Clone).
type Hooks struct {
	// OnSendError receives every sub-batch a sink's Send refused, with the
	// error. This is where a caller spills or retries: the events are
	// exactly those the sink did not accept, in order.
	OnSendError func(ctx context.Context, f SendFailure)
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
	dropBase int // index of this route's first step in the drop counters

	matched atomic.Uint64
	out     atomic.Uint64
	noSink  atomic.Uint64
	errs    atomic.Uint64
	drops   []atomic.Uint64 // per pipeline step
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
	drops     []uint64 // per pipeline step, all routes
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
		c.dropBase = r.nDrops
		r.nDrops += len(c.fns)
		c.drops = make([]atomic.Uint64, len(c.fns))
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
			sub:     make([]lane, r.nLanes),
			matched: make([]uint64, len(r.routes)),
			out:     make([]uint64, len(r.routes)),
			noSink:  make([]uint64, len(r.routes)),
			errs:    make([]uint64, len(r.routes)),
			drops:   make([]uint64, r.nDrops),
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
// spill or retry exactly the refused events, use [Hooks.OnSendError]; the
// returned error is for logging. ctx is passed to the sinks.
//
// Once warm, Route does not allocate unless a sink, hook or function does
// (a failed Send allocates its error).
func (r *Router) Route(ctx context.Context, batch []relaykit.Event) error {
	s := r.pool.Get().(*scratch)
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
				r.deliver(s, ri, batch, i, e)
				consumed = true
				break
			}
			c := s.clone(e)
			if r.deliver(s, ri, batch, -1, c) {
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
			if h := r.hooks.OnSendError; h != nil {
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
	r.flush(s, len(batch))
	r.pool.Put(s)
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

// deliver runs route ri's pipeline over e and, if it is kept, queues it for
// the route's sinks. e is batch[i], or a copy when i < 0. It reports
// whether e was queued.
func (r *Router) deliver(s *scratch, ri int, batch []relaykit.Event, i int, e *relaykit.Event) bool {
	rt := &r.routes[ri]
	for j, f := range rt.fns {
		keep, err := f.Apply(e)
		if err != nil {
			s.errs[ri]++
			if h := r.hooks.OnFunctionError; h != nil {
				h(rt.name, f.Name(), err)
			}
		}
		if !keep {
			s.drops[rt.dropBase+j]++
			return false
		}
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
	}
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
// The ledger balances once the Route calls being counted have returned:
//
//	In = Default + Unrouted + sum over Final routes of (Out + sum of Dropped)
//
// Copies taken by non-final routes are extra: they appear in those routes'
// counters only (Matched = Out + sum of Dropped for every route).
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
// once per Route call, when it returns; the snapshot is not atomic across
// counters while Route runs concurrently. It allocates.
func (r *Router) Stats() Stats {
	st := Stats{
		In:       r.in.Load(),
		Default:  r.defaulted.Load(),
		Unrouted: r.unrouted.Load(),
		Dropped:  map[string]uint64{},
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
		for k, v := range rs.Dropped {
			st.Dropped[k] += v
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
