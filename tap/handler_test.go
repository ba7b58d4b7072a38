package tap_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/tap"
)

// fixture is a registry with two points behind a Handler on a real
// loopback server.
type fixture struct {
	reg  *tap.Registry
	in   *tap.Point
	dest *tap.Point
	h    *tap.Handler
	srv  *httptest.Server
}

func newFixture(t *testing.T, cfg tap.HandlerConfig) *fixture {
	t.Helper()
	f := &fixture{reg: &tap.Registry{}}
	f.in = f.reg.Point("input:a")
	f.dest = f.reg.Point("destination:d")
	var err error
	f.h, err = tap.NewHandler(f.reg, cfg)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/api/tap", f.h)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// open starts a tap request and returns the response once its headers
// arrived: the subscription is open then.
func (f *fixture) open(t *testing.T, ctx context.Context, query string, hdr http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.srv.URL+"/api/tap?"+query, nil)
	require.NoError(t, err)
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// jsonLine is what AppendJSON writes for o.
func jsonLine(o tap.Observation) string { return string(tap.AppendJSON(nil, &o)) }

func TestHandlerNDJSON(t *testing.T) {
	f := newFixture(t, tap.HandlerConfig{})
	resp := f.open(t, t.Context(), "at=destination:d&limit=3", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/x-ndjson", resp.Header.Get("Content-Type"))
	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))

	evs := events(5)
	f.in.Publish(evs) // another point: not in this stream
	f.dest.PublishResult(evs[:2], nil)
	f.dest.PublishResult(evs[2:], &relaykit.BatchError{Failed: []relaykit.FailedRange{{From: 0, To: 3, Permanent: true, Reason: relaykit.ReasonRejected}}})
	body, err := io.ReadAll(resp.Body) // the response ends at the limit
	require.NoError(t, err)

	delivered := tap.Outcome{Status: tap.StatusDelivered}
	rejected := tap.Outcome{Status: tap.StatusFailed, Reason: relaykit.ReasonRejected, Permanent: true}
	want := jsonLine(tap.Observation{Point: "destination:d", Outcome: delivered, Event: evs[0]}) + "\n" +
		jsonLine(tap.Observation{Point: "destination:d", Outcome: delivered, Event: evs[1]}) + "\n" +
		jsonLine(tap.Observation{Point: "destination:d", Outcome: rejected, Event: evs[2]}) + "\n"
	assert.Equal(t, want, string(body))
	for line := range strings.Lines(string(body)) {
		assert.True(t, json.Valid([]byte(line)), line)
	}
	assert.Contains(t, string(body), `"outcome":"failed","reason":"rejected","permanent":true,"receive_time":"2027-01-15T08:00:00.000000002Z"`)
	st := f.h.Stats()
	assert.Equal(t, uint64(3), st.Events)
	assert.Equal(t, uint64(1), st.Started)
	require.Eventually(t, func() bool { return f.dest.Stats().Subscribers == 0 }, 5*time.Second, time.Millisecond)
}

func TestHandlerSSE(t *testing.T) {
	f := newFixture(t, tap.HandlerConfig{})
	resp := f.open(t, t.Context(), "at=input:a&limit=2", http.Header{"Accept": {"text/html, text/event-stream;q=0.9"}})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	evs := events(3)
	f.in.Publish(evs)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	want := "data: " + jsonLine(tap.Observation{Point: "input:a", Event: evs[0]}) + "\n\n" +
		"data: " + jsonLine(tap.Observation{Point: "input:a", Event: evs[1]}) + "\n\n"
	assert.Equal(t, want, string(body))

	var recs []*tap.Record
	require.NoError(t, tap.ReadStream(strings.NewReader(string(body)), func(r *tap.Record) error {
		recs = append(recs, r)
		return nil
	}))
	require.Len(t, recs, 2)
	assert.Equal(t, "event 1 ok", recs[1].Message)
}

// TestHandlerFlushesEachEvent reads events one by one while the stream
// stays open: nothing waits for a full buffer.
func TestHandlerFlushesEachEvent(t *testing.T) {
	f := newFixture(t, tap.HandlerConfig{})
	resp := f.open(t, t.Context(), "at=input:a", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	br := bufio.NewReader(resp.Body)
	evs := events(3)
	for i := range evs {
		f.in.Publish(evs[i : i+1])
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, jsonLine(tap.Observation{Point: "input:a", Event: evs[i]})+"\n", line)
	}
}

