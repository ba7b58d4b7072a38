package forward_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
)

func batchOf(msgs ...string) []relaykit.Event {
	b := make([]relaykit.Event, len(msgs))
	for i, m := range msgs {
		b[i].Raw = []byte(m)
		b[i].ReceiveTime = 1_700_000_000_123_456_789
	}
	return b
}

func msgs(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return out
}

// countsOf returns message -> count.
func countsOf(ms []string) map[string]int {
	out := make(map[string]int, len(ms))
	for _, m := range ms {
		out[m]++
	}
	return out
}

func without(ms []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(ms), func(m string) bool { return slices.Contains(drop, m) })
}

func TestHECConformance(t *testing.T) {
	forwardtest.TestSink(t, func(t *testing.T) forwardtest.SinkHarness {
		srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
		h, err := forward.NewHEC(forward.HECConfig{URL: srv.URL, Token: srv.Token()})
		require.NoError(t, err)
		t.Cleanup(func() { _ = h.Close() })
		return forwardtest.SinkHarness{Sink: h, Received: func(int) []string { return srv.Messages() }}
	})
}

func TestHECConformanceAckNoGzip(t *testing.T) {
	forwardtest.TestSink(t, func(t *testing.T) forwardtest.SinkHarness {
		srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{Ack: true})
		h, err := forward.NewHEC(forward.HECConfig{URL: srv.URL, Token: srv.Token(), Ack: true,
			AckPollInterval: time.Millisecond, HTTP: forward.HTTPConfig{DisableGzip: true}})
		require.NoError(t, err)
		t.Cleanup(func() { _ = h.Close() })
		return forwardtest.SinkHarness{Sink: h, Received: func(int) []string { return srv.Messages() }}
	})
}

