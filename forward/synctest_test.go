package forward_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
)

// handlerTransport serves requests by calling a handler directly, so that
// a whole exchange runs inside a synctest bubble with fake time.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return rec.Result(), nil
}

func bubbleHEC(t *testing.T, srv *forwardtest.HECServer, cfg forward.HECConfig) *forward.HEC {
	t.Helper()
	cfg.URL, cfg.Token = "http://hec.invalid:8088", srv.Token()
	cfg.HTTP.HTTPClient = &http.Client{Transport: handlerTransport{srv.Handler()}}
	h, err := forward.NewHEC(cfg)
	require.NoError(t, err)
	return h
}

// TestRetryAfterReported: the sink does not wait: Send returns at once
// with the wait the destination named on the undelivered events, however
// it named it.
func TestRetryAfterReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		now := time.Now() // the bubble's clock
		for _, tt := range []struct {
			name   string
			header http.Header
			status int
			want   time.Duration
		}{
			{"429 seconds", http.Header{"Retry-After": {"3"}}, 429, 3 * time.Second},
			{"503 seconds", http.Header{"Retry-After": {"10"}}, 503, 10 * time.Second},
			{"429 HTTP-date", http.Header{"Retry-After": {now.Add(90 * time.Second).UTC().Format(http.TimeFormat)}}, 429, 90 * time.Second},
			{"503 retry-after-ms", http.Header{"Retry-After-Ms": {"2500"}}, 503, 2500 * time.Millisecond},
			{"429 x-ms-retry-after-ms", http.Header{"X-Ms-Retry-After-Ms": {"700"}}, 429, 700 * time.Millisecond},
			{"503 none", http.Header{}, 503, 0},
		} {
			h, err := forward.NewHEC(forward.HECConfig{URL: "http://hec.invalid:8088", Token: "t", DisableHealthCheck: true,
				HTTP: forward.HTTPConfig{HTTPClient: &http.Client{Transport: handlerTransport{http.HandlerFunc(
					func(w http.ResponseWriter, _ *http.Request) {
						for k, v := range tt.header {
							w.Header()[k] = v
						}
						w.WriteHeader(tt.status)
						_, _ = w.Write([]byte(`{"text":"Server is busy","code":9}`))
					})}}}})
			require.NoError(t, err)
			start := time.Now()
			err = h.Send(t.Context(), batchOf("a", "b"))
			assert.Zero(t, time.Since(start), "%s: the sink does not wait", tt.name)
			var be *relaykit.BatchError
			require.ErrorAs(t, err, &be, tt.name)
			assert.Equal(t, tt.want, be.RetryAfter(), tt.name)
			assert.False(t, be.Permanent(), tt.name)
			var se *forward.SendError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.want, se.RetryAfter, tt.name)
			assert.Equal(t, tt.status, se.StatusCode, tt.name)
			_ = h.Close()
		}
	})
}

// TestAckTimeoutReported: a request whose acknowledgement does not come
// within AckTimeout is reported retryable, after AckTimeout, and not sent
// again by the sink.
func TestAckTimeoutReported(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{Ack: true})
	synctest.Test(t, func(t *testing.T) {
		h := bubbleHEC(t, srv, forward.HECConfig{Ack: true, AckTimeout: 30 * time.Second, DisableHealthCheck: true})
		srv.LoseAcks(1)
		start := time.Now()
		err := h.Send(t.Context(), batchOf("a", "b"))
		assert.Equal(t, 30*time.Second, time.Since(start))
		var be *relaykit.BatchError
		require.ErrorAs(t, err, &be)
		assert.Equal(t, []relaykit.FailedRange{{From: 0, To: 2, Reason: relaykit.ReasonSinkError, Err: be.Failed[0].Err}}, be.Failed)
		assert.Contains(t, err.Error(), "not acknowledged within 30s")
		assert.Equal(t, 1, srv.Requests())
		assert.Empty(t, srv.Counts())

		require.NoError(t, h.Send(t.Context(), batchOf("a", "b")), "the caller's next attempt")
		assert.Equal(t, map[string]int{"a": 1, "b": 1}, srv.Counts())
		assert.Equal(t, 2, srv.Requests())
	})
}
