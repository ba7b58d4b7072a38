package delivery_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
)

// throttle is how a test destination throttles: the HTTP status and the
// headers naming the wait.
type throttle struct {
	status           int
	retryAfter, ms   string
	wait             time.Duration // what the headers mean
	window, interval time.Duration // how long it throttles; between batches
}

// request is one data request a test destination received.
type request struct {
	at     time.Time
	status int
}

// throttledDest is a protocol-faithful stand-in (forwardtest) behind a
// forward sink.
type throttledDest struct {
	sink     relaykit.Sink
	throttle func(d time.Duration, th throttle) // start throttling for d
	requests func() []request                   // data requests, in order
	received func() []string                    // messages, in arrival order
}

// handlerTransport serves requests by calling a handler directly, so that
// a whole exchange runs inside a synctest bubble with its fake clock.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return rec.Result(), nil
}

// hecDest returns an HEC stand-in and a forward.HEC with the shipped
// defaults in front of it; in a bubble (inBubble) through the server's
// handler, else over 127.0.0.1.
func hecDest(t *testing.T, srv *forwardtest.HECServer, inBubble bool) throttledDest {
	t.Helper()
	cfg := forward.HECConfig{URL: srv.URL, Token: srv.Token()}
	if inBubble {
		cfg.URL = "http://hec.invalid:8088"
		cfg.HTTP.HTTPClient = &http.Client{Transport: handlerTransport{srv.Handler()}}
	}
	h, err := forward.NewHEC(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })
	return throttledDest{
		sink: h,
		throttle: func(d time.Duration, th throttle) {
			srv.Throttle(d, forwardtest.HECThrottle{Status: th.status, RetryAfter: th.retryAfter, RetryAfterMs: th.ms})
		},
		requests: func() []request {
			var out []request
			for _, r := range srv.RequestLog() {
				out = append(out, request{r.Time, r.Status})
			}
			return out
		},
		received: srv.Messages,
	}
}

// sentinelDest returns a Logs Ingestion API stand-in and a
// forward.Sentinel with the shipped defaults in front of it, its token
// from the stand-in's Entra ID endpoint.
func sentinelDest(t *testing.T, srv *forwardtest.DCRServer, inBubble bool) throttledDest {
	t.Helper()
	c := srv.Config()
	ec := forward.EntraConfig{TenantID: c.TenantID, ClientID: c.ClientID, ClientSecret: c.ClientSecret, AuthorityHost: srv.AuthorityHost}
	sc := forward.SentinelConfig{Endpoint: srv.URL, DCRImmutableID: c.DCRImmutableID, Stream: c.Stream}
	if inBubble {
		client := &http.Client{Transport: handlerTransport{srv.Handler()}}
		ec.AuthorityHost, ec.HTTPClient = "https://login.invalid", client
		sc.Endpoint, sc.HTTP.HTTPClient = "https://dce.invalid", client
	}
	ts, err := forward.NewEntraTokenSource(ec)
	require.NoError(t, err)
	sc.TokenSource = ts
	s, err := forward.NewSentinel(sc)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return throttledDest{
		sink: s,
		throttle: func(d time.Duration, th throttle) {
			srv.Throttle(d, forwardtest.DCRFault{Status: th.status, RetryAfter: th.retryAfter, RetryAfterMs: th.ms})
		},
		requests: func() []request {
			var out []request
			for _, r := range srv.Requests() {
				out = append(out, request{r.Time, r.Status})
			}
			return out
		},
		received: func() []string {
			var out []string
			for _, row := range srv.Rows() {
				out = append(out, row["RawData"].(string))
			}
			return out
		},
	}
}

// throttledRun sends numbered batches of size events every th.interval
// for duration through a Queue with the shipped defaults in front of d,
// which throttles for th.window from the start, then closes the Queue. It
// returns the number of events sent and when the throttle began.
func throttledRun(t *testing.T, d throttledDest, th throttle, size int, duration time.Duration) (int, time.Time) {
	t.Helper()
	q := start(t, d.sink, delivery.Config{Name: "dest"})
	begin := time.Now()
	d.throttle(th.window, th)
	n := 0
	for time.Since(begin) < duration {
		require.NoError(t, q.Send(t.Context(), batchOf(n, size)))
		n += size
		time.Sleep(th.interval) // the offered rate
	}
	// Close leaves the backlog on disk while the destination is unhealthy:
	// let it take everything first.
	eventually(t, 30*time.Second, func() bool { return len(d.received()) >= n }, "not delivered after the throttle ended")
	closeQ(t, q, 60*time.Second)
	st := q.Stats()
	assertLedger(t, st)
	assert.Zero(t, st.Pending)
	assert.Positive(t, st.Throttled, "the waits were counted")
	assert.GreaterOrEqual(t, st.ThrottledFor, time.Duration(st.Throttled)*th.wait)
	return n, begin
}

