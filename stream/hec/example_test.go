package hec_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/hec"
	"github.com/relaykit/relaykit/stream/streamhttp"
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

// Served by an http.Server on a stream listener, the handler gets the
// stream inputs' connection limits (here one connection per source
// address, 64 by default; 1024 in all, the longest-idle evicted for a
// newcomer) and, with Config.TLS, their handshake deadline.
// streamhttp.ConnState tells the listener which connections are idle
// between requests, the only ones it may evict.
func Example_streamListener() {
	h, err := hec.New(hec.Config{
		Tokens: []hec.Token{{Name: "apps", Token: "00000000-0000-0000-0000-000000000001"}},
		Sink:   relaykit.SinkFunc(func(context.Context, []relaykit.Event) error { return nil }),
	})
	if err != nil {
		panic(err)
	}
	defer h.Close()
	ln, err := stream.New(stream.Config{Name: "hec", Address: "127.0.0.1:0", MaxConnsPerSource: 1})
	if err != nil {
		panic(err)
	}
	nl := ln.NetListener()
	srv := &http.Server{
		Handler:           h,
		ConnState:         streamhttp.ConnState(nl),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(nl) }()

	// A sender keeps its connection open between requests.
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodPost, "http://"+nl.Addr().String()+"/services/collector/event", strings.NewReader(`{"event":"hello"}`))
	req.Header.Set("Authorization", "Splunk 00000000-0000-0000-0000-000000000001")
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		panic(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(answer))

	// A second connection from the same address is refused: closed at once.
	c, err := net.Dial("tcp", nl.Addr().String())
	if err != nil {
		panic(err)
	}
	_, err = c.Read(make([]byte, 1))
	c.Close()
	fmt.Println("second connection:", err)
	s := ln.Stats()
	fmt.Printf("open=%d refused_per_source=%d\n", s.Open, s.RefusedPerSource)

	// Shutdown closes the listener and the idle connection, which gives
	// its slot back.
	if err := srv.Shutdown(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(<-served, "open:", ln.Stats().Open)
	// Output:
	// 200 {"text":"Success","code":0}
	// second connection: EOF
	// open=1 refused_per_source=1
	// http: Server closed open: 0
}
