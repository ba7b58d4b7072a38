package forward_test

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
)

// The settings every HTTP sink shares, and what Send reports: one attempt
// per request, each undelivered run of events classified. A busy
// destination makes the events retryable, with the wait it asked for; an
// event the destination rejects is permanent, and the events after it are
// still sent. A delivery.Queue in front would retry the first, honouring
// the wait, and dead-letter the second.
func ExampleHTTPConfig() {
	var requests atomic.Int32
	splunk := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/services/collector/health" {
			fmt.Fprint(w, `{"text":"HEC is healthy","code":17}`)
			return
		}
		zr, _ := gzip.NewReader(r.Body)
		body, _ := io.ReadAll(zr)
		n := requests.Add(1)
		switch {
		case n == 1: // busy: retryable, after 2 s
			fmt.Printf("request %d: %s -> 503 busy, Retry-After: 2\n", n, body)
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"text":"Server is busy","code":9}`)
		case strings.Contains(string(body), `"bad"`): // HEC indexed the events before the bad one
			fmt.Printf("request %d: %s -> 400 invalid event 1\n", n, body)
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"text":"Invalid data format","code":6,"invalid-event-number":1}`)
		default:
			fmt.Printf("request %d: %s -> 200\n", n, body)
			fmt.Fprint(w, `{"text":"Success","code":0}`)
		}
	}))
	defer splunk.Close()

	hec, err := forward.NewHEC(forward.HECConfig{
		URL:                splunk.URL,
		Token:              "00000000-0000-0000-0000-000000000000",
		DisableHealthCheck: true,
		HTTP: forward.HTTPConfig{
			Name:        "splunk-test",
			Concurrency: 1, // strict order
			Timeout:     10 * time.Second,
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer hec.Close()

	send := func(msgs ...string) {
		batch := make([]relaykit.Event, len(msgs))
		for i, m := range msgs {
			batch[i].Raw = []byte(m)
		}
		err := hec.Send(context.Background(), batch)
		var be *relaykit.BatchError
		if !errors.As(err, &be) {
			fmt.Println("send:", err)
			return
		}
		for _, f := range be.Failed {
			fmt.Printf("undelivered %s: %s, permanent %t, retry after %v\n", batch[f.From].Raw, f.Reason, f.Permanent, f.RetryAfter)
		}
	}
	send("first", "second")
	send("first", "second") // what a queue would do, after the 2 s
	send("good", "bad", "after")

	st := hec.Stats()
	fmt.Println("sent:", st.EventsSent, "requests:", st.Requests,
		"rejected:", st.EventsFailed[relaykit.ReasonRejected])
	// Output:
	// request 1: {"event":"first"}{"event":"second"} -> 503 busy, Retry-After: 2
	// undelivered first: sink_error, permanent false, retry after 2s
	// request 2: {"event":"first"}{"event":"second"} -> 200
	// send: <nil>
	// request 3: {"event":"good"}{"event":"bad"}{"event":"after"} -> 400 invalid event 1
	// request 4: {"event":"after"} -> 200
	// undelivered bad: rejected, permanent true, retry after 0s
	// sent: 4 requests: 4 rejected: 1
}
