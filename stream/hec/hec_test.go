package hec_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/stream/hec"
)

const (
	secret  = "11111111-2222-3333-4444-555555555555"
	channel = "0aeeac95-ac74-4aa9-b30d-6c4c0ac581ba"
)

// recorder is a Sink that keeps deep copies of what it accepted.
type recorder struct {
	mu      sync.Mutex
	events  []relaykit.Event
	batches int
	routes  []string
	err     error
}

func (r *recorder) Send(ctx context.Context, batch []relaykit.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	if req, ok := hec.FromContext(ctx); ok {
		r.routes = append(r.routes, req.Route)
	}
	for i := range batch {
		r.events = append(r.events, batch[i].Clone())
	}
	r.batches++
	return nil
}

func (r *recorder) all() []relaykit.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]relaykit.Event(nil), r.events...)
}

type reply struct {
	Text               string          `json:"text"`
	Code               *int            `json:"code"`
	InvalidEventNumber *int            `json:"invalid-event-number"`
	AckID              *int64          `json:"ackId"`
	Acks               map[string]bool `json:"acks"`
	status             int
	raw                string
}

type req struct {
	path, auth, channel, encoding string
	body                          []byte
	gzip                          bool
}

func do(t *testing.T, client *http.Client, base string, q req) reply {
	t.Helper()
	body := q.body
	if q.gzip {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write(body)
		require.NoError(t, zw.Close())
		body = b.Bytes()
		q.encoding = "gzip"
	}
	if q.path == "" {
		q.path = "/services/collector/event"
	}
	r, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+q.path, bytes.NewReader(body))
	require.NoError(t, err)
	if q.auth != "" {
		r.Header.Set("Authorization", q.auth)
	}
	if q.channel != "" {
		r.Header.Set("X-Splunk-Request-Channel", q.channel)
	}
	if q.encoding != "" {
		r.Header.Set("Content-Encoding", q.encoding)
	}
	resp, err := client.Do(r)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	rep := reply{status: resp.StatusCode, raw: string(raw)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		require.NoError(t, json.Unmarshal(raw, &rep), string(raw))
	}
	return rep
}

func code(t *testing.T, r reply) int {
	t.Helper()
	require.NotNil(t, r.Code, "no code in %q (HTTP %d)", r.raw, r.status)
	return *r.Code
}

