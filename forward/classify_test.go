package forward_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
)

// TestClassification: used without a queue, HEC and Sentinel make one
// attempt (Sentinel's single re-authentication aside) and report the
// undelivered events in a *relaykit.BatchError classified by the answer:
// permanent, retryable, or retryable after the wait the destination named.
func TestClassification(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		header    http.Header
		body      string
		permanent bool
		reason    string
		after     time.Duration
		requests  map[string]int // per sink, when not 1
	}{
		{name: "400 bad request", status: 400, permanent: true, reason: relaykit.ReasonRejected},
		{name: "401 unauthorized", status: 401, permanent: true, reason: relaykit.ReasonUnauthorized,
			requests: map[string]int{"sentinel": 2}}, // once more with a fresh token
		{name: "403 forbidden", status: 403, permanent: true, reason: relaykit.ReasonUnauthorized},
		{name: "404 not found", status: 404, permanent: true, reason: relaykit.ReasonRejected},
		{name: "405 method", status: 405, permanent: true, reason: relaykit.ReasonRejected},
		{name: "408 timeout", status: 408, reason: relaykit.ReasonSinkError},
		{name: "413 one event", status: 413, permanent: true, reason: relaykit.ReasonTooLarge},
		{name: "422 unprocessable", status: 422, permanent: true, reason: relaykit.ReasonRejected},
		{name: "429 no wait", status: 429, reason: relaykit.ReasonSinkError},
		{name: "429 Retry-After seconds", status: 429, header: http.Header{"Retry-After": {"5"}}, reason: relaykit.ReasonSinkError, after: 5 * time.Second},
		{name: "429 retry-after-ms", status: 429, header: http.Header{"Retry-After-Ms": {"750"}}, reason: relaykit.ReasonSinkError, after: 750 * time.Millisecond},
		{name: "429 x-ms-retry-after-ms", status: 429, header: http.Header{"X-Ms-Retry-After-Ms": {"1200"}}, reason: relaykit.ReasonSinkError, after: 1200 * time.Millisecond},
		{name: "500 internal", status: 500, reason: relaykit.ReasonSinkError},
		{name: "502 bad gateway", status: 502, reason: relaykit.ReasonSinkError},
		{name: "503 unavailable", status: 503, reason: relaykit.ReasonSinkError},
		{name: "503 Retry-After", status: 503, header: http.Header{"Retry-After": {"12"}}, reason: relaykit.ReasonSinkError, after: 12 * time.Second},
		{name: "503 Retry-After date", status: 503, header: http.Header{"Retry-After": {"DATE+120"}}, reason: relaykit.ReasonSinkError, after: 120 * time.Second},
		{name: "504 gateway timeout", status: 504, reason: relaykit.ReasonSinkError},
		{name: "HEC 503 code 9 with Retry-After", status: 503, header: http.Header{"Retry-After": {"3"}},
			body: `{"text":"Server is busy","code":9}`, reason: relaykit.ReasonSinkError, after: 3 * time.Second},
		{name: "HEC 429 code 9", status: 429, body: `{"text":"Server is busy","code":9}`, reason: relaykit.ReasonSinkError},
	}
	sinks := map[string]func(url string) (relaykit.Sink, error){
		"hec": func(url string) (relaykit.Sink, error) {
			return forward.NewHEC(forward.HECConfig{URL: url, Token: "t", DisableHealthCheck: true})
		},
		"sentinel": func(url string) (relaykit.Sink, error) {
			return forward.NewSentinel(forward.SentinelConfig{Endpoint: url, DCRImmutableID: "dcr-0123", Stream: "Custom-T_CL",
				TokenSource: forward.StaticToken("t")})
		},
	}
	for _, tt := range tests {
		for kind, newSink := range sinks {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				var requests atomic.Int32
				ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					requests.Add(1)
					for k, v := range tt.header {
						if v[0] == "DATE+120" {
							v = []string{time.Now().Add(120 * time.Second).UTC().Format(http.TimeFormat)}
						}
						w.Header()[k] = v
					}
					w.WriteHeader(tt.status)
					_, _ = fmt.Fprint(w, tt.body)
				}))
				defer ts.Close()
				sink, err := newSink(ts.URL)
				require.NoError(t, err)
				batch := batchOf("only")
				err = sink.Send(t.Context(), batch)
				var be *relaykit.BatchError
				require.ErrorAs(t, err, &be)
				require.Len(t, be.Failed, 1)
				f := be.Failed[0]
				assert.Equal(t, [2]int{0, 1}, [2]int{f.From, f.To})
				assert.Equal(t, tt.permanent, f.Permanent, "permanent")
				assert.Equal(t, tt.reason, f.Reason)
				if strings.HasSuffix(tt.name, "date") {
					// An HTTP-date has whole seconds.
					assert.InDelta(t, tt.after.Seconds(), f.RetryAfter.Seconds(), 1.5)
				} else {
					assert.Equal(t, tt.after, f.RetryAfter)
				}
				var se *forward.SendError
				require.ErrorAs(t, f.Err, &se)
				assert.Equal(t, tt.status, se.StatusCode)
				assert.Equal(t, !tt.permanent, se.Retryable)
				want := 1
				if n, ok := tt.requests[kind]; ok {
					want = n
				}
				assert.Equal(t, want, int(requests.Load()), "requests: one attempt")
			})
		}
	}
	t.Run("network error", func(t *testing.T) {
		ts := httptest.NewServer(http.NotFoundHandler())
		url := ts.URL
		ts.Close() // nothing listens any more
		for kind, newSink := range sinks {
			sink, err := newSink(url)
			require.NoError(t, err)
			err = sink.Send(t.Context(), batchOf("a", "b"))
			var be *relaykit.BatchError
			require.ErrorAs(t, err, &be, kind)
			assert.Equal(t, []relaykit.FailedRange{{From: 0, To: 2, Reason: relaykit.ReasonSinkError, Err: be.Failed[0].Err}}, be.Failed, kind)
		}
	})
}