func TestHECEventFormat(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	tests := []struct {
		name string
		cfg  forward.HECConfig
		ev   func(e *relaykit.Event)
		want forwardtest.HECEvent
	}{
		{
			name: "event metadata and fields",
			ev: func(e *relaykit.Event) {
				e.Time = 1_700_000_000_007_999_999
				e.Host, e.Source, e.SourceType, e.Index = []byte("web-1"), []byte("sshd"), []byte("syslog"), []byte("main")
				e.SetFieldString("user", "root")
				e.SetFieldString("ip", "10.0.0.1")
			},
			want: forwardtest.HECEvent{Event: "msg", Time: "1700000000.007", Host: "web-1", Source: "sshd",
				SourceType: "syslog", Index: "main", Fields: map[string]string{"user": "root", "ip": "10.0.0.1"}},
		},
		{
			name: "defaults fill empty metadata, receive time used",
			cfg:  forward.HECConfig{Host: "relay", Source: "src", SourceType: "st", Index: "idx"},
			ev:   func(e *relaykit.Event) { e.ReceiveTime = 1_000_000_000 },
			want: forwardtest.HECEvent{Event: "msg", Time: "1.000", Host: "relay", Source: "src", SourceType: "st", Index: "idx"},
		},
		{
			name: "no time omits time",
			ev:   func(*relaykit.Event) {},
			want: forwardtest.HECEvent{Event: "msg"},
		},
		{
			name: "event object with fields inside",
			cfg:  forward.HECConfig{EventObject: true, MessageKey: "msg"},
			ev:   func(e *relaykit.Event) { e.SetFieldString("user", "root") },
			want: forwardtest.HECEvent{Event: `{"msg":"msg","user":"root"}`, IsObject: true},
		},
		{
			name: "omit fields",
			cfg:  forward.HECConfig{OmitFields: true},
			ev:   func(e *relaykit.Event) { e.SetFieldString("user", "root"); e.SetPriority(4, 3) },
			want: forwardtest.HECEvent{Event: "msg"},
		},
		{
			// logger --rfc5424 --sd-id origin@32473 --sd-param 'ip="10.1.2.3"' --msgid LOGIN -t myapp -p auth.err
			name: "syslog parts and priority as indexed fields",
			ev: func(e *relaykit.Event) {
				e.Time = 1_700_000_000_123_456_789
				e.Host, e.Source, e.SourceType = []byte("vm"), []byte("myapp"), []byte("syslog")
				e.SetPriority(4, 3)
				e.SetFieldString("procid", "4711")
				e.SetFieldString("msgid", "LOGIN")
				e.SetFieldString("sd.origin@32473.ip", "10.1.2.3")
			},
			want: forwardtest.HECEvent{Event: "msg", Time: "1700000000.123", Host: "vm", Source: "myapp", SourceType: "syslog",
				Fields: map[string]string{"procid": "4711", "msgid": "LOGIN", "sd.origin@32473.ip": "10.1.2.3",
					"facility": "auth", "severity": "err"}},
		},
		{
			name: "CEF event keeps its sourcetype",
			cfg:  forward.HECConfig{Fields: []string{"cef.*", "src"}},
			ev: func(e *relaykit.Event) {
				e.SourceType = []byte("cef")
				e.SetPriority(16, 6)
				e.SetFieldString("cef.device_vendor", "Fortinet")
				e.SetFieldString("cef.name", "traffic:forward close")
				e.SetFieldString("src", "10.1.100.11")
				e.SetFieldString("dst", "52.53.140.235")
			},
			want: forwardtest.HECEvent{Event: "msg", SourceType: "cef",
				Fields: map[string]string{"cef.device_vendor": "Fortinet", "cef.name": "traffic:forward close", "src": "10.1.100.11"}},
		},
		{
			name: "listed fields: a prefix and severity",
			cfg:  forward.HECConfig{Fields: []string{"severity", "sd.*"}},
			ev: func(e *relaykit.Event) {
				e.SourceType = []byte("syslog")
				e.SetPriority(10, 5)
				e.SetFieldString("msgid", "X")
				e.SetFieldString("sd.a.b", "c")
				e.SetFieldString("sdx", "no")
			},
			want: forwardtest.HECEvent{Event: "msg", SourceType: "syslog",
				Fields: map[string]string{"severity": "notice", "sd.a.b": "c"}},
		},
		{
			name: "an empty list sends no fields",
			cfg:  forward.HECConfig{Fields: []string{}},
			ev:   func(e *relaykit.Event) { e.SetFieldString("user", "root"); e.SetPriority(4, 3) },
			want: forwardtest.HECEvent{Event: "msg"},
		},
		{
			name: "an event field named severity wins",
			ev:   func(e *relaykit.Event) { e.SetFieldString("severity", "high"); e.SetPriority(23, 7) },
			want: forwardtest.HECEvent{Event: "msg", Fields: map[string]string{"severity": "high", "facility": "local7"}},
		},
		{
			name: "event object with priority inside",
			cfg:  forward.HECConfig{EventObject: true},
			ev:   func(e *relaykit.Event) { e.SetFieldString("msgid", "ID47"); e.SetPriority(4, 2) },
			want: forwardtest.HECEvent{Event: `{"message":"msg","msgid":"ID47","facility":"auth","severity":"crit"}`, IsObject: true},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.URL, cfg.Token = srv.URL, srv.Token()
			h, err := forward.NewHEC(cfg)
			require.NoError(t, err)
			defer h.Close()
			b := make([]relaykit.Event, 1)
			b[0].Raw = []byte("msg")
			tt.ev(&b[0])
			require.NoError(t, h.Send(t.Context(), b))
			evs := srv.Events()
			require.Len(t, evs, i+1)
			got := evs[i]
			got.Request, got.Channel = 0, ""
			want := tt.want
			want.Endpoint = "event"
			assert.Equal(t, want, got)
		})
	}
}

func TestHECRawEndpoint(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	h, err := forward.NewHEC(forward.HECConfig{URL: srv.URL, Token: srv.Token(), Endpoint: forward.HECRaw,
		Host: "relay", SourceType: "syslog", Index: "main"})
	require.NoError(t, err)
	defer h.Close()
	require.NoError(t, h.Send(t.Context(), batchOf("a", "b", "c")))
	evs := srv.Events()
	require.Len(t, evs, 3)
	for i, m := range []string{"a", "b", "c"} {
		assert.Equal(t, m, evs[i].Event)
		assert.Equal(t, "raw", evs[i].Endpoint)
		assert.Equal(t, "relay", evs[i].Host)
		assert.Equal(t, "main", evs[i].Index)
		assert.Equal(t, h.Channel(), evs[i].Channel)
	}
}

