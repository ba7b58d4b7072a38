package otlptest

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	"google.golang.org/grpc"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/otlp"
)

// flakySink refuses its first fails batches (the receiver answers 503 /
// UNAVAILABLE), then keeps copies of what it accepts.
type flakySink struct {
	mu     sync.Mutex
	fails  int
	events []relaykit.Event
}

func (s *flakySink) Send(_ context.Context, batch []relaykit.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fails > 0 {
		s.fails--
		return errors.New("destination down")
	}
	for i := range batch {
		s.events = append(s.events, batch[i].Clone())
	}
	return nil
}

func (s *flakySink) got() []relaykit.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]relaykit.Event(nil), s.events...)
}

const sdkRecords = 500

// emit logs sdkRecords records through an SDK logger provider exporting
// with exp, in batches of up to 100, and shuts the provider down (which
// flushes).
func emit(t *testing.T, exp sdklog.Exporter) {
	t.Helper()
	res, err := resource.New(t.Context(), resource.WithAttributes(attribute.String("service.name", "sdk-test"), attribute.String("host.name", "sdk-host")))
	require.NoError(t, err)
	lp := sdklog.NewLoggerProvider(sdklog.WithResource(res),
		sdklog.WithProcessor(sdklog.NewBatchProcessor(exp, sdklog.WithExportMaxBatchSize(100), sdklog.WithExportInterval(time.Hour))))
	logger := lp.Logger("otlptest", log.WithInstrumentationVersion("1.2.3"))
	for i := range sdkRecords {
		var r log.Record
		r.SetTimestamp(time.Unix(1_700_000_000, int64(i)))
		r.SetSeverity(log.SeverityWarn)
		r.SetSeverityText("WARN")
		r.SetBody(attribute.StringValue("record " + strconv.Itoa(i)))
		r.AddAttributes(
			attribute.Int("n", i),
			attribute.String("kind", "sdk"),
			attribute.Bool("even", i%2 == 0),
			attribute.Float64("ratio", float64(i)/4),
			attribute.Slice("tags", attribute.StringValue("a"), attribute.Int64Value(int64(i))),
			attribute.Map("user", attribute.String("name", "ada"), attribute.Int("id", 7)),
		)
		logger.Emit(t.Context(), r)
	}
	require.NoError(t, lp.Shutdown(t.Context()))
}

// checkSDKRecords checks that every record arrived once, with its
// attributes.
func checkSDKRecords(t *testing.T, got []relaykit.Event) {
	t.Helper()
	require.Len(t, got, sdkRecords)
	seen := make(map[string]bool, sdkRecords)
	for i := range got {
		e := &got[i]
		n, _ := e.Field("n")
		seen[string(n)] = true
		assert.Equal(t, "record "+string(n), string(e.Raw))
		assert.Equal(t, "sdk-test", string(e.Source))
		assert.Equal(t, "sdk-host", string(e.Host))
		for k, want := range map[string]string{
			"kind": "sdk", "otel.severity_text": "WARN", "otel.severity_number": "13",
			"scope.name": "otlptest", "scope.version": "1.2.3", "user": `{"id":7,"name":"ada"}`, /* the SDK sorts map keys */
		} {
			v, ok := e.Field(k)
			if assert.True(t, ok, "field %s", k) {
				assert.Equal(t, want, string(v), "field %s", k)
			}
		}
		i2, _ := strconv.Atoi(string(n))
		even, _ := e.Field("even")
		assert.Equal(t, strconv.FormatBool(i2%2 == 0), string(even))
		ratio, _ := e.Field("ratio")
		assert.Equal(t, strconv.FormatFloat(float64(i2)/4, 'g', -1, 64), string(ratio))
		tags, _ := e.Field("tags")
		assert.Equal(t, `["a",`+string(n)+`]`, string(tags))
		assert.Equal(t, time.Unix(1_700_000_000, int64(i2)).UnixNano(), e.Time)
	}
	assert.Len(t, seen, sdkRecords, "each record once")
}

var fastRetry = struct{ initial, max, elapsed time.Duration }{10 * time.Millisecond, 50 * time.Millisecond, 30 * time.Second}

// TestSDKHTTPToReceiver: the Go SDK's otlploghttp exporter (protobuf,
// gzip, bearer token) sends to the receiver, which refuses the first two
// batches; the SDK retries and every record arrives with its attributes.
func TestSDKHTTPToReceiver(t *testing.T) {
	sink := &flakySink{fails: 2}
	r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink, Token: "s3cret", RetryAfter: time.Millisecond})
	require.NoError(t, err)
	srv := httptest.NewServer(r)
	defer srv.Close()
	exp, err := otlploghttp.New(t.Context(),
		otlploghttp.WithEndpointURL(srv.URL+"/v1/logs"),
		otlploghttp.WithCompression(otlploghttp.GzipCompression),
		otlploghttp.WithHeaders(map[string]string{"Authorization": "Bearer s3cret"}),
		otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: true, InitialInterval: fastRetry.initial, MaxInterval: fastRetry.max, MaxElapsedTime: fastRetry.elapsed}))
	require.NoError(t, err)
	emit(t, exp)
	checkSDKRecords(t, sink.got())
	s := r.Stats()
	assert.Equal(t, int64(2), s.SendErrors)
	assert.Equal(t, int64(sdkRecords), s.RecordsAccepted)
}

// TestSDKGRPCToReceiver: the same with the otlploggrpc exporter.
func TestSDKGRPCToReceiver(t *testing.T) {
	sink := &flakySink{fails: 2}
	r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink, Token: "s3cret", RetryAfter: 10 * time.Millisecond})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gs := grpc.NewServer(r.ServerOptions()...)
	r.RegisterGRPC(gs)
	done := make(chan struct{})
	go func() { _ = gs.Serve(ln); close(done) }()
	defer func() { gs.Stop(); <-done }()

	exp, err := otlploggrpc.New(t.Context(),
		otlploggrpc.WithEndpoint(ln.Addr().String()), otlploggrpc.WithInsecure(),
		otlploggrpc.WithCompressor("gzip"),
		otlploggrpc.WithHeaders(map[string]string{"authorization": "Bearer s3cret"}),
		otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: true, InitialInterval: fastRetry.initial, MaxInterval: fastRetry.max, MaxElapsedTime: fastRetry.elapsed}))
	require.NoError(t, err)
	emit(t, exp)
	checkSDKRecords(t, sink.got())
	s := r.Stats()
	assert.Equal(t, int64(2), s.SendErrors)
	assert.Equal(t, int64(sdkRecords), s.RecordsAccepted)
	assert.Equal(t, int64(sdkRecords/100+2), s.GRPCRequests)
}
