package otlp_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/otlp"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/streamhttp"
)

// A receiver mounted in an http.Server takes OTLP/HTTP logs and hands the
// records of each request to a Sink; the sender is answered only after
// the Sink accepted them.
func Example() {
	sink := relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error {
		for i := range batch {
			e := &batch[i]
			method, _ := e.Field("http.method")
			level, _ := e.Field(otlp.FieldSeverityText)
			fmt.Printf("host=%s source=%s level=%s method=%s raw=%q\n", e.Host, e.Source, level, method, e.Raw)
		}
		return nil // accepted: delivered, spooled or dead-lettered
	})
	r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink, Token: "s3cret"})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	srv := httptest.NewServer(r)
	defer srv.Close()

	// What an SDK sends: one record with resource and log attributes.
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("host.name", "web-1")
	rl.Resource().Attributes().PutStr("service.name", "checkout")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetSeverityText("INFO")
	lr.Body().SetStr("order placed")
	lr.Attributes().PutStr("http.method", "POST")
	body, _ := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/logs", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := srv.Client().Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"))
	// Output:
	// host=web-1 source=checkout level=INFO method=POST raw="order placed"
	// 200 application/x-protobuf
}

// The exporter is a Sink: here it sends a syslog event to an OTLP/HTTP
// endpoint (a receiver standing in for any OTLP backend). In a relay it
// sits behind a delivery.Queue, which retries what it reports retryable.
func ExampleExporter() {
	received := relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error {
		for i := range batch {
			e := &batch[i]
			procid, _ := e.Field("procid")
			fmt.Printf("received host=%s app=%s priority=%d procid=%s raw=%q\n", e.Host, e.Source, e.Priority, procid, e.Raw)
		}
		return nil
	})
	r, _ := otlp.NewReceiver(otlp.ReceiverConfig{Sink: received})
	srv := httptest.NewServer(r)
	defer srv.Close()

	x, err := otlp.NewExporter(otlp.ExporterConfig{Endpoint: srv.URL, Protocol: otlp.HTTPProtobuf})
	if err != nil {
		panic(err)
	}
	defer x.Close()
	var e relaykit.Event
	e.Host, e.Source, e.Raw = []byte("fw1"), []byte("sshd"), []byte("Accepted publickey for ada")
	e.SetPriority(4, 6) // auth.info
	e.SetFieldString("procid", "812")
	err = x.Send(context.Background(), []relaykit.Event{e})
	fmt.Println("send:", err, "delivered:", x.Stats().Delivered)
	// Output:
	// received host=fw1 app=sshd priority=38 procid=812 raw="Accepted publickey for ada"
	// send: <nil> delivered: 1
}

// OTLP/HTTP and OTLP/gRPC on stream listeners: each connection is held
// to the listener's limits (per source address and in all) and, with
// Config.TLS, its handshake deadline. streamhttp.ConnState tells the HTTP
// listener which connections are idle between requests, the only ones it
// may evict. The gRPC server gets the receiver's size limit from
// ServerOptions.
func Example_streamListener() {
	sink := relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error {
		fmt.Println("accepted", len(batch), "records")
		return nil
	})
	r, _ := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink})

	httpLn, err := stream.New(stream.Config{Name: "otlp-http", Address: "127.0.0.1:0", MaxConnsPerSource: 16})
	if err != nil {
		panic(err)
	}
	hl := httpLn.NetListener()
	hs := &http.Server{Handler: r, ConnState: streamhttp.ConnState(hl), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	httpDone := make(chan error, 1)
	go func() { httpDone <- hs.Serve(hl) }()

	grpcLn, err := stream.New(stream.Config{Name: "otlp-grpc", Address: "127.0.0.1:0"})
	if err != nil {
		panic(err)
	}
	gl := grpcLn.NetListener()
	gs := grpc.NewServer(r.ServerOptions()...)
	r.RegisterGRPC(gs)
	grpcDone := make(chan error, 1)
	go func() { grpcDone <- gs.Serve(gl) }()

	// An OTLP/HTTP exporter and an OTLP/gRPC exporter send one event each.
	for _, cfg := range []otlp.ExporterConfig{
		{Endpoint: "http://" + hl.Addr().String()},
		{Endpoint: "http://" + gl.Addr().String(), Protocol: otlp.GRPC},
	} {
		x, err := otlp.NewExporter(cfg)
		if err != nil {
			panic(err)
		}
		fmt.Println("send:", x.Send(context.Background(), []relaykit.Event{{Raw: []byte("hello")}}))
		x.Close()
	}

	r.Close() // refuse what comes now (503 / UNAVAILABLE), then stop the servers
	_ = hs.Shutdown(context.Background())
	gs.GracefulStop()
	fmt.Println(<-httpDone, <-grpcDone)
	_ = httpLn.Close()
	_ = grpcLn.Close()
	// Output:
	// accepted 1 records
	// send: <nil>
	// accepted 1 records
	// send: <nil>
	// http: Server closed <nil>
}