// TestHECScenarios sends one batch through a fault and asserts exactly
// which events arrived, how often, and what Send reported undelivered:
// one attempt per request, the failures classified, never retried.
func TestHECScenarios(t *testing.T) {
	all := msgs("ev", 10)
	tests := []struct {
		name      string
		server    forwardtest.HECServerConfig
		cfg       func(c *forward.HECConfig)
		setup     func(s *forwardtest.HECServer)
		batch     func() []relaykit.Event
		arrived   []string            // each exactly once
		failed    map[string][]string // reason -> messages
		permanent bool                // the failed events are reported permanent
		after     time.Duration       // their RetryAfter
		splits    int64
		requests  int // data requests the server saw; 0 = not checked
		uncounted int // events that arrived but were also reported
	}{
		{
			name: "busy: retryable, not retried", setup: func(s *forwardtest.HECServer) { s.Busy(3) },
			failed: map[string][]string{relaykit.ReasonSinkError: all}, requests: 1,
		},
		{
			name: "429 with Retry-After: retryable after the delay", setup: func(s *forwardtest.HECServer) { s.TooManyRequests(1, 7*time.Second) },
			failed: map[string][]string{relaykit.ReasonSinkError: all}, after: 7 * time.Second, requests: 1,
		},
		{
			name: "unhealthy code 18 retryable", setup: func(s *forwardtest.HECServer) { s.Fail(1, forwardtest.HECUnhealthyQueuesFull) },
			failed: map[string][]string{relaykit.ReasonSinkError: all}, requests: 1,
		},
		{
			name: "internal error retryable", setup: func(s *forwardtest.HECServer) { s.Fail(2, forwardtest.HECInternalError) },
			failed: map[string][]string{relaykit.ReasonSinkError: all}, requests: 1,
		},
		{
			name:    "invalid event number: earlier accepted, that one rejected, rest sent on",
			setup:   func(s *forwardtest.HECServer) { s.RejectEvent(3) },
			arrived: without(all, "ev-003"), failed: map[string][]string{relaykit.ReasonRejected: {"ev-003"}}, permanent: true,
			requests: 2,
		},
		{
			name: "413 splits the request", setup: func(s *forwardtest.HECServer) { s.TooLarge(1) },
			arrived: all, splits: 1, requests: 3,
		},
		{
			name: "connection reset mid-body retryable", setup: func(s *forwardtest.HECServer) { s.ResetConnection(2) },
			failed: map[string][]string{relaykit.ReasonSinkError: all}, requests: 1,
		},
		{
			name:   "slow response times out: retryable",
			cfg:    func(c *forward.HECConfig) { c.HTTP.Timeout = 100 * time.Millisecond },
			setup:  func(s *forwardtest.HECServer) { s.Slow(1, time.Minute) },
			failed: map[string][]string{relaykit.ReasonSinkError: all}, requests: 1,
		},
		{
			name:  "busy around a locally rejected event",
			cfg:   func(c *forward.HECConfig) { c.HTTP.MaxEventBytes = 200 },
			setup: func(s *forwardtest.HECServer) { s.Busy(100) },
			batch: func() []relaykit.Event {
				b := batchOf(all...)
				b[5].Raw = bytes.Repeat([]byte("y"), 300)
				return b
			},
			failed: map[string][]string{
				relaykit.ReasonTooLarge:  {strings.Repeat("y", 300)},
				relaykit.ReasonSinkError: without(all, "ev-005"),
			},
			requests: 1,
		},
		{
			name: "invalid token is permanent", cfg: func(c *forward.HECConfig) { c.Token = "wrong" },
			failed: map[string][]string{relaykit.ReasonUnauthorized: all}, permanent: true, requests: 0,
		},
		{
			name: "disabled token is permanent", setup: func(s *forwardtest.HECServer) { s.DisableToken(true) },
			failed: map[string][]string{relaykit.ReasonUnauthorized: all}, permanent: true,
		},
		{
			name:   "incorrect index rejects that index only",
			server: forwardtest.HECServerConfig{Indexes: []string{"main"}},
			batch: func() []relaykit.Event {
				b := batchOf(all...)
				for i := range b {
					b[i].Index = []byte("main")
					if i%3 == 1 {
						b[i].Index = []byte("secret")
					}
				}
				return b
			},
			arrived: without(all, "ev-001", "ev-004", "ev-007"),
			// invalid-event-number 1 is ambiguous for code 7 (see
			// TestHECIncorrectIndexNumbering): ev-000 is reported too,
			// a duplicate of an indexed event rather than a risk of loss.
			failed:    map[string][]string{relaykit.ReasonRejected: {"ev-000", "ev-001", "ev-004", "ev-007"}},
			permanent: true, requests: 3, uncounted: 1,
		},
		{
			name: "event over MaxEventBytes is too large",
			cfg:  func(c *forward.HECConfig) { c.HTTP.MaxEventBytes = 200 },
			batch: func() []relaykit.Event {
				b := batchOf(all...)
				b[5].Raw = bytes.Repeat([]byte("x"), 300)
				return b
			},
			arrived: without(all, "ev-005"), failed: map[string][]string{relaykit.ReasonTooLarge: {strings.Repeat("x", 300)}},
			permanent: true, requests: 1,
		},
		{
			name:    "empty message rejected locally",
			batch:   func() []relaykit.Event { b := batchOf(all...); b[2].Raw = nil; return b },
			arrived: without(all, "ev-002"), failed: map[string][]string{relaykit.ReasonRejected: {""}},
			permanent: true, requests: 1,
		},
		{
			name:    "small MaxRequestBytes splits into requests",
			cfg:     func(c *forward.HECConfig) { c.HTTP.MaxRequestBytes = 150 },
			arrived: all, requests: 4, // 3 events of 40 bytes per request
		},
		{
			name:   "indexer ack lost: retryable after AckTimeout",
			server: forwardtest.HECServerConfig{Ack: true},
			cfg: func(c *forward.HECConfig) {
				c.Ack, c.AckTimeout, c.AckPollInterval = true, 50*time.Millisecond, time.Millisecond
			},
			setup:  func(s *forwardtest.HECServer) { s.LoseAcks(1) },
			failed: map[string][]string{relaykit.ReasonSinkError: all}, requests: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := forwardtest.NewHECServer(t, tt.server)
			var fl failures
			cfg := forward.HECConfig{URL: srv.URL, Token: srv.Token(), HTTP: forward.HTTPConfig{Concurrency: 1}}
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			h, err := forward.NewHEC(cfg)
			require.NoError(t, err)
			defer h.Close()
			if tt.setup != nil {
				tt.setup(srv)
			}
			batch := batchOf(all...)
			if tt.batch != nil {
				batch = tt.batch()
			}
			err = fl.send(t, h, batch)
			if tt.failed == nil {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
			got := srv.Messages()
			wantCounts := countsOf(tt.arrived)
			assert.Equal(t, wantCounts, countsOf(got), "arrived (message -> count)")
			wantFailed := tt.failed
			if wantFailed == nil {
				wantFailed = map[string][]string{}
			}
			gotFailed := fl.get()
			for _, v := range gotFailed {
				sort.Strings(v)
			}
			assert.Equal(t, wantFailed, gotFailed, "reported undelivered")
			for _, ms := range wantFailed {
				for _, m := range ms {
					if tt.failed[relaykit.ReasonTooLarge] != nil && slices.Contains(tt.failed[relaykit.ReasonTooLarge], m) {
						assert.True(t, fl.perm[m], "%s: too large is permanent", m)
						continue
					}
					assert.Equal(t, tt.permanent, fl.perm[m], "%s: permanent", m)
					assert.Equal(t, []int64{int64(tt.after)}, fl.after[m], "%s: RetryAfter", m)
				}
			}
			st := h.Stats()
			assert.Equal(t, tt.splits, st.Splits, "splits")
			assert.Equal(t, int64(len(tt.arrived)-tt.uncounted), st.EventsSent, "EventsSent")
			assert.Zero(t, st.InFlight)
			var nFailed int64
			for _, n := range st.EventsFailed {
				nFailed += n
			}
			nWant := 0
			for _, v := range wantFailed {
				nWant += len(v)
			}
			assert.Equal(t, int64(nWant), nFailed, "EventsFailed total")
			if tt.requests > 0 {
				assert.Equal(t, tt.requests, srv.Requests(), "data requests")
			}
		})
	}
}

