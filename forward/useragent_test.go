package forward_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
)

// userAgents records the User-Agent header of every request, by path, and
// passes the request on to next.
type userAgents struct {
	mu   sync.Mutex
	seen map[string][]string
}

func (u *userAgents) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		if u.seen == nil {
			u.seen = map[string][]string{}
		}
		u.seen[r.URL.Path] = append(u.seen[r.URL.Path], r.Header.Get("User-Agent"))
		u.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (u *userAgents) get() map[string][]string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make(map[string][]string, len(u.seen))
	for k, v := range u.seen {
		out[k] = append([]string(nil), v...)
	}
	return out
}

func TestUserAgentFormat(t *testing.T) {
	// RFC 9110 product token: token ["/" token]; relaykit/<semver>.
	assert.Regexp(t, regexp.MustCompile(`^relaykit/\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`), forward.UserAgent)
}

// Every HEC request (health check, data, acknowledgement poll) names the
// client.
func TestHECUserAgent(t *testing.T) {
	srv := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{Ack: true})
	var ua userAgents
	front := httptest.NewServer(ua.wrap(srv.Handler()))
	t.Cleanup(front.Close)

	hec, err := forward.NewHEC(forward.HECConfig{
		URL:             front.URL,
		Token:           srv.Token(),
		Ack:             true,
		AckPollInterval: 10 * time.Millisecond,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = hec.Close() })
	require.NoError(t, hec.Send(t.Context(), batchOf(msgs("ua", 3)...)))
	assert.Equal(t, msgs("ua", 3), srv.Messages())

	seen := ua.get()
	for _, path := range []string{"/services/collector/health", "/services/collector/event", "/services/collector/ack"} {
		if assert.NotEmpty(t, seen[path], "no request to %s", path) {
			for _, got := range seen[path] {
				assert.Equal(t, forward.UserAgent, got, path)
			}
		}
	}
}

// Sentinel's ingestion requests and the Entra ID token request name the
// client, also when the token source is given its own HTTP client.
func TestSentinelUserAgent(t *testing.T) {
	for _, tc := range []struct {
		name   string
		client *http.Client
	}{
		{"own client", nil},
		{"supplied client", &http.Client{Timeout: 10 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
			target, err := url.Parse(srv.URL)
			require.NoError(t, err)
			proxy := httputil.NewSingleHostReverseProxy(target)
			tr := &http.Transport{}
			t.Cleanup(tr.CloseIdleConnections)
			proxy.Transport = tr
			var ua userAgents
			front := httptest.NewServer(ua.wrap(proxy))
			t.Cleanup(front.Close)
			if tc.client != nil {
				t.Cleanup(tc.client.CloseIdleConnections)
			}

			c := srv.Config()
			tokens, err := forward.NewEntraTokenSource(forward.EntraConfig{
				TenantID: c.TenantID, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
				AuthorityHost: front.URL, HTTPClient: tc.client,
			})
			require.NoError(t, err)
			s, err := forward.NewSentinel(forward.SentinelConfig{
				Endpoint:       front.URL,
				DCRImmutableID: c.DCRImmutableID,
				Stream:         c.Stream,
				TokenSource:    tokens,
			})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			require.NoError(t, s.Send(t.Context(), batchOf(msgs("ua", 3)...)))
			assert.Len(t, srv.Rows(), 3)

			seen := ua.get()
			tokenPath := "/" + c.TenantID + "/oauth2/v2.0/token"
			ingestPath := "/dataCollectionRules/" + c.DCRImmutableID + "/streams/" + c.Stream
			for _, path := range []string{tokenPath, ingestPath} {
				if assert.NotEmpty(t, seen[path], "no request to %s", path) {
					for _, got := range seen[path] {
						assert.Equal(t, forward.UserAgent, got, path)
					}
				}
			}
			if tc.client != nil {
				assert.Nil(t, tc.client.Transport, "the supplied client is not modified")
			}
		})
	}
}
