package main

// The OTLP helpers of scenario o:
//
//	tools otlpsend -addr A -proto http|grpc -duration D   OTLP export requests of 100 log records
//	          [-conns N] [-records 100] [-token T]        (gzip), one in flight per connection, as
//	                                                      fast as answered; counts records answered OK
//	tools otelcol -http A -grpc A -count A                the OpenTelemetry Collector's OTLP receiver
//	                                                      (otlpreceiver) into a consumer that counts
//	                                                      records (what a nop exporter does); GET /count
//
// otelcol is the Collector's own receiver code, not a whole otelcorecol: no
// pipeline graph, queue or batch processor around it, so it is the least
// work a Collector does for the same requests.

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	grpcgzip "google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/metadata"
)

// otlpRequest is one export request of n records, of the shape an SDK
// sends: one resource (host, service), one scope, records with a body,
// severity, timestamps and four attributes.
func otlpRequest(b, n int) plogotlp.ExportRequest {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	ra := rl.Resource().Attributes()
	ra.PutStr("host.name", fmt.Sprintf("web-%02d", b))
	ra.PutStr("service.name", "checkout")
	ra.PutStr("deployment.environment", "prod")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("bench")
	for i := range n {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)))
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
		lr.Body().SetStr(fmt.Sprintf("GET /api/v1/items/%d?page=%d 200 5123 in %dms", b*1000+i, i%7, i%50))
		a := lr.Attributes()
		a.PutStr("http.method", "GET")
		a.PutInt("http.status_code", 200)
		a.PutStr("client.address", fmt.Sprintf("10.%d.%d.7", b, i%250))
		a.PutDouble("duration_ms", float64(i%50)+0.25)
	}
	return plogotlp.NewExportRequestFromLogs(ld)
}

func otlpsend(args []string) {
	fs := flag.NewFlagSet("otlpsend", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:4318", "OTLP/HTTP or OTLP/gRPC address")
	proto := fs.String("proto", "http", "http (protobuf, gzip) or grpc (gzip)")
	token := fs.String("token", "", "bearer token")
	dur := fs.Duration("duration", 10*time.Second, "how long to send")
	conns := fs.Int("conns", 4, "connections, one request in flight on each")
	records := fs.Int("records", 100, "log records per request")
	_ = fs.Parse(args)

	// A few distinct requests, encoded (and for HTTP compressed) once:
	// the sender's CPU stays low.
	reqs := make([]plogotlp.ExportRequest, 16)
	bodies := make([][]byte, len(reqs))
	for b := range reqs {
		reqs[b] = otlpRequest(b, *records)
		raw, err := reqs[b].MarshalProto()
		if err != nil {
			log.Fatal(err)
		}
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		_, _ = zw.Write(raw)
		_ = zw.Close()
		bodies[b] = gz.Bytes()
	}
	var send func(c, i int) bool
	switch *proto {
	case "http":
		tr := &http.Transport{MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns}
		cl := &http.Client{Transport: tr, Timeout: 60 * time.Second}
		send = func(_, i int) bool {
			req, _ := http.NewRequest(http.MethodPost, "http://"+*addr+"/v1/logs", bytes.NewReader(bodies[i%len(bodies)]))
			req.Header.Set("Content-Type", "application/x-protobuf")
			req.Header.Set("Content-Encoding", "gzip")
			if *token != "" {
				req.Header.Set("Authorization", "Bearer "+*token)
			}
			resp, err := cl.Do(req)
			if err != nil {
				log.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}
	case "grpc":
		clients := make([]plogotlp.GRPCClient, *conns)
		for c := range clients {
			cc, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithDefaultCallOptions(grpc.UseCompressor(grpcgzip.Name)))
			if err != nil {
				log.Fatal(err)
			}
			defer cc.Close()
			clients[c] = plogotlp.NewGRPCClient(cc)
		}
		ctx := context.Background()
		if *token != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+*token)
		}
		send = func(c, i int) bool {
			_, err := clients[c].Export(ctx, reqs[i%len(reqs)])
			return err == nil
		}
	default:
		log.Fatalf("unknown -proto %q", *proto)
	}
	var ok, bad atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(*dur)
	start := time.Now()
	for c := range *conns {
		wg.Go(func() {
			for i := c; time.Now().Before(deadline); i++ {
				if send(c, i) {
					ok.Add(int64(*records))
				} else {
					bad.Add(int64(*records))
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	fmt.Printf("average rate = %.2f msg/sec, count=%d, refused=%d, time=%.3f\n", float64(ok.Load())/el, ok.Load(), bad.Load(), el)
}

// otelcol runs the Collector's OTLP receiver into a counting consumer
// until SIGTERM, serving the count at GET /count.
func otelcol(args []string) {
	fs := flag.NewFlagSet("otelcol", flag.ExitOnError)
	httpAddr := fs.String("http", "127.0.0.1:4318", "OTLP/HTTP address")
	grpcAddr := fs.String("grpc", "127.0.0.1:4317", "OTLP/gRPC address")
	countAddr := fs.String("count", "127.0.0.1:8889", "address of GET /count")
	_ = fs.Parse(args)
	var n atomic.Int64
	next, err := consumer.NewLogs(func(_ context.Context, ld plog.Logs) error {
		n.Add(int64(ld.LogRecordCount()))
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = *grpcAddr
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = *httpAddr
	rcv, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, next)
	if err != nil {
		log.Fatal(err)
	}
	if err := rcv.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/count", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, strconv.FormatInt(n.Load(), 10)+"\n")
	})
	srv := &http.Server{Addr: *countAddr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.ListenAndServe() }()
	fmt.Println("ready")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	_ = srv.Close()
	_ = rcv.Shutdown(context.Background())
}