func TestHECReportsSendError(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	h, err := forward.NewHEC(forward.HECConfig{URL: srv.URL, Token: srv.Token()})
	require.NoError(t, err)
	defer h.Close()
	srv.RejectEvent(1)
	err = h.Send(t.Context(), batchOf("a", "b", "c"))
	var se *forward.SendError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusBadRequest, se.StatusCode)
	assert.Equal(t, forwardtest.HECInvalidDataFormat, se.Code)
	assert.False(t, se.Retryable)
	assert.Contains(t, err.Error(), "Invalid data format")
	assert.Equal(t, map[string]int{"a": 1, "c": 1}, srv.Counts())
	assert.Equal(t, int64(1), h.Stats().EventsFailed[relaykit.ReasonRejected])
	// The error says exactly which event was not delivered, and that
	// sending it again cannot succeed.
	var be *relaykit.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Failed, 1)
	assert.Equal(t, 1, be.Failed[0].From)
	assert.Equal(t, 2, be.Failed[0].To)
	assert.True(t, be.Failed[0].Permanent)
	assert.Equal(t, relaykit.ReasonRejected, be.Failed[0].Reason)
}

// TestHECBatchErrorRuns: Send reports every undelivered run of a batch
// split over several requests, in batch order, with retryable and
// permanent runs told apart.
func TestHECBatchErrorRuns(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	h, err := forward.NewHEC(forward.HECConfig{URL: srv.URL, Token: srv.Token(),
		HTTP: forward.HTTPConfig{Concurrency: 1, MaxEventBytes: 64, MaxRequestBytes: 400}})
	require.NoError(t, err)
	defer h.Close()
	batch := batchOf("e0", "e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8", "e9")
	batch[4].Raw = bytes.Repeat([]byte("x"), 200) // too large on its own
	srv.Busy(1)                                   // the first request fails: retryable (503, code 9)
	err = h.Send(t.Context(), batch)
	var be *relaykit.BatchError
	require.ErrorAs(t, err, &be)
	require.NotEmpty(t, be.Failed)
	var retry, perm []int
	last := -1
	for _, f := range be.Failed {
		require.Less(t, last, f.From, "ascending, not overlapping")
		last = f.To - 1
		for i := f.From; i < f.To; i++ {
			if f.Permanent {
				perm = append(perm, i)
			} else {
				retry = append(retry, i)
			}
		}
	}
	assert.Equal(t, []int{4}, perm)
	require.NotEmpty(t, retry)
	assert.Equal(t, 0, retry[0], "the events of the failed first request")
	// Every event is either delivered or listed, never both.
	got := srv.Counts()
	for i := range batch {
		_, delivered := got[string(batch[i].Raw)]
		listed := slices.Contains(retry, i) || slices.Contains(perm, i)
		assert.NotEqual(t, delivered, listed, "event %d", i)
	}
}

