package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
	"github.com/relaykit/relaykit/pipeline"
)

// A destination that is down when the batches arrive: Send returns at
// once (each batch is on disk), and the backlog is delivered in order once
// the destination answers again.
func Example() {
	dir, _ := os.MkdirTemp("", "delivery")
	defer os.RemoveAll(dir)
	var mu sync.Mutex
	down := true
	dest := relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error {
		mu.Lock()
		defer mu.Unlock()
		if down {
			return errors.New("HTTP 503")
		}
		for _, e := range batch {
			fmt.Println("delivered", string(e.Raw))
		}
		return nil
	})
	q, err := delivery.New(dest, delivery.Config{Name: "siem", Dir: dir,
		RetryBudget: 200 * time.Millisecond, ProbeInterval: 100 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	go q.Run(ctx) //nolint:errcheck // ends with Close
	for _, msg := range []string{"first", "second", "third"} {
		if err := q.Send(ctx, []relaykit.Event{{Raw: []byte(msg)}}); err != nil {
			fmt.Println(err)
		}
	}
	mu.Lock()
	down = false // the destination is back
	mu.Unlock()

	stop, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := q.Close(stop); err != nil { // delivers the backlog, then stops
		fmt.Println(err)
	}
	st := q.Stats()
	fmt.Println("delivered", st.Delivered, "pending", st.Pending)
	// Output:
	// delivered first
	// delivered second
	// delivered third
	// delivered 3 pending 0
}

// A Queue in front of Splunk HEC, in a route: the router's Send returns
// as soon as the batch is on disk, and an outage of HEC costs nothing.
// The forward sink makes one attempt per request and reports what it did
// not deliver to the Queue, which retries (never sooner than HEC asked),
// spools or dead-letters exactly the events concerned.
func Example_route() {
	dir, _ := os.MkdirTemp("", "delivery")
	defer os.RemoveAll(dir)
	splunk, _ := forwardtest.StartHECServer(forwardtest.HECServerConfig{}) // a stand-in for Splunk
	defer splunk.Close()

	hec, err := forward.NewHEC(forward.HECConfig{URL: splunk.URL, Token: splunk.Token(), SourceType: "app"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer hec.Close()
	q, err := delivery.New(hec, delivery.Config{Name: "splunk", Dir: filepath.Join(dir, "splunk")})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	go q.Run(ctx) //nolint:errcheck // ends with Close
	router, _ := pipeline.NewRouter([]pipeline.Route{
		{Name: "all", Sinks: []relaykit.Sink{q}},
	}, pipeline.Config{})

	batch := []relaykit.Event{{Raw: []byte("user login")}, {Raw: []byte("user logout")}}
	if err := router.Route(ctx, batch); err != nil { // nil: on disk, will be delivered
		fmt.Println(err)
	}
	stop, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_ = q.Close(stop)
	fmt.Println(splunk.Messages())
	// Output:
	// [user login user logout]
}

// Mode Memory: no spool; Send delivers on its caller's goroutine and
// returns once the batch is delivered, retrying while the destination
// fails (here twice, the second time asking for a 20 ms wait), and
// dead-letters what the destination refuses permanently.
func Example_memory() {
	attempts := 0
	dest := relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error {
		attempts++
		switch attempts {
		case 1:
			return errors.New("connection refused") // retryable, as any plain error
		case 2:
			return &relaykit.BatchError{Failed: []relaykit.FailedRange{{From: 0, To: len(batch),
				RetryAfter: 20 * time.Millisecond, Reason: relaykit.ReasonSinkError, Err: errors.New("HTTP 429")}}}
		}
		for i, e := range batch {
			if string(e.Raw) == "bad" { // refused as invalid: permanent
				return &relaykit.BatchError{Failed: []relaykit.FailedRange{{From: i, To: i + 1, Permanent: true,
					Reason: relaykit.ReasonRejected, Err: errors.New("HTTP 400")}}}
			}
		}
		fmt.Println("delivered", len(batch), "events")
		return nil
	})
	q, err := delivery.New(dest, delivery.Config{Name: "archive", Mode: delivery.Memory,
		InitialBackoff: time.Millisecond,
		DeadLetter: func(_ context.Context, evs []relaykit.Event, reason string, cause error) error {
			fmt.Printf("dead letter: %d event(s) %s: %v\n", len(evs), reason, cause)
			return nil
		}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer q.Close(context.Background())
	ctx := context.Background()
	fmt.Println(q.Send(ctx, []relaykit.Event{{Raw: []byte("login")}, {Raw: []byte("logout")}}))
	fmt.Println(q.Send(ctx, []relaykit.Event{{Raw: []byte("bad")}}))
	st := q.Stats()
	fmt.Println("attempts", st.Attempts, "throttled", st.Throttled, "delivered", st.Delivered, "dead-lettered", st.DeadLettered)
	// Output:
	// delivered 2 events
	// <nil>
	// dead letter: 1 event(s) rejected: HTTP 400
	// <nil>
	// attempts 4 throttled 1 delivered 2 dead-lettered 1
}
