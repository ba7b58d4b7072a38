package forwardtest_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward/forwardtest"
)

const channel = "0aeeac95-ac74-4aa9-b30d-6c4c0ac581ba"

type hecReply struct {
	Text               string          `json:"text"`
	Code               int             `json:"code"`
	InvalidEventNumber *int            `json:"invalid-event-number"`
	AckID              *int64          `json:"ackId"`
	Acks               map[string]bool `json:"acks"`
}

func post(t *testing.T, url, auth, ch string, body []byte, gz bool) (int, hecReply) {
	t.Helper()
	if gz {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write(body)
		require.NoError(t, zw.Close())
		body = b.Bytes()
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if ch != "" {
		req.Header.Set("X-Splunk-Request-Channel", ch)
	}
	if gz {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var r hecReply
	require.NoError(t, json.Unmarshal(raw, &r), string(raw))
	return resp.StatusCode, r
}

func TestHECServerStrict(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{Indexes: []string{"main"}})
	ok := "Splunk " + srv.Token()
	ev := srv.URL + "/services/collector/event"
	n := func(i int) *int { return &i }
	tests := []struct {
		name     string
		auth     string
		body     string
		status   int
		code     int
		text     string
		invalid  *int
		indexed  int
		endpoint string
	}{
		{"success", ok, `{"event":"a"}{"event":"b","time":1.5}`, 200, 0, "Success", nil, 2, ev},
		{"no token", "", `{"event":"a"}`, 401, 2, "Token is required", nil, 0, ev},
		{"bad scheme", "Bearer " + srv.Token(), `{"event":"a"}`, 401, 3, "Invalid authorization", nil, 0, ev},
		{"wrong token", "Splunk nope", `{"event":"a"}`, 403, 4, "Invalid token", nil, 0, ev},
		{"no data", ok, ``, 400, 5, "No data", nil, 0, ev},
		{"array rejected", ok, `[{"event":"a"}]`, 400, 6, "Invalid data format", n(0), 0, ev},
		{"bad second event", ok, `{"event":"a"}{"event":"b"`, 400, 6, "Invalid data format", n(1), 1, ev},
		{"missing event", ok, `{"event":"a"}{"host":"h"}`, 400, 12, "Event field is required", n(1), 1, ev},
		{"blank event", ok, `{"event":""}`, 400, 13, "Event field cannot be blank", n(0), 0, ev},
		{"incorrect index", ok, `{"event":"a","index":"main"}{"event":"b","index":"other"}`, 400, 7, "Incorrect index", n(1), 1, ev},
		{"nested fields", ok, `{"event":"a","fields":{"k":{"x":1}}}`, 400, 15, "Error in handling indexed fields", n(0), 0, ev},
		{"bad time", ok, `{"event":"a","time":"soon"}`, 400, 6, "Invalid data format", n(0), 0, ev},
		{"raw needs channel", ok, "line\n", 400, 10, "Data channel is missing", nil, 0, srv.URL + "/services/collector/raw"},
	}
	total := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, gz := range []bool{false, true} {
				status, r := post(t, tt.endpoint, tt.auth, "", []byte(tt.body), gz)
				assert.Equal(t, tt.status, status)
				assert.Equal(t, tt.code, r.Code)
				assert.Equal(t, tt.text, r.Text)
				assert.Equal(t, tt.invalid, r.InvalidEventNumber)
				total += tt.indexed
				assert.Len(t, srv.Events(), total)
			}
		})
	}
}

func TestHECServerAck(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{Ack: true})
	ok := "Splunk " + srv.Token()
	status, r := post(t, srv.URL+"/services/collector/event", ok, "", []byte(`{"event":"a"}`), false)
	assert.Equal(t, 400, status)
	assert.Equal(t, 10, r.Code)
	status, r = post(t, srv.URL+"/services/collector/event", ok, "not-a-guid", []byte(`{"event":"a"}`), false)
	assert.Equal(t, 400, status)
	assert.Equal(t, 11, r.Code)

	for want := range int64(2) {
		_, r = post(t, srv.URL+"/services/collector/event", ok, channel, []byte(`{"event":"a"}`), false)
		require.NotNil(t, r.AckID)
		assert.Equal(t, want, *r.AckID)
	}
	srv.LoseAcks(1)
	_, r = post(t, srv.URL+"/services/collector/event", ok, channel, []byte(`{"event":"lost"}`), false)
	require.NotNil(t, r.AckID)
	status, r = post(t, srv.URL+"/services/collector/ack", ok, channel, []byte(`{"acks":[0,1,2,9]}`), false)
	assert.Equal(t, 200, status)
	assert.Equal(t, map[string]bool{"0": true, "1": true, "2": false, "9": false}, r.Acks)
	// Once reported true, an ackId is forgotten.
	_, r = post(t, srv.URL+"/services/collector/ack", ok, channel, []byte(`{"acks":[0]}`), false)
	assert.Equal(t, map[string]bool{"0": false}, r.Acks)
	assert.Equal(t, []string{"a", "a"}, srv.Messages())
}

