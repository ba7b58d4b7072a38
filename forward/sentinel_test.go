package forward_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
)

// entraFor returns a token source for srv's token endpoint.
func entraFor(t *testing.T, srv *forwardtest.DCRServer, secret string) *forward.EntraTokenSource {
	t.Helper()
	c := srv.Config()
	if secret == "" {
		secret = c.ClientSecret
	}
	ts, err := forward.NewEntraTokenSource(forward.EntraConfig{
		TenantID: c.TenantID, ClientID: c.ClientID, ClientSecret: secret, AuthorityHost: srv.AuthorityHost,
	})
	require.NoError(t, err)
	return ts
}

// sentinelFor returns a Sentinel sink for srv with strict ordering; mod
// adjusts the config. Failures are recorded in fl by sendEvents.
func sentinelFor(t *testing.T, srv *forwardtest.DCRServer, fl *failureLog, mod func(*forward.SentinelConfig)) *forward.Sentinel {
	t.Helper()
	c := srv.Config()
	cfg := forward.SentinelConfig{
		Endpoint:       srv.URL,
		DCRImmutableID: c.DCRImmutableID,
		Stream:         c.Stream,
		TokenSource:    entraFor(t, srv, ""),
		Columns:        forward.SentinelColumns{Source: "App", Facility: "Facility", Severity: "SeverityLevel"},
		Fields:         []forward.SentinelField{{Field: "user", Column: "UserName"}, {Field: "n"}},
		HTTP:           forward.HTTPConfig{Concurrency: 1},
	}
	_ = fl
	if mod != nil {
		mod(&cfg)
	}
	s, err := forward.NewSentinel(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

var sentinelBase = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

func sentinelEvent(i int, rawSize int) relaykit.Event {
	var e relaykit.Event
	e.Time = sentinelBase.UnixNano() + int64(i)*1234567
	e.Host = []byte(fmt.Sprintf("host-%d", i%7))
	e.Source = []byte("sshd")
	e.SetPriority(uint8(i%24), uint8(i%8))
	e.SetFieldString("user", `al"ice\`+"\n")
	e.SetFieldString("n", fmt.Sprint(i))
	raw := fmt.Sprintf("event %d: \"quoted\" ünïcödé \t tab", i)
	if pad := rawSize - len(raw); pad > 0 {
		raw += strings.Repeat("p", pad)
	}
	e.Raw = []byte(raw)
	return e
}

// checkRow asserts that row is exactly what event i of sentinelEvent maps to.
func checkRow(t *testing.T, row map[string]any, i, rawSize int) bool {
	t.Helper()
	e := sentinelEvent(i, rawSize)
	want := map[string]any{
		"TimeGenerated": time.Unix(0, e.Time).UTC().Format("2006-01-02T15:04:05.0000000Z"),
		"RawData":       string(e.Raw),
		"Computer":      string(e.Host),
		"App":           "sshd",
		"Facility":      json.Number(fmt.Sprint(i % 24)),
		"SeverityLevel": json.Number(fmt.Sprint(i % 8)),
		"UserName":      `al"ice\` + "\n",
		"n":             fmt.Sprint(i),
	}
	return assert.Equal(t, want, row, "row %d", i)
}

// sendEvents sends events from..from+n-1 and records in fl what Send
// reports undelivered; with a nil fl it requires that all were delivered.
func sendEvents(t *testing.T, s relaykit.Sink, fl *failureLog, from, n, rawSize int) error {
	t.Helper()
	batch := make([]relaykit.Event, n)
	for i := range batch {
		batch[i] = sentinelEvent(from+i, rawSize)
	}
	if fl == nil {
		require.NoError(t, s.Send(t.Context(), batch))
		return nil
	}
	return fl.send(t, s, batch)
}

func TestSentinelDelivery(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	var fl failureLog
	s := sentinelFor(t, srv, &fl, nil)
	for b := range 5 {
		sendEvents(t, s, &fl, b*200, 200, 0)
	}
	rows := srv.Rows()
	require.Len(t, rows, 1000)
	for i, row := range rows {
		if !checkRow(t, row, i, 0) {
			break
		}
	}
	reqs := srv.Requests()
	ids := map[string]bool{}
	for _, r := range reqs {
		assert.Equal(t, http.StatusNoContent, r.Status)
		assert.True(t, r.Gzip)
		assert.LessOrEqual(t, r.BodyBytes, forwardtest.DCRMaxBodyBytes)
		assert.Len(t, r.ClientRequestID, 36)
		assert.False(t, ids[r.ClientRequestID], "x-ms-client-request-id is new per request")
		ids[r.ClientRequestID] = true
	}
	assert.Len(t, reqs, 5)
	assert.Equal(t, 1, srv.TokenRequests(), "the token is cached")
	st := s.Stats()
	assert.Equal(t, int64(1000), st.EventsSent)
	assert.Zero(t, fl.count())
}

func TestSentinelSplitsAtOneMiB(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	var fl failureLog
	s := sentinelFor(t, srv, &fl, nil)
	const n, size = 250, 10_000 // about 2.5 MB of JSON
	sendEvents(t, s, &fl, 0, n, size)
	rows := srv.Rows()
	require.Len(t, rows, n)
	for i, row := range rows {
		if !checkRow(t, row, i, size) {
			break
		}
	}
	reqs := srv.Requests()
	assert.GreaterOrEqual(t, len(reqs), 3)
	for i, r := range reqs {
		assert.Equal(t, http.StatusNoContent, r.Status)
		assert.LessOrEqual(t, r.BodyBytes, forwardtest.DCRMaxBodyBytes)
		if i < len(reqs)-1 {
			assert.Greater(t, r.BodyBytes, forwardtest.DCRMaxBodyBytes-11_000, "requests are filled up to the limit")
		}
	}
	assert.Zero(t, fl.count())
}

func TestSentinelRecordTooLarge(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	var fl failureLog
	s := sentinelFor(t, srv, &fl, nil)
	batch := []relaykit.Event{sentinelEvent(0, 0), sentinelEvent(1, 1<<20), sentinelEvent(2, 0)}
	require.Error(t, fl.send(t, s, batch))
	rows := srv.Rows()
	require.Len(t, rows, 2)
	checkRow(t, rows[0], 0, 0)
	checkRow(t, rows[1], 2, 0)
	require.Equal(t, 1, fl.count())
	assert.Equal(t, relaykit.ReasonTooLarge, fl.reasons[0])
	assert.Equal(t, string(batch[1].Raw), string(fl.events[0].Raw))
	for _, r := range srv.Requests() {
		assert.Equal(t, http.StatusNoContent, r.Status, "the large record is never sent")
	}
}

func TestSentinel413HalvesAndResends(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	var fl failureLog
	s := sentinelFor(t, srv, &fl, nil)
	srv.Inject(forwardtest.DCRFault{Status: http.StatusRequestEntityTooLarge})
	sendEvents(t, s, &fl, 0, 100, 0)
	rows := srv.Rows()
	require.Len(t, rows, 100)
	for i, row := range rows {
		if !checkRow(t, row, i, 0) {
			break
		}
	}
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, http.StatusRequestEntityTooLarge, reqs[0].Status)
	assert.Equal(t, 50, reqs[1].Rows)
	assert.Equal(t, 50, reqs[2].Rows)
	assert.Equal(t, int64(1), s.Stats().Splits)
	assert.Zero(t, fl.count())

	// A single record that the service still finds too large fails alone.
	srv.Inject(forwardtest.DCRFault{Status: http.StatusRequestEntityTooLarge})
	sendEvents(t, s, &fl, 100, 1, 0)
	require.Equal(t, 1, fl.count())
	assert.Equal(t, relaykit.ReasonTooLarge, fl.reasons[0])
	assert.Len(t, srv.Rows(), 100)
}

// TestSentinelRetryable: 429 and 5xx are reported retryable, with the
// wait the service named, and not retried by the sink.
func TestSentinelRetryable(t *testing.T) {
	tests := []struct {
		name  string
		fault forwardtest.DCRFault
		after time.Duration
	}{
		{"429 retry-after-ms", forwardtest.DCRFault{Status: 429, RetryAfterMs: "30"}, 30 * time.Millisecond},
		{"429 Retry-After", forwardtest.DCRFault{Status: 429, RetryAfter: "1"}, time.Second},
		{"429 both: ms wins", forwardtest.DCRFault{Status: 429, RetryAfter: "9", RetryAfterMs: "1500"}, 1500 * time.Millisecond},
		{"503 Retry-After", forwardtest.DCRFault{Status: 503, RetryAfter: "4"}, 4 * time.Second},
		{"500", forwardtest.DCRFault{Status: 500}, 0},
		{"503", forwardtest.DCRFault{Status: 503}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
			var fl failureLog
			s := sentinelFor(t, srv, &fl, nil)
			srv.Inject(tt.fault)
			require.Error(t, sendEvents(t, s, &fl, 0, 10, 0))
			assert.Empty(t, srv.Rows())
			assert.Len(t, srv.Requests(), 1, "one attempt")
			require.Len(t, fl.runs, 1)
			assert.Equal(t, relaykit.FailedRange{From: 0, To: 10, Reason: relaykit.ReasonSinkError, RetryAfter: tt.after, Err: fl.runs[0].Err}, fl.runs[0])
			// The next Send delivers them.
			require.NoError(t, sendEvents(t, s, &fl, 0, 10, 0))
			rows := srv.Rows()
			require.Len(t, rows, 10, "delivered exactly once")
			for i, row := range rows {
				checkRow(t, row, i, 0)
			}
		})
	}
}

