package otlp_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/otlp"
)

func events(n int) []relaykit.Event {
	return otlp.Mapping{}.AppendEvents(nil, testLogs(n), 1)
}

// fakeHTTP is an OTLP/HTTP destination that answers from a script and
// records the records of the requests it accepted.
type fakeHTTP struct {
	mu      sync.Mutex
	answer  func(n int) (status int, header map[string]string, partial int64)
	records []string
	reqs    int
}

func (f *fakeHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body := io.Reader(r.Body)
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		body = zr
	}
	b, _ := io.ReadAll(body)
	req := plogotlp.NewExportRequest()
	var err error
	if r.Header.Get("Content-Type") == "application/json" {
		err = req.UnmarshalJSON(b)
	} else {
		err = req.UnmarshalProto(b)
	}
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	f.mu.Lock()
	f.reqs++
	code, hdr, partial := f.answer(req.Logs().LogRecordCount())
	if code == 200 {
		for _, e := range (otlp.Mapping{}).AppendEvents(nil, req.Logs(), 0) {
			f.records = append(f.records, string(e.Raw))
		}
	}
	f.mu.Unlock()
	for k, v := range hdr {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
	if code != 200 {
		w.WriteHeader(code)
		_, _ = w.Write([]byte("no"))
		return
	}
	resp := plogotlp.NewExportResponse()
	if partial > 0 {
		resp.PartialSuccess().SetRejectedLogRecords(partial)
		resp.PartialSuccess().SetErrorMessage("field too long")
	}
	out, _ := resp.MarshalProto()
	if r.Header.Get("Content-Type") == "application/json" {
		out, _ = resp.MarshalJSON()
	}
	_, _ = w.Write(out)
}

func newExporter(t *testing.T, cfg otlp.ExporterConfig) *otlp.Exporter {
	t.Helper()
	x, err := otlp.NewExporter(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = x.Close() })
	return x
}

func batchErr(t *testing.T, err error) *relaykit.BatchError {
	t.Helper()
	var be *relaykit.BatchError
	require.ErrorAs(t, err, &be)
	return be
}

func TestExporterHTTPClassification(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		header     map[string]string
		permanent  bool
		reason     string
		retryAfter time.Duration
	}{
		{"429 with Retry-After", 429, map[string]string{"Retry-After": "7"}, false, otlp.ReasonUnavailable, 7 * time.Second},
		{"503 with Retry-After", 503, map[string]string{"Retry-After": "2"}, false, otlp.ReasonUnavailable, 2 * time.Second},
		{"502", 502, nil, false, otlp.ReasonUnavailable, 0},
		{"504", 504, nil, false, otlp.ReasonUnavailable, 0},
		{"400", 400, nil, true, relaykit.ReasonRejected, 0},
		{"401", 401, nil, true, relaykit.ReasonUnauthorized, 0},
		{"403", 403, nil, true, relaykit.ReasonUnauthorized, 0},
		{"413", 413, nil, true, relaykit.ReasonTooLarge, 0},
		{"500 (not retryable under OTLP)", 500, nil, true, relaykit.ReasonRejected, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeHTTP{answer: func(int) (int, map[string]string, int64) { return tc.status, tc.header, 0 }}
			srv := httptest.NewServer(f)
			defer srv.Close()
			x := newExporter(t, otlp.ExporterConfig{Endpoint: srv.URL})
			be := batchErr(t, x.Send(t.Context(), events(5)))
			require.Len(t, be.Failed, 1)
			fr := be.Failed[0]
			assert.Equal(t, relaykit.FailedRange{From: 0, To: 5, Permanent: tc.permanent, RetryAfter: tc.retryAfter, Reason: tc.reason, Err: fr.Err}, fr)
			var xe *otlp.ExportError
			require.ErrorAs(t, fr.Err, &xe)
			assert.Equal(t, tc.status, xe.StatusCode)
			assert.Equal(t, 1, f.reqs, "one attempt, no retry")
		})
	}
}

