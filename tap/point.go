package tap

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
)

var (
	// ErrClosed is returned by [Point.Subscribe] on a closed point.
	ErrClosed = errors.New("tap: point closed")
	// ErrInvalidConfig is wrapped by the errors [Point.Subscribe] and
	// [NewHandler] return for a bad configuration, a bad filter pattern
	// included.
	ErrInvalidConfig = errors.New("tap: invalid config")
)

// DefaultBuffer is the number of observations a subscription buffers when
// [SubscribeConfig].Buffer is zero.
const DefaultBuffer = 1024

// Status says what a destination did with an event; see [Outcome].
type Status uint8

const (
	// StatusNone means the point carries no outcome: an input or a route.
	StatusNone Status = iota
	// StatusDelivered means the destination's Sink accepted the event
	// (see the acknowledgement contract of [relaykit.Sink]).
	StatusDelivered
	// StatusFailed means the Sink did not accept the event; Outcome.Reason
	// says why.
	StatusFailed
)

// String returns "delivered", "failed", or "" for [StatusNone].
func (s Status) String() string {
	switch s {
	case StatusDelivered:
		return "delivered"
	case StatusFailed:
		return "failed"
	default:
		return ""
	}
}

// Outcome is what became of the events of a batch at a destination point.
// The zero Outcome is no outcome, what [Point.Publish] reports.
type Outcome struct {
	// Status is delivered or failed, or none.
	Status Status
	// Reason is a short label for a failure: a [relaykit.FailedRange]
	// Reason, such as [relaykit.ReasonRejected], or
	// [relaykit.ReasonSinkError]. Empty unless Status is [StatusFailed].
	Reason string
	// Permanent reports a failure that sending again cannot cure (the
	// destination refused the events); false for a retryable one.
	Permanent bool
}

// Observation is one event as a subscriber receives it.
type Observation struct {
	// Point is the name of the point the event was published at.
	Point string
	// Outcome is the destination's outcome, or the zero Outcome at a point
	// that has none.
	Outcome Outcome
	// Event is a deep copy of the published event
	// ([relaykit.Event.Clone]): it shares no memory with the publisher's
	// event, and the subscriber owns it and may keep or modify it.
	Event relaykit.Event
}

// SubscribeConfig says which events of a point a subscription receives and
// how many it buffers. The zero value receives every event, unlimited, with
// a buffer of [DefaultBuffer].
type SubscribeConfig struct {
	// Filter is a Go regular expression (RE2 syntax) matched anywhere in
	// the value named by Field, compiled as a [pipeline.Filter] (with its
	// literal prefilter; not put in CompileFilter's process-wide cache).
	// "" or "true" matches every event.
	Filter string
	// Field names the value Filter reads, as [pipeline.Route].Field does:
	// "" or [pipeline.FieldRaw] ("_raw") for the raw message,
	// [pipeline.FieldHost], [pipeline.FieldSource],
	// [pipeline.FieldSourceType], [pipeline.FieldIndex], or the name of an
	// extracted field (a missing field reads as empty).
	Field string
	// Sample keeps 1 in Sample of the events that pass Filter: the first,
	// then every Sample-th. Zero or one keeps every event; negative is an
	// error.
	Sample int
	// MaxPerSecond caps the events handed to the subscription in each
	// window of one second (the window starts at the first event after the
	// previous one ended); events over the cap are counted as Limited.
	// Events that find the buffer full are Dropped before the cap is
	// consulted and do not use it up. Zero means no cap; negative is an
	// error. Under concurrent publishers the cap is approximate by a few
	// events.
	MaxPerSecond int
	// Buffer is the number of observations the subscription holds for its
	// reader; an event that finds it full is dropped and counted as
	// Dropped. Zero means [DefaultBuffer]; negative is an error.
	Buffer int
}

// SubscriptionStats counts what a subscription was offered. Events that
// passed the filter but were sampled out are Matched - Limited - Delivered
// - Dropped.
type SubscriptionStats struct {
	// Matched counts the published events that passed the filter.
	Matched uint64
	// Limited counts sampled events dropped by MaxPerSecond.
	Limited uint64
	// Delivered counts the observations put in the buffer.
	Delivered uint64
	// Dropped counts sampled events lost because the buffer was full: the
	// reader did not keep up.
	Dropped uint64
}

func (a *SubscriptionStats) add(b SubscriptionStats) {
	a.Matched += b.Matched
	a.Limited += b.Limited
	a.Delivered += b.Delivered
	a.Dropped += b.Dropped
}

