package tap_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/tap"
)

// A subscriber watches the failed events of a destination point, while
// the data path publishes every batch it sends.
func Example() {
	var reg tap.Registry
	dest := reg.Point("destination:hec")

	sub, err := dest.Subscribe(tap.SubscribeConfig{Filter: "sshd", Buffer: 16})
	if err != nil {
		panic(err)
	}
	defer sub.Close()

	batch := make([]relaykit.Event, 3)
	for i, msg := range []string{"sshd: Accepted publickey", "cron: job done", "sshd: Failed password"} {
		batch[i].Host = []byte("web-1")
		batch[i].Raw = []byte(msg)
	}
	// The destination refused the third event.
	sendErr := &relaykit.BatchError{Failed: []relaykit.FailedRange{
		{From: 2, To: 3, Permanent: true, Reason: relaykit.ReasonRejected},
	}}
	dest.PublishResult(batch, sendErr)

	for range 2 {
		o := <-sub.C()
		fmt.Printf("%s %s %s: %s\n", o.Point, o.Outcome.Status, o.Outcome.Reason, o.Event.Raw)
	}
	st := sub.Stats()
	fmt.Println("matched", st.Matched, "delivered", st.Delivered, "dropped", st.Dropped)
	// Output:
	// destination:hec delivered : sshd: Accepted publickey
	// destination:hec failed rejected: sshd: Failed password
	// matched 2 delivered 2 dropped 0
}

// The Handler streams a point's events as NDJSON until limit events.
func ExampleHandler() {
	var reg tap.Registry
	in := reg.Point("input:syslog")
	h, err := tap.NewHandler(&reg, tap.HandlerConfig{Token: "secret"})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodGet, srv.URL+"?at=input:syslog&filter=error&limit=1", nil)
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := srv.Client().Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()

	// The headers arrived: the subscription is open.
	batch := []relaykit.Event{{Host: []byte("fw"), Raw: []byte("all good")}, {Host: []byte("fw"), Raw: []byte("disk error")}}
	in.Publish(batch)
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(string(body))
	// Output:
	// {"point":"input:syslog","host":"fw","message":"disk error"}
}
