package pipeline_test

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
)

// observer records what a route shows it, and how often it was asked.
type observer struct {
	on      atomic.Bool
	asked   atomic.Int64
	batches [][]relaykit.Event
	sinkRan *recorder // the route's sink: Publish must come first
	before  []int     // the sink's Send count at each Publish
}

func (o *observer) Active() bool { o.asked.Add(1); return o.on.Load() }

func (o *observer) Publish(b []relaykit.Event) {
	cp := make([]relaykit.Event, len(b))
	for i := range b {
		cp[i] = b[i].Clone()
	}
	o.batches = append(o.batches, cp)
	if o.sinkRan != nil {
		o.before = append(o.before, o.sinkRan.sends())
	}
}

func (o *observer) raws() []string {
	var out []string
	for _, b := range o.batches {
		for i := range b {
			out = append(out, string(b[i].Raw))
		}
	}
	return out
}

// An observed route shows its observer, once per call and before its
// sinks, the events it took after its pipeline: a non-final route's
// copies with its step applied, not the events other routes took, not
// those its pipeline dropped; an inactive observer sees nothing.
func TestRouteObserver(t *testing.T) {
	sink, other := &recorder{}, &recorder{}
	audit := &observer{sinkRan: sink}
	rest := &observer{}
	drop, err := pipeline.Drop("", "debug")
	require.NoError(t, err)
	r, err := pipeline.NewRouter([]pipeline.Route{
		{Name: "audit", Filter: "sshd", Pipeline: pipeline.NewPipeline(pipeline.Set("index", "security"), drop),
			Sinks: []relaykit.Sink{sink}, Observer: audit},
		{Name: "rest", Final: true, Sinks: []relaykit.Sink{other}, Observer: rest},
	}, pipeline.Config{})
	require.NoError(t, err)

	batch := batchOf("sshd login", "cron job", "sshd debug noise", "sshd logout")
	require.NoError(t, r.Route(t.Context(), batch))
	assert.Empty(t, audit.batches, "inactive: nothing gathered")
	assert.Equal(t, int64(1), audit.asked.Load(), "one Active call per Route call")

	audit.on.Store(true)
	require.NoError(t, r.Route(t.Context(), batchOf("sshd login", "cron job", "sshd debug noise", "sshd logout")))
	require.Len(t, audit.batches, 1)
	assert.Equal(t, []string{"sshd login", "sshd logout"}, audit.raws())
	for _, e := range audit.batches[0] {
		assert.Equal(t, "security", string(e.Index), "after the route's pipeline")
	}
	assert.Equal(t, []int{1}, audit.before, "published before the sink's second Send")
	assert.Empty(t, rest.batches)
	assert.Len(t, other.raws(), 8, "the final route still gets every event")

	// A call with nothing for the route publishes nothing.
	require.NoError(t, r.Route(t.Context(), batchOf("cron job")))
	assert.Len(t, audit.batches, 1)
}

// With observers configured but none active, routing allocates nothing,
// as without observers; an active one costs only its own copies here.
func TestRouteObserverDoesNotAllocate(t *testing.T) {
	skipIfRace(t)
	sink := &countSink{}
	routes := benchRoutes(sink)
	obs := &countObserver{}
	for i := range routes {
		routes[i].Observer = obs
	}
	r, err := pipeline.NewRouter(routes, pipeline.Config{Default: sink})
	require.NoError(t, err)
	batch := make([]relaykit.Event, 0, 64)
	for _, l := range realLines(rand.New(rand.NewPCG(7, 8)), 64) {
		batch = append(batch, relaykit.Event{Raw: l})
	}
	ctx := t.Context()
	require.NoError(t, r.Route(ctx, batch))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = r.Route(ctx, batch) }))
	assert.Zero(t, obs.events.Load())

	obs.on.Store(true)
	require.NoError(t, r.Route(ctx, batch)) // grow the gathering slices
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = r.Route(ctx, batch) }))
	assert.Positive(t, obs.events.Load())
}

type countObserver struct {
	on     atomic.Bool
	events atomic.Int64
}

func (c *countObserver) Active() bool                   { return c.on.Load() }
func (c *countObserver) Publish(batch []relaykit.Event) { c.events.Add(int64(len(batch))) }
