package pipelinetest

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
)

// Harness runs a route table the way a route test does: its sinks are
// [Recorder]s, one per name, made on demand by [Harness.Sink]; [Harness.Run]
// routes a batch and then ends every window of the table's reduction
// steps ([pipeline.FlushAll]), so their summaries arrive with it; and
// the drops the table reports through [Harness.OnDrop] are counted by
// reason and route. Build the table with the Harness's sinks and its
// OnDrop hook:
//
//	h := pipelinetest.NewHarness()
//	routes[0].Sinks = []relaykit.Sink{h.Sink("archive")}
//	rt, _ := pipeline.NewRouter(routes, pipeline.Config{Hooks: pipeline.Hooks{OnDrop: h.OnDrop}})
//	_ = h.Run(ctx, rt, events)
//	got := h.Received() // by sink name
//
// A Harness is for one case: a new case takes a new Harness and a new
// table (a reducer's state belongs to its table). It is safe for
// concurrent use by multiple goroutines.
type Harness struct {
	mu    sync.Mutex
	recs  map[string]*Recorder
	drops map[string]int
}

// NewHarness returns a Harness with no recorder and no drop.
func NewHarness() *Harness {
	return &Harness{recs: map[string]*Recorder{}, drops: map[string]int{}}
}

// Sink returns the Recorder named name, made on the first call.
func (h *Harness) Sink(name string) *Recorder {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.recs[name]
	if r == nil {
		r = NewRecorder(name)
		h.recs[name] = r
	}
	return r
}

// OnDrop counts n events dropped for reason at route (empty: before any
// route, such as unrouted); it is a [pipeline.Hooks] OnDrop.
func (h *Harness) OnDrop(route, reason string, n int) {
	if route != "" {
		reason += " at route " + route
	}
	h.mu.Lock()
	h.drops[reason] += n
	h.mu.Unlock()
}

// Run routes events through rt, then ends every window of its reduction
// steps: what the table would send for events, summaries included, is
// then with the recorders. It returns the first error of either call
// (a Recorder never fails; a pipeline function may).
func (h *Harness) Run(ctx context.Context, rt *pipeline.Router, events []relaykit.Event) error {
	err := rt.Route(ctx, events)
	if ferr := rt.Flush(ctx, pipeline.FlushAll); err == nil {
		err = ferr
	}
	return err
}

// Received returns, by sink name, the events each recorder that received
// any was sent, in order (copies the caller owns).
func (h *Harness) Received() map[string][]relaykit.Event {
	h.mu.Lock()
	recs := maps.Clone(h.recs)
	h.mu.Unlock()
	got := map[string][]relaykit.Event{}
	for name, r := range recs {
		if evs := r.Events(); len(evs) > 0 {
			got[name] = evs
		}
	}
	return got
}

// Drops returns the drops counted by OnDrop, by "reason" or "reason at
// route NAME", and the keys in order.
func (h *Harness) Drops() (map[string]int, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := maps.Clone(h.drops)
	return d, slices.Sorted(maps.Keys(d))
}