// newServer serves a handler for cfg (Sink defaulting to a recorder) on
// httptest, closing both at the end of the test.
func newServer(t *testing.T, cfg hec.Config, tlsOn bool) (*httptest.Server, *hec.Handler, *recorder) {
	t.Helper()
	rec := &recorder{}
	if cfg.Sink == nil {
		cfg.Sink = rec
	}
	if cfg.Tokens == nil {
		cfg.Tokens = []hec.Token{{Name: "main", Token: secret}}
	}
	h, err := hec.New(cfg)
	require.NoError(t, err)
	var srv *httptest.Server
	if tlsOn {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(func() {
		srv.Close()
		require.NoError(t, h.Close())
	})
	return srv, h, rec
}

func TestEventEndpoint(t *testing.T) {
	srv, h, rec := newServer(t, hec.Config{Tokens: []hec.Token{{Token: secret, Host: "dflt-host", Index: "dflt", Route: "sentinel"}}, RouteField: "route"}, false)
	body := `{"event":"hello","time":1700000000.123,"host":"h1","source":"s1","sourcetype":"st1","index":"i1","fields":{"k":"v","n":42,"b":true,"multi":["a","b"],"nul":null}}
	{"event":{"msg":"obj","n":[1,2]},"time":"1700000001"}  {"event":17}`
	rep := do(t, srv.Client(), srv.URL, req{auth: "Splunk " + secret, body: []byte(body), gzip: true})
	require.Equal(t, 0, code(t, rep), rep.raw)
	assert.Equal(t, 200, rep.status)
	assert.Equal(t, "Success", rep.Text)
	got := rec.all()
	require.Len(t, got, 3)
	e := got[0]
	assert.Equal(t, int64(1700000000123000000), e.Time)
	assert.NotZero(t, e.ReceiveTime)
	assert.Equal(t, "h1", string(e.Host))
	assert.Equal(t, "s1", string(e.Source))
	assert.Equal(t, "st1", string(e.SourceType))
	assert.Equal(t, "i1", string(e.Index))
	assert.Equal(t, "hello", string(e.Raw))
	var kv []string
	for _, f := range e.Fields {
		kv = append(kv, string(f.Key)+"="+string(f.Value))
	}
	assert.Equal(t, []string{"k=v", "n=42", "b=true", "multi=a", "multi=b", "route=sentinel"}, kv)
	assert.Equal(t, `{"msg":"obj","n":[1,2]}`, string(got[1].Raw))
	assert.Equal(t, int64(1700000001)*1e9, got[1].Time)
	assert.Equal(t, "dflt-host", string(got[1].Host), "token default")
	assert.Equal(t, "dflt", string(got[1].Index), "token default")
	assert.Equal(t, "17", string(got[2].Raw))
	assert.Equal(t, []string{"sentinel"}, rec.routes)
	st := h.Stats()
	assert.Equal(t, int64(1), st.Requests)
	assert.Equal(t, int64(3), st.Events)
	assert.Equal(t, int64(3), st.EventsAccepted)
	assert.Equal(t, int64(1), st.Responses[hec.CodeSuccess])
	assert.Less(t, st.Bytes, st.DecodedBytes, "gzip")
}

func TestRawEndpoint(t *testing.T) {
	srv, _, rec := newServer(t, hec.Config{}, false)
	body := "line one\r\n\n  \nline two\nline three"
	rep := do(t, srv.Client(), srv.URL, req{path: "/services/collector/raw?channel=" + channel + "&host=h&source=s&sourcetype=st&index=i&time=1700000000.5",
		auth: "Splunk " + secret, body: []byte(body)})
	require.Equal(t, 0, code(t, rep), rep.raw)
	got := rec.all()
	require.Len(t, got, 3)
	for i, want := range []string{"line one", "line two", "line three"} {
		assert.Equal(t, want, string(got[i].Raw))
		assert.Equal(t, "h", string(got[i].Host))
		assert.Equal(t, "s", string(got[i].Source))
		assert.Equal(t, "st", string(got[i].SourceType))
		assert.Equal(t, "i", string(got[i].Index))
		assert.Equal(t, int64(1700000000500000000), got[i].Time)
	}
	// The raw endpoint needs a channel.
	rep = do(t, srv.Client(), srv.URL, req{path: "/services/collector/raw", auth: "Splunk " + secret, body: []byte("x")})
	assert.Equal(t, hec.CodeChannelMissing, code(t, rep))
	assert.Equal(t, 400, rep.status)
}

// Bad requests get HEC's code, HTTP status and text; events before a bad
// one are delivered, and its number is reported.
func TestCodes(t *testing.T) {
	disabled := "99999999-2222-3333-4444-555555555555"
	rec := &recorder{}
	srv, h, _ := newServer(t, hec.Config{Sink: rec, Tokens: []hec.Token{
		{Name: "main", Token: secret, Indexes: []string{"main"}},
		{Name: "off", Token: disabled, Disabled: true},
	}}, false)
	ok := "Splunk " + secret
	for _, tc := range []struct {
		name    string
		q       req
		code    int
		status  int
		invalid int // -1: none
		indexed int // events delivered
	}{
		{"no token", req{body: []byte(`{"event":"x"}`)}, hec.CodeTokenRequired, 401, -1, 0},
		{"bad scheme", req{auth: "Bearer " + secret, body: []byte(`{"event":"x"}`)}, hec.CodeInvalidAuthz, 401, -1, 0},
		{"wrong token", req{auth: "Splunk nope", body: []byte(`{"event":"x"}`)}, hec.CodeInvalidToken, 403, -1, 0},
		{"disabled", req{auth: "Splunk " + disabled, body: []byte(`{"event":"x"}`)}, hec.CodeTokenDisabled, 403, -1, 0},
		{"query token", req{path: "/services/collector/event?token=" + secret, body: []byte(`{"event":"x"}`)}, hec.CodeQueryStringDisabled, 400, -1, 0},
		{"no data", req{auth: ok, body: []byte(" \n")}, hec.CodeNoData, 400, -1, 0},
		{"invalid json", req{auth: ok, body: []byte(`{"event":"a"}{"event":"b"}{"event":`)}, hec.CodeInvalidDataFormat, 400, 2, 2},
		{"not an object", req{auth: ok, body: []byte(`{"event":"a"}["x"]`)}, hec.CodeInvalidDataFormat, 400, 1, 1},
		{"bad time", req{auth: ok, body: []byte(`{"event":"a","time":"yesterday"}`)}, hec.CodeInvalidDataFormat, 400, 0, 0},
		{"no event", req{auth: ok, body: []byte(`{"event":"a"}{"host":"h"}`)}, hec.CodeEventRequired, 400, 1, 1},
		{"blank event", req{auth: ok, body: []byte(`{"event":""}`)}, hec.CodeEventBlank, 400, 0, 0},
		{"null event", req{auth: ok, body: []byte(`{"event":null}`)}, hec.CodeEventBlank, 400, 0, 0},
		{"nested field", req{auth: ok, body: []byte(`{"event":"a","fields":{"x":{"y":1}}}`)}, hec.CodeIndexedFieldsError, 400, 0, 0},
		{"index", req{auth: ok, body: []byte(`{"event":"a","index":"main"}{"event":"b","index":"secret"}`)}, hec.CodeIncorrectIndex, 400, 1, 1},
		{"bad channel", req{auth: ok, channel: "not-a-guid", body: []byte(`{"event":"a"}`)}, hec.CodeInvalidChannel, 400, -1, 0},
		{"ack disabled", req{path: "/services/collector/ack", channel: channel, auth: ok, body: []byte(`{"acks":[0]}`)}, hec.CodeAckDisabled, 400, -1, 0},
		{"bad gzip", req{auth: ok, encoding: "gzip", body: []byte("not gzip")}, hec.CodeInvalidDataFormat, 400, -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(rec.all())
			rep := do(t, srv.Client(), srv.URL, tc.q)
			require.Equal(t, tc.code, code(t, rep), rep.raw)
			assert.Equal(t, tc.status, rep.status)
			_, text, _ := hec.Status(tc.code)
			assert.Equal(t, text, rep.Text)
			if tc.invalid < 0 {
				assert.Nil(t, rep.InvalidEventNumber)
			} else if assert.NotNil(t, rep.InvalidEventNumber) {
				assert.Equal(t, tc.invalid, *rep.InvalidEventNumber)
			}
			assert.Equal(t, tc.indexed, len(rec.all())-before)
		})
	}
	rep := do(t, srv.Client(), srv.URL, req{auth: ok, encoding: "br", body: []byte("x")})
	assert.Equal(t, http.StatusUnsupportedMediaType, rep.status)
	st := h.Stats()
	assert.Equal(t, int64(1), st.Responses[hec.CodeTokenRequired])
	assert.Equal(t, int64(4), st.Responses[hec.CodeInvalidDataFormat])
	assert.Equal(t, int64(2), st.BadEncoding)
}

