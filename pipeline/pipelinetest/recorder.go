package pipelinetest

import (
	"context"
	"sync"

	"github.com/relaykit/relaykit"
)

// Recorder is a [relaykit.Sink] that keeps a copy of every event it is
// sent, in order. Send never fails. The zero value is not usable: create
// one with [NewRecorder].
//
// A Recorder is safe for concurrent use by multiple goroutines.
type Recorder struct {
	name    string
	mu      sync.Mutex
	events  []relaykit.Event
	batches int
}

var _ relaykit.Sink = (*Recorder)(nil)

// NewRecorder returns an empty Recorder named name: the name a
// [pipeline.Router] gives the sink in its stats, hooks and errors.
func NewRecorder(name string) *Recorder { return &Recorder{name: name} }

// Name returns the recorder's name.
func (r *Recorder) Name() string { return r.name }

// Send appends a copy of each event of batch (see [relaykit.Event.Clone])
// and returns nil. It does not retain batch. ctx is not used.
func (r *Recorder) Send(_ context.Context, batch []relaykit.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range batch {
		r.events = append(r.events, batch[i].Clone())
	}
	r.batches++
	return nil
}

// Events returns copies of the events recorded so far, in the order they
// were sent; the caller owns them.
func (r *Recorder) Events() []relaykit.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]relaykit.Event, len(r.events))
	for i := range r.events {
		out[i] = r.events[i].Clone()
	}
	return out
}

// Len returns the number of events recorded so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// Batches returns the number of Send calls so far.
func (r *Recorder) Batches() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.batches
}

// Reset forgets every recorded event and batch.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events, r.batches = nil, 0
}
