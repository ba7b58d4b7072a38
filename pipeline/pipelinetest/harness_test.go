package pipelinetest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/pipeline/pipelinetest"
)

// A Harness routes a batch through a table of recorders, ends the
// windows of its reduction steps (the summary arrives with the batch)
// and counts the drops by reason and route.
func TestHarness(t *testing.T) {
	h := pipelinetest.NewHarness()
	sup, err := pipeline.NewSuppress(pipeline.SuppressConfig{Key: []string{"host"}, Allow: 1})
	require.NoError(t, err)
	drop, err := pipeline.Drop("", "^noise")
	require.NoError(t, err)
	rt, err := pipeline.NewRouter([]pipeline.Route{
		{Name: "web", Field: "host", Filter: "^web", Final: true, Pipeline: pipeline.NewPipeline(drop, sup), Sinks: []relaykit.Sink{h.Sink("archive")}},
	}, pipeline.Config{Hooks: pipeline.Hooks{OnDrop: h.OnDrop}})
	require.NoError(t, err)
	ev := func(host, msg string) relaykit.Event {
		var e relaykit.Event
		e.Host, e.Raw, e.ReceiveTime = []byte(host), []byte(msg), 1
		return e
	}
	require.NoError(t, h.Run(context.Background(), rt, []relaykit.Event{
		ev("web-1", "a"), ev("web-1", "b"), ev("web-1", "c"), ev("web-2", "noise here"), ev("db-1", "x"),
	}))
	got := h.Received()
	require.Len(t, got["archive"], 2, "the first event, then the summary of the two suppressed")
	assert.Empty(t, pipelinetest.CompareEvent(&got["archive"][0], map[string]pipelinetest.Want{"_raw": pipelinetest.Equal("a")}))
	assert.Empty(t, pipelinetest.CompareEvent(&got["archive"][1], map[string]pipelinetest.Want{
		pipeline.FieldSuppressedCount: pipelinetest.Equal("2"), "host": pipelinetest.Equal("web-1")}))
	drops, order := h.Drops()
	assert.Equal(t, map[string]int{"filtered at route web": 1, "unrouted": 1}, drops)
	assert.Equal(t, []string{"filtered at route web", "unrouted"}, order)
	assert.Same(t, h.Sink("archive"), h.Sink("archive"))
}