func TestHandlerFilterSample(t *testing.T) {
	f := newFixture(t, tap.HandlerConfig{})
	tests := []struct {
		query string
		want  []int
	}{
		{"filter=error&sample=2&limit=3", []int{0, 6, 12}},
		{"filter=%5EhB%24&field=host&limit=3", []int{1, 3, 5}},
		{"filter=%5E1%5B24%5D%24&field=n&limit=2", []int{12, 14}},
		{"field=_raw&filter=(%3Fi)EVENT%20(7%7C9)&limit=2", []int{7, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			resp := f.open(t, t.Context(), "at=input:a&"+tt.query, nil)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			f.in.Publish(events(30))
			var got []int
			require.NoError(t, tap.ReadStream(resp.Body, func(r *tap.Record) error {
				got = append(got, atoi(t, r.Fields["n"]))
				return nil
			}))
			assert.Equal(t, tt.want, got)
		})
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	for _, c := range s {
		require.True(t, c >= '0' && c <= '9', s)
		n = n*10 + int(c-'0')
	}
	return n
}

func TestHandlerRate(t *testing.T) {
	f := newFixture(t, tap.HandlerConfig{MaxPerSecond: 5})
	for _, tt := range []struct {
		query string
		want  int
	}{{"rate=2", 2}, {"rate=100", 5}, {"", 5}} {
		t.Run(tt.query, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			resp := f.open(t, ctx, "at=input:a&"+tt.query, nil)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			before := f.in.Stats()
			f.in.Publish(events(20)) // one batch: one clock reading, one window
			after := f.in.Stats()
			assert.Equal(t, uint64(tt.want), after.Delivered-before.Delivered)
			assert.Equal(t, uint64(20-tt.want), after.Limited-before.Limited)
			br := bufio.NewReader(resp.Body)
			for range tt.want {
				_, err := br.ReadString('\n')
				require.NoError(t, err)
			}
			// The next case's batch must meet its subscriber alone: one
			// still attached would count that batch as limited too.
			cancel()
			require.Eventually(t, func() bool { return f.in.Stats().Subscribers == 0 }, 5*time.Second, time.Millisecond, "the subscription ended")
		})
	}
}

func TestHandlerBadRequests(t *testing.T) {
	f := newFixture(t, tap.HandlerConfig{})
	const known = "points: destination:d, input:a"
	tests := []struct {
		query string
		want  string
	}{
		{"", "tap: missing parameter at; " + known},
		{"at=input:zz", `tap: unknown point "input:zz"; ` + known},
		{"at=input:a&filter=a(", `tap: bad filter "a(": error parsing regexp: missing closing ): ` + "`a(`"},
		{"at=input:a&sample=0", `tap: sample="0": want a positive integer`},
		{"at=input:a&sample=x", `tap: sample="x": want a positive integer`},
		{"at=input:a&limit=-1", `tap: limit="-1": want a positive integer`},
		{"at=input:a&rate=0", `tap: rate="0": want a positive integer`},
		{"at=input:a&fliter=x", `tap: unknown parameter "fliter" (known: at, filter, field, sample, limit, rate)`},
		{"at=input:a&filter=%zz", `tap: bad query: invalid URL escape "%zz"`},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			resp := f.open(t, t.Context(), tt.query, nil)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
			assert.Equal(t, tt.want+"\n", string(body))
		})
	}
	resp, err := f.srv.Client().Post(f.srv.URL+"/api/tap?at=input:a", "text/plain", nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "GET", resp.Header.Get("Allow"))
	assert.Equal(t, uint64(len(tests)+1), f.h.Stats().BadRequests)
	assert.Zero(t, f.h.Stats().Started)
	assert.Zero(t, f.in.Stats().Subscribers)

	var empty tap.Registry
	h, err := tap.NewHandler(&empty, tap.HandlerConfig{})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/?at=x", nil))
	assert.Equal(t, `tap: unknown point "x"; points: none`+"\n", rec.Body.String())
}