func TestHECUnauthorizedLoggedOnce(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var fl failures
	h, err := forward.NewHEC(forward.HECConfig{URL: srv.URL, Token: "wrong-token-s3cr3t",
		HTTP: forward.HTTPConfig{Logger: logger}})
	require.NoError(t, err)
	defer h.Close()
	for range 3 {
		require.Error(t, fl.send(t, h, batchOf("a")))
	}
	assert.Len(t, fl.get()[relaykit.ReasonUnauthorized], 3)
	assert.True(t, fl.perm["a"], "unauthorized is permanent")
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	assert.Equal(t, 1, strings.Count(out, "refused the credentials"), out)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestHECSecretsNeverLeak checks that the token appears in no error,
// failure, log line, Stats or hook argument, whatever fails.
func TestHECSecretsNeverLeak(t *testing.T) {
	const token = "tok-9f8e7d6c-SECRET"
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{Token: token})
	var sink bytes.Buffer
	var mu sync.Mutex
	w := lockedWriter{&mu, &sink}
	logger := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	record := func(v ...any) { _, _ = fmt.Fprintln(w, v...) }
	cfg := forward.HECConfig{URL: srv.URL, Token: token, Ack: true, AckTimeout: 20 * time.Millisecond, AckPollInterval: time.Millisecond,
		HTTP: forward.HTTPConfig{
			Logger: logger,
			Hooks: forward.Hooks{
				OnSendError: func(err error, n int) { record(err, n, fmt.Sprintf("%#v", err)) },
				OnSend:      func(d string, n, b int, took time.Duration) { record(d, n, b, took) },
			},
		}}
	h, err := forward.NewHEC(cfg)
	require.NoError(t, err)
	defer h.Close()
	send := func(ctx context.Context, b []relaykit.Event) {
		err := h.Send(ctx, b)
		record(err)
		var be *relaykit.BatchError
		if errors.As(err, &be) {
			for _, f := range be.Failed {
				record(fmt.Sprintf("%+v %#v", f, f.Err))
			}
		}
	}
	srv.Busy(1)
	srv.RejectEvent(0)
	srv.Fail(1, forwardtest.HECInvalidToken)
	for range 4 {
		send(t.Context(), batchOf("a", "b"))
	}
	// Without Ack on the server, acknowledgement fails too.
	srv.DisableToken(true)
	send(t.Context(), batchOf("c"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	send(ctx, batchOf("d"))
	record(fmt.Sprintf("%+v", h.Stats()))
	_, err = forward.NewHEC(forward.HECConfig{URL: "ftp://x", Token: token})
	record(err)
	mu.Lock()
	out := sink.String()
	mu.Unlock()
	require.NotEmpty(t, out)
	assert.NotContains(t, out, token)
	assert.NotContains(t, out, "SECRET")
}

func TestNewHECInvalidConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  forward.HECConfig
	}{
		{"no URL", forward.HECConfig{Token: "t"}},
		{"bad scheme", forward.HECConfig{URL: "ftp://h", Token: "t"}},
		{"credentials in URL", forward.HECConfig{URL: "http://u:p@h", Token: "t"}},
		{"no token", forward.HECConfig{URL: "http://h"}},
		{"newline in token", forward.HECConfig{URL: "http://h", Token: "a\nb"}},
		{"negative concurrency", forward.HECConfig{URL: "http://h", Token: "t", HTTP: forward.HTTPConfig{Concurrency: -1}}},
		{"gzip level", forward.HECConfig{URL: "http://h", Token: "t", HTTP: forward.HTTPConfig{GzipLevel: 10}}},
		{"client and TLS", forward.HECConfig{URL: "http://h", Token: "t", HTTP: forward.HTTPConfig{
			HTTPClient: &http.Client{}, TLS: &tls.Config{ServerName: "x"}}}},
		{"MessageKey without EventObject", forward.HECConfig{URL: "http://h", Token: "t", MessageKey: "m"}},
		{"negative timeout", forward.HECConfig{URL: "http://h", Token: "t", HTTP: forward.HTTPConfig{Timeout: -1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := forward.NewHEC(tt.cfg)
			require.Error(t, err)
			assert.ErrorIs(t, err, forward.ErrInvalidConfig)
		})
	}
}

func TestHECTLS(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{TLS: true})
	t.Run("trusted CA", func(t *testing.T) {
		h, err := forward.NewHEC(forward.HECConfig{URL: srv.URL, Token: srv.Token(),
			HTTP: forward.HTTPConfig{TLS: buildTLS(t, forward.TLSConfig{CAPEM: srv.Certificate()})}})
		require.NoError(t, err)
		defer h.Close()
		require.NoError(t, h.Send(t.Context(), batchOf("tls-ok")))
		assert.Equal(t, 1, srv.Counts()["tls-ok"])
	})
	t.Run("unknown CA fails", func(t *testing.T) {
		h, err := forward.NewHEC(forward.HECConfig{URL: srv.URL, Token: srv.Token()})
		require.NoError(t, err)
		defer h.Close()
		err = h.Send(t.Context(), batchOf("tls-bad"))
		var se *forward.SendError
		require.ErrorAs(t, err, &se)
		assert.Contains(t, err.Error(), "certificate")
		assert.Zero(t, srv.Counts()["tls-bad"])
	})
	t.Run("dangerous skip verify", func(t *testing.T) {
		h, err := forward.NewHEC(forward.HECConfig{URL: srv.URL, Token: srv.Token(),
			HTTP: forward.HTTPConfig{TLS: buildTLS(t, forward.TLSConfig{DangerousInsecureSkipVerify: true})}})
		require.NoError(t, err)
		defer h.Close()
		require.NoError(t, h.Send(t.Context(), batchOf("tls-skip")))
		assert.Equal(t, 1, srv.Counts()["tls-skip"])
	})
}

