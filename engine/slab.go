package engine

import (
	"sync"

	"github.com/relaykit/relaykit"
)

// Inputs hand events to the rings a read at a time, and the events'
// buffers travel back from the workers a slab at a time:
//
//	input:  take a warm slab; parse the frames of one read into its
//	        events (reusing their buffers); push them into the ring of
//	        the connection's shard: one claim, one publish, one wake-up
//	        of the worker for the whole read
//	worker: once a batch is routed (sinks do not retain events), copy its
//	        events, buffers and all, into empty slabs and put them back
//
// so the pools are touched once per slab, not once per event, and an
// event's bytes are copied once on the way in (from the read buffer, by
// the parser) and once on the way out (by the sink's encoder).
const slabEvents = 256

// maxRecycled is the largest message buffer kept for reuse, in bytes, so a
// rare huge event does not pin its memory.
const maxRecycled = 16 << 10

// eventSlab is a set of events whose buffers are recycled together.
type eventSlab struct {
	evs [slabEvents]relaykit.Event
	// evs[lo:n] hold recycled buffers, free to fill (reset by
	// Producer.Event as it hands each out); the others are zero.
	lo, n int
}

var (
	// warmSlabs holds slabs of events whose buffers are free to reuse
	// (a new one holds zero events, which allocate on first use).
	warmSlabs = sync.Pool{New: func() any { return &eventSlab{n: slabEvents} }}
	// emptySlabs holds slabs whose events were handed on: the workers
	// fill them with routed events.
	emptySlabs = sync.Pool{New: func() any { return new(eventSlab) }}
	// warmEvents holds single events with spare capacity (those an input
	// took and did not use); no New: newEvent falls back to a slab.
	warmEvents sync.Pool // *relaykit.Event, reset
	// emptyHolders holds the holders of single events.
	emptyHolders = sync.Pool{New: func() any { return new(relaykit.Event) }}
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

// NewEvent returns an empty event whose buffers are recycled from events
// the engine has routed, for an input to fill and hand over with
// [Input.PushOwned], [Input.TryPushOwned] or [Input.PushOwnedWait], which
// save the copy [Input.Push] makes. An event not handed over goes back
// with [ReleaseEvent]. In steady state it does not allocate.
func NewEvent() *relaykit.Event {
	if h, ok := warmEvents.Get().(*relaykit.Event); ok {
		return h
	}
	h := emptyHolders.Get().(*relaykit.Event)
	s := warmSlabs.Get().(*eventSlab)
	s.n--
	*h = s.evs[s.n]
	s.evs[s.n] = relaykit.Event{}
	if s.n > s.lo {
		warmSlabs.Put(s)
	} else {
		s.lo, s.n = 0, 0
		emptySlabs.Put(s)
	}
	h.Reset()
	return h
}

// ReleaseEvent gives back an event from [NewEvent] that was not handed
// over. h must not be used afterwards.
func ReleaseEvent(h *relaykit.Event) {
	h.Reset()
	warmEvents.Put(h)
}