// Stats is a snapshot of a [Point]'s counters.
type Stats struct {
	// Subscribers is the number of open subscriptions.
	Subscribers int
	// Batches and Events count what was published while at least one
	// subscription was open. With none, publishing counts nothing: that
	// would cost more than the single atomic load it is.
	Batches, Events uint64
	// SubscriptionStats sums the counters of every subscription the point
	// has had, open or closed.
	SubscriptionStats
}

// Point is a named place in a data path where events can be observed:
// the publisher (the input, route or destination) hands it each batch,
// and subscribers receive copies of the events they asked for.
//
// Publishing with no subscription costs one atomic load per batch and
// allocates nothing. A subscription never slows the publisher beyond the
// work of its own filter, sample and copies: the hand-off never blocks,
// and a subscriber whose buffer is full loses the events (counted).
//
// A nil *Point is valid: publishing to it does nothing, so a data path can
// hold points that are only created when observation is enabled.
//
// A Point is safe for concurrent use by multiple goroutines: any number of
// goroutines may publish to it, subscribe and close subscriptions at the
// same time.
type Point struct {
	name string
	// subs is the copy-on-write list of open subscriptions, nil when
	// there is none: the one load Publish makes.
	subs atomic.Pointer[[]*Subscription]

	batches, events atomic.Uint64

	mu      sync.Mutex // serialises changes to subs, list, retired, closed
	list    []*Subscription
	retired SubscriptionStats // counters of closed subscriptions
	closed  bool
}

// NewPoint returns an open point named name. Points of a relay are usually
// made by a [Registry], which names them by convention "input:NAME",
// "route:NAME" and "destination:NAME".
func NewPoint(name string) *Point { return &Point{name: name} }

// Name returns the point's name.
func (p *Point) Name() string { return p.name }

// Active reports whether the point has an open subscription, at the cost of
// one atomic load. A publisher may use it to skip preparing a batch nobody
// observes; Publish makes the same check itself.
func (p *Point) Active() bool { return p != nil && p.subs.Load() != nil }

// Publish offers batch to the point's subscriptions, with no outcome. It
// never blocks. It reads batch only until it returns, and does not modify
// or retain it: subscribers receive copies. With no subscription it costs
// one atomic load and allocates nothing; see the package documentation for
// the cost with subscriptions.
func (p *Point) Publish(batch []relaykit.Event) {
	if p != nil && p.subs.Load() != nil {
		p.publish(batch, Outcome{})
	}
}

// PublishOutcome is [Point.Publish] with the outcome o for every event of
// batch: for a destination point, after the Sink's Send returned. To
// publish a Send's result with per-event outcomes, use
// [Point.PublishResult].
func (p *Point) PublishOutcome(batch []relaykit.Event, o Outcome) {
	if p != nil && p.subs.Load() != nil {
		p.publish(batch, o)
	}
}

// PublishResult is [Point.Publish] for a destination point, given the
// batch a Sink's Send was called with and the error it returned: nil means
// every event was delivered; a [*relaykit.BatchError] (found with
// errors.As) marks the events of its failed ranges failed, with each
// range's Reason and Permanent flag, and the others delivered; any other
// error marks every event failed with [relaykit.ReasonSinkError],
// retryable. Like Publish it costs one atomic load with no subscription;
// the error is examined only when there is one.
func (p *Point) PublishResult(batch []relaykit.Event, err error) {
	if p != nil && p.subs.Load() != nil {
		p.publishResult(batch, err)
	}
}

func (p *Point) publishResult(batch []relaykit.Event, err error) {
	if err == nil {
		p.publish(batch, Outcome{Status: StatusDelivered})
		return
	}
	var be *relaykit.BatchError
	if !errors.As(err, &be) {
		p.publish(batch, Outcome{Status: StatusFailed, Reason: relaykit.ReasonSinkError})
		return
	}
	subs := p.subs.Load()
	if subs == nil || len(batch) == 0 {
		return
	}
	p.count(batch)
	var now int64
	next := 0
	for _, f := range be.Failed {
		from, to := max(f.From, next), min(f.To, len(batch))
		if from >= to {
			continue
		}
		if from > next {
			p.offer(*subs, batch[next:from], Outcome{Status: StatusDelivered}, &now)
		}
		p.offer(*subs, batch[from:to], Outcome{Status: StatusFailed, Reason: f.Reason, Permanent: f.Permanent}, &now)
		next = to
	}
	if next < len(batch) {
		p.offer(*subs, batch[next:], Outcome{Status: StatusDelivered}, &now)
	}
}