func TestExporterPartialSuccessAndSplit(t *testing.T) {
	for _, proto := range []otlp.Protocol{otlp.HTTPProtobuf, otlp.HTTPJSON} {
		// Requests of at most 3 records; the second request is partly
		// rejected, the third refused with 503: the rest is retryable.
		call := 0
		f := &fakeHTTP{answer: func(n int) (int, map[string]string, int64) {
			call++
			switch call {
			case 2:
				return 200, nil, 2
			case 3:
				return 503, map[string]string{"Retry-After": "1"}, 0
			}
			return 200, nil, 0
		}}
		srv := httptest.NewServer(f)
		evs := events(10)
		limit := (recordSize(t, evs[:3]) + recordSize(t, evs[:4])) / 2
		x := newExporter(t, otlp.ExporterConfig{Endpoint: srv.URL, Protocol: proto, MaxRequestBytes: limit})
		be := batchErr(t, x.Send(t.Context(), evs))
		srv.Close()
		require.Len(t, be.Failed, 2, "%+v", be.Failed)
		assert.Equal(t, 4, be.Failed[0].From)
		assert.Equal(t, 6, be.Failed[0].To)
		assert.True(t, be.Failed[0].Permanent)
		assert.Equal(t, relaykit.ReasonRejected, be.Failed[0].Reason)
		assert.ErrorContains(t, be.Failed[0].Err, "field too long")
		assert.Equal(t, relaykit.FailedRange{From: 6, To: 10, RetryAfter: time.Second, Reason: otlp.ReasonUnavailable, Err: be.Failed[1].Err}, be.Failed[1])
		assert.Equal(t, []string{"msg-0", "msg-1", "msg-2", "msg-3", "msg-4", "msg-5"}, f.records)
		s := x.Stats()
		assert.Equal(t, int64(3), s.Requests)
		assert.Equal(t, int64(4), s.Delivered)
		assert.Equal(t, int64(2), s.Rejected)
	}
}

// recordSize returns the protobuf size of a request holding evs.
func recordSize(t *testing.T, evs []relaykit.Event) int {
	t.Helper()
	ld := plogotlp.NewExportRequest().Logs()
	otlp.Mapping{}.AppendLogs(ld, evs)
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	require.NoError(t, err)
	return len(b)
}

func TestExporterEventTooLarge(t *testing.T) {
	f := &fakeHTTP{answer: func(int) (int, map[string]string, int64) { return 200, nil, 0 }}
	srv := httptest.NewServer(f)
	defer srv.Close()
	evs := events(3)
	evs[1].Raw = []byte(strings.Repeat("x", 5000))
	x := newExporter(t, otlp.ExporterConfig{Endpoint: srv.URL, MaxRequestBytes: 1000})
	be := batchErr(t, x.Send(t.Context(), evs))
	require.Len(t, be.Failed, 1)
	assert.Equal(t, 1, be.Failed[0].From)
	assert.Equal(t, 2, be.Failed[0].To)
	assert.True(t, be.Failed[0].Permanent)
	assert.Equal(t, relaykit.ReasonTooLarge, be.Failed[0].Reason)
	assert.Equal(t, []string{"msg-0", "msg-2"}, f.records)
}

// fakeGRPC is an OTLP/gRPC destination answering from a script.
type fakeGRPC struct {
	plogotlp.UnimplementedGRPCServer
	mu     sync.Mutex
	answer func() (plogotlp.ExportResponse, error)
	n      int
}

func (f *fakeGRPC) Export(ctx context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n += req.Logs().LogRecordCount()
	return f.answer()
}

func retryStatus(c codes.Code, d time.Duration) error {
	s := &spb.Status{Code: int32(c), Message: "slow down"}
	if d > 0 {
		ri, _ := anypb.New(&errdetails.RetryInfo{RetryDelay: durationpb.New(d)})
		s.Details = append(s.Details, ri)
	}
	return status.ErrorProto(s)
}