func TestSentinelUnauthorized(t *testing.T) {
	t.Run("401 once refreshes the token", func(t *testing.T) {
		srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
		var fl failureLog
		s := sentinelFor(t, srv, &fl, nil)
		sendEvents(t, s, &fl, 0, 10, 0)
		srv.RevokeTokens() // the cached token is no longer accepted
		sendEvents(t, s, &fl, 10, 10, 0)
		require.Len(t, srv.Rows(), 20)
		assert.Equal(t, 2, srv.TokenRequests())
		reqs := srv.Requests()
		require.Len(t, reqs, 3)
		assert.Equal(t, http.StatusUnauthorized, reqs[1].Status)
		assert.NotEqual(t, reqs[1].Token, reqs[2].Token, "the request is sent again with a new token")
		assert.Zero(t, fl.count())
	})
	t.Run("injected 401 once", func(t *testing.T) {
		srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
		var fl failureLog
		s := sentinelFor(t, srv, &fl, nil)
		srv.Inject(forwardtest.DCRFault{Status: http.StatusUnauthorized})
		sendEvents(t, s, &fl, 0, 10, 0)
		assert.Len(t, srv.Rows(), 10)
		assert.Equal(t, 2, srv.TokenRequests())
		assert.Zero(t, fl.count())
	})
	t.Run("401 twice is permanent", func(t *testing.T) {
		srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
		var fl failureLog
		s := sentinelFor(t, srv, &fl, nil)
		srv.RejectAllTokens(true)
		sendEvents(t, s, &fl, 0, 10, 0)
		assert.Empty(t, srv.Rows())
		require.Equal(t, 10, fl.count())
		assert.Equal(t, relaykit.ReasonUnauthorized, fl.reasons[0])
		assert.Len(t, srv.Requests(), 2, "once more with a fresh token, no more")
		assert.True(t, fl.runs[0].Permanent)
		assert.Equal(t, 2, srv.TokenRequests())
		assert.Equal(t, int64(10), s.Stats().EventsFailed[relaykit.ReasonUnauthorized])
	})
	t.Run("refused credentials send nothing", func(t *testing.T) {
		srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
		var fl failureLog
		const wrong = "wrong-Secret+/=value"
		s := sentinelFor(t, srv, &fl, func(c *forward.SentinelConfig) { c.TokenSource = entraFor(t, srv, wrong) })
		sendEvents(t, s, &fl, 0, 10, 0)
		sendEvents(t, s, &fl, 10, 10, 0)
		assert.Empty(t, srv.Requests(), "no data is sent without a token")
		require.Equal(t, 20, fl.count())
		assert.Equal(t, relaykit.ReasonUnauthorized, fl.reasons[0])
		assert.Equal(t, 1, srv.TokenRequests(), "a refusal is held, not re-asked per batch")
		for _, m := range fl.messages {
			assert.Contains(t, m, "invalid_client")
			assert.NotContains(t, m, wrong)
		}
	})
}

