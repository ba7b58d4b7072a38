package forwardtest_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward/forwardtest"
)

func dcrToken(t *testing.T, srv *forwardtest.DCRServer) string {
	t.Helper()
	c := srv.Config()
	resp, err := http.PostForm(srv.AuthorityHost+"/"+c.TenantID+"/oauth2/v2.0/token", url.Values{
		"grant_type": {"client_credentials"}, "client_id": {c.ClientID},
		"client_secret": {c.ClientSecret}, "scope": {forwardtest.DCRScope},
	})
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var body struct {
		TokenType   string `json:"token_type"`
		ExpiresIn   int    `json:"expires_in"`
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	assert.Equal(t, "Bearer", body.TokenType)
	assert.Equal(t, 3600, body.ExpiresIn)
	return body.AccessToken
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

func TestDCRServerStrict(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	c := srv.Config()
	tok := dcrToken(t, srv)
	good := "/dataCollectionRules/" + c.DCRImmutableID + "/streams/" + c.Stream + "?api-version=2023-01-01"
	big := []byte(`[{"RawData":"` + strings.Repeat("x", forwardtest.DCRMaxBodyBytes) + `"}]`)
	tests := []struct {
		name     string
		path     string
		auth     string
		ctype    string
		gzip     bool
		body     []byte
		status   int
		code     string
		wantRows int
	}{
		{"ok gzip", good, "Bearer " + tok, "application/json", true, []byte(`[{"a":1},{"b":"x"}]`), 204, "", 2},
		{"ok plain", good, "Bearer " + tok, "application/json; charset=utf-8", false, []byte(`[{"a":2}]`), 204, "", 1},
		{"no auth", good, "", "application/json", true, []byte(`[{}]`), 401, "AuthenticationFailed", 0},
		{"unknown token", good, "Bearer nope", "application/json", true, []byte(`[{}]`), 401, "InvalidToken", 0},
		{"wrong rule", "/dataCollectionRules/dcr-other/streams/" + c.Stream + "?api-version=2023-01-01", "Bearer " + tok, "application/json", true, []byte(`[{}]`), 404, "NotFound", 0},
		{"wrong stream", "/dataCollectionRules/" + c.DCRImmutableID + "/streams/Custom-Other?api-version=2023-01-01", "Bearer " + tok, "application/json", true, []byte(`[{}]`), 400, "InvalidStream", 0},
		{"no version", strings.TrimSuffix(good, "?api-version=2023-01-01"), "Bearer " + tok, "application/json", true, []byte(`[{}]`), 400, "InvalidApiVersion", 0},
		{"content type", good, "Bearer " + tok, "text/plain", true, []byte(`[{}]`), 415, "UnsupportedMediaType", 0},
		{"object not array", good, "Bearer " + tok, "application/json", true, []byte(`{"a":1}`), 400, "InvalidPayload", 0},
		{"array of non-objects", good, "Bearer " + tok, "application/json", true, []byte(`[1,2]`), 400, "InvalidPayload", 0},
		{"trailing data", good, "Bearer " + tok, "application/json", true, []byte(`[{}] [{}]`), 400, "InvalidPayload", 0},
		{"over 1,000,000 bytes uncompressed", good, "Bearer " + tok, "application/json", true, big, 413, "ContentLengthLimitExceeded", 0},
	}
	rows := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := tt.body
			if tt.gzip {
				body = gz(body)
			}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+tt.path, bytes.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", tt.ctype)
			req.Header.Set("x-ms-client-request-id", "rid-1")
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			if tt.gzip {
				req.Header.Set("Content-Encoding", "gzip")
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			assert.Equal(t, tt.status, resp.StatusCode, "%s", b)
			assert.Equal(t, "rid-1", resp.Header.Get("x-ms-client-request-id"))
			if tt.code != "" {
				var e struct {
					Error struct{ Code, Message string } `json:"error"`
				}
				require.NoError(t, json.Unmarshal(b, &e))
				assert.Equal(t, tt.code, e.Error.Code)
				assert.NotEmpty(t, e.Error.Message)
				assert.Equal(t, tt.code, resp.Header.Get("x-ms-error-code"))
			} else {
				assert.Empty(t, b)
			}
			rows += tt.wantRows
			assert.Len(t, srv.Rows(), rows)
		})
	}
	assert.Len(t, srv.Requests(), len(tests))
	assert.Contains(t, srv.Rows()[0], "a")
}

func TestDCRServerFaults(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	c := srv.Config()
	tok := dcrToken(t, srv)
	url := srv.URL + "/dataCollectionRules/" + c.DCRImmutableID + "/streams/" + c.Stream + "?api-version=2023-01-01"
	srv.Inject(forwardtest.DCRFault{Status: 429, RetryAfter: "7", RetryAfterMs: "7000"}, forwardtest.DCRFault{Status: 500})
	for _, want := range []int{429, 500, 204} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`[{"x":1}]`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode)
		if want == 429 {
			assert.Equal(t, "7", resp.Header.Get("Retry-After"))
			assert.Equal(t, "7000", resp.Header.Get("retry-after-ms"))
		}
	}
	assert.Len(t, srv.Rows(), 1, "faulted requests record no rows")
}

