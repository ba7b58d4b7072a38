package pipeline_test

import (
	"context"
	"fmt"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
)

// printer is a sink that prints what it receives.
type printer string

func (p printer) Send(_ context.Context, batch []relaykit.Event) error {
	for i := range batch {
		e := &batch[i]
		fmt.Printf("%s: %s", p, e.Raw)
		for _, f := range e.Fields {
			fmt.Printf(" %s=%s", f.Key, f.Value)
		}
		fmt.Println()
	}
	return nil
}

// A route table: a non-final audit route takes a copy of every sshd failure,
// errors of any case go to an alert sink after masking card numbers, and
// JSON messages are parsed; the rest goes to the archive.
func Example() {
	mask, err := pipeline.Mask("", `\b\d{4}-\d{4}-\d{4}-\d{4}\b`, "XXXX")
	if err != nil {
		panic(err)
	}
	parse, err := pipeline.ParseJSON(pipeline.JSONConfig{})
	if err != nil {
		panic(err)
	}
	routes := []pipeline.Route{
		{
			Name:     "audit",
			Filter:   `sshd\[\d+\]: Failed password`,
			Pipeline: pipeline.NewPipeline(pipeline.Set("index", "security")),
			Sinks:    []relaykit.Sink{printer("audit")},
		},
		{
			Name:     "alerts",
			Filter:   `(?i)error|fatal|panic`,
			Pipeline: pipeline.NewPipeline(mask),
			Sinks:    []relaykit.Sink{printer("alerts")},
			Final:    true,
		},
		{
			Name:     "json",
			Filter:   `^\{`,
			Pipeline: pipeline.NewPipeline(parse, pipeline.Remove("debug")),
			Sinks:    []relaykit.Sink{printer("json")},
			Final:    true,
		},
	}
	r, err := pipeline.NewRouter(routes, pipeline.Config{Default: printer("archive")})
	if err != nil {
		panic(err)
	}
	lines := []string{
		`sshd[42]: Failed password for root from 192.0.2.7`,
		`app: FATAL card 1234-5678-9012-3456 declined`,
		`{"user":{"id":7,"name":"ann"},"debug":true}`,
		`kernel: eth0 link up`,
	}
	batch := make([]relaykit.Event, len(lines))
	for i, l := range lines {
		batch[i].Raw = []byte(l)
	}
	if err := r.Route(context.Background(), batch); err != nil {
		panic(err)
	}
	st := r.Stats()
	fmt.Println("in:", st.In, "audit:", st.Routes[0].Matched, "alerts:", st.Routes[1].Matched)
	// Output:
	// audit: sshd[42]: Failed password for root from 192.0.2.7
	// alerts: app: FATAL card XXXX declined
	// json: {"user":{"id":7,"name":"ann"},"debug":true} user.id=7 user.name=ann
	// archive: sshd[42]: Failed password for root from 192.0.2.7
	// archive: kernel: eth0 link up
	// in: 4 audit: 1 alerts: 1
}
