package otlp_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/otlp"
)

type httpReply struct {
	status int
	header http.Header
	body   []byte
}

func post(t *testing.T, url, ctype, enc, auth string, body []byte) httpReply {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/v1/logs", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", ctype)
	if enc != "" {
		req.Header.Set("Content-Encoding", enc)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return httpReply{resp.StatusCode, resp.Header, b}
}

func TestReceiverHTTP(t *testing.T) {
	sink := &collectSink{}
	r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink, Token: "s3cret"})
	require.NoError(t, err)
	srv := httptest.NewServer(r)
	defer srv.Close()
	req := plogotlp.NewExportRequestFromLogs(testLogs(3))
	pb, err := req.MarshalProto()
	require.NoError(t, err)
	js, err := req.MarshalJSON()
	require.NoError(t, err)

	for _, tc := range []struct {
		name, ctype, enc string
		body             []byte
	}{
		{"protobuf", "application/x-protobuf", "", pb},
		{"protobuf gzip", "application/x-protobuf", "gzip", gz(t, pb)},
		{"json", "application/json", "", js},
		{"json gzip charset", "application/json; charset=utf-8", "gzip", gz(t, js)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(sink.got())
			rep := post(t, srv.URL, tc.ctype, tc.enc, "Bearer s3cret", tc.body)
			require.Equal(t, http.StatusOK, rep.status, string(rep.body))
			resp := plogotlp.NewExportResponse()
			if strings.HasPrefix(tc.ctype, "application/json") {
				assert.Equal(t, "application/json", rep.header.Get("Content-Type"))
				require.NoError(t, resp.UnmarshalJSON(rep.body))
			} else {
				assert.Equal(t, "application/x-protobuf", rep.header.Get("Content-Type"))
				require.NoError(t, resp.UnmarshalProto(rep.body))
			}
			assert.Zero(t, resp.PartialSuccess().RejectedLogRecords())
			got := sink.got()[before:]
			require.Len(t, got, 3)
			for i := range got {
				assert.Equal(t, "msg-"+itoa(i), string(got[i].Raw))
				assert.Equal(t, "svc", string(got[i].Source))
				v, _ := got[i].Field("i")
				assert.Equal(t, itoa(i), string(v))
			}
		})
	}
	s := r.Stats()
	assert.Equal(t, int64(4), s.Requests)
	assert.Equal(t, int64(12), s.RecordsAccepted)
}

// TestReceiverBadInput sends each kind of bad request beside a good
// sender that posts throughout: every good record arrives, every bad
// request gets its status, none reaches the Sink.
func TestReceiverBadInput(t *testing.T) {
	sink := &collectSink{}
	r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink, Token: "s3cret", MaxBodyBytes: 64 << 10})
	require.NoError(t, err)
	srv := httptest.NewServer(r)
	defer srv.Close()

	pb, err := plogotlp.NewExportRequestFromLogs(testLogs(20)).MarshalProto()
	require.NoError(t, err)
	bomb := gz(t, make([]byte, 10<<20)) // 10 MiB of zeros in ~10 KB
	require.Less(t, len(bomb), 64<<10)

	var wg sync.WaitGroup
	const goodRequests = 30
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(stop)
		for range goodRequests {
			rep := post(t, srv.URL, "application/x-protobuf", "gzip", "Bearer s3cret", gz(t, pb))
			assert.Equal(t, http.StatusOK, rep.status)
		}
	}()

	cases := []struct {
		name, ctype, enc, auth string
		body                   []byte
		status                 int
	}{
		{"truncated protobuf", "application/x-protobuf", "", "Bearer s3cret", pb[:len(pb)-7], http.StatusBadRequest},
		{"invalid json", "application/json", "", "Bearer s3cret", []byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":`), http.StatusBadRequest},
		{"gzip bomb", "application/x-protobuf", "gzip", "Bearer s3cret", bomb, http.StatusRequestEntityTooLarge},
		{"oversized body", "application/x-protobuf", "", "Bearer s3cret", make([]byte, 65<<10), http.StatusRequestEntityTooLarge},
		{"broken gzip", "application/x-protobuf", "gzip", "Bearer s3cret", []byte("not gzip at all"), http.StatusBadRequest},
		{"wrong content type", "text/plain", "", "Bearer s3cret", pb, http.StatusUnsupportedMediaType},
		{"wrong encoding", "application/x-protobuf", "br", "Bearer s3cret", pb, http.StatusUnsupportedMediaType},
		{"wrong token", "application/x-protobuf", "", "Bearer nope", pb, http.StatusUnauthorized},
		{"no token", "application/json", "", "", pb, http.StatusUnauthorized},
	}
	for round := 0; ; round++ {
		for _, tc := range cases {
			rep := post(t, srv.URL, tc.ctype, tc.enc, tc.auth, tc.body)
			assert.Equal(t, tc.status, rep.status, tc.name)
			if round == 0 && tc.status != http.StatusUnsupportedMediaType {
				// Errors are google.rpc.Status messages in the request's type.
				var s spb.Status
				if strings.HasPrefix(tc.ctype, "application/json") {
					require.NoError(t, protojson.Unmarshal(rep.body, &s), tc.name)
				} else {
					require.NoError(t, proto.Unmarshal(rep.body, &s), tc.name)
				}
				assert.NotEmpty(t, s.GetMessage(), tc.name)
			}
		}
		select {
		case <-stop:
			wg.Wait()
			got := sink.got()
			assert.Len(t, got, goodRequests*20, "the good sender lost nothing")
			s := r.Stats()
			assert.Equal(t, int64(goodRequests*20), s.RecordsAccepted)
			assert.Equal(t, int64((round+1)*2), s.TooLarge)
			assert.Equal(t, int64((round+1)*2), s.Unauthorized)
			assert.Equal(t, int64((round+1)*3), s.BadRequests)
			assert.Equal(t, int64((round+1)*2), s.BadContentType)
			return
		default:
		}
	}
}

