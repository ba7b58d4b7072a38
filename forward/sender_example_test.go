package forward_test

import (
	"compress/gzip"
	"context"
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

// The delivery settings every HTTP sink shares: a busy destination is
// retried with backoff, an event the destination rejects goes to the failure
// handler with its reason, and the events around it are still delivered.
// Stats count it all.
func ExampleDeliveryConfig() {
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
		case n == 1: // busy: retryable
			fmt.Printf("request %d: %s -> 503 busy\n", n, body)
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
		URL:   splunk.URL,
		Token: "00000000-0000-0000-0000-000000000000",
		Delivery: forward.DeliveryConfig{
			Name:        "splunk-test",
			Concurrency: 1, // strict order
			Retry:       forward.RetryConfig{MaxAttempts: 5, InitialBackoff: 10 * time.Millisecond},
			OnFailure: func(_ context.Context, f forward.Failure) {
				// f.Events are valid only during this call: spill or copy them here.
				for i := range f.Events {
					fmt.Printf("failed (%s) to %s: %s\n", f.Reason, f.Destination, f.Events[i].Raw)
				}
			},
			Hooks: forward.Hooks{
				OnRetry: func(dest string, attempt int, _ time.Duration) {
					fmt.Printf("retry %s after attempt %d\n", dest, attempt)
				},
			},
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
		// nil: every event was delivered or handed to OnFailure.
		fmt.Println("send:", hec.Send(context.Background(), batch))
	}
	send("first", "second")
	send("good", "bad", "after")

	st := hec.Stats()
	fmt.Println("sent:", st.EventsSent, "requests:", st.Requests, "retries:", st.Retries,
		"rejected:", st.EventsFailed[forward.ReasonRejected])
	// Output:
	// request 1: {"event":"first"}{"event":"second"} -> 503 busy
	// retry splunk-test after attempt 1
	// request 2: {"event":"first"}{"event":"second"} -> 200
	// send: <nil>
	// request 3: {"event":"good"}{"event":"bad"}{"event":"after"} -> 400 invalid event 1
	// failed (rejected) to splunk-test: bad
	// request 4: {"event":"after"} -> 200
	// send: <nil>
	// sent: 4 requests: 4 retries: 1 rejected: 1
}
