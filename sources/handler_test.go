package sources_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/sources"
)

// The handler lists the tracker's sources as JSON, filtered, ordered and
// cut by the query, behind the token as tap.Handler takes it.
func TestHandler(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	tr := newTracker(t, sources.Config{Clock: clk, Policy: sources.Policy{
		SilentAfter: time.Minute, Expected: []sources.Key{sources.HostKey("db-1")},
	}})
	tr.Input("syslog").ObserveAddr(netip.MustParseAddr("192.0.2.1"), 10, 1000)
	tr.Input("json").ObserveAddr(netip.MustParseAddr("192.0.2.2"), 3, 90)
	tr.Tick()
	h, err := sources.NewHandler(tr, sources.HandlerConfig{Token: "s3cret"})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	get := func(query, auth string) (int, string, http.Header) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/api/sources"+query, nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b), resp.Header
	}
	type src struct {
		Source    string     `json:"source"`
		Input     string     `json:"input"`
		Events    uint64     `json:"events"`
		Bytes     uint64     `json:"bytes"`
		FirstSeen *time.Time `json:"first_seen"`
		State     string     `json:"state"`
		Expected  bool       `json:"expected"`
	}
	list := func(query string) []src {
		t.Helper()
		status, body, hdr := get(query, "Bearer s3cret")
		require.Equal(t, http.StatusOK, status, body)
		assert.Equal(t, "application/json", hdr.Get("Content-Type"))
		var out []src
		require.NoError(t, json.Unmarshal([]byte(body), &out))
		return out
	}

	status, _, hdr := get("", "")
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Len(t, hdr.Values("WWW-Authenticate"), 2, "Bearer and Basic")
	status, _, _ = get("", "Bearer wrong")
	assert.Equal(t, http.StatusUnauthorized, status)

	all := list("")
	require.Len(t, all, 3)
	assert.Equal(t, "192.0.2.1", all[0].Source, "key order")
	assert.Equal(t, "syslog", all[0].Input)
	assert.Equal(t, uint64(10), all[0].Events)
	require.NotNil(t, all[0].FirstSeen)
	assert.Nil(t, all[2].FirstSeen, "the expected source never sent")
	assert.True(t, all[2].Expected)

	assert.Equal(t, []src{all[0]}, list("?sort=events&top=1"))
	assert.Equal(t, []src{all[1]}, list("?input=json"))
	assert.Equal(t, []src{all[2]}, list("?state=waiting"))

	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/?sort=bytes", nil)
	req.SetBasicAuth("any", "s3cret")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the token as a Basic password")

	for _, q := range []string{"?state=sleepy", "?sort=name", "?top=-1"} {
		status, body, _ := get(q, "Bearer s3cret")
		assert.Equal(t, http.StatusBadRequest, status, q)
		assert.NotEmpty(t, body)
	}
	req, _ = http.NewRequest(http.MethodPost, srv.URL, nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err = srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, sources.HandlerStats{Requests: 5, BadRequests: 4, Unauthorized: 2}, h.Stats())

	_, err = sources.NewHandler(nil, sources.HandlerConfig{})
	assert.ErrorIs(t, err, sources.ErrInvalidConfig)
}
