package pipeline_test

import (
	"context"
	"fmt"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
)

// Suppress collapses a firewall repeating one line: the first event of a
// window passes, the rest become one summary when the window ends. The
// router delivers the summary on Flush, which an engine calls from a
// ticker; the times here are fixed so that the output is.
func ExampleNewSuppress() {
	sup, err := pipeline.NewSuppress(pipeline.SuppressConfig{
		Key:    []string{"host", "_raw"},
		Allow:  1,
		Window: 30 * time.Second,
	})
	if err != nil {
		panic(err)
	}
	r, err := pipeline.NewRouter([]pipeline.Route{{
		Name:     "firewall",
		Pipeline: pipeline.NewPipeline(sup),
		Sinks:    []relaykit.Sink{printer("sentinel")},
		Final:    true,
	}}, pipeline.Config{})
	if err != nil {
		panic(err)
	}
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	batch := make([]relaykit.Event, 5)
	for i := range batch {
		batch[i] = relaykit.Event{
			ReceiveTime: t0 + int64(i)*int64(time.Second),
			Host:        []byte("fw1"),
			Raw:         []byte("DENY tcp 203.0.113.9:4444 -> 10.0.0.5:22"),
		}
	}
	ctx := context.Background()
	if err := r.Route(ctx, batch); err != nil {
		panic(err)
	}
	fmt.Println("-- ticker, 10s later: the window is still open")
	if err := r.Flush(ctx, t0+int64(10*time.Second)); err != nil {
		panic(err)
	}
	fmt.Println("-- ticker, 30s later: the window has ended")
	if err := r.Flush(ctx, t0+int64(30*time.Second)); err != nil {
		panic(err)
	}
	st := r.Stats()
	fmt.Println("in:", st.In, "sent:", st.Routes[0].Out, "reduced:", st.Reduced["suppress"], "produced:", st.Produced["suppress"])
	// Output:
	// sentinel: DENY tcp 203.0.113.9:4444 -> 10.0.0.5:22
	// -- ticker, 10s later: the window is still open
	// -- ticker, 30s later: the window has ended
	// sentinel: DENY tcp 203.0.113.9:4444 -> 10.0.0.5:22 suppressed_count=4 first_seen=2026-05-01T12:00:01.000000000Z last_seen=2026-05-01T12:00:04.000000000Z
	// in: 5 sent: 2 reduced: 4 produced: 1
}

// Aggregate turns accepted flows into one event per source, destination
// and minute with the count and the bytes, as KQL's
// summarize count(), sum(bytes) by src, dst, bin(TimeGenerated, 1m).
// Outside a router, Pipeline.Flush collects the summaries.
func ExampleNewAggregate() {
	agg, err := pipeline.NewAggregate(pipeline.AggregateConfig{
		Key:    []string{"src", "dst"},
		Window: time.Minute,
		Sum:    []string{"bytes"},
		Max:    []string{"bytes"},
	})
	if err != nil {
		panic(err)
	}
	p := pipeline.NewPipeline(agg, pipeline.Set("index", "Flows_CL"))
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	flows := []struct{ src, dst, bytes string }{
		{"10.0.0.5", "192.0.2.1", "1200"},
		{"10.0.0.5", "192.0.2.1", "800"},
		{"10.0.0.7", "192.0.2.1", "60"},
		{"10.0.0.5", "192.0.2.1", "-"}, // not a number: counted, not summed
	}
	for i, f := range flows {
		e := relaykit.Event{ReceiveTime: t0 + int64(i)*int64(time.Second), Raw: []byte("ACCEPT")}
		e.SetFieldString("src", f.src)
		e.SetFieldString("dst", f.dst)
		e.SetFieldString("bytes", f.bytes)
		if keep, _ := p.Run(&e); keep {
			fmt.Println("passed through?", string(e.Raw))
		}
	}
	sums, err := p.Flush(nil, t0+int64(time.Minute))
	if err != nil {
		panic(err)
	}
	for i := range sums {
		e := &sums[i]
		fmt.Printf("%s %s %s\n", e.Index, e.SourceType, e.Raw)
	}
	// Output:
	// Flows_CL relaykit:aggregate src=10.0.0.7 dst=192.0.2.1 count=1 sum_bytes=60 max_bytes=60 first_seen=2026-05-01T12:00:02.000000000Z last_seen=2026-05-01T12:00:02.000000000Z
	// Flows_CL relaykit:aggregate src=10.0.0.5 dst=192.0.2.1 count=3 sum_bytes=2000 max_bytes=1200 nonnumeric_bytes=1 first_seen=2026-05-01T12:00:00.000000000Z last_seen=2026-05-01T12:00:03.000000000Z
}