func TestHandlerToken(t *testing.T) {
	f := newFixture(t, tap.HandlerConfig{Token: "s3cret-token"})
	basic := func(user, pass string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	}
	for _, auth := range []string{"", "Bearer wrong", "Bearer s3cret-toke", "Bearer s3cret-token-and-more", "Basic s3cret-token", "s3cret-token",
		basic("ops", "wrong"), basic("s3cret-token", ""), "Bearer " + basic("ops", "s3cret-token")} {
		t.Run(auth, func(t *testing.T) {
			var hdr http.Header
			if auth != "" {
				hdr = http.Header{"Authorization": {auth}}
			}
			resp := f.open(t, t.Context(), "at=input:a", hdr)
			assertUnauthorized(t, resp)
		})
	}
	// Even a bad request reads nothing without the token.
	resp := f.open(t, t.Context(), "at=nowhere", http.Header{"Authorization": {"Bearer no"}})
	assertUnauthorized(t, resp)
	assert.Zero(t, f.in.Stats().Subscribers)
	assert.Equal(t, uint64(10), f.h.Stats().Unauthorized)
	assert.Zero(t, f.h.Stats().Started)

	err := tap.Tail(t.Context(), f.srv.Client(), f.srv.URL+"/api/tap?at=input:a", "wrong", func(*tap.Record) error { return nil })
	require.ErrorIs(t, err, tap.ErrUnauthorized)

	// The right token streams.
	resp = f.open(t, t.Context(), "at=input:a&limit=1", http.Header{"Authorization": {"bearer  s3cret-token"}})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	f.in.Publish(events(1))
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, string(body), `"message":"event 0 error"`)

	// So does the token as a Basic password, whatever the user name: what
	// a browser sends once its login prompt was answered.
	resp = f.open(t, t.Context(), "at=input:a&limit=1", http.Header{"Authorization": {basic("ops", "s3cret-token")}})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	f.in.Publish(events(1))
	body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, string(body), `"message":"event 0 error"`)
}

func assertUnauthorized(t *testing.T, resp *http.Response) {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, []string{`Bearer realm="tap"`, `Basic realm="tap", charset="UTF-8"`}, resp.Header.Values("WWW-Authenticate"))
	assert.Equal(t, "tap: unauthorized\n", string(body))
}

// TestHandlerClientGoesAway: a client that disconnects ends the handler's
// stream and its subscription (goleak checks the goroutine is gone).
func TestHandlerClientGoesAway(t *testing.T) {
	f := newFixture(t, tap.HandlerConfig{})
	ctx, cancel := context.WithCancel(t.Context())
	resp := f.open(t, ctx, "at=input:a", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	f.in.Publish(events(1))
	_, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, 1, f.h.Stats().Streams)
	assert.Equal(t, 1, f.in.Stats().Subscribers)

	cancel()
	require.Eventually(t, func() bool {
		return f.h.Stats().Streams == 0 && f.in.Stats().Subscribers == 0
	}, 10*time.Second, time.Millisecond)
	assert.False(t, f.in.Active())
}

func TestHandlerPointRemoved(t *testing.T) {
	f := newFixture(t, tap.HandlerConfig{})
	resp := f.open(t, t.Context(), "at=input:a", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	f.in.Publish(events(2))
	require.True(t, f.reg.Remove("input:a"))
	body, err := io.ReadAll(resp.Body) // ends with the point
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(body), "\n"))
}

func TestNewHandlerErrors(t *testing.T) {
	_, err := tap.NewHandler(nil, tap.HandlerConfig{})
	require.ErrorIs(t, err, tap.ErrInvalidConfig)
	for _, cfg := range []tap.HandlerConfig{{MaxPerSecond: -1}, {Buffer: -1}, {WriteTimeout: -time.Second}} {
		_, err := tap.NewHandler(&tap.Registry{}, cfg)
		require.ErrorIs(t, err, tap.ErrInvalidConfig)
	}
}