// publish offers batch with outcome o; the caller saw a subscription.
func (p *Point) publish(batch []relaykit.Event, o Outcome) {
	subs := p.subs.Load()
	if subs == nil || len(batch) == 0 {
		return
	}
	p.count(batch)
	var now int64
	p.offer(*subs, batch, o, &now)
}

func (p *Point) count(batch []relaykit.Event) {
	p.batches.Add(1)
	p.events.Add(uint64(len(batch)))
}

func (p *Point) offer(subs []*Subscription, batch []relaykit.Event, o Outcome, now *int64) {
	for _, s := range subs {
		s.offer(batch, o, now)
	}
}

// Subscribe opens a subscription to the events published from now on that
// pass cfg's filter, sample and cap. The caller reads them from
// [Subscription.C] and must call [Subscription.Close] when done. It
// returns an error wrapping [ErrInvalidConfig] for a bad cfg (a bad Filter
// pattern included: the error says so), or [ErrClosed] after
// [Point.Close].
func (p *Point) Subscribe(cfg SubscribeConfig) (*Subscription, error) {
	if cfg.Sample < 0 || cfg.MaxPerSecond < 0 || cfg.Buffer < 0 {
		return nil, fmt.Errorf("%w: %s: negative Sample, MaxPerSecond or Buffer", ErrInvalidConfig, p.name)
	}
	flt, err := pipeline.NewFilter(cfg.Filter)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: filter %q: %w", ErrInvalidConfig, p.name, cfg.Filter, err)
	}
	return p.subscribe(cfg, flt)
}

// subscribe is Subscribe with cfg checked and its filter compiled.
func (p *Point) subscribe(cfg SubscribeConfig, flt *pipeline.Filter) (*Subscription, error) {
	if flt.MatchesAll() {
		flt = nil
	}
	buf := cfg.Buffer
	if buf == 0 {
		buf = DefaultBuffer
	}
	s := &Subscription{
		point:        p,
		ch:           make(chan Observation, buf),
		filter:       flt,
		sel:          pipeline.NewSelector(cfg.Field),
		sample:       uint64(max(cfg.Sample, 1)),
		maxPerSecond: int64(cfg.MaxPerSecond),
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("%w: %s", ErrClosed, p.name)
	}
	p.list = append(p.list, s)
	p.store()
	return s, nil
}

// store publishes a copy of p.list for the publishers; p.mu is held.
func (p *Point) store() {
	if len(p.list) == 0 {
		p.subs.Store(nil)
		return
	}
	list := append([]*Subscription(nil), p.list...)
	p.subs.Store(&list)
}

// Close closes every subscription of the point (their channels are closed
// once drained of what they hold) and makes later Subscribe calls fail
// with [ErrClosed]. Publishing to a closed point does nothing. Close is
// idempotent and returns nil.
func (p *Point) Close() error {
	p.mu.Lock()
	p.closed = true
	list := append([]*Subscription(nil), p.list...)
	p.mu.Unlock()
	for _, s := range list {
		_ = s.Close()
	}
	return nil
}

// Stats returns a snapshot of the point's counters.
func (p *Point) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := Stats{
		Subscribers:       len(p.list),
		Batches:           p.batches.Load(),
		Events:            p.events.Load(),
		SubscriptionStats: p.retired,
	}
	for _, s := range p.list {
		st.add(s.Stats())
	}
	return st
}

// Subscription receives copies of the events published at a [Point] that
// pass its filter, sample and cap, through a buffered channel.
//
// The publisher hands each event over without blocking: when the buffer is
// full the event is dropped for this subscription alone and counted, so a
// slow or stuck reader loses its own events and never slows the data path
// or another subscription. The copy ([relaykit.Event.Clone], two
// allocations) is made on the publisher's goroutine, and only for events
// that passed the filter, the sample and the cap and found room in the
// buffer.
//
// A Subscription is safe for concurrent use by multiple goroutines; its
// channel is usually read by one.
type Subscription struct {
	point        *Point
	ch           chan Observation
	filter       *pipeline.Filter // nil: every event matches
	sel          pipeline.Selector
	sample       uint64
	maxPerSecond int64

	seq      atomic.Uint64 // events that passed the filter, for sampling
	winStart atomic.Int64  // start of the cap's window, Unix ns
	winCount atomic.Int64  // events taken in the window
	inflight atomic.Int64  // publishers handing over right now
	closed   atomic.Bool

	matched, limited, delivered, dropped atomic.Uint64
}

