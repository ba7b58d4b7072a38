package hec_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/stream/hec"
)

// A handler mounted in an http.Server receives HEC requests and hands the
// events of each to a Sink; the sender is answered Success only after the
// Sink accepted them. TLS would be the server's (ListenAndServeTLS).
func Example() {
	sink := relaykit.SinkFunc(func(ctx context.Context, batch []relaykit.Event) error {
		req, _ := hec.FromContext(ctx)
		for i := range batch {
			e := &batch[i]
			fmt.Printf("token=%s route=%s host=%s index=%s time_ms=%d raw=%q\n",
				req.Token, req.Route, e.Host, e.Index, e.Time/1e6, e.Raw)
		}
		return nil // accepted: delivered, spooled or dead-lettered
	})
	h, err := hec.New(hec.Config{
		Tokens: []hec.Token{{Name: "apps", Token: "00000000-0000-0000-0000-000000000001", Index: "main", Route: "sentinel"}},
		Sink:   sink,
	})
	if err != nil {
		panic(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	body := `{"time":1700000000.25,"host":"web-1","event":"GET /index.html 200"}{"event":"second","index":"audit"}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/services/collector/event", strings.NewReader(body))
	req.Header.Set("Authorization", "Splunk 00000000-0000-0000-0000-000000000001")
	resp, err := srv.Client().Do(req)
	if err != nil {
		panic(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(answer))
	// Output:
	// token=apps route=sentinel host=web-1 index=main time_ms=1700000000250 raw="GET /index.html 200"
	// token=apps route=sentinel host= index=audit time_ms=0 raw="second"
	// 200 {"text":"Success","code":0}
}