func TestHECHealthCheckBlocksSending(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	srv.SetUnhealthy(forwardtest.HECUnhealthyQueuesFull)
	var fl failures
	h, err := forward.NewHEC(forward.HECConfig{URL: srv.URL, Token: srv.Token()})
	require.NoError(t, err)
	defer h.Close()
	for range 3 {
		require.Error(t, fl.send(t, h, batchOf("a", "b")))
	}
	assert.Zero(t, srv.Requests(), "no data sent to an unhealthy HEC")
	assert.Equal(t, 3, srv.HealthChecks(), "one health check per Send")
	assert.Len(t, fl.get()[relaykit.ReasonSinkError], 6, "retryable")

	srv.SetUnhealthy(0)
	require.NoError(t, h.Send(t.Context(), batchOf("c")))
	assert.Equal(t, map[string]int{"c": 1}, srv.Counts())
	// Healthy now: the next send does not check again.
	require.NoError(t, h.Send(t.Context(), batchOf("d")))
	assert.Equal(t, 4, srv.HealthChecks())
	// A retryable failure makes the next Send check again.
	srv.Busy(1)
	require.Error(t, fl.send(t, h, batchOf("e")))
	require.NoError(t, h.Send(t.Context(), batchOf("e")))
	assert.Equal(t, 5, srv.HealthChecks())
}

