package engine

import (
	"context"

	"github.com/relaykit/relaykit"
)

// Producer gathers the events an input parses from one read and hands
// them to one worker at once. It takes its events from a slab of recycled
// ones: [Producer.Event] returns the next, reset (empty, as
// [relaykit.Event.Reset] leaves it: no receive time, no fields, its
// buffers kept for reuse), and [Producer.Push] hands the events
// taken since the last push to the worker. Between reads,
// [Producer.Flush] pushes and gives the slab's unused events back, so a
// connection waiting for data holds none. A Producer belongs to one
// goroutine; release it with [Producer.Release].
//
// The shape of a stream input's loop:
//
//	p := in.NewProducer(shard)
//	defer p.Release()
//	for each read { // Flush first: the read may wait
//		p.Flush(ctx)
//		for each frame of the read {
//			ev := p.Event()
//			parse(ev, frame)
//			if p.Full() { p.Push(ctx) }
//		}
//	}
type Producer struct {
	in   *Input
	w    *worker
	slab *eventSlab
	from int // slab.evs[from:next] are taken and not yet pushed
	next int
	// failed is set once a push failed (ctx ended, the engine closed):
	// what the input takes after that is counted, not pushed.
	failed error
}

// NewProducer returns a producer for the worker of shard.
func (in *Input) NewProducer(shard uint64) *Producer {
	return &Producer{in: in, w: in.e.worker(shard)}
}

// Event returns the next event to fill, reset: every field of it is
// empty or zero, whatever the event whose buffers it reuses carried. A
// receive time left zero is stamped from the engine's clock when the
// event is pushed. When [Producer.Full] reports true
// the caller should push before taking another; if it does not, the
// pending events move to a fresh slab (a copy of their headers, not of
// their bytes), so none is ever lost.
func (p *Producer) Event() *relaykit.Event {
	if p.slab == nil || p.next == p.slab.n {
		p.swapSlab()
	}
	e := &p.slab.evs[p.next]
	p.next++
	e.Reset()
	return e
}

// Unget gives back the event the last call to Event returned, unused (an
// input that found the frame invalid after taking its event).
func (p *Producer) Unget() {
	if p.slab != nil && p.next > p.from {
		p.next--
	}
}

// Full reports whether the producer's slab has no event left: push first.
func (p *Producer) Full() bool {
	return p.slab != nil && p.next == p.slab.n && p.from < p.next
}

// Pending returns the number of events taken and not pushed.
func (p *Producer) Pending() int { return p.next - p.from }

// Err returns the error of the push that failed, after which every event
// taken is counted as dropped{shutdown_unqueued} instead of pushed; nil
// before.
func (p *Producer) Err() error { return p.failed }

// swapSlab replaces an exhausted slab by a warm one. Pending events (a
// caller that did not push when Full) move to the front of an empty slab
// by swapping: they keep their buffers, and the old slab gets the empty
// slab's zero events in their place, free to fill.
func (p *Producer) swapSlab() {
	old, k := p.slab, p.next-p.from
	if old == nil || k == 0 {
		p.idle()
		p.slab = warmSlabs.Get().(*eventSlab)
		p.from, p.next = p.slab.lo, p.slab.lo
		return
	}
	s := emptySlabs.Get().(*eventSlab)
	for i := range k {
		s.evs[i], old.evs[p.from+i] = old.evs[p.from+i], s.evs[i]
	}
	s.lo, s.n = 0, slabEvents
	p.next = p.from // old's [from, n) are free now
	p.idle()
	p.slab, p.from, p.next = s, 0, k
}

// Flush pushes what is pending and gives the slab back: what a stream
// input does before each read, which may wait.
func (p *Producer) Flush(ctx context.Context) error {
	err := p.Push(ctx)
	p.idle()
	return err
}

// Push hands the pending events to the worker, waiting for room: stream
// inputs get back-pressure (TCP flow control) rather than loss; the
// producer may route and write the batches they fill on its own goroutine
// (see the package documentation). If ctx ends (the shutdown deadline) or
// the engine closes first, the events not accepted are counted as
// received and dropped{shutdown_unqueued}, every later Push counts what
// it is given the same way, and Push returns the error.
func (p *Producer) Push(ctx context.Context) error {
	if p.failed != nil {
		p.lost(p.Pending())
		p.next = p.from
		return p.failed
	}
	if p.next == p.from {
		return nil
	}
	evs := p.slab.evs[p.from:p.next]
	p.in.observe(evs)
	k, err := p.in.pushBatch(ctx, p.w, evs)
	p.from += k
	if err != nil {
		p.failed = err
		p.lost(p.next - p.from)
		p.next = p.from // their buffers stay in the slab
		return err
	}
	return nil
}

// TryPush hands the pending events to the worker without waiting, for
// inputs that must never wait (UDP): those the ring has no room for are
// counted as received and dropped{queue_full}. It returns how many the
// ring accepted.
func (p *Producer) TryPush() int {
	if p.next == p.from {
		return 0
	}
	evs := p.slab.evs[p.from:p.next]
	p.in.observe(evs)
	k := p.in.tryPushBatch(p.w, evs)
	p.from += k
	p.next = p.from
	return k
}

// Mark returns a mark covering the events this producer pushed so far
// (and everything its worker took before them): see [Mark].
func (p *Producer) Mark() Mark { return Mark{w: p.w, to: p.w.position()} }

// lost counts n events taken but not handed over at the shutdown deadline.
func (p *Producer) lost(n int) {
	if n > 0 {
		p.in.received.Add(int64(n))
		p.in.drop(relaykit.ReasonShutdownUnqueued, n)
	}
}

// idle gives the slab back, its events not taken (and those taken and not
// pushed) to the next user.
func (p *Producer) idle() {
	s := p.slab
	if s == nil {
		return
	}
	p.slab = nil
	clear(s.evs[s.lo:p.from]) // pushed: they belong to the workers now
	s.lo = p.from
	if s.lo < s.n {
		warmSlabs.Put(s)
		return
	}
	s.lo, s.n = 0, 0
	emptySlabs.Put(s)
}

// Release ends the producer (the connection's end): pending events not
// pushed are given back unused. The producer may be used again after it.
func (p *Producer) Release() { p.idle() }