func TestReceiverBackPressureAndPartialSuccess(t *testing.T) {
	sink := &collectSink{}
	var hookErr error
	var hookEvents int
	r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink, MaxEventBytes: 200, RetryAfter: 1500 * time.Millisecond,
		Hooks: otlp.ReceiverHooks{OnSendError: func(err error, events int) { hookErr, hookEvents = err, events }}})
	require.NoError(t, err)
	srv := httptest.NewServer(r)
	defer srv.Close()
	ld := testLogs(3)
	ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(1).Body().SetStr(strings.Repeat("x", 300))
	pb, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	require.NoError(t, err)

	sink.setFail(true)
	rep := post(t, srv.URL, "application/x-protobuf", "", "", pb)
	assert.Equal(t, http.StatusServiceUnavailable, rep.status)
	assert.Equal(t, "2", rep.header.Get("Retry-After"), "1.5 s rounded up")
	assert.Empty(t, sink.got())
	assert.Error(t, hookErr)
	assert.Equal(t, 2, hookEvents, "the records handed to the Sink (one was over MaxEventBytes)")

	sink.setFail(false)
	rep = post(t, srv.URL, "application/x-protobuf", "", "", pb)
	require.Equal(t, http.StatusOK, rep.status)
	resp := plogotlp.NewExportResponse()
	require.NoError(t, resp.UnmarshalProto(rep.body))
	assert.Equal(t, int64(1), resp.PartialSuccess().RejectedLogRecords())
	assert.Contains(t, resp.PartialSuccess().ErrorMessage(), "larger than 200 bytes")
	got := sink.got()
	require.Len(t, got, 2)
	assert.Equal(t, "msg-0", string(got[0].Raw))
	assert.Equal(t, "msg-2", string(got[1].Raw))

	require.NoError(t, r.Close())
	rep = post(t, srv.URL, "application/x-protobuf", "", "", pb)
	assert.Equal(t, http.StatusServiceUnavailable, rep.status)
	s := r.Stats()
	assert.Equal(t, int64(1), s.RecordsRejected)
	assert.Equal(t, int64(2), s.RecordsRetried)
	assert.Equal(t, int64(1), s.Closed)
}