func TestHECSuppliedClient(t *testing.T) {
	var got http.Header
	var mu sync.Mutex
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Clone()
		mu.Unlock()
		_, _ = w.Write([]byte(`{"text":"Success","code":0}`))
	}))
	defer ts.Close()
	h, err := forward.NewHEC(forward.HECConfig{URL: ts.URL, Token: "abc", DisableHealthCheck: true,
		Channel: "11111111-2222-3333-4444-555555555555", HTTP: forward.HTTPConfig{HTTPClient: ts.Client()}})
	require.NoError(t, err)
	require.NoError(t, h.Send(t.Context(), batchOf("x")))
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, "Splunk abc", got.Get("Authorization"))
	assert.Equal(t, "gzip", got.Get("Content-Encoding"))
	assert.Equal(t, "11111111-2222-3333-4444-555555555555", got.Get("X-Splunk-Request-Channel"))
}

func TestHECCancelledDuringRequest(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	srv.Slow(1, time.Minute)
	ctx, cancel := context.WithCancel(t.Context())
	h, err := forward.NewHEC(forward.HECConfig{URL: srv.URL, Token: srv.Token(), DisableHealthCheck: true})
	require.NoError(t, err)
	defer h.Close()
	go func() {
		for srv.Requests() == 0 {
			time.Sleep(time.Millisecond) // polling the server, an external effect
		}
		cancel()
	}()
	var fl failures
	b := batchOf("a", "b")
	err = fl.add(t, b, h.Send(ctx, b))
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled))
	assert.Equal(t, []string{"a", "b"}, fl.get()[relaykit.ReasonShutdown])
	assert.False(t, fl.perm["a"], "retryable")
}

