package input

import (
	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/tap"
)

// tapInput names an input's tap point, "input:NAME": its batches after
// parsing (HEC and OTLP requests, RELP windows, the events of a stream
// read or of a UDP receive, a Kafka input's records as handed to the
// engine, each generated event: "input:generator").
const tapInput = "input:"

// publishPtrs publishes a batch held as pointers (RELP's window) to p.
// With no subscription it costs one atomic load; with one, the events are
// copied (shallowly: Publish deep-copies those it hands over) into a
// slice for the call.
func publishPtrs(p *tap.Point, evs []*relaykit.Event) {
	if !p.Active() {
		return
	}
	batch := make([]relaykit.Event, len(evs))
	for i, e := range evs {
		batch[i] = *e
	}
	p.Publish(batch)
}