func TestBasicAuthAndQueryToken(t *testing.T) {
	srv, _, rec := newServer(t, hec.Config{AllowQueryStringToken: true}, false)
	r, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/services/collector", strings.NewReader(`{"event":"basic"}`))
	require.NoError(t, err)
	r.SetBasicAuth("anyone", secret)
	resp, err := srv.Client().Do(r)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	rep := do(t, srv.Client(), srv.URL, req{path: "/services/collector/event?token=" + secret, body: []byte(`{"event":"query"}`)})
	assert.Equal(t, 0, code(t, rep))
	require.Len(t, rec.all(), 2)
}

// A Sink that refuses, or does not answer within SendTimeout, gets the
// sender code 9 (503), which HEC senders retry.
func TestSinkRefusesBusy(t *testing.T) {
	rec := &recorder{err: errors.New("queue full")}
	var hookErr error
	var hookEvents int
	srv, h, _ := newServer(t, hec.Config{Name: "apps", Sink: rec, Hooks: hec.Hooks{OnSendError: func(err error, events int) { hookErr, hookEvents = err, events }}}, false)
	rep := do(t, srv.Client(), srv.URL, req{auth: "Splunk " + secret, body: []byte(`{"event":"a"}{"event":"b"}`)})
	assert.Equal(t, hec.CodeServerBusy, code(t, rep))
	assert.Equal(t, 503, rep.status)
	assert.ErrorIs(t, hookErr, rec.err)
	assert.EqualError(t, hookErr, "hec: apps: token main: queue full")
	assert.Equal(t, 2, hookEvents)

	slow := relaykit.SinkFunc(func(ctx context.Context, _ []relaykit.Event) error {
		<-ctx.Done()
		return ctx.Err()
	})
	srv2, h2, _ := newServer(t, hec.Config{Sink: slow, SendTimeout: 50 * time.Millisecond}, false)
	rep = do(t, srv2.Client(), srv2.URL, req{auth: "Splunk " + secret, body: []byte(`{"event":"a"}`)})
	assert.Equal(t, hec.CodeServerBusy, code(t, rep))
	for _, st := range []hec.Stats{h.Stats(), h2.Stats()} {
		assert.Equal(t, int64(1), st.SendErrors)
		assert.Zero(t, st.EventsAccepted)
		assert.Equal(t, st.Events, st.EventsRefused)
	}
}