// TestDCRServerThrottle: while it throttles, every ingestion request with
// a valid token gets the fault, until the window ends; requests record
// when they came.
func TestDCRServerThrottle(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	c := srv.Config()
	tok := dcrToken(t, srv)
	url := srv.URL + "/dataCollectionRules/" + c.DCRImmutableID + "/streams/" + c.Stream + "?api-version=2023-01-01"
	send := func() *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`[{"x":1}]`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp
	}
	before := time.Now()
	srv.Throttle(time.Hour, forwardtest.DCRFault{Status: 429, RetryAfterMs: "1500"})
	for range 2 {
		resp := send()
		assert.Equal(t, 429, resp.StatusCode)
		assert.Equal(t, "1500", resp.Header.Get("retry-after-ms"))
	}
	srv.Throttle(0, forwardtest.DCRFault{})
	assert.Equal(t, 204, send().StatusCode)
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	for i, r := range reqs {
		assert.False(t, r.Time.Before(before), "request %d time", i)
		if i > 0 {
			assert.False(t, r.Time.Before(reqs[i-1].Time), "request %d in order", i)
		}
	}
	assert.Equal(t, []int{429, 429, 204}, []int{reqs[0].Status, reqs[1].Status, reqs[2].Status})
	assert.Len(t, srv.Rows(), 1)
}

// TestDCRServerCallLimit: a body over 1,000,000 bytes is refused with 413
// ContentLengthLimitExceeded whether it is that large uncompressed or as
// sent; MaxBodyBytes moves the limit (1,048,576, what the service has been
// seen to enforce, takes a body the default refuses).
func TestDCRServerCallLimit(t *testing.T) {
	rows := func(n int) []byte { // n bytes of JSON
		return []byte(`[{"RawData":"` + strings.Repeat("x", n-len(`[{"RawData":""}]`)) + `"}]`)
	}
	for _, tt := range []struct {
		name   string
		limit  int
		body   []byte
		gzip   bool
		status int
	}{
		{"1,000,000 uncompressed", 0, rows(1_000_000), false, 204},
		{"1,000,001 uncompressed", 0, rows(1_000_001), false, 413},
		{"1,000,001 compressed to little", 0, rows(1_000_001), true, 413},
		{"1,048,576 with the service's limit", 1 << 20, rows(1 << 20), false, 204},
		{"1,048,577 with the service's limit", 1 << 20, rows(1<<20 + 1), false, 413},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{MaxBodyBytes: tt.limit})
			status, code, msg := postBody(t, srv, tt.body, tt.gzip)
			assert.Equal(t, tt.status, status)
			if tt.status == 413 {
				assert.Equal(t, "ContentLengthLimitExceeded", code)
				assert.Contains(t, msg, "Maximum allowed content length: ")
			}
		})
	}
	// As sent: a gzip stream of stored blocks, larger than its content, is
	// refused for its own size.
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{MaxBodyBytes: 10_000})
	stored := func(n int) []byte {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.NoCompression)
		_, _ = zw.Write(rows(n))
		_ = zw.Close()
		return buf.Bytes()
	}
	body := stored(9_960)
	require.Greater(t, len(body), 9_960)
	require.LessOrEqual(t, len(body), 10_000)
	status, _, _ := postBodyRaw(t, srv, body, true)
	assert.Equal(t, 204, status, "within the limit as sent and uncompressed")
	body = stored(9_995)
	require.Greater(t, len(body), 10_000)
	status, code, _ := postBodyRaw(t, srv, body, true)
	assert.Equal(t, 413, status, "over the limit as sent only")
	assert.Equal(t, "ContentLengthLimitExceeded", code)
}

// TestDCRServerAuxiliaryTimeRange: a call to an Auxiliary table whose rows'
// TimeGenerated span 30 minutes or more is refused whole with 400
// RecordsTimeRangeIsMoreThan30Minutes; less is accepted.
func TestDCRServerAuxiliaryTimeRange(t *testing.T) {
	row := func(tg string) string { return `{"TimeGenerated":"` + tg + `","RawData":"x"}` }
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{Plan: forwardtest.PlanAuxiliary})
	status, code, _ := postRows(t, srv, "["+row("2026-11-23T09:00:00.000000Z")+","+row("2026-11-23T09:29:59.999999Z")+","+row("2026-11-23T09:10:00.000000Z")+"]")
	assert.Equal(t, 204, status, code)
	status, code, msg := postRows(t, srv, "["+row("2026-11-23T09:00:00.000000Z")+","+row("2026-11-23T09:10:00.000000Z")+","+row("2026-11-23T09:30:00.000000Z")+"]")
	assert.Equal(t, 400, status)
	assert.Equal(t, "RecordsTimeRangeIsMoreThan30Minutes", code)
	assert.Contains(t, msg, "30m0s")
	assert.Len(t, srv.Rows(), 3, "the refused call left nothing")

	analytics := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	status, _, _ = postRows(t, analytics, `[{"TimeGenerated":"2026-11-23T09:00:00.0000000Z"},{"TimeGenerated":"2026-11-23T12:00:00.0000000Z"}]`)
	assert.Equal(t, 204, status, "the rule is the Auxiliary plan's")
}

// postBody posts body (gzipped first with gz) to srv's stream.
func postBody(t *testing.T, srv *forwardtest.DCRServer, body []byte, gzipIt bool) (int, string, string) {
	t.Helper()
	if gzipIt {
		body = gz(body)
	}
	return postBodyRaw(t, srv, body, gzipIt)
}

// postBodyRaw posts body as it is, with Content-Encoding gzip when gzipped.
func postBodyRaw(t *testing.T, srv *forwardtest.DCRServer, body []byte, gzipped bool) (int, string, string) {
	t.Helper()
	c := srv.Config()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/dataCollectionRules/"+c.DCRImmutableID+"/streams/"+c.Stream+"?api-version=2023-01-01",
		bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+dcrToken(t, srv))
	req.Header.Set("Content-Type", "application/json")
	if gzipped {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Error.Code, e.Error.Message
}