func TestReceiverGRPC(t *testing.T) {
	sink := &collectSink{}
	r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink, Token: "s3cret", MaxEventBytes: 200, RetryAfter: 3 * time.Second})
	require.NoError(t, err)
	addr := serveGRPC(t, r)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	client := plogotlp.NewGRPCClient(conn)
	auth := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer s3cret")

	resp, err := client.Export(auth, plogotlp.NewExportRequestFromLogs(testLogs(5)), grpc.UseCompressor("gzip"))
	require.NoError(t, err)
	assert.Zero(t, resp.PartialSuccess().RejectedLogRecords())
	require.Len(t, sink.got(), 5)

	_, err = client.Export(t.Context(), plogotlp.NewExportRequestFromLogs(testLogs(1)))
	assert.Equal(t, codes.Unauthenticated, status.Code(err))

	ld := testLogs(2)
	ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().SetStr(strings.Repeat("x", 300))
	resp, err = client.Export(auth, plogotlp.NewExportRequestFromLogs(ld))
	require.NoError(t, err)
	assert.Equal(t, int64(1), resp.PartialSuccess().RejectedLogRecords())

	sink.setFail(true)
	_, err = client.Export(auth, plogotlp.NewExportRequestFromLogs(testLogs(2)))
	st := status.Convert(err)
	assert.Equal(t, codes.Unavailable, st.Code())
	var delay time.Duration
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			delay = ri.GetRetryDelay().AsDuration()
		}
	}
	assert.Equal(t, 3*time.Second, delay)
	assert.Len(t, sink.got(), 6)

	// Over the message size limit (gRPC's own check, after decompression).
	r2, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink, MaxBodyBytes: 1024})
	require.NoError(t, err)
	conn2, err := grpc.NewClient(serveGRPC(t, r2), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn2.Close()
	_, err = plogotlp.NewGRPCClient(conn2).Export(context.Background(), plogotlp.NewExportRequestFromLogs(testLogs(100)), grpc.UseCompressor("gzip"))
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
}

// TestReceiveTimeFromClock: every request's records without an observed
// time carry the receiver clock's time when the request was decoded, over HTTP (protobuf and JSON)
// and gRPC; requests seconds apart differ by as much.
func TestReceiveTimeFromClock(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	sink := &collectSink{}
	r, err := otlp.NewReceiver(otlp.ReceiverConfig{Sink: sink, Clock: clk})
	require.NoError(t, err)
	srv := httptest.NewServer(r)
	defer srv.Close()
	ld := testLogs(2)
	recs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for i := range recs.Len() { // no observed time: the receive time is the receiver's
		recs.At(i).SetObservedTimestamp(0)
	}
	req := plogotlp.NewExportRequestFromLogs(ld)
	pb, err := req.MarshalProto()
	require.NoError(t, err)
	js, err := req.MarshalJSON()
	require.NoError(t, err)
	rep := post(t, srv.URL, "application/x-protobuf", "", "", pb)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	clk.Add(2 * time.Second)
	rep = post(t, srv.URL, "application/json", "", "", js)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	clk.Add(2 * time.Second)

	conn, err := grpc.NewClient(serveGRPC(t, r), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	_, err = plogotlp.NewGRPCClient(conn).Export(t.Context(), req)
	require.NoError(t, err)

	got := sink.got()
	require.Len(t, got, 6)
	for i, e := range got {
		assert.Equal(t, t0.Add(time.Duration(i/2)*2*time.Second).UnixNano(), e.ReceiveTime, "event %d", i)
	}
}

// A bad ReceiverConfig is refused with a FieldError naming the field, by
// NewReceiver and by Validate.
func TestReceiverInvalidConfig(t *testing.T) {
	sink := &collectSink{}
	for field, cfg := range map[string]otlp.ReceiverConfig{
		"Sink":          {},
		"Token":         {Sink: sink, Token: "a b"},
		"MaxBodyBytes":  {Sink: sink, MaxBodyBytes: -1},
		"Mapping.Names": {Sink: sink, Mapping: otlp.Mapping{Names: 9}},
	} {
		for _, err := range []error{cfg.Validate(), func() error { _, err := otlp.NewReceiver(cfg); return err }()} {
			require.ErrorIs(t, err, otlp.ErrInvalidConfig, field)
			var fe *relaykit.FieldError
			require.ErrorAs(t, err, &fe, field)
			assert.Equal(t, field, fe.Field)
		}
	}
}
