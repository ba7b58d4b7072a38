package forward_test

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
)

func ExampleNewHEC() {
	// A stand-in for Splunk that prints what it receives.
	splunk := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/services/collector/health" {
			fmt.Fprint(w, `{"text":"HEC is healthy","code":17}`)
			return
		}
		zr, _ := gzip.NewReader(r.Body)
		body, _ := io.ReadAll(zr)
		fmt.Printf("%s %s auth=%q\n%s\n", r.Method, r.URL.Path, r.Header.Get("Authorization"), body)
		fmt.Fprint(w, `{"text":"Success","code":0}`)
	}))
	defer splunk.Close()

	hec, err := forward.NewHEC(forward.HECConfig{
		URL:        splunk.URL,
		Token:      "00000000-0000-0000-0000-000000000000",
		SourceType: "syslog", // used when an event has none
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer hec.Close()

	batch := make([]relaykit.Event, 2)
	for i := range batch {
		e := &batch[i]
		e.Time = 1_700_000_000_250_000_000
		e.Host = append(e.Host, "web-1"...)
		e.Raw = fmt.Appendf(e.Raw, "login failed #%d", i)
		e.SetFieldString("user", "root")
	}
	if err := hec.Send(context.Background(), batch); err != nil {
		fmt.Println(err)
	}
	st := hec.Stats()
	fmt.Println("sent:", st.EventsSent, "requests:", st.Requests)
	// Output:
	// POST /services/collector/event auth="Splunk 00000000-0000-0000-0000-000000000000"
	// {"time":1700000000.250,"host":"web-1","sourcetype":"syslog","event":"login failed #0","fields":{"user":"root"}}{"time":1700000000.250,"host":"web-1","sourcetype":"syslog","event":"login failed #1","fields":{"user":"root"}}
	// sent: 2 requests: 1
}