// checkHonoured asserts that after every throttled answer no request came
// before the wait it named had passed, and returns how many requests were
// throttled.
func checkHonoured(t *testing.T, reqs []request, th throttle) int {
	t.Helper()
	throttled := 0
	for i, r := range reqs {
		if r.status != th.status {
			continue
		}
		throttled++
		if i+1 < len(reqs) {
			gap := reqs[i+1].at.Sub(r.at)
			assert.GreaterOrEqual(t, gap, th.wait, "request %d came %v after a %d asking for %v", i+1, gap, r.status, th.wait)
		}
	}
	return throttled
}

// TestRetryAfterHonoured: HEC and the Logs Ingestion API answer 429 or
// 503 naming a wait (Retry-After in seconds, or retry-after-ms) for a few
// seconds, over real connections, while batches arrive behind a Queue
// with the shipped default timings. No request comes before the wait
// named by the answer before it, not the probes nor the next batches;
// every event is delivered exactly once, in order.
func TestRetryAfterHonoured(t *testing.T) {
	throttles := []throttle{
		{status: http.StatusTooManyRequests, retryAfter: "1", wait: time.Second},
		{status: http.StatusServiceUnavailable, retryAfter: "2", wait: 2 * time.Second},
		{status: http.StatusTooManyRequests, ms: "1500", wait: 1500 * time.Millisecond},
		{status: http.StatusServiceUnavailable, ms: "1200", retryAfter: "9", wait: 1200 * time.Millisecond},
	}
	dests := map[string]func(t *testing.T) throttledDest{
		"hec": func(t *testing.T) throttledDest {
			return hecDest(t, forwardtest.NewHECServer(t, forwardtest.HECServerConfig{}), false)
		},
		"sentinel": func(t *testing.T) throttledDest {
			return sentinelDest(t, forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{}), false)
		},
	}
	for name, newDest := range dests {
		for _, th := range throttles {
			label := strconv.Itoa(th.status) + " retry-after=" + th.retryAfter + " retry-after-ms=" + th.ms
			t.Run(name+"/"+label, func(t *testing.T) {
				t.Parallel()
				th.window, th.interval = 3*time.Second, 50*time.Millisecond
				d := newDest(t)
				n, _ := throttledRun(t, d, th, 20, 3500*time.Millisecond)
				reqs := d.requests()
				throttled := checkHonoured(t, reqs, th)
				assert.GreaterOrEqual(t, throttled, 2, "the destination throttled")
				assert.LessOrEqual(t, throttled, int(th.window/th.wait)+1, "one request per wait")
				assertOnce(t, seqs(0, n), seqsOf(d.received()))
			})
		}
	}
}

// TestThrottledDestination is the scenario of a user who measured 34
// requests in 30 s: the destination answers 429 with Retry-After: 10 for
// 30 s while 1,000 events a second arrive behind a Queue with the shipped
// defaults. It gets about one request per Retry-After (3, or 4 counting
// the one at the end of the window), never one a second, and every event
// arrives once, in order. The Queue, the sink and the stand-in run in a
// synctest bubble: 45 s of fake time.
func TestThrottledDestination(t *testing.T) {
	th := throttle{status: http.StatusTooManyRequests, retryAfter: "10", wait: 10 * time.Second,
		window: 30 * time.Second, interval: 100 * time.Millisecond}
	// The stand-ins start outside the bubble (their listeners are real);
	// only their handlers run in it, through the sinks' transport.
	for name, newDest := range map[string]func(t *testing.T) func(t *testing.T) throttledDest{
		"hec": func(t *testing.T) func(t *testing.T) throttledDest {
			srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
			return func(t *testing.T) throttledDest { return hecDest(t, srv, true) }
		},
		"sentinel": func(t *testing.T) func(t *testing.T) throttledDest {
			srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
			return func(t *testing.T) throttledDest { return sentinelDest(t, srv, true) }
		},
	} {
		t.Run(name, func(t *testing.T) {
			inBubble := newDest(t)
			synctest.Test(t, func(t *testing.T) {
				d := inBubble(t)
				n, begin := throttledRun(t, d, th, 100, 45*time.Second)
				reqs := d.requests()
				throttled := checkHonoured(t, reqs, th)
				during := 0
				for _, r := range reqs {
					if r.at.Sub(begin) < th.window {
						during++
					}
				}
				t.Logf("%d requests during the %v throttle, %d answered %d; %d in all", during, th.window, throttled, th.status, len(reqs))
				assert.GreaterOrEqual(t, during, 3)
				assert.LessOrEqual(t, during, 4, "about one request per Retry-After")
				assertOnce(t, seqs(0, n), seqsOf(d.received()))
			})
		})
	}
}

// seqsOf returns the sequence numbers of messages.
func seqsOf(msgs []string) []int {
	out := make([]int, len(msgs))
	for i, m := range msgs {
		out[i] = seqOf(&relaykit.Event{Raw: []byte(m)})
	}
	return out
}

// askWait returns a BatchError that lists every event of b as retryable
// after d.
func askWait(b []relaykit.Event, d time.Duration) error {
	return &relaykit.BatchError{Failed: []relaykit.FailedRange{{From: 0, To: len(b), RetryAfter: d,
		Reason: relaykit.ReasonSinkError, Err: errRefused}}}
}

