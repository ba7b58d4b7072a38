package forward_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	cfg.Delivery.HTTPClient = &http.Client{Transport: handlerTransport{srv.Handler()}}
	h, err := forward.NewHEC(cfg)
	require.NoError(t, err)
	return h
}

func TestBackoffHonoursRetryAfter(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	synctest.Test(t, func(t *testing.T) {
		var waits []time.Duration
		h := bubbleHEC(t, srv, forward.HECConfig{Delivery: forward.DeliveryConfig{
			Hooks: forward.Hooks{OnRetry: func(_ string, _ int, w time.Duration) { waits = append(waits, w) }},
		}})
		srv.TooManyRequests(2, 3*time.Second)
		start := time.Now()
		require.NoError(t, h.Send(t.Context(), batchOf("a", "b")))
		assert.Equal(t, 6*time.Second, time.Since(start))
		assert.Equal(t, []time.Duration{3 * time.Second, 3 * time.Second}, waits)
		assert.Equal(t, map[string]int{"a": 1, "b": 1}, srv.Counts())
	})
}

func TestBackoffFullJitterBounds(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	synctest.Test(t, func(t *testing.T) {
		var waits []time.Duration
		h := bubbleHEC(t, srv, forward.HECConfig{DisableHealthCheck: true, Delivery: forward.DeliveryConfig{
			Retry: forward.RetryConfig{InitialBackoff: time.Second, MaxBackoff: 4 * time.Second},
			Hooks: forward.Hooks{OnRetry: func(_ string, _ int, w time.Duration) { waits = append(waits, w) }},
		}})
		srv.Busy(5)
		start := time.Now()
		require.NoError(t, h.Send(t.Context(), batchOf("a")))
		elapsed := time.Since(start)
		ceilings := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second, 4 * time.Second}
		require.Len(t, waits, 5)
		var sum time.Duration
		for i, w := range waits {
			assert.GreaterOrEqual(t, w, time.Duration(0))
			assert.LessOrEqual(t, w, ceilings[i], "wait %d", i)
			sum += w
		}
		assert.Equal(t, sum, elapsed, "the sink waited exactly the backoffs")
		assert.Equal(t, int64(5), h.Stats().Retries)
	})
}

func TestBackoffMaxElapsed(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	synctest.Test(t, func(t *testing.T) {
		var fl failures
		h := bubbleHEC(t, srv, forward.HECConfig{Delivery: forward.DeliveryConfig{
			OnFailure: fl.handle,
			Retry: forward.RetryConfig{MaxAttempts: 1000, MaxElapsed: 10 * time.Second,
				InitialBackoff: time.Second, MaxBackoff: 2 * time.Second},
		}})
		srv.Busy(1000)
		start := time.Now()
		require.NoError(t, h.Send(t.Context(), batchOf("a")))
		assert.LessOrEqual(t, time.Since(start), 10*time.Second)
		assert.Equal(t, []string{"a"}, fl.get()[forward.ReasonRetriesExhausted])
		assert.Empty(t, srv.Counts())
	})
}

func TestHealthCheckWhileBackingOff(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	synctest.Test(t, func(t *testing.T) {
		h := bubbleHEC(t, srv, forward.HECConfig{Delivery: forward.DeliveryConfig{
			Retry: forward.RetryConfig{InitialBackoff: time.Second, MaxBackoff: time.Second},
			Hooks: forward.Hooks{OnRetry: func(_ string, attempt int, _ time.Duration) {
				// The destination recovers after the third failed attempt.
				if attempt == 3 {
					srv.SetUnhealthy(0)
				}
			}},
		}})
		srv.Busy(1)
		srv.SetUnhealthy(forwardtest.HECUnhealthyQueuesFull)
		require.NoError(t, h.Send(t.Context(), batchOf("a")))
		assert.Equal(t, map[string]int{"a": 1}, srv.Counts())
		// Attempts 1-3: health check fails, no data sent. Attempt 4:
		// healthy, data answered busy. Attempt 5: health checked again
		// after the failure, data accepted.
		assert.Equal(t, 2, srv.Requests(), "data requests")
		assert.Equal(t, 5, srv.HealthChecks(), "health checks")
	})
}

func TestAckTimeoutResends(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{Ack: true})
	synctest.Test(t, func(t *testing.T) {
		h := bubbleHEC(t, srv, forward.HECConfig{Ack: true, AckTimeout: 30 * time.Second, DisableHealthCheck: true,
			Delivery: forward.DeliveryConfig{Retry: forward.RetryConfig{InitialBackoff: time.Millisecond}}})
		srv.LoseAcks(1)
		start := time.Now()
		require.NoError(t, h.Send(t.Context(), batchOf("a", "b")))
		assert.GreaterOrEqual(t, time.Since(start), 30*time.Second)
		assert.Equal(t, map[string]int{"a": 1, "b": 1}, srv.Counts())
		assert.Equal(t, 2, srv.Requests())
	})
}