// C returns the channel the observations arrive on, in publishing order
// for each publishing goroutine. It is closed by [Subscription.Close] (or
// [Point.Close]) after the observations already in it; a reader may range
// over it.
func (s *Subscription) C() <-chan Observation { return s.ch }

// Close ends the subscription: no event is handed over after it returns,
// and the channel is closed (the observations it holds can still be read).
// It waits only for publishers in the middle of a hand-off, which never
// block. Close is idempotent and returns nil.
func (s *Subscription) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	// A publisher that entered before closed was set may still be
	// handing over; one that enters later sees closed and leaves.
	for s.inflight.Load() != 0 {
		runtime.Gosched()
	}
	p := s.point
	p.mu.Lock()
	for i, x := range p.list {
		if x == s {
			p.list = append(p.list[:i:i], p.list[i+1:]...)
			break
		}
	}
	p.store()
	p.retired.add(s.Stats())
	p.mu.Unlock()
	close(s.ch)
	return nil
}

// Stats returns a snapshot of the subscription's counters.
func (s *Subscription) Stats() SubscriptionStats {
	return SubscriptionStats{
		Matched:   s.matched.Load(),
		Limited:   s.limited.Load(),
		Delivered: s.delivered.Load(),
		Dropped:   s.dropped.Load(),
	}
}

// enter registers a publisher's hand-off, or reports that the
// subscription is closed.
func (s *Subscription) enter() bool {
	if s.closed.Load() {
		return false
	}
	s.inflight.Add(1)
	if s.closed.Load() {
		s.inflight.Add(-1)
		return false
	}
	return true
}

// tally accumulates one hand-off's counts, added to the atomics once.
type tally struct {
	matched, limited, delivered, dropped uint64
}

// offer hands the events of batch that pass the filter, sample and cap to
// the subscription; now caches the batch's clock reading (0: not read).
func (s *Subscription) offer(batch []relaykit.Event, o Outcome, now *int64) {
	if !s.enter() {
		return
	}
	var t tally
	if s.filter == nil {
		// Every event matches: reserve the batch's sample sequence
		// numbers at once and visit only the sampled events.
		n := uint64(len(batch))
		t.matched = n
		first := uint64(0)
		if s.sample > 1 {
			base := s.seq.Add(n) - n
			first = (s.sample - base%s.sample) % s.sample
		}
		if first < n {
			if len(s.ch) == cap(s.ch) {
				// Full: every sampled event of the batch is lost.
				t.dropped = (n - first + s.sample - 1) / s.sample
			} else {
				for i := first; i < n; i += s.sample {
					s.take(&batch[i], o, now, &t)
				}
			}
		}
	} else {
		for i := range batch {
			e := &batch[i]
			if !s.filter.Match(s.sel.Value(e)) {
				continue
			}
			t.matched++
			if s.sample > 1 && (s.seq.Add(1)-1)%s.sample != 0 {
				continue
			}
			s.take(e, o, now, &t)
		}
	}
	// Counted before the hand-off ends, so that a Close waiting for it
	// sees these counts in the subscription's final stats.
	s.record(&t)
	s.inflight.Add(-1)
}

func (s *Subscription) record(t *tally) {
	if t.matched != 0 {
		s.matched.Add(t.matched)
	}
	if t.limited != 0 {
		s.limited.Add(t.limited)
	}
	if t.delivered != 0 {
		s.delivered.Add(t.delivered)
	}
	if t.dropped != 0 {
		s.dropped.Add(t.dropped)
	}
}

// take hands one sampled event over: dropped when the buffer is full,
// limited over the cap, copied and sent otherwise.
func (s *Subscription) take(e *relaykit.Event, o Outcome, now *int64, t *tally) {
	if len(s.ch) == cap(s.ch) {
		t.dropped++
		return
	}
	if s.maxPerSecond > 0 && !s.allow(now) {
		t.limited++
		return
	}
	select {
	case s.ch <- Observation{Point: s.point.name, Outcome: o, Event: e.Clone()}:
		t.delivered++
	default:
		// Another publisher filled the last slot.
		t.dropped++
	}
}

// allow counts one event against the cap's window and reports whether it
// is within the cap.
func (s *Subscription) allow(now *int64) bool {
	if *now == 0 {
		*now = time.Now().UnixNano()
	}
	ws := s.winStart.Load()
	if d := *now - ws; d >= int64(time.Second) || d < 0 {
		if s.winStart.CompareAndSwap(ws, *now) {
			s.winCount.Store(0)
		}
	}
	return s.winCount.Add(1) <= s.maxPerSecond
}
