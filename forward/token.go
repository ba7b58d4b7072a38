package forward

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/relaykit/relaykit/internal/cfgerr"
	"github.com/relaykit/relaykit/internal/episode"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// TokenSource supplies bearer tokens, for example for the [Sentinel] sink.
//
// Token returns a token and the time it expires; a zero expiry means the
// token does not expire. Implementations need not cache: wrap them in a
// [TokenCache] (the Sentinel sink does so itself). Token must be safe for
// concurrent use, honour ctx, and never put secrets (client secrets,
// tokens) in its errors.
type TokenSource interface {
	Token(ctx context.Context) (token string, expiry time.Time, err error)
}

// TokenSourceFunc adapts an ordinary function to a [TokenSource].
type TokenSourceFunc func(ctx context.Context) (string, time.Time, error)

// Token calls f(ctx).
func (f TokenSourceFunc) Token(ctx context.Context) (string, time.Time, error) { return f(ctx) }

// StaticToken returns a [TokenSource] that always returns token, with no
// expiry. It suits tests and tokens managed outside the process.
func StaticToken(token string) TokenSource {
	return TokenSourceFunc(func(context.Context) (string, time.Time, error) { return token, time.Time{}, nil })
}

// DefaultTokenRefreshBefore is how long before its expiry a [TokenCache]
// refreshes a token by default.
const DefaultTokenRefreshBefore = 5 * time.Minute

// TokenCache is a [TokenSource] that caches the token of another source
// and fetches a new one when the cached token is within refreshBefore of
// its expiry, or after [TokenCache.Invalidate]. Concurrent callers share one
// fetch. If a refresh fails while the cached token is still valid, the
// cached token is returned. A refusal of the credentials (a [*TokenError]
// that is not Temporary) is returned for 30 s without asking the source
// again.
//
// A TokenCache is safe for concurrent use by multiple goroutines.
type TokenCache struct {
	src           TokenSource
	refreshBefore time.Duration

	mu        sync.Mutex
	token     string
	expiry    time.Time
	refreshAt time.Time    // when to fetch a new token; zero: never
	flight    *tokenFlight // fetch in progress, or nil
	failErr   error        // a refusal of the credentials, held until failUntil
	failUntil time.Time
}

// tokenRefusalHold is how long a [TokenCache] answers with the error of a
// refused (not Temporary) token request before asking again, so a wrong
// secret does not send a token request per batch.
const tokenRefusalHold = 30 * time.Second

type tokenFlight struct {
	done   chan struct{}
	token  string
	expiry time.Time
	err    error
}

// NewTokenCache returns a cache in front of src that refreshes tokens
// refreshBefore their expiry. Zero refreshBefore means
// [DefaultTokenRefreshBefore]; a token whose lifetime is shorter than twice
// refreshBefore is refreshed after half its lifetime instead. It panics if
// src is nil.
func NewTokenCache(src TokenSource, refreshBefore time.Duration) *TokenCache {
	if src == nil {
		panic("forward: NewTokenCache with nil TokenSource")
	}
	if refreshBefore <= 0 {
		refreshBefore = DefaultTokenRefreshBefore
	}
	return &TokenCache{src: src, refreshBefore: refreshBefore}
}

// fresh reports whether the cached token can be used at now without a
// refresh. Called with mu held.
func (c *TokenCache) fresh(now time.Time) bool {
	if c.token == "" {
		return false
	}
	return c.refreshAt.IsZero() || now.Before(c.refreshAt)
}

// Token returns the cached token, fetching a new one when needed.
func (c *TokenCache) Token(ctx context.Context) (string, time.Time, error) {
	for {
		c.mu.Lock()
		now := time.Now()
		if c.fresh(now) {
			t, e := c.token, c.expiry
			c.mu.Unlock()
			return t, e, nil
		}
		if c.failErr != nil && now.Before(c.failUntil) && c.token == "" {
			err := c.failErr
			c.mu.Unlock()
			return "", time.Time{}, err
		}
		f := c.flight
		if f == nil {
			f = &tokenFlight{done: make(chan struct{})}
			c.flight = f
			c.mu.Unlock()
			c.fetch(ctx, f)
		} else {
			c.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return "", time.Time{}, ctx.Err()
			}
			// The fetch ran under another caller's context; if that one
			// ended, try again under ours.
			if f.err != nil && ctx.Err() == nil &&
				(errors.Is(f.err, context.Canceled) || errors.Is(f.err, context.DeadlineExceeded)) {
				continue
			}
		}
		if f.err == nil {
			return f.token, f.expiry, nil
		}
		// Keep using a token that has not expired yet.
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.token != "" && (c.expiry.IsZero() || time.Now().Before(c.expiry)) {
			return c.token, c.expiry, nil
		}
		return "", time.Time{}, f.err
	}
}

