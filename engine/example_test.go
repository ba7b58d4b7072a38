package engine_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
)

// printer is a Sink that prints each batch.
type printer struct{ mu sync.Mutex }

func (p *printer) Send(_ context.Context, batch []relaykit.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range batch {
		fmt.Printf("routed %s %s\n", batch[i].Host, batch[i].Raw)
	}
	return nil
}

// An input that acknowledges (a HEC receiver, RELP) pushes a request's
// events and answers its sender only once the Sink took every one of them.
func Example() {
	e, err := engine.New(engine.Config{Sink: &printer{}, Workers: 2})
	if err != nil {
		panic(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.Run(context.Background()) }()

	in := e.NewInput("hec")
	request := []relaykit.Event{
		{Host: []byte("web-1"), Raw: []byte("GET /")},
		{Host: []byte("web-1"), Raw: []byte("GET /favicon.ico")},
	}
	// The shard keeps one sender's requests in order, on one worker.
	if err := in.PushWait(context.Background(), 42, request); err != nil {
		fmt.Println("not acknowledged:", err) // the sender sends again
		return
	}
	fmt.Println("acknowledged")

	if err := e.Shutdown(context.Background()); err != nil {
		panic(err)
	}
	<-done
	s := e.Stats()
	fmt.Printf("received %d, routed %d\n", s.Received, s.Routed)
	// Output:
	// routed web-1 GET /
	// routed web-1 GET /favicon.ico
	// acknowledged
	// received 2, routed 2
}
