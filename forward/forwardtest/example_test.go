package forwardtest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
)

// exampleT stands in for the *testing.T of a test, so that this example can
// run as documentation: in a test, pass t itself. It provides the methods
// the servers use (Helper, Cleanup, and Fatalf on a setup error) and runs
// the cleanups when the example ends.
type exampleT struct {
	testing.TB
	cleanups []func()
}

func (t *exampleT) Helper()                        {}
func (t *exampleT) Cleanup(f func())               { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
func (t *exampleT) done() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// A test of an HEC sink against the fake Splunk: the server is busy for the
// first request; the sink reports it retryable, a memory-only
// delivery.Queue in front retries, and the test checks exactly which events
// Splunk indexed and how many requests it took.
func Example() {
	t := &exampleT{}
	defer t.done()

	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{Ack: true})
	srv.Busy(1) // the next data request gets 503, code 9 "Server is busy"

	hec, err := forward.NewHEC(forward.HECConfig{
		URL:   srv.URL,
		Token: srv.Token(),
		Ack:   true, // the server has indexer acknowledgement on, as the token would
		// Poll quickly: a test has no time to wait for the default 1 s
		// between polls.
		AckPollInterval: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer hec.Close()
	q, err := delivery.New(hec, delivery.Config{Mode: delivery.Memory}) // retries on the caller's goroutine
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer q.Close(context.Background())

	batch := make([]relaykit.Event, 3)
	for i := range batch {
		batch[i].Raw = fmt.Appendf(nil, "event %d", i)
		batch[i].Index = []byte("main")
	}
	if err := q.Send(context.Background(), batch); err != nil {
		t.Fatalf("%v", err)
	}

	fmt.Println("indexed:", srv.Messages())
	fmt.Println("data requests:", srv.Requests())
	e := srv.Events()[0]
	fmt.Printf("first event: index=%s endpoint=%s channel set=%t\n", e.Index, e.Endpoint, e.Channel != "")
	// Output:
	// indexed: [event 0 event 1 event 2]
	// data requests: 2
	// first event: index=main endpoint=event channel set=true
}