func TestTail(t *testing.T) {
	f := newFixture(t, tap.HandlerConfig{Token: "tok"})
	evs := events(4)
	evs[1].SetPriority(4, 3)
	evs[1].Time = 1_700_000_000_500_000_000
	evs[2].Raw = []byte("bad \xff utf8")
	// The subscription is open once the response headers arrived.
	c := &http.Client{Transport: onResponse{f.srv.Client().Transport, func() { f.dest.PublishResult(evs, errors.New("boom")) }}}
	var recs []*tap.Record
	err := tap.Tail(t.Context(), c, f.srv.URL+"/api/tap?at=destination:d&limit=3", "tok", func(r *tap.Record) error {
		recs = append(recs, r)
		return nil
	})
	require.NoError(t, err)
	require.Len(t, recs, 3)
	r := recs[1]
	assert.Equal(t, "destination:d", r.Point)
	assert.Equal(t, "failed", r.Outcome)
	assert.Equal(t, relaykit.ReasonSinkError, r.Reason)
	assert.False(t, r.Permanent)
	assert.Equal(t, time.Unix(0, evs[1].ReceiveTime).UTC(), r.ReceiveTime)
	assert.Equal(t, time.Unix(0, evs[1].Time).UTC(), r.Time)
	assert.False(t, r.TimeIsReceiveTime)
	assert.True(t, recs[0].TimeIsReceiveTime)
	assert.Equal(t, "hB", r.Host)
	assert.Equal(t, "syslog", r.SourceType)
	assert.Equal(t, "auth", r.Facility)
	require.NotNil(t, r.FacilityCode)
	assert.Equal(t, 4, *r.FacilityCode)
	assert.Equal(t, "err", r.Severity)
	assert.Nil(t, recs[0].FacilityCode)
	assert.Equal(t, "event 1 ok", r.Message)
	assert.Equal(t, map[string]string{"n": "1"}, r.Fields)
	assert.JSONEq(t, jsonLine(tap.Observation{Point: "destination:d", Outcome: tap.Outcome{Status: tap.StatusFailed, Reason: relaykit.ReasonSinkError}, Event: evs[1]}), string(r.JSON))
	assert.Equal(t, []byte("bad \xff utf8"), recs[2].MessageBase64)

	// fn's error ends the stream and comes back.
	stop := errors.New("enough")
	c = &http.Client{Transport: onResponse{f.srv.Client().Transport, func() { f.in.Publish(events(2)) }}}
	err = tap.Tail(t.Context(), c, f.srv.URL+"/api/tap?at=input:a", "tok", func(*tap.Record) error { return stop })
	require.ErrorIs(t, err, stop)
	require.Eventually(t, func() bool { return f.h.Stats().Streams == 0 }, 10*time.Second, time.Millisecond)

	err = tap.Tail(t.Context(), nil, f.srv.URL+"/api/tap?at=input:zz", "tok", func(*tap.Record) error { return nil })
	require.Error(t, err)
	assert.Equal(t, `tap: 400 Bad Request: tap: unknown point "input:zz"; points: destination:d, input:a`, err.Error())
}

// onResponse is a RoundTripper that calls fn when a response's headers
// have arrived.
type onResponse struct {
	base http.RoundTripper
	fn   func()
}

func (o onResponse) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := o.base.RoundTrip(r)
	if err == nil {
		o.fn()
	}
	return resp, err
}

func TestReadStream(t *testing.T) {
	in := ": comment\n" +
		"event: tap\ndata: {\"point\":\"a\",\"message\":\"one\"}\n\n" +
		"{\"point\":\"b\",\"message\":\"two\"}\r\n" +
		"\n" +
		"data: {\"point\":\"c\",\ndata: \"message\":\"three\"}\n\n" +
		"{\"point\":\"d\",\"message\":\"four\"}" // no final newline
	var got []string
	require.NoError(t, tap.ReadStream(strings.NewReader(in), func(r *tap.Record) error {
		got = append(got, r.Point+"="+r.Message)
		return nil
	}))
	assert.Equal(t, []string{"a=one", "b=two", "c=three", "d=four"}, got)

	err := tap.ReadStream(strings.NewReader("{not json}\n"), func(*tap.Record) error { return nil })
	require.ErrorContains(t, err, "tap: bad record")
}

func TestAppendJSON(t *testing.T) {
	var e relaykit.Event
	e.ReceiveTime = time.Date(2026, 11, 22, 10, 0, 0, 500_000_000, time.UTC).UnixNano()
	e.Time = time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC).UnixNano()
	e.Host = []byte("h")
	e.Source = []byte("s")
	e.SourceType = []byte("st")
	e.Index = []byte("i")
	e.SetPriority(4, 3)
	e.Raw = []byte(`say "hi"`)
	e.SetFieldString("k", "v")
	o := tap.Observation{Point: "destination:hec", Outcome: tap.Outcome{Status: tap.StatusFailed, Reason: "rejected", Permanent: true}, Event: e}
	got := string(tap.AppendJSON([]byte("x"), &o))
	assert.Equal(t, `x{"point":"destination:hec","outcome":"failed","reason":"rejected","permanent":true,`+
		`"receive_time":"2026-11-22T10:00:00.5Z","time":"2026-11-22T10:00:00.123456789Z",`+
		`"host":"h","source":"s","sourcetype":"st","index":"i",`+
		`"facility":"auth","facility_code":4,"severity":"err","severity_code":3,`+
		`"message":"say \"hi\"","fields":{"k":"v"}}`, got)

	var bare relaykit.Event
	assert.Equal(t, `{"point":"input:x","message":""}`, string(tap.AppendJSON(nil, &tap.Observation{Point: "input:x", Event: bare})))
	o = tap.Observation{Point: "d", Outcome: tap.Outcome{Status: tap.StatusDelivered, Reason: "ignored"}, Event: bare}
	assert.Equal(t, `{"point":"d","outcome":"delivered","message":""}`, string(tap.AppendJSON(nil, &o)))
}
