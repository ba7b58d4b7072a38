package relaykit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/batch"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/ringbuffer"
	"github.com/relaykit/relaykit/storage"
)

// An agent, as examples/agent builds it, without the network: producers
// push events into a ring; Collector.Pump moves them into a batch
// collector; each batch goes through a router with two routes, "alerts"
// (a copy of each error event, to a sink standing in for forward.HEC) and
// "archive" (every event, to a rotating file). Cancelling Pump's context
// is the shutdown: the ring is closed and drained and the last batch
// flushed, so nothing the ring accepted is lost.
func Example() {
	dir, _ := os.MkdirTemp("", "agent")
	defer os.RemoveAll(dir)

	hec := relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error {
		for i := range batch {
			level, _ := batch[i].Field("level")
			fmt.Printf("to HEC: level=%s %s\n", level, batch[i].Raw)
		}
		return nil
	})
	archive, err := storage.NewArchive(storage.ArchiveConfig{
		Writer: storage.Config{Dir: dir, Layout: "agent-2006-01-02.log"},
	})
	if err != nil {
		panic(err)
	}
	parse, _ := pipeline.ParseJSON(pipeline.JSONConfig{})
	router, err := pipeline.NewRouter([]pipeline.Route{
		{Name: "alerts", Filter: `"level":"error"`, Pipeline: pipeline.NewPipeline(parse), Sinks: []relaykit.Sink{hec}},
		{Name: "archive", Final: true, Sinks: []relaykit.Sink{archive}},
	}, pipeline.Config{})
	if err != nil {
		panic(err)
	}
	coll, err := batch.NewCollector(batch.Config[relaykit.Event]{MaxEvents: 500, MaxWait: time.Minute}, router.Route)
	if err != nil {
		panic(err)
	}
	ring, err := ringbuffer.NewMPSC[relaykit.Event](1024)
	if err != nil {
		panic(err)
	}
	shutdown, stop := context.WithCancel(context.Background())
	pumped := make(chan error, 1)
	go func() { pumped <- coll.Pump(shutdown, ring) }()

	// An input: one event per line, pushed into the ring.
	for _, line := range []string{`{"level":"info","msg":"started"}`, `{"level":"error","msg":"disk full"}`, `{"level":"info","msg":"retrying"}`} {
		if err := ring.Push(context.Background(), relaykit.Event{Host: []byte("web-1"), Raw: []byte(line)}); err != nil {
			panic(err)
		}
	}

	stop() // on SIGTERM, after the inputs stopped
	if err := <-pumped; err != nil {
		panic(err)
	}
	if err := archive.Close(); err != nil {
		panic(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "agent-*.log"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		fmt.Printf("archive:\n%s", b)
	}
	fmt.Printf("ring closed: %v, events in the archive: %d\n", ring.Closed(), archive.Stats().Events)
	// Output:
	// to HEC: level=error {"level":"error","msg":"disk full"}
	// archive:
	// {"level":"info","msg":"started"}
	// {"level":"error","msg":"disk full"}
	// {"level":"info","msg":"retrying"}
	// ring closed: true, events in the archive: 3
}

// An Event is a reusable record; a Sink accepts a batch of them.
func ExampleEvent() {
	// A Sink that prints what it receives; it copies nothing, so it needs
	// nothing once Send returns.
	sink := relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error {
		for i := range batch {
			e := &batch[i]
			user, _ := e.Field("user")
			sev, _ := e.Severity()
			fmt.Printf("%s %s severity=%d user=%s: %s\n", e.Host, e.Source, sev, user, e.Raw)
		}
		return nil
	})

	batch := make([]relaykit.Event, 1)
	e := &batch[0]
	e.Host = append(e.Host, "web-1"...)
	e.Source = append(e.Source, "sshd"...)
	e.Raw = append(e.Raw, "Failed password for root"...)
	e.SetPriority(4, 6) // auth.info
	e.SetFieldString("user", "root")

	if err := sink.Send(context.Background(), batch); err != nil {
		fmt.Println(err)
	}

	// Reuse the event for the next record without allocating.
	e.Reset()
	e.Raw = append(e.Raw, "next"...)
	fmt.Println(len(e.Fields), string(e.Raw))
	// Output:
	// web-1 sshd severity=6 user=root: Failed password for root
	// 0 next
}