// TestQueueRetryAfterWithinBudget: a wait shorter than what is left of the
// retry budget is waited out in memory (it replaces the shorter backoff):
// the retry comes exactly then, and the destination stays healthy.
func TestQueueRetryAfterWithinBudget(t *testing.T) {
	for _, mode := range []delivery.Mode{delivery.WriteAhead, delivery.OnFailure} {
		t.Run(mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := &scripted{answer: func(n int, b []relaykit.Event) error {
					if n == 1 {
						return askWait(b, 1500*time.Millisecond)
					}
					return nil
				}}
				q := start(t, d, delivery.Config{Mode: mode})
				require.NoError(t, q.Send(t.Context(), batchOf(0, 10)))
				closeQ(t, q, time.Minute)
				at := d.attempts()
				require.Len(t, at, 2)
				assert.Equal(t, 1500*time.Millisecond, at[1].Sub(at[0]))
				assertOnce(t, seqs(0, 10), d.delivered())
				st := q.Stats()
				assert.True(t, st.Healthy)
				assert.Equal(t, int64(1), st.Throttled)
				assert.Equal(t, 1500*time.Millisecond, st.ThrottledFor)
				if mode == delivery.OnFailure {
					assert.Zero(t, st.Spool.Appended, "waited out in memory")
				}
				assertLedger(t, st)
			})
		})
	}
}

// TestQueueRetryAfterBeyondBudget: a destination that asks for a wait
// longer than the retry budget is throttling: the batch goes to the spool
// at once rather than waiting in memory, later batches queue behind it on
// disk, and nothing is sent to the destination (no probe, no next batch)
// before the wait, capped at MaxRetryAfter, has passed.
func TestQueueRetryAfterBeyondBudget(t *testing.T) {
	for _, tt := range []struct {
		name     string
		asked    time.Duration
		maxAfter time.Duration
		want     time.Duration
	}{
		{"honoured", 10 * time.Second, 0, 10 * time.Second},
		{"capped", time.Hour, 20 * time.Second, 20 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				throttling := true
				d := &scripted{answer: func(_ int, b []relaykit.Event) error {
					mu.Lock()
					defer mu.Unlock()
					if throttling {
						return askWait(b, tt.asked)
					}
					return nil
				}}
				q := start(t, d, delivery.Config{Mode: delivery.OnFailure, MaxRetryAfter: tt.maxAfter})
				begin := time.Now()
				require.NoError(t, q.Send(t.Context(), batchOf(0, 10)))
				synctest.Wait()
				st := q.Stats()
				assert.False(t, st.Healthy, "throttling: unhealthy at once")
				assert.Equal(t, int64(10), st.SpoolEvents, "spooled at once, not held in memory")
				assert.Zero(t, time.Since(begin))
				for i := 1; i < 5; i++ { // batches keep arriving, behind it on disk
					time.Sleep(time.Second)
					require.NoError(t, q.Send(t.Context(), batchOf(i*10, 10)))
				}
				time.Sleep(tt.want - 4*time.Second + time.Millisecond)
				mu.Lock()
				throttling = false
				mu.Unlock()
				time.Sleep(3 * tt.want)
				closeQ(t, q, time.Minute)
				at := d.attempts()
				require.GreaterOrEqual(t, len(at), 3)
				assert.Equal(t, tt.want, at[1].Sub(at[0]), "the probe came when the wait ended")
				for i := 1; i < len(at); i++ {
					assert.GreaterOrEqual(t, at[i].Sub(at[0]), tt.want, "attempt %d came before the wait ended", i)
				}
				assertOnce(t, seqs(0, 50), d.delivered())
				st = q.Stats()
				assert.Equal(t, int64(2), st.Throttled, "the first attempt and the first probe")
				assertLedger(t, st)
			})
		})
	}
}

// TestQueueCloseDoesNotWaitOutRetryAfter: a destination that asks for a
// long wait while Close drains the queue ends the drain at once: the
// batch is spooled for the next run, and Close does not sit out the wait.
func TestQueueCloseDoesNotWaitOutRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		d := &scripted{answer: func(n int, b []relaykit.Event) error {
			if n == 1 {
				<-release // the first batch is delivered once Close has begun
				return nil
			}
			return askWait(b, time.Minute)
		}}
		q, err := delivery.New(d, delivery.Config{Mode: delivery.OnFailure, Dir: t.TempDir()})
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- q.Run(context.Background()) }()
		require.NoError(t, q.Send(t.Context(), batchOf(0, 10)))
		require.NoError(t, q.Send(t.Context(), batchOf(10, 10)))
		synctest.Wait() // the first attempt is in flight
		closed := make(chan error, 1)
		begin := time.Now()
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			closed <- q.Close(ctx)
		}()
		synctest.Wait() // Close is waiting for the sender
		close(release)
		require.NoError(t, <-closed)
		assert.Zero(t, time.Since(begin), "Close did not wait out the minute")
		require.NoError(t, <-done)
		assert.Equal(t, seqs(0, 10), d.delivered())
		st := q.Stats()
		assert.Equal(t, int64(10), st.Pending, "the second batch is spooled for the next run")
		assertLedger(t, st)
	})
}
