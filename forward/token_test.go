package forward_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
)

func TestEntraTokenSource(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{TokenLifetime: 30 * time.Minute})
	c := srv.Config()
	ts := entraFor(t, srv, "")
	assert.Equal(t, srv.AuthorityHost+"/"+c.TenantID+"/oauth2/v2.0/token", ts.TokenURL())
	before := time.Now()
	tok, exp, err := ts.Token(t.Context())
	require.NoError(t, err)
	assert.NotEmpty(t, tok)
	assert.WithinDuration(t, before.Add(30*time.Minute), exp, 5*time.Second)
	assert.Equal(t, 1, srv.TokenRequests())
}

func TestEntraTokenSourceDefaults(t *testing.T) {
	ts, err := forward.NewEntraTokenSource(forward.EntraConfig{TenantID: "contoso.onmicrosoft.com", ClientID: "c", ClientSecret: "s"})
	require.NoError(t, err)
	assert.Equal(t, "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token", ts.TokenURL())
	ts, err = forward.NewEntraTokenSource(forward.EntraConfig{TenantID: "t", ClientID: "c", ClientSecret: "s",
		AuthorityHost: "https://login.microsoftonline.us/"})
	require.NoError(t, err)
	assert.Equal(t, "https://login.microsoftonline.us/t/oauth2/v2.0/token", ts.TokenURL())
}

func TestNewEntraTokenSourceInvalid(t *testing.T) {
	const secret = "Very~Secret.Value"
	for _, tt := range []struct {
		name string
		cfg  forward.EntraConfig
	}{
		{"no tenant", forward.EntraConfig{ClientID: "c", ClientSecret: secret}},
		{"bad tenant", forward.EntraConfig{TenantID: "a/b", ClientID: "c", ClientSecret: secret}},
		{"no client", forward.EntraConfig{TenantID: "t", ClientSecret: secret}},
		{"no secret", forward.EntraConfig{TenantID: "t", ClientID: "c"}},
		{"plain http", forward.EntraConfig{TenantID: "t", ClientID: "c", ClientSecret: secret, AuthorityHost: "http://login.example.com"}},
		{"relative", forward.EntraConfig{TenantID: "t", ClientID: "c", ClientSecret: secret, AuthorityHost: "login.example.com"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := forward.NewEntraTokenSource(tt.cfg)
			assert.Nil(t, ts)
			require.ErrorIs(t, err, forward.ErrInvalidConfig)
			assert.NotContains(t, err.Error(), secret)
		})
	}
}

func TestEntraTokenErrors(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	c := srv.Config()
	t.Run("wrong secret", func(t *testing.T) {
		_, _, err := entraFor(t, srv, "not-the-secret").Token(t.Context())
		var te *forward.TokenError
		require.ErrorAs(t, err, &te)
		assert.Equal(t, http.StatusUnauthorized, te.StatusCode)
		assert.Equal(t, "invalid_client", te.Code)
		assert.False(t, te.Temporary)
		assert.Contains(t, te.Description, "AADSTS7000215")
		assert.NotContains(t, te.Description, "Trace ID", "only the first line of the description is kept")
	})
	t.Run("wrong tenant", func(t *testing.T) {
		ts, err := forward.NewEntraTokenSource(forward.EntraConfig{TenantID: "other", ClientID: c.ClientID,
			ClientSecret: c.ClientSecret, AuthorityHost: srv.AuthorityHost})
		require.NoError(t, err)
		_, _, err = ts.Token(t.Context())
		var te *forward.TokenError
		require.ErrorAs(t, err, &te)
		assert.Equal(t, "invalid_request", te.Code)
		assert.False(t, te.Temporary)
	})
	t.Run("transient", func(t *testing.T) {
		srv.InjectToken(forwardtest.DCRFault{Status: http.StatusServiceUnavailable})
		_, _, err := entraFor(t, srv, "").Token(t.Context())
		var te *forward.TokenError
		require.ErrorAs(t, err, &te)
		assert.True(t, te.Temporary)
	})
	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, _, err := entraFor(t, srv, "").Token(ctx)
		assert.ErrorIs(t, err, context.Canceled)
	})
}