func TestSentinelRejected(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	var fl failureLog
	s := sentinelFor(t, srv, &fl, nil)
	const msg = "Column 'SeverityLevel' of type 'int' cannot hold the value 'x'."
	srv.Inject(forwardtest.DCRFault{Status: http.StatusBadRequest, Code: "InvalidPayload", Message: msg})
	sendEvents(t, s, &fl, 0, 10, 0)
	sendEvents(t, s, &fl, 10, 10, 0)
	rows := srv.Rows()
	require.Len(t, rows, 10)
	checkRow(t, rows[0], 10, 0)
	require.Equal(t, 10, fl.count())
	assert.Equal(t, relaykit.ReasonRejected, fl.reasons[0])
	require.Len(t, fl.messages, 1)
	assert.Contains(t, fl.messages[0], "InvalidPayload: "+msg)
	assert.Contains(t, fl.messages[0], "HTTP 400")
	assert.Len(t, srv.Requests(), 2, "a rejected request is not retried")
}

func TestSentinelReportsSendError(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	s := sentinelFor(t, srv, nil, nil)
	srv.Inject(forwardtest.DCRFault{Status: http.StatusBadRequest})
	err := s.Send(t.Context(), []relaykit.Event{sentinelEvent(0, 0)})
	var se *forward.SendError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusBadRequest, se.StatusCode)
	assert.Equal(t, "sentinel", se.Destination)
	assert.False(t, se.Retryable)
	var be *relaykit.BatchError
	require.ErrorAs(t, err, &be)
	assert.True(t, be.Permanent())
}