func TestHealthAndNotFound(t *testing.T) {
	var unhealthy error
	srv, h, _ := newServer(t, hec.Config{Health: func() error { return unhealthy }}, false)
	get := func(path string) (int, string) {
		resp, err := srv.Client().Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	st, body := get("/services/collector/health")
	assert.Equal(t, 200, st)
	assert.JSONEq(t, `{"text":"HEC is healthy","code":17}`, body)
	unhealthy = errors.New("spool full")
	st, body = get("/services/collector/health/1.0")
	assert.Equal(t, 503, st)
	assert.JSONEq(t, `{"text":"HEC is unhealthy, queues are full","code":18}`, body)
	st, _ = get("/elsewhere")
	assert.Equal(t, 404, st)
	require.NoError(t, h.Close())
	rep := do(t, srv.Client(), srv.URL, req{auth: "Splunk " + secret, body: []byte(`{"event":"a"}`)})
	assert.Equal(t, hec.CodeServerBusy, code(t, rep), "closed")
}

func TestInvalidConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg   hec.Config
		field string
	}{
		{hec.Config{}, "Tokens"},
		{hec.Config{Tokens: []hec.Token{{Token: secret}}}, "Sink"},
		{hec.Config{Tokens: []hec.Token{{Token: ""}}, Sink: &recorder{}}, "Tokens[0].Token"},
		{hec.Config{Tokens: []hec.Token{{Token: secret}, {Token: secret}}, Sink: &recorder{}}, "Tokens[1].Token"},
		{hec.Config{Tokens: []hec.Token{{Token: secret}}, Sink: &recorder{}, MaxBodyBytes: -1}, "MaxBodyBytes"},
	} {
		for _, err := range []error{tc.cfg.Validate(), func() error { _, err := hec.New(tc.cfg); return err }()} {
			require.ErrorIs(t, err, hec.ErrInvalidConfig, tc.field)
			var fe *relaykit.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Field)
			assert.NotContains(t, err.Error(), secret)
		}
	}
}

// newHTTPServer serves h on httptest without closing h at the end.
func newHTTPServer(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
