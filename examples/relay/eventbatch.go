package main

import (
	"context"
	"sync"

	"github.com/relaykit/relaykit"
)

// Inputs hand events to the rings a read at a time, and the events'
// buffers travel back from the workers a slab at a time:
//
//	input:  take a warm slab; parse the frames of one read into its
//	        events (reusing their buffers); PushBatch them into the ring
//	        of the connection's shard: one claim, one publish, one wake-up
//	        of the worker for the whole read
//	worker: once a batch is routed (sinks do not retain events), copy its
//	        events, buffers and all, into empty slabs and put them back
//
// so the pools are touched once per slab, not once per event, and an
// event's bytes are copied once on the way in (from the read buffer, by
// the parser) and once on the way out (by the sink's encoder).
const slabEvents = 256

// eventSlab is a set of events whose buffers are recycled together.
type eventSlab struct {
	evs [slabEvents]relaykit.Event
	// evs[lo:n] hold recycled buffers, free to fill (not reset: the
	// parser resets); the others are zero.
	lo, n int
}

var (
	// warmSlabs holds slabs of events whose buffers are free to reuse
	// (a new one holds zero events, which allocate on first use).
	warmSlabs = sync.Pool{New: func() any { return &eventSlab{n: slabEvents} }}
	// emptySlabs holds slabs whose events were handed on: the workers
	// fill them with routed events.
	emptySlabs = sync.Pool{New: func() any { return new(eventSlab) }}
)

// recycle returns the buffers of routed events for reuse, a slab at a
// time. An event whose message buffer grew past maxRecycled leaves its
// buffers to the garbage collector.
func recycle(b []relaykit.Event) {
	for len(b) > 0 {
		s := emptySlabs.Get().(*eventSlab)
		k := 0
		for ; k < slabEvents && k < len(b); k++ {
			if cap(b[k].Raw) <= maxRecycled {
				s.evs[k] = b[k]
			} else {
				s.evs[k] = relaykit.Event{}
			}
		}
		s.lo, s.n = 0, k
		warmSlabs.Put(s)
		b = b[k:]
	}
}

// eventBatch gathers the events an input parses from one read and hands
// them to a ring at once. It takes its events from a warm slab: event
// returns the next one (its buffers reused, the content not yet reset:
// the parser resets it), and push hands the events taken since the last
// push to the ring. Between reads (idle) gives the slab's unused events
// back, so a connection waiting for data holds none. An eventBatch belongs
// to one goroutine.
type eventBatch struct {
	d    *dispatcher
	st   *inputStats
	ring int
	slab *eventSlab
	from int // slab.evs[from:next] are parsed and not yet pushed
	next int
	// failed is set once a push failed at the shutdown deadline: what
	// the input read after that is counted, not pushed (see lost).
	failed error
}

func (d *dispatcher) newBatch(shard uint64, st *inputStats) *eventBatch {
	return &eventBatch{d: d, st: st, ring: int(shard % uint64(len(d.rings)))}
}

// event returns the next event to fill. The caller must push when full
// reports true, before taking another.
func (b *eventBatch) event() *relaykit.Event {
	if b.slab == nil || b.next == b.slab.n {
		b.swapSlab()
	}
	e := &b.slab.evs[b.next]
	b.next++
	return e
}

// full reports whether the slab has no event left to fill: push first.
func (b *eventBatch) full() bool { return b.slab != nil && b.next == b.slab.n && b.from < b.next }

// flush pushes what is pending and goes idle: what a stream input does
// before each read, which may wait.
func (b *eventBatch) flush(ctx context.Context) error {
	err := b.push(ctx)
	b.idle()
	return err
}

// pending is the number of events taken and not pushed.
func (b *eventBatch) pending() int { return b.next - b.from }

// swapSlab replaces a slab whose events were all pushed by a warm one.
func (b *eventBatch) swapSlab() {
	b.idle()
	b.slab = warmSlabs.Get().(*eventSlab)
	b.from, b.next = b.slab.lo, b.slab.lo
}

// push hands the pending events to the ring, waiting for room: stream
// inputs get backpressure (TCP flow control) rather than loss. If ctx ends
// (the shutdown deadline) first, the events not accepted are counted as
// received and dropped{shutdown_unqueued}, every later push and lost
// count what they are given the same way, and push returns the error.
func (b *eventBatch) push(ctx context.Context) error {
	if b.failed != nil {
		b.lost(b.pending())
		b.next = b.from
		return b.failed
	}
	if b.next == b.from {
		return nil
	}
	evs := b.slab.evs[b.from:b.next]
	k, err := b.d.PushBatch(ctx, b.ring, evs, b.st)
	b.from += k
	if err != nil {
		b.failed = err
		b.lost(b.next - b.from)
		b.next = b.from // their buffers stay in the slab
		return err
	}
	return nil
}

// tryPush hands the pending events to the ring without waiting, for UDP:
// those the ring has no room for are counted as received and
// dropped{queue_full}.
func (b *eventBatch) tryPush() {
	if b.next == b.from {
		return
	}
	evs := b.slab.evs[b.from:b.next]
	k := b.d.TryPushBatch(b.ring, evs, b.st)
	b.from += k
	b.next = b.from
}

// lost counts n events read but not handed to a ring at the shutdown
// deadline: received, and dropped{shutdown_unqueued}.
func (b *eventBatch) lost(n int) {
	if n > 0 {
		b.st.received.Add(int64(n))
		b.d.ledger.drop(dropUnqueued, int64(n))
	}
}

// idle gives the slab back, its events not taken (and those taken and not
// pushed) to the next user: call it after a push, before waiting for
// data. The next event takes a slab again.
func (b *eventBatch) idle() {
	s := b.slab
	if s == nil {
		return
	}
	b.slab = nil
	clear(s.evs[s.lo:b.from]) // pushed: they belong to the rings now
	s.lo = b.from
	if s.lo < s.n {
		warmSlabs.Put(s)
		return
	}
	s.lo, s.n = 0, 0
	emptySlabs.Put(s)
}

// release ends the batch (the connection's end): see idle.
func (b *eventBatch) release() { b.idle() }