func TestSentinelShutdown(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	var fl failureLog
	s := sentinelFor(t, srv, &fl, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	b := []relaykit.Event{sentinelEvent(0, 0)}
	err := fl.add(t, b, s.Send(ctx, b))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, []string{relaykit.ReasonShutdown}, fl.reasons)
	assert.Empty(t, srv.Rows())
}

func TestNewSentinelInvalid(t *testing.T) {
	ok := forward.SentinelConfig{
		Endpoint: "https://dce.example.com", DCRImmutableID: "dcr-0123", Stream: "Custom-T_CL",
		TokenSource: forward.StaticToken("t"),
	}
	_, err := forward.NewSentinel(ok)
	require.NoError(t, err)
	long := strings.Repeat("a", 46)
	for _, tt := range []struct {
		name string
		mod  func(*forward.SentinelConfig)
	}{
		{"no endpoint", func(c *forward.SentinelConfig) { c.Endpoint = "" }},
		{"bad endpoint", func(c *forward.SentinelConfig) { c.Endpoint = "dce.example.com" }},
		{"endpoint query", func(c *forward.SentinelConfig) { c.Endpoint = "https://x/?a=b" }},
		{"no dcr", func(c *forward.SentinelConfig) { c.DCRImmutableID = "" }},
		{"bad dcr", func(c *forward.SentinelConfig) { c.DCRImmutableID = "dcr/../x" }},
		{"no stream", func(c *forward.SentinelConfig) { c.Stream = "" }},
		{"no token source", func(c *forward.SentinelConfig) { c.TokenSource = nil }},
		{"request over 1 MiB", func(c *forward.SentinelConfig) { c.HTTP.MaxRequestBytes = 1<<20 + 1 }},
		{"column digit first", func(c *forward.SentinelConfig) { c.Columns.Message = "1Raw" }},
		{"column too long", func(c *forward.SentinelConfig) { c.Columns.Host = long }},
		{"column dash", func(c *forward.SentinelConfig) { c.Columns.Source = "App-Name" }},
		{"column underscore first", func(c *forward.SentinelConfig) { c.Columns.Source = "_App" }},
		{"duplicate column", func(c *forward.SentinelConfig) { c.Columns.Source = "computer" }},
		{"time left out", func(c *forward.SentinelConfig) { c.Columns.Time = "-" }},
		{"field column", func(c *forward.SentinelConfig) { c.Fields = []forward.SentinelField{{Field: "a.b"}} }},
		{"field no name", func(c *forward.SentinelConfig) { c.Fields = []forward.SentinelField{{Column: "X"}} }},
		{"field duplicate", func(c *forward.SentinelConfig) { c.Fields = []forward.SentinelField{{Field: "RawData"}} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.mod(&cfg)
			s, err := forward.NewSentinel(cfg)
			assert.Nil(t, s)
			assert.ErrorIs(t, err, forward.ErrInvalidConfig)
		})
	}
	cfg := ok
	cfg.Columns.Host = strings.Repeat("b", 45)
	cfg.Columns.Message = "-"
	_, err = forward.NewSentinel(cfg)
	assert.NoError(t, err, "45 characters is the limit; '-' leaves a column out")
}

