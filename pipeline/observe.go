package pipeline

import "github.com/relaykit/relaykit"

// Observer is shown the events a route takes, after the route's pipeline
// and before its sinks: the route point of a live tap. *tap.Point
// implements it.
//
// At the start of each [Router.Route] or [Router.Flush] call the router
// calls Active once per observed route (for a tap point, one atomic
// load); only when it reports true are the route's events gathered (in
// place when they are a run of the batch, else copies of the event
// values, not of their bytes) and handed to Publish, once,
// before the first sink's Send. An observer that is not active costs
// nothing more.
//
// Publish must not block, modify the events or keep them (or their
// slices) after it returns: copy what must outlive the call
// ([relaykit.Event.Clone]). It is called on the goroutine that called
// Route or Flush, possibly on several at once.
type Observer interface {
	Active() bool
	Publish(batch []relaykit.Event)
}

// arm notes, for the call s serves, which observed routes are active.
func (r *Router) arm(s *scratch) {
	s.watching = false
	for _, ri := range r.obs {
		on := r.routes[ri].obs.Active()
		s.watch[ri] = on
		s.watching = s.watching || on
	}
}

// show publishes each active route's gathered events to its observer and
// empties them. Like a sink's lane, a route's events that are a run of
// the caller's batch are shown in place, not copied.
func (r *Router) show(s *scratch, batch []relaykit.Event) {
	for _, ri := range r.obs {
		if seen := s.seen[ri].events(batch); len(seen) > 0 {
			r.routes[ri].obs.Publish(seen)
		}
		s.seen[ri].reset()
	}
	s.watching = false
}