// TestEntraSecretNeverLeaks uses token endpoints that echo the request
// they received back into their error, and checks that neither errors nor
// logs contain the secret.
func TestEntraSecretNeverLeaks(t *testing.T) {
	const secret = "p@ss word+/=~Secret"
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		body := r.PostForm.Encode()
		fmt.Fprintf(w, `{"error":"invalid_request %s","error_description":"got %s (raw %s)"}`,
			r.PostForm.Get("client_secret"), body, r.PostForm.Get("client_secret"))
	}))
	defer echo.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "boom %s", r.PostForm.Encode())
	}))
	defer plain.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	for _, host := range []string{echo.URL, plain.URL, closed.URL} {
		var logs bytes.Buffer
		ts, err := forward.NewEntraTokenSource(forward.EntraConfig{TenantID: "t", ClientID: "c", ClientSecret: secret,
			AuthorityHost: host, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		require.NoError(t, err)
		_, _, err = ts.Token(t.Context())
		require.Error(t, err)
		for _, leak := range []string{secret, "p%40ss", "word%2B"} {
			assert.NotContains(t, err.Error(), leak)
			assert.NotContains(t, fmt.Sprintf("%+v %#v", err, err), leak)
			assert.NotContains(t, logs.String(), leak)
		}
		assert.NotEmpty(t, logs.String(), "the failure is logged")
	}
}

// countingSource is a TokenSource whose tokens live for life; calls are
// counted and may be made to fail.
type countingSource struct {
	life  time.Duration
	calls atomic.Int32
	fail  atomic.Pointer[error]
	gate  chan struct{} // if set, each call waits for it
}

func (s *countingSource) Token(ctx context.Context) (string, time.Time, error) {
	n := s.calls.Add(1)
	if s.gate != nil {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return "", time.Time{}, ctx.Err()
		}
	}
	if p := s.fail.Load(); p != nil {
		return "", time.Time{}, *p
	}
	return fmt.Sprintf("token-%d", n), time.Now().Add(s.life), nil
}

func TestTokenCache(t *testing.T) {
	t.Run("caches and refreshes before expiry", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := &countingSource{life: time.Hour}
			c := forward.NewTokenCache(src, 5*time.Minute)
			tok, exp, err := c.Token(t.Context())
			require.NoError(t, err)
			assert.Equal(t, "token-1", tok)
			assert.Equal(t, time.Now().Add(time.Hour), exp)
			time.Sleep(54 * time.Minute)
			tok, _, _ = c.Token(t.Context())
			assert.Equal(t, "token-1", tok, "still cached 6 minutes before expiry")
			time.Sleep(2 * time.Minute)
			tok, _, _ = c.Token(t.Context())
			assert.Equal(t, "token-2", tok, "refreshed within 5 minutes of expiry")
			assert.Equal(t, int32(2), src.calls.Load())
		})
	})
	t.Run("short-lived tokens refresh at half life", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := &countingSource{life: 4 * time.Minute}
			c := forward.NewTokenCache(src, 0)
			_, _, _ = c.Token(t.Context())
			time.Sleep(time.Minute + 59*time.Second)
			tok, _, _ := c.Token(t.Context())
			assert.Equal(t, "token-1", tok)
			time.Sleep(2 * time.Second)
			tok, _, _ = c.Token(t.Context())
			assert.Equal(t, "token-2", tok)
		})
	})
	t.Run("failed refresh keeps a valid token", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := &countingSource{life: time.Hour}
			c := forward.NewTokenCache(src, 5*time.Minute)
			_, _, _ = c.Token(t.Context())
			boom := errors.New("identity platform down")
			src.fail.Store(&boom)
			time.Sleep(56 * time.Minute)
			tok, _, err := c.Token(t.Context())
			require.NoError(t, err)
			assert.Equal(t, "token-1", tok)
			time.Sleep(5 * time.Minute) // expired now
			_, _, err = c.Token(t.Context())
			assert.ErrorIs(t, err, boom)
		})
	})
	t.Run("invalidate", func(t *testing.T) {
		src := &countingSource{life: time.Hour}
		c := forward.NewTokenCache(src, 0)
		_, _, _ = c.Token(t.Context())
		c.Invalidate()
		tok, _, _ := c.Token(t.Context())
		assert.Equal(t, "token-2", tok)
	})
	t.Run("concurrent callers share one fetch", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := &countingSource{life: time.Hour, gate: make(chan struct{})}
			c := forward.NewTokenCache(src, 0)
			var wg sync.WaitGroup
			toks := make([]string, 8)
			for i := range toks {
				wg.Go(func() { toks[i], _, _ = c.Token(t.Context()) })
			}
			synctest.Wait() // all callers are blocked: one in the source, the rest waiting for it
			close(src.gate)
			wg.Wait()
			assert.Equal(t, int32(1), src.calls.Load())
			for _, tok := range toks {
				assert.Equal(t, "token-1", tok)
			}
		})
	})
	t.Run("refusal is held", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := &countingSource{life: time.Hour}
			var refused error = &forward.TokenError{StatusCode: 401, Code: "invalid_client"}
			src.fail.Store(&refused)
			c := forward.NewTokenCache(src, 0)
			_, _, err := c.Token(t.Context())
			require.Error(t, err)
			_, _, err = c.Token(t.Context())
			require.Error(t, err)
			assert.Equal(t, int32(1), src.calls.Load(), "held for 30 s")
			time.Sleep(31 * time.Second)
			src.fail.Store(nil)
			tok, _, err := c.Token(t.Context())
			require.NoError(t, err)
			assert.Equal(t, "token-2", tok)
		})
	})
	t.Run("static", func(t *testing.T) {
		tok, exp, err := forward.StaticToken("abc").Token(t.Context())
		require.NoError(t, err)
		assert.Equal(t, "abc", tok)
		assert.True(t, exp.IsZero())
	})
}

func TestTokenCacheFetcherCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &countingSource{life: time.Hour, gate: make(chan struct{})}
		c := forward.NewTokenCache(src, 0)
		ctx1, cancel1 := context.WithCancel(t.Context())
		errs := make(chan error, 1)
		go func() { _, _, err := c.Token(ctx1); errs <- err }()
		synctest.Wait() // the first caller fetches and blocks in the source
		toks := make(chan string, 1)
		go func() { tok, _, _ := c.Token(t.Context()); toks <- tok }()
		synctest.Wait() // the second caller waits for the first fetch
		cancel1()
		assert.ErrorIs(t, <-errs, context.Canceled)
		synctest.Wait() // the second caller starts its own fetch
		close(src.gate)
		assert.Equal(t, "token-2", <-toks, "the waiter is not failed by another caller's context")
	})
}

// TestEntraTokenFailuresLoggedByEpisode: a token endpoint that fails for a
// while (here 120 requests, what a 60 s outage costs at two a second) is
// logged once when the failures start and once when a request succeeds,
// with the count, instead of once per request.
func TestEntraTokenFailuresLoggedByEpisode(t *testing.T) {
	srv := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{})
	c := srv.Config()
	var down atomic.Bool
	down.Store(true)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, `{"error":"temporarily_unavailable"}`, http.StatusServiceUnavailable)
			return
		}
		u, _ := url.Parse(srv.AuthorityHost)
		httputil.NewSingleHostReverseProxy(u).ServeHTTP(w, r)
	}))
	defer proxy.Close()
	var logs bytes.Buffer
	ts, err := forward.NewEntraTokenSource(forward.EntraConfig{TenantID: c.TenantID, ClientID: c.ClientID,
		ClientSecret: c.ClientSecret, AuthorityHost: proxy.URL, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	for range 120 {
		_, _, err := ts.Token(t.Context())
		require.Error(t, err)
	}
	down.Store(false)
	for range 3 {
		_, _, err := ts.Token(t.Context())
		require.NoError(t, err)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.Len(t, lines, 2, logs.String())
	assert.Contains(t, lines[0], "entra token requests failing")
	assert.Contains(t, lines[0], "status=503")
	assert.Contains(t, lines[1], "entra token requests succeed again")
	assert.Contains(t, lines[1], "failures=120")
	assert.NotContains(t, logs.String(), c.ClientSecret)
}