func TestSentinelAppendEvent(t *testing.T) {
	s, err := forward.NewSentinel(forward.SentinelConfig{
		Endpoint: "https://dce.example.com", DCRImmutableID: "dcr-0123", Stream: "Custom-T_CL",
		TokenSource: forward.StaticToken("t"),
		Columns:     forward.SentinelColumns{Fields: "Extra", Host: "-"},
	})
	require.NoError(t, err)
	e := relaykit.Event{ReceiveTime: 1_700_000_000_123_456_789, Host: []byte("h"), Raw: []byte("bad \xff utf8")}
	e.SetFieldString("k", "v")
	got := string(s.AppendEvent(nil, &e))
	assert.Equal(t, `{"TimeGenerated":"2023-11-14T22:13:20.1234567Z","RawData":"bad \ufffd utf8","Extra":{"k":"v"}}`, got)

	buf := make([]byte, 0, 1024)
	allocs := testing.AllocsPerRun(100, func() { buf = s.AppendEvent(buf[:0], &e) })
	assert.Zero(t, allocs)
}

func FuzzSentinelAppendEvent(f *testing.F) {
	f.Add([]byte("host"), []byte("msg"), []byte("k"), []byte("v"), int64(1))
	f.Add([]byte("\x00\xff"), []byte("\"\\\u2028"), []byte(""), []byte("\n"), int64(-1))
	s, err := forward.NewSentinel(forward.SentinelConfig{
		Endpoint: "https://dce.example.com", DCRImmutableID: "dcr-0123", Stream: "Custom-T_CL",
		TokenSource: forward.StaticToken("t"),
		Columns:     forward.SentinelColumns{Fields: "Extra", Source: "Src"},
		Fields:      []forward.SentinelField{{Field: "k", Column: "K"}},
	})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, host, msg, key, val []byte, ns int64) {
		e := relaykit.Event{Time: ns, Host: host, Source: host, Raw: msg}
		e.SetField(string(key), val)
		out := s.AppendEvent(nil, &e)
		var row map[string]any
		require.NoError(t, json.Unmarshal(out, &row), "%q", out)
		if utf8.Valid(msg) {
			require.Equal(t, string(msg), row["RawData"])
		}
		_, err := time.Parse(time.RFC3339Nano, row["TimeGenerated"].(string))
		require.NoError(t, err)
	})
}

func TestSentinelConformance(t *testing.T) {
	forwardtest.TestSink(t, func(t *testing.T) forwardtest.SinkHarness {
		srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
		s := sentinelFor(t, srv, nil, func(c *forward.SentinelConfig) { c.HTTP.Concurrency = 0 })
		return forwardtest.SinkHarness{Sink: s, Received: func(int) []string {
			var msgs []string
			for _, row := range srv.Rows() {
				msgs = append(msgs, row["RawData"].(string))
			}
			return msgs
		}}
	})
}
