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

// Reloading: build a new Router and swap it in; batches already running
// finish on the old one, with no lock on the routing path.
func ExampleSwapper() {
	build := func(filter string) *pipeline.Router {
		r, err := pipeline.NewRouter([]pipeline.Route{
			{Name: "alerts", Filter: filter, Sinks: []relaykit.Sink{printer("alerts")}, Final: true},
		}, pipeline.Config{})
		if err != nil {
			panic(err)
		}
		return r
	}
	sw := pipeline.NewSwapper(build(`(?i)fatal`))
	batch := []relaykit.Event{{Raw: []byte("FATAL: disk full")}, {Raw: []byte("warning: disk 90% full")}}
	_ = sw.Route(context.Background(), batch)

	old := sw.Swap(build(`(?i)fatal|warning`))
	fmt.Println("old router saw", old.Stats().In, "events, routed", old.Stats().Routes[0].Out)
	_ = sw.Route(context.Background(), batch)
	// Output:
	// alerts: FATAL: disk full
	// old router saw 2 events, routed 1
	// alerts: FATAL: disk full
	// alerts: warning: disk 90% full
}

// ParseJSON flattens nested objects into dotted field names.
func ExampleParseJSON() {
	parse, err := pipeline.ParseJSON(pipeline.JSONConfig{Prefix: "j."})
	if err != nil {
		panic(err)
	}
	e := relaykit.Event{Raw: []byte(`{"level":"warn","http":{"status":503,"path":"/api"},"tags":["a","b"]}`)}
	if _, err := parse.Apply(&e); err != nil {
		panic(err)
	}
	for _, f := range e.Fields {
		fmt.Printf("%s=%s\n", f.Key, f.Value)
	}
	// Output:
	// j.level=warn
	// j.http.status=503
	// j.http.path=/api
	// j.tags=["a","b"]
}
