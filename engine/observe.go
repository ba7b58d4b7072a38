package engine

import "github.com/relaykit/relaykit"

// Observer is shown the events an input's [Producer] hands to the engine,
// after parsing: the input point of a live tap. *tap.Point implements it.
//
// Each [Producer.Push] and [Producer.TryPush] with events calls Active
// once (for a tap point, one atomic load); only when it reports true does
// it stamp the events' receive time and hand them to Publish, before the
// engine takes them (and whether or not it can: a UDP input's events that
// find the ring full are shown all the same).
//
// Publish must not block, modify the events or keep them (or their
// slices) after it returns: copy what must outlive the call
// ([relaykit.Event.Clone]). It is called on the producer's goroutine,
// possibly on several at once.
type Observer interface {
	Active() bool
	Publish(batch []relaykit.Event)
}

// Observe makes o the input's observer; nil removes it. Call it before the
// input's producers push (it is not synchronised with them). Events
// handed over with Push, PushBatch, PushWait and the Owned variants are
// not shown: their callers have the batch at hand.
func (in *Input) Observe(o Observer) { in.obs = o }

// observe shows evs to the input's observer, if it has an active one.
func (in *Input) observe(evs []relaykit.Event) {
	if in.obs != nil && in.obs.Active() {
		in.stamp(evs)
		in.obs.Publish(evs)
	}
}
