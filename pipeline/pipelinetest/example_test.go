package pipelinetest_test

import (
	"context"
	"fmt"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/pipeline/pipelinetest"
)

// A router built with Recorders in place of its sinks shows where each
// event went and what it looked like there.
func Example() {
	siem, archive := pipelinetest.NewRecorder("siem"), pipelinetest.NewRecorder("archive")
	mask, _ := pipeline.Mask("", `\d{4}-\d{4}`, "[card]")
	rt, err := pipeline.NewRouter([]pipeline.Route{
		{Name: "auth", Field: "app", Filter: "^sshd$", Pipeline: pipeline.NewPipeline(mask), Sinks: []relaykit.Sink{siem}},
		{Name: "all", Final: true, Sinks: []relaykit.Sink{archive}},
	}, pipeline.Config{})
	if err != nil {
		panic(err)
	}
	var ev relaykit.Event
	ev.Raw = []byte("login with 1234-5678")
	ev.SetFieldString("app", "sshd")
	_ = rt.Route(context.Background(), []relaykit.Event{ev})

	want := map[string]pipelinetest.Want{
		"_raw":  pipelinetest.Equal("login with [card]"),
		"app":   pipelinetest.Equal("sshd"),
		"user":  pipelinetest.Absent(),
		"index": pipelinetest.Equal("security"),
	}
	fmt.Println("siem:", siem.Len(), "archive:", archive.Len())
	for _, m := range pipelinetest.CompareEvent(&siem.Events()[0], want) {
		fmt.Println(m)
	}
	// Output:
	// siem: 1 archive: 1
	// index: want "security", got absent
}