func TestHECServerAckDisabledAndHealth(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	status, r := post(t, srv.URL+"/services/collector/ack", "Splunk "+srv.Token(), channel, []byte(`{"acks":[0]}`), false)
	assert.Equal(t, 400, status)
	assert.Equal(t, forwardtest.HECAckDisabled, r.Code)

	get := func() (int, string) {
		resp, err := http.Get(srv.URL + "/services/collector/health")
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := get()
	assert.Equal(t, 200, status)
	assert.JSONEq(t, `{"text":"HEC is healthy","code":17}`, body)
	srv.SetUnhealthy(forwardtest.HECUnhealthyQueuesFull)
	status, body = get()
	assert.Equal(t, 503, status)
	assert.JSONEq(t, `{"text":"HEC is unhealthy, queues are full","code":18}`, body)
	assert.Equal(t, 2, srv.HealthChecks())
}

func TestHECServerFaults(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	ok := "Splunk " + srv.Token()
	ev := srv.URL + "/services/collector/event"
	body := []byte(`{"event":"a"}{"event":"b"}{"event":"c"}`)
	srv.Busy(1)
	status, r := post(t, ev, ok, "", body, false)
	assert.Equal(t, 503, status)
	assert.Equal(t, "Server is busy", r.Text)
	srv.RejectEvent(2)
	status, r = post(t, ev, ok, "", body, false)
	assert.Equal(t, 400, status)
	require.NotNil(t, r.InvalidEventNumber)
	assert.Equal(t, 2, *r.InvalidEventNumber)
	assert.Equal(t, []string{"a", "b"}, srv.Messages())
	assert.Equal(t, 2, srv.Requests())
	assert.True(t, strings.HasPrefix(srv.URL, "http://127.0.0.1:"))
}

func TestHECServerSetDown(t *testing.T) {
	s := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	post := func() int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+"/services/collector/event", strings.NewReader(`{"event":"x"}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Splunk "+s.Token())
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	health := func() int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL+"/services/collector/health", http.NoBody)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	s.SetDown(true)
	assert.Equal(t, http.StatusServiceUnavailable, post())
	assert.Equal(t, http.StatusServiceUnavailable, post())
	assert.Equal(t, http.StatusServiceUnavailable, health())
	assert.Empty(t, s.Events())
	s.SetDown(false)
	assert.Equal(t, http.StatusOK, post())
	assert.Equal(t, http.StatusOK, health())
	assert.Len(t, s.Events(), 1)
}

// TestHECServerThrottle: while it throttles, every data request gets the
// status and headers asked for, after the queued faults, until the window
// ends by the server's clock; the request log records each request.
func TestHECServerThrottle(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	synctest.Test(t, func(t *testing.T) {
		h := srv.Handler()
		send := func() *http.Response {
			req := httptest.NewRequest(http.MethodPost, "/services/collector/event", strings.NewReader(`{"event":"x"}`))
			req.Header.Set("Authorization", "Splunk "+srv.Token())
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec.Result()
		}
		begin := time.Now()
		srv.Busy(1) // queued faults come first
		srv.Throttle(30*time.Second, forwardtest.HECThrottle{Status: http.StatusServiceUnavailable, RetryAfter: "10", RetryAfterMs: "10000"})
		resp := send()
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Empty(t, resp.Header.Get("Retry-After"), "the Busy fault")
		time.Sleep(10 * time.Second)
		resp = send()
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Equal(t, "10", resp.Header.Get("Retry-After"))
		assert.Equal(t, "10000", resp.Header.Get("Retry-After-Ms"))
		var r hecReply
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
		assert.Equal(t, forwardtest.HECServerBusy, r.Code)
		time.Sleep(20 * time.Second)
		assert.Equal(t, http.StatusOK, send().StatusCode, "the window has ended")
		srv.Throttle(time.Minute, forwardtest.HECThrottle{RetryAfter: "5"})
		resp = send()
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "429 by default")
		assert.Equal(t, "5", resp.Header.Get("Retry-After"))
		srv.Throttle(0, forwardtest.HECThrottle{})
		assert.Equal(t, http.StatusOK, send().StatusCode, "a zero window ends it")

		var got []string
		for _, r := range srv.RequestLog() {
			got = append(got, fmt.Sprint(r.Time.Sub(begin), " ", r.Status))
		}
		assert.Equal(t, []string{"0s 503", "10s 503", "30s 200", "30s 429", "30s 200"}, got)
		assert.Equal(t, []string{"x", "x"}, srv.Messages())
	})
}