func TestExporterGRPCClassification(t *testing.T) {
	partial := plogotlp.NewExportResponse()
	partial.PartialSuccess().SetRejectedLogRecords(1)
	partial.PartialSuccess().SetErrorMessage("bad attribute")
	for _, tc := range []struct {
		name   string
		err    error
		resp   plogotlp.ExportResponse
		failed []relaykit.FailedRange // Err ignored
		code   codes.Code
	}{
		{"ok", nil, plogotlp.NewExportResponse(), nil, codes.OK},
		{"partial success", nil, partial, []relaykit.FailedRange{{From: 3, To: 4, Permanent: true, Reason: relaykit.ReasonRejected}}, codes.OK},
		{"unavailable with RetryInfo", retryStatus(codes.Unavailable, 3*time.Second), plogotlp.ExportResponse{},
			[]relaykit.FailedRange{{From: 0, To: 4, RetryAfter: 3 * time.Second, Reason: otlp.ReasonUnavailable}}, codes.Unavailable},
		{"resource exhausted with RetryInfo", retryStatus(codes.ResourceExhausted, time.Second), plogotlp.ExportResponse{},
			[]relaykit.FailedRange{{From: 0, To: 4, RetryAfter: time.Second, Reason: otlp.ReasonUnavailable}}, codes.ResourceExhausted},
		{"resource exhausted without RetryInfo", retryStatus(codes.ResourceExhausted, 0), plogotlp.ExportResponse{},
			[]relaykit.FailedRange{{From: 0, To: 4, Permanent: true, Reason: relaykit.ReasonRejected}}, codes.ResourceExhausted},
		{"invalid argument", status.Error(codes.InvalidArgument, "bad"), plogotlp.ExportResponse{},
			[]relaykit.FailedRange{{From: 0, To: 4, Permanent: true, Reason: relaykit.ReasonRejected}}, codes.InvalidArgument},
		{"unauthenticated", status.Error(codes.Unauthenticated, "who"), plogotlp.ExportResponse{},
			[]relaykit.FailedRange{{From: 0, To: 4, Permanent: true, Reason: relaykit.ReasonUnauthorized}}, codes.Unauthenticated},
		{"aborted", status.Error(codes.Aborted, "again"), plogotlp.ExportResponse{},
			[]relaykit.FailedRange{{From: 0, To: 4, Reason: otlp.ReasonUnavailable}}, codes.Aborted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeGRPC{answer: func() (plogotlp.ExportResponse, error) {
				if tc.err != nil {
					return plogotlp.ExportResponse{}, tc.err
				}
				return tc.resp, nil
			}}
			addr := serveFake(t, f)
			x := newExporter(t, otlp.ExporterConfig{Endpoint: "http://" + addr, Protocol: otlp.GRPC})
			err := x.Send(t.Context(), events(4))
			if tc.failed == nil {
				require.NoError(t, err)
				return
			}
			be := batchErr(t, err)
			for i := range be.Failed {
				var xe *otlp.ExportError
				require.ErrorAs(t, be.Failed[i].Err, &xe)
				assert.Equal(t, tc.code, xe.Code)
				be.Failed[i].Err = nil
			}
			assert.Equal(t, tc.failed, be.Failed)
			assert.Equal(t, 4, f.n, "one attempt")
		})
	}
}

func serveFake(t *testing.T, f *fakeGRPC) string {
	t.Helper()
	ln, s := listenGRPC(t)
	plogotlp.RegisterGRPCServer(s, f)
	done := make(chan struct{})
	go func() { _ = s.Serve(ln); close(done) }()
	t.Cleanup(func() { s.Stop(); <-done })
	return ln.Addr().String()
}

func TestExporterNoServer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	x := newExporter(t, otlp.ExporterConfig{Endpoint: url})
	be := batchErr(t, x.Send(t.Context(), events(2)))
	require.Len(t, be.Failed, 1)
	assert.False(t, be.Failed[0].Permanent)
	assert.Equal(t, otlp.ReasonUnavailable, be.Failed[0].Reason)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := x.Send(ctx, events(2))
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}