func (c *TokenCache) fetch(ctx context.Context, f *tokenFlight) {
	tok, exp, err := c.src.Token(ctx)
	if err == nil && tok == "" {
		err = errors.New("forward: token source returned an empty token")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f.token, f.expiry, f.err = tok, exp, err
	var te *TokenError
	if errors.As(err, &te) && !te.Temporary {
		c.failErr, c.failUntil = err, time.Now().Add(tokenRefusalHold)
	}
	if err == nil {
		c.failErr = nil
		c.token, c.expiry, c.refreshAt = tok, exp, time.Time{}
		if !exp.IsZero() {
			now := time.Now()
			c.refreshAt = exp.Add(-c.refreshBefore)
			if life := exp.Sub(now); life < 2*c.refreshBefore {
				// A short-lived token is refreshed after half its lifetime.
				c.refreshAt = now.Add(life / 2)
			}
		}
	}
	c.flight = nil
	close(f.done)
}

// Invalidate discards the cached token, so the next Token call fetches a
// new one (for example after the destination answered 401).
func (c *TokenCache) Invalidate() {
	c.mu.Lock()
	c.token, c.expiry, c.refreshAt = "", time.Time{}, time.Time{}
	c.failErr = nil
	c.mu.Unlock()
}

// Entra ID (Azure AD) defaults for the client credentials flow.
const (
	// EntraAuthorityHost is the Azure public cloud's authority.
	EntraAuthorityHost = "https://login.microsoftonline.com"
	// MonitorScope is the scope of tokens for the Azure Monitor Logs
	// Ingestion API in the public cloud (the double slash is part of it).
	MonitorScope = "https://monitor.azure.com//.default"
)

// EntraConfig configures an [EntraTokenSource]: the OAuth 2.0 client
// credentials grant of the Microsoft identity platform (Entra ID), as used
// by a service principal (app registration) with a client secret.
type EntraConfig struct {
	// TenantID is the directory (tenant) ID or a verified domain name.
	// Required.
	TenantID string
	// ClientID is the application (client) ID. Required.
	ClientID string
	// ClientSecret is the client secret. Required. It is sent only in the
	// body of token requests and never appears in errors or logs.
	ClientSecret string
	// AuthorityHost is the identity platform's base URL. Zero means
	// [EntraAuthorityHost]; sovereign clouds use their own, e.g.
	// "https://login.microsoftonline.us" (Azure Government) or
	// "https://login.chinacloudapi.cn" (Azure China). It must be https,
	// except on a loopback address (tests).
	AuthorityHost string
	// Scope is the requested scope. Zero means [MonitorScope]; sovereign
	// clouds use e.g. "https://monitor.azure.us//.default" or
	// "https://monitor.azure.cn//.default".
	Scope string
	// HTTPClient makes the token requests. Nil means a client with a 30 s
	// timeout (never http.DefaultClient).
	HTTPClient *http.Client
	// Logger hears of failing token requests once when an episode starts
	// and once when a request succeeds again, with the count of failures
	// (never a secret). Nil means no logging.
	Logger *slog.Logger
}

// EntraTokenSource is a [TokenSource] that obtains tokens from Entra ID
// with the client credentials grant, POSTing to
// {AuthorityHost}/{TenantID}/oauth2/v2.0/token. Each Token call makes one
// request: put it behind a [TokenCache] (the Sentinel sink does).
//
// An EntraTokenSource is safe for concurrent use by multiple goroutines.
type EntraTokenSource struct {
	conf    clientcredentials.Config
	client  *http.Client
	secret  string
	log     *slog.Logger
	failing episode.Log // token requests failing: logged when it starts and ends
}

// NewEntraTokenSource returns a token source for cfg. Errors wrap
// [ErrInvalidConfig] and never contain the client secret.
func NewEntraTokenSource(cfg EntraConfig) (*EntraTokenSource, error) {
	invalid := func(field, format string, args ...any) error {
		return cfgerr.New(ErrInvalidConfig, field, format, args...)
	}
	if cfg.TenantID == "" || !validTenant(cfg.TenantID) {
		return nil, invalid("TenantID", "%q must be a tenant GUID or domain name", cfg.TenantID)
	}
	if cfg.ClientID == "" {
		return nil, invalid("ClientID", "required")
	}
	if cfg.ClientSecret == "" {
		return nil, invalid("ClientSecret", "required")
	}
	host := cfg.AuthorityHost
	if host == "" {
		host = EntraAuthorityHost
	}
	u, err := url.Parse(host)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, invalid("AuthorityHost", "%q is not an absolute URL", host)
	}
	if u.Scheme != "https" && (u.Scheme != "http" || !isLoopback(u.Hostname())) {
		return nil, invalid("AuthorityHost", "%q must use https", host)
	}
	scope := cfg.Scope
	if scope == "" {
		scope = MonitorScope
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &EntraTokenSource{
		conf: clientcredentials.Config{
			ClientID:     cfg.ClientID,
			ClientSecret: cfg.ClientSecret,
			TokenURL:     strings.TrimSuffix(host, "/") + "/" + url.PathEscape(cfg.TenantID) + "/oauth2/v2.0/token",
			Scopes:       []string{scope},
			AuthStyle:    oauth2.AuthStyleInParams,
		},
		client: userAgentClient(client),
		secret: cfg.ClientSecret,
		log:    logger,
	}, nil
}

// TokenURL returns the token endpoint the source posts to.
func (s *EntraTokenSource) TokenURL() string { return s.conf.TokenURL }

// Token requests a new access token. Errors are of type [*TokenError] (or
// wrap ctx.Err()) and never contain the client secret.
func (s *EntraTokenSource) Token(ctx context.Context) (string, time.Time, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, s.client)
	tok, err := s.conf.Token(ctx)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return "", time.Time{}, fmt.Errorf("forward: entra token: %w", cerr)
		}
		te := s.tokenError(err)
		s.failing.Fail(s.log, "forward: entra token requests failing", "token_url", s.conf.TokenURL,
			"status", te.StatusCode, "code", te.Code, "temporary", te.Temporary, "err", te)
		return "", time.Time{}, te
	}
	s.failing.OK(s.log, "forward: entra token requests succeed again", "token_url", s.conf.TokenURL)
	return tok.AccessToken, tok.Expiry, nil
}