// TestHECIncorrectIndexNumbering checks both readings of
// invalid-event-number for code 7: as documented (the bad event) and one
// higher, as some Splunk versions were reported to send.
func TestHECIncorrectIndexNumbering(t *testing.T) {
	tests := []struct {
		batch   []string // 'm…' to index main, 's…' to index secret (refused)
		indexed []string
	}{
		{[]string{"m0", "s1", "s2", "m3", "s4", "m5", "m6", "s7"}, []string{"m0", "m3", "m5", "m6"}},
		{[]string{"m0", "m1", "s2", "m3"}, []string{"m0", "m1", "m3"}},
		{[]string{"m0", "s1", "m2"}, []string{"m0", "m2"}},
		{[]string{"s0", "m1"}, []string{"m1"}},
		{[]string{"m0", "m1", "s2"}, []string{"m0", "m1"}},
	}
	for _, offset := range []int{0, 1} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("offset=%d/%s", offset, strings.Join(tt.batch, ",")), func(t *testing.T) {
				var mu sync.Mutex
				var indexed []string
				ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					dec := json.NewDecoder(r.Body)
					var got []string
					for n := 0; dec.More(); n++ {
						var ev struct{ Event, Index string }
						if err := dec.Decode(&ev); err != nil {
							w.WriteHeader(http.StatusBadRequest)
							return
						}
						if ev.Index == "secret" {
							mu.Lock()
							indexed = append(indexed, got...)
							mu.Unlock()
							w.WriteHeader(http.StatusBadRequest)
							fmt.Fprintf(w, `{"text":"Incorrect index","code":7,"invalid-event-number":%d}`, n+offset)
							return
						}
						got = append(got, ev.Event)
					}
					mu.Lock()
					indexed = append(indexed, got...)
					mu.Unlock()
					fmt.Fprint(w, `{"text":"Success","code":0}`)
				}))
				defer ts.Close()
				var fl failures
				h, err := forward.NewHEC(forward.HECConfig{URL: ts.URL, Token: "t", DisableHealthCheck: true,
					HTTP: forward.HTTPConfig{DisableGzip: true}})
				require.NoError(t, err)
				defer h.Close()
				b := batchOf(tt.batch...)
				var rejected []string
				for i := range b {
					b[i].Index = []byte("main")
					if b[i].Raw[0] == 's' {
						b[i].Index = []byte("secret")
						rejected = append(rejected, string(b[i].Raw))
					}
				}
				_ = fl.send(t, h, b)
				mu.Lock()
				defer mu.Unlock()
				// Every event for main indexed exactly once, in order; every
				// event for secret rejected exactly once; any other event
				// reported rejected was also indexed (a duplicate when the
				// numbering was ambiguous), never lost.
				assert.Equal(t, tt.indexed, indexed)
				failed := fl.get()
				assert.Len(t, failed, 1)
				var secret []string
				for _, m := range failed[relaykit.ReasonRejected] {
					if m[0] == 's' {
						secret = append(secret, m)
					} else {
						assert.Contains(t, indexed, m)
					}
				}
				assert.Equal(t, rejected, secret)
			})
		}
	}
}

// A constructor's error names the field, with the path of a setting of
// the nested HTTPConfig ("HTTP.Timeout"), and wraps ErrInvalidConfig.
func TestConfigFieldErrors(t *testing.T) {
	for _, tc := range []struct {
		field string
		new   func() error
	}{
		{"URL", func() error { _, err := forward.NewHEC(forward.HECConfig{Token: "t"}); return err }},
		{"HTTP.Timeout", func() error {
			_, err := forward.NewHEC(forward.HECConfig{URL: "http://h", Token: "t", HTTP: forward.HTTPConfig{Timeout: -1}})
			return err
		}},
		{"HTTP.TLS", func() error {
			_, err := forward.NewHEC(forward.HECConfig{URL: "http://h", Token: "t", HTTP: forward.HTTPConfig{HTTPClient: &http.Client{}, TLS: &tls.Config{}}})
			return err
		}},
		{"HTTP.GzipLevel", func() error {
			_, err := forward.NewSentinel(forward.SentinelConfig{Endpoint: "https://dce", DCRImmutableID: "dcr-00000000000000000000000000000000",
				Stream: "Custom-X_CL", TokenSource: forward.StaticToken("x"), HTTP: forward.HTTPConfig{GzipLevel: 12}})
			return err
		}},
		{"DialTimeout", func() error {
			_, err := forward.NewSyslog(forward.SyslogConfig{Address: "127.0.0.1:1", DialTimeout: -1})
			return err
		}},
	} {
		err := tc.new()
		require.ErrorIs(t, err, forward.ErrInvalidConfig, tc.field)
		var fe *relaykit.FieldError
		require.ErrorAs(t, err, &fe, tc.field)
		assert.Equal(t, tc.field, fe.Field)
	}
}

// The sinks' Configs validate without sending: what their constructors
// refuse, and nothing else.
func TestValidate(t *testing.T) {
	var fe *relaykit.FieldError
	require.ErrorAs(t, forward.HECConfig{URL: "http://h"}.Validate(), &fe)
	assert.Equal(t, "Token", fe.Field)
	assert.NoError(t, forward.HECConfig{URL: "http://127.0.0.1:1", Token: "t"}.Validate())
	require.ErrorAs(t, forward.SentinelConfig{Endpoint: "https://dce", Stream: "Custom-X_CL", TokenSource: forward.StaticToken("x")}.Validate(), &fe)
	assert.Equal(t, "DCRImmutableID", fe.Field)
	require.ErrorAs(t, forward.SyslogConfig{Address: "127.0.0.1:1", Network: "sctp"}.Validate(), &fe)
	assert.Equal(t, "Network", fe.Field)
	assert.NoError(t, forward.SyslogConfig{Address: "127.0.0.1:1"}.Validate())
}
