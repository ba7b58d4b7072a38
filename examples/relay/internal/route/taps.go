package route

import (
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/tap"
)

// tapRoute names a route's tap point: "route:NAME", the events the route
// took, after its pipeline and before its destinations.
const TapRoute = "route:"

// A tap point is what the route table and the engine's producers report
// to: one atomic load per batch while nobody subscribes.
var (
	_ pipeline.Observer = (*tap.Point)(nil)
	_ engine.Observer   = (*tap.Point)(nil)
)

// routePoint returns the tap point of the route named name in taps, or nil
// (no observer) when taps is nil.
func routePoint(taps *tap.Registry, name string) pipeline.Observer {
	if taps == nil {
		return nil
	}
	return taps.Point(TapRoute + name)
}