// TokenError reports a failed token request. It carries no secret.
type TokenError struct {
	// StatusCode is the token endpoint's HTTP status, or 0 without a
	// response.
	StatusCode int
	// Code is the OAuth 2.0 error code (RFC 6749 section 5.2), e.g.
	// "invalid_client".
	Code string
	// Description is the error description (Entra's AADSTS message), with
	// any occurrence of the client secret removed.
	Description string
	// Temporary reports whether retrying may succeed: network errors, 408,
	// 429 and 5xx. Refused credentials (400, 401, 403) are not temporary.
	Temporary bool
}

// Error describes the failed token request; the client secret never
// appears in it.
func (e *TokenError) Error() string {
	var b strings.Builder
	b.WriteString("forward: entra token")
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.StatusCode)
	}
	if e.Code != "" {
		b.WriteString(": ")
		b.WriteString(e.Code)
	}
	if e.Description != "" {
		b.WriteString(": ")
		b.WriteString(e.Description)
	}
	return b.String()
}

// tokenError converts an oauth2 or transport error into a *TokenError
// without the secret (nor the raw response body, which a misbehaving
// endpoint could fill with the request it received).
func (s *EntraTokenSource) tokenError(err error) *TokenError {
	te := &TokenError{Temporary: true}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.Response != nil {
			te.StatusCode = re.Response.StatusCode
		}
		te.Code = re.ErrorCode
		te.Description = re.ErrorDescription
		switch st := te.StatusCode; {
		case st == http.StatusRequestTimeout, st == http.StatusTooManyRequests, st >= 500:
		case st >= 400:
			te.Temporary = false
		}
		if te.Code == "" && te.Description == "" {
			te.Description = http.StatusText(te.StatusCode)
		}
	} else {
		te.Description = scrubURLError(err).Error()
	}
	if i := strings.IndexAny(te.Description, "\r\n"); i >= 0 {
		te.Description = te.Description[:i] // Entra appends trace and correlation IDs
	}
	if len(te.Description) > 300 {
		te.Description = te.Description[:300]
	}
	te.Code = redact(te.Code, s.secret)
	te.Description = redact(te.Description, s.secret)
	return te
}

// redact removes secret (and its URL and JSON encodings) from s.
func redact(s, secret string) string {
	if secret == "" {
		return s
	}
	for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret)} {
		s = strings.ReplaceAll(s, form, "[REDACTED]")
	}
	return s
}

func validTenant(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return len(s) <= 256
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

var (
	_ TokenSource = (*TokenCache)(nil)
	_ TokenSource = (*EntraTokenSource)(nil)
)
