package relaykit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/storage"
)

// An agent, as examples/agent builds it, without the network: an input
// hands events to an engine (rings and batch collectors), each batch goes
// through a router with two routes, "alerts" (a copy of each error event,
// to a sink standing in for forward.HEC behind a delivery.Queue) and
// "archive" (every event, to a rotating file). PushWait returns once every
// event of the call is finished (the router's Send returned nil), which is
// when an input that acknowledges answers its sender. Shutdown routes
// what the engine holds, so nothing it accepted is lost.
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
	eng, err := engine.New(engine.Config{Sink: router, Workers: 1, BatchMaxEvents: 500})
	if err != nil {
		panic(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- eng.Run(context.Background()) }()

	// An input: a request of three lines from one sender (its shard keeps
	// them in order), answered once they are finished.
	var request []relaykit.Event
	for _, line := range []string{`{"level":"info","msg":"started"}`, `{"level":"error","msg":"disk full"}`, `{"level":"info","msg":"retrying"}`} {
		request = append(request, relaykit.Event{Host: []byte("web-1"), Raw: []byte(line)})
	}
	in := eng.NewInput("lines")
	if err := in.PushWait(context.Background(), 1, request); err != nil {
		panic(err) // not finished: the sender sends them again
	}
	fmt.Println("answered: 3 lines accepted")

	// On SIGTERM, after the inputs stopped.
	if err := eng.Shutdown(context.Background()); err != nil {
		panic(err)
	}
	if err := <-ran; err != nil {
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
	s := eng.Stats()
	fmt.Printf("received %d, routed %d, events in the archive: %d\n", s.Received, s.Routed, archive.Stats().Events)
	// Output:
	// to HEC: level=error {"level":"error","msg":"disk full"}
	// answered: 3 lines accepted
	// archive:
	// {"level":"info","msg":"started"}
	// {"level":"error","msg":"disk full"}
	// {"level":"info","msg":"retrying"}
	// received 3, routed 3, events in the archive: 3
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