// TestExporterToReceiver sends through every protocol to the receiver:
// the events come out as they went in.
func TestExporterToReceiver(t *testing.T) {
	in := otlp.Mapping{}.AppendEvents(nil, richLogs(otlp.SpecNames), 1)
	in = append(in, syslogEvents(t)...)
	for _, proto := range []otlp.Protocol{otlp.HTTPProtobuf, otlp.HTTPJSON, otlp.GRPC} {
		sink := &collectSink{}
		r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink, Token: "tok"})
		require.NoError(t, err)
		endpoint := ""
		if proto == otlp.GRPC {
			endpoint = "http://" + serveGRPC(t, r)
		} else {
			srv := httptest.NewServer(r)
			defer srv.Close()
			endpoint = srv.URL
		}
		x := newExporter(t, otlp.ExporterConfig{Endpoint: endpoint, Protocol: proto, Token: "tok"})
		require.NoError(t, x.Send(t.Context(), in))
		got := sink.got()
		require.Len(t, got, len(in))
		for i := range in {
			assert.Equal(t, viewOf(&in[i]), viewOf(&got[i]), "protocol %d event %d", proto, i)
		}
	}
}

// The exporter's hooks have the shapes of forward's: OnSend for a request
// the destination accepted, OnSendError (the error first) for one it did
// not.
func TestExporterHooks(t *testing.T) {
	status := 200
	f := &fakeHTTP{answer: func(int) (int, map[string]string, int64) { return status, nil, 0 }}
	srv := httptest.NewServer(f)
	defer srv.Close()
	var sent, failed []int
	var hookErr error
	x := newExporter(t, otlp.ExporterConfig{Name: "collector", Endpoint: srv.URL, Hooks: otlp.ExporterHooks{
		OnSend: func(dest string, events, bytes int, _ time.Duration) {
			assert.Equal(t, "collector", dest)
			assert.Positive(t, bytes)
			sent = append(sent, events)
		},
		OnSendError: func(err error, events int) { hookErr = err; failed = append(failed, events) },
	}})
	require.NoError(t, x.Send(t.Context(), events(3)))
	status = 503
	require.Error(t, x.Send(t.Context(), events(2)))
	assert.Equal(t, []int{3}, sent)
	assert.Equal(t, []int{2}, failed)
	var xe *otlp.ExportError
	require.ErrorAs(t, hookErr, &xe)
	assert.Equal(t, "collector", xe.Destination)
}

// A bad ExporterConfig is refused with a FieldError naming the field, by
// NewExporter and by Validate.
func TestExporterInvalidConfig(t *testing.T) {
	for field, cfg := range map[string]otlp.ExporterConfig{
		"Endpoint":        {Endpoint: "ftp://x"},
		"Protocol":        {Endpoint: "http://x", Protocol: 9},
		"GzipLevel":       {Endpoint: "http://x", GzipLevel: 11},
		"Timeout":         {Endpoint: "http://x", Timeout: -1},
		"Token":           {Endpoint: "http://x", Token: "a\nb"},
		"TLS":             {Endpoint: "https://x", TLS: &tls.Config{MinVersion: tls.VersionTLS12}, HTTPClient: &http.Client{}},
		"Headers":         {Endpoint: "http://x", Headers: map[string]string{"X": "a\r\n"}},
		"MaxRequestBytes": {Endpoint: "http://x", MaxRequestBytes: -1},
	} {
		for _, err := range []error{cfg.Validate(), func() error { _, err := otlp.NewExporter(cfg); return err }()} {
			require.ErrorIs(t, err, otlp.ErrInvalidConfig, field)
			var fe *relaykit.FieldError
			require.ErrorAs(t, err, &fe, field)
			assert.Equal(t, field, fe.Field)
			assert.NotContains(t, err.Error(), "a\nb")
		}
	}
}
