package forwardtest

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Logs Ingestion API facts the DCR server enforces.
const (
	// DCRAPIVersion is the api-version the Logs Ingestion API requires.
	DCRAPIVersion = "2023-01-01"
	// DCRMaxBodyBytes is the default limit of the request body, compressed
	// as sent and uncompressed alike: 1,000,000 bytes. Azure documents the
	// maximum size of a call as "1 MB" for both ("Azure Monitor service
	// limits", Logs Ingestion API); the server takes the decimal reading,
	// the strictest, so that a client within it is within every reading
	// (the service itself has been seen to refuse only above 1,048,576:
	// set DCRServerConfig.MaxBodyBytes to that to play it). A larger body
	// gets 413 ContentLengthLimitExceeded.
	DCRMaxBodyBytes = 1_000_000
	// DCRAuxiliaryMaxSpan is the range of TimeGenerated one call to a table
	// with the Auxiliary plan must stay below ("Maximum TimeGenerated range
	// per API call: 30 minutes ... the range of entries must be less than
	// 30 minutes"). A wider call gets 400
	// RecordsTimeRangeIsMoreThan30Minutes.
	DCRAuxiliaryMaxSpan = 30 * time.Minute
	// DCRScope is the scope the token endpoint requires: the .default
	// scope of Azure Monitor. OpenID Connect scopes (openid, profile,
	// offline_access, email) may stand beside it, as MSAL sends them.
	DCRScope = "https://monitor.azure.com//.default"
)

// DCRServerConfig configures a [DCRServer]. Every zero field has a default.
type DCRServerConfig struct {
	// TenantID, ClientID and ClientSecret are the credentials the token
	// endpoint accepts. Zero means "00000000-0000-0000-0000-000000000001",
	// "relaykit-client" and "s3cret-value".
	TenantID, ClientID, ClientSecret string
	// DCRImmutableID is the data collection rule's immutable ID. Zero
	// means "dcr-00000000000000000000000000000001".
	DCRImmutableID string
	// Stream is the accepted stream name. Zero means "Custom-RelayKit".
	// Rows for "Microsoft-Syslog" and "Microsoft-CommonSecurityLog" are
	// checked against the schema of the Syslog and CommonSecurityLog
	// tables ([TableColumns]).
	Stream string
	// Columns are, for a built-in stream, custom columns added to its
	// table (names ending in "_CF"), and for a custom stream its declared
	// columns; name → type ([TypeString], [TypeInt], ...). Rows of a
	// stream with a schema must hold only its columns, with values of
	// their types (null allowed), and TimeGenerated. Zero means no custom
	// columns, and no checks for a custom stream. Invalid Columns (a type
	// other than those, a column added to a built-in table without the
	// _CF suffix) fail every ingestion request with 500 and say why.
	Columns map[string]string
	// Plan is the table plan of the stream's table: "" or [PlanAnalytics],
	// [PlanBasic] (both accept the same rows: the plan changes what
	// queries may do and cost, not ingestion) or [PlanAuxiliary], for a
	// custom stream only, without dynamic Columns: every row must have a
	// TimeGenerated in ISO 8601 with exactly 6 fractional digits and no
	// object or array value in any column, else the request fails with
	// 400 InvalidPayload naming the record and column. An invalid Plan
	// (another value, Auxiliary on a built-in stream or with a dynamic
	// column) fails every ingestion request with 500, as invalid Columns
	// do.
	Plan string
	// MaxBodyBytes is the largest request body accepted, compressed (as
	// sent) and uncompressed alike. Zero means [DCRMaxBodyBytes].
	MaxBodyBytes int
	// DiscardRows makes the server check and count rows but not keep
	// them: [DCRServer.Rows] stays empty, [DCRServer.Requests] still
	// counts them. For load tests that send millions of rows.
	DiscardRows bool
	// TokenLifetime is the lifetime of issued tokens (expires_in). Zero
	// means 1 hour. Expired tokens get 401.
	TokenLifetime time.Duration
	// TLS serves HTTPS with httptest's certificate (valid for 127.0.0.1),
	// as the Azure SDK requires of an authority host; see
	// [DCRServer.Client] and [DCRServer.ClientTLSConfig].
	TLS bool
}

// DCRFault is an error response injected into the next request of an
// endpoint, in place of its normal handling. See [DCRServer.Inject].
type DCRFault struct {
	// Status is the HTTP status to answer, e.g. 400, 401, 413, 429, 500,
	// 503.
	Status int
	// RetryAfter, if set, is sent as the Retry-After header.
	RetryAfter string
	// RetryAfterMs, if set, is sent as the retry-after-ms header.
	RetryAfterMs string
	// Code and Message fill the error body. Zero means a code and message
	// like the service's for Status.
	Code, Message string
}

// DCRRequest records one request to the ingestion endpoint.
type DCRRequest struct {
	Time            time.Time // arrival, by the server's clock
	ClientRequestID string    // x-ms-client-request-id header
	Status          int       // status answered
	Gzip            bool      // Content-Encoding: gzip
	WireBytes       int       // body size as received (compressed with Gzip), in bytes
	BodyBytes       int       // uncompressed body size, in bytes
	Rows            int       // rows in the body (when it parsed)
	Token           string    // bearer token presented
}

// DCRServer is a fake Azure Monitor Logs Ingestion API endpoint (a data
// collection endpoint) with its own Entra ID token endpoint, for tests of
// the Sentinel sink. It is as strict as the service:
//
//   - POST {URL}/dataCollectionRules/{DCRImmutableID}/streams/{Stream}?api-version=2023-01-01
//     only (404 for another rule, 400 for another stream or version);
//   - "Authorization: Bearer <token>" with a token it issued and that has
//     not expired or been revoked (401 otherwise);
//   - Content-Type application/json, Content-Encoding gzip or none;
//   - a body of at most 1,000,000 bytes as sent and after decompression
//     (DCRServerConfig.MaxBodyBytes; 413 ContentLengthLimitExceeded above
//     it) that is a JSON array of objects (400 otherwise);
//   - for a table with the Auxiliary plan (DCRServerConfig.Plan),
//     TimeGenerated in ISO 8601 with 6 fractional digits and no dynamic
//     values, checked the same way, and rows whose TimeGenerated span
//     less than 30 minutes (400 RecordsTimeRangeIsMoreThan30Minutes, the
//     service's error code for a wider call);
//   - for the built-in streams Microsoft-Syslog and
//     Microsoft-CommonSecurityLog (and custom streams given Columns), rows
//     that match the table's schema: an unknown column, a value of the
//     wrong type or a missing TimeGenerated fails the whole request with
//     400 InvalidPayload naming the row and column. This is stricter than
//     the service, which answers 204 and drops or nulls what does not
//     match (the loss shows up only in the workspace); the fake fails
//     loudly so that tests catch it;
//   - 204 No Content on success; errors as {"error":{"code","message"}} with
//     the x-ms-error-code header.
//
// The token endpoint is POST {AuthorityHost}/{TenantID}/oauth2/v2.0/token
// with the client credentials grant and scope [DCRScope] (with or without
// OpenID Connect scopes beside it, as Entra ID allows). The server also
// serves the tenant's OpenID configuration at
// GET {AuthorityHost}/{TenantID}/v2.0/.well-known/openid-configuration and
// instance discovery at GET {AuthorityHost}/common/discovery/instance, so
// MSAL-based clients such as azidentity.ClientSecretCredential work against
// it: serve TLS (DCRServerConfig.TLS), set the credential's authority host
// to AuthorityHost, trust the certificate, and disable instance discovery
// (MSAL sends that request to login.microsoftonline.com for any host it
// does not know).
//
// A DCRServer is safe for concurrent use. Close it when done
// ([NewDCRServer] registers Close with the test's cleanup).
type DCRServer struct {
	// URL is the data collection endpoint, e.g. "http://127.0.0.1:41234".
	URL string
	// AuthorityHost is the base URL of the token endpoint (the same server),
	// for forward.EntraConfig.AuthorityHost.
	AuthorityHost string

	cfg DCRServerConfig
	srv *httptest.Server

	mu            sync.Mutex
	rows          []map[string]any
	requests      []DCRRequest
	tokens        map[string]time.Time // token -> expiry
	tokenRequests int
	faults        []DCRFault
	tokenFaults   []DCRFault
	rejectTokens  bool
	throttle      DCRFault  // answered to every ingestion request until throttleTo
	throttleTo    time.Time // (after the injected faults)

	schemaOnce sync.Once
	schema     map[string]string // nil: rows are not checked
	schemaErr  error             // Columns is invalid
}

// NewDCRServer starts a DCRServer on 127.0.0.1 and registers its Close with
// tb.Cleanup; it fails the test if the server cannot start. It is
// [StartDCRServer] for tests.
func NewDCRServer(tb testing.TB, cfg DCRServerConfig) *DCRServer {
	tb.Helper()
	s, err := StartDCRServer(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// StartDCRServer starts a DCRServer on a free port of 127.0.0.1, for use
// outside tests too (a demo program, a stand-in beside a service under
// test). The caller must call [DCRServer.Close]. The error reports a
// failure to listen.
func StartDCRServer(cfg DCRServerConfig) (*DCRServer, error) {
	if cfg.TenantID == "" {
		cfg.TenantID = "00000000-0000-0000-0000-000000000001"
	}
	if cfg.ClientID == "" {
		cfg.ClientID = "relaykit-client"
	}
	if cfg.ClientSecret == "" {
		cfg.ClientSecret = "s3cret-value"
	}
	if cfg.DCRImmutableID == "" {
		cfg.DCRImmutableID = "dcr-00000000000000000000000000000001"
	}
	if cfg.Stream == "" {
		cfg.Stream = "Custom-RelayKit"
	}
	if cfg.TokenLifetime == 0 {
		cfg.TokenLifetime = time.Hour
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DCRMaxBodyBytes
	}
	s := &DCRServer{cfg: cfg, tokens: make(map[string]time.Time)}
	srv, err := startServer(http.HandlerFunc(s.serveHTTP), cfg.TLS)
	if err != nil {
		return nil, err
	}
	s.srv = srv
	s.URL = s.srv.URL
	s.AuthorityHost = s.srv.URL
	return s, nil
}

// Client returns an HTTP client that trusts the server's certificate (with
// TLS) and sends to it. It implements azcore's policy.Transporter.
func (s *DCRServer) Client() *http.Client { return s.srv.Client() }

// ClientTLSConfig returns a TLS client configuration whose RootCAs hold the
// server's certificate, or nil without TLS. Each call returns a new value.
func (s *DCRServer) ClientTLSConfig() *tls.Config { return clientTLSConfig(s.srv) }

// Certificate returns the PEM of the server's certificate, or nil without
// TLS.
func (s *DCRServer) Certificate() []byte {
	if s.srv.Certificate() == nil {
		return nil
	}
	return pemCert(s.srv.Certificate().Raw)
}

// Config returns the server's configuration with defaults filled in: the
// credentials, rule ID and stream a sink must use.
func (s *DCRServer) Config() DCRServerConfig { return s.cfg }

// Close shuts the server down. It is idempotent.
func (s *DCRServer) Close() { s.srv.Close() }

// Handler returns the server's handler (ingestion and token endpoints),
// for driving it without a network (e.g. through an http.RoundTripper
// inside a testing/synctest bubble, where its clock is the bubble's).
func (s *DCRServer) Handler() http.Handler { return s.srv.Config.Handler }

// Inject queues faults: the next len(faults) ingestion requests get them,
// in order, instead of normal handling (the body is still read).
func (s *DCRServer) Inject(faults ...DCRFault) {
	s.mu.Lock()
	s.faults = append(s.faults, faults...)
	s.mu.Unlock()
}

// Throttle makes every ingestion request with a valid token get f for the
// next d, by the server's clock, after the faults queued by Inject: the
// service throttling for a while (429 or 503 with Retry-After or
// retry-after-ms). [DCRServer.Requests] tells when each request came. A
// zero d ends a throttle early.
func (s *DCRServer) Throttle(d time.Duration, f DCRFault) {
	s.mu.Lock()
	s.throttle, s.throttleTo = f, time.Now().Add(d)
	s.mu.Unlock()
}

// InjectToken queues faults for the next token requests.
func (s *DCRServer) InjectToken(faults ...DCRFault) {
	s.mu.Lock()
	s.tokenFaults = append(s.tokenFaults, faults...)
	s.mu.Unlock()
}

// RevokeTokens invalidates every token issued so far, as if they expired:
// the next ingestion request with one of them gets 401.
func (s *DCRServer) RevokeTokens() {
	s.mu.Lock()
	clear(s.tokens)
	s.mu.Unlock()
}

// RejectAllTokens makes the ingestion endpoint answer 401 to every token
// (reject true), as when the service principal lacks the Monitoring
// Metrics Publisher role on the rule.
func (s *DCRServer) RejectAllTokens(reject bool) {
	s.mu.Lock()
	s.rejectTokens = reject
	s.mu.Unlock()
}

// Rows returns the rows accepted so far, in order of arrival. Numbers are
// json.Number.
func (s *DCRServer) Rows() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.rows...)
}

// Requests returns every ingestion request received so far.
func (s *DCRServer) Requests() []DCRRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]DCRRequest(nil), s.requests...)
}

// TokenRequests returns how many token requests the server answered.
func (s *DCRServer) TokenRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokenRequests
}

func (s *DCRServer) serveHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("x-ms-request-id", newID())
	if strings.HasSuffix(r.URL.Path, "/oauth2/v2.0/token") {
		s.serveToken(w, r)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/v2.0/.well-known/openid-configuration") {
		s.serveOpenIDConfiguration(w, r)
		return
	}
	if r.URL.Path == "/common/discovery/instance" {
		s.serveInstanceDiscovery(w, r)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/dataCollectionRules/") {
		s.serveIngest(w, r)
		return
	}
	dcrError(w, http.StatusNotFound, "NotFound", "The requested path does not exist.")
}

// tokenError writes an OAuth 2.0 error response as Entra ID does.
func tokenError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error":             code,
		"error_description": desc + "\r\nTrace ID: " + newID() + "\r\nCorrelation ID: " + newID(),
		"error_codes":       []int{status},
		"timestamp":         time.Now().UTC().Format(time.DateTime + "Z"),
	})
}

func (s *DCRServer) serveToken(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.tokenRequests++
	var fault *DCRFault
	if len(s.tokenFaults) > 0 {
		f := s.tokenFaults[0]
		s.tokenFaults = s.tokenFaults[1:]
		fault = &f
	}
	s.mu.Unlock()
	if fault != nil {
		if fault.RetryAfter != "" {
			w.Header().Set("Retry-After", fault.RetryAfter)
		}
		code, msg := fault.Code, fault.Message
		if code == "" {
			code = "temporarily_unavailable"
		}
		if msg == "" {
			msg = "AADSTS90033: A transient error has occurred. Please try again."
		}
		tokenError(w, fault.Status, code, msg)
		return
	}
	if r.Method != http.MethodPost {
		tokenError(w, http.StatusMethodNotAllowed, "invalid_request", "AADSTS900561: The endpoint only accepts POST requests.")
		return
	}
	tenant := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/oauth2/v2.0/token")
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request", "AADSTS900144: The request body must contain form parameters.")
		return
	}
	switch {
	case tenant != s.cfg.TenantID:
		tokenError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("AADSTS90002: Tenant '%s' not found.", tenant))
	case r.PostForm.Get("grant_type") != "client_credentials":
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type", "AADSTS70003: The app requested an unsupported grant type.")
	case r.PostForm.Get("client_id") != s.cfg.ClientID:
		tokenError(w, http.StatusBadRequest, "unauthorized_client", fmt.Sprintf("AADSTS700016: Application with identifier '%s' was not found in the directory.", r.PostForm.Get("client_id")))
	case r.PostForm.Get("client_secret") != s.cfg.ClientSecret:
		tokenError(w, http.StatusUnauthorized, "invalid_client", "AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID.")
	case checkScopeCode(r.PostForm.Get("scope")) != "":
		code, desc := checkScope(r.PostForm.Get("scope"))
		tokenError(w, http.StatusBadRequest, code, desc)
	default:
		tok := newID() + newID()
		s.mu.Lock()
		s.tokens[tok] = time.Now().Add(s.cfg.TokenLifetime)
		s.mu.Unlock()
		secs := int(s.cfg.TokenLifetime / time.Second)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store, no-cache")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"token_type":     "Bearer",
			"expires_in":     secs,
			"ext_expires_in": secs,
			"access_token":   tok,
		})
	}
}

// dcrError writes an error response in the service's shape.
func dcrError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("x-ms-error-code", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func (s *DCRServer) serveIngest(w http.ResponseWriter, r *http.Request) {
	rec := DCRRequest{
		Time:            time.Now(),
		ClientRequestID: r.Header.Get("x-ms-client-request-id"),
		Gzip:            r.Header.Get("Content-Encoding") == "gzip",
	}
	if rec.ClientRequestID != "" {
		w.Header().Set("x-ms-client-request-id", rec.ClientRequestID)
	}
	status, rows := s.ingest(w, r, &rec)
	rec.Status = status
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	if status == http.StatusNoContent && !s.cfg.DiscardRows {
		s.rows = append(s.rows, rows...)
	}
	s.mu.Unlock()
}

// ingest handles one ingestion request and returns the status it answered
// and, on success, the rows.
func (s *DCRServer) ingest(w http.ResponseWriter, r *http.Request, rec *DCRRequest) (int, []map[string]any) {
	// Read the body first, as the service does, so faults see full requests.
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		dcrError(w, http.StatusBadRequest, "InvalidPayload", "The request body could not be read.")
		return http.StatusBadRequest, nil
	}
	s.mu.Lock()
	var fault *DCRFault
	if len(s.faults) > 0 {
		f := s.faults[0]
		s.faults = s.faults[1:]
		fault = &f
	} else if rec.Time.Before(s.throttleTo) {
		f := s.throttle
		fault = &f
	}
	s.mu.Unlock()

	if r.Method != http.MethodPost {
		dcrError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "The requested method is not supported.")
		return http.StatusMethodNotAllowed, nil
	}
	// /dataCollectionRules/{id}/streams/{stream}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(parts) != 4 || parts[2] != "streams" {
		dcrError(w, http.StatusNotFound, "NotFound", "The requested path does not exist.")
		return http.StatusNotFound, nil
	}
	auth := r.Header.Get("Authorization")
	token, ok := strings.CutPrefix(auth, "Bearer ")
	rec.Token = token
	if auth == "" || !ok {
		dcrError(w, http.StatusUnauthorized, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing or not a bearer token.")
		return http.StatusUnauthorized, nil
	}
	s.mu.Lock()
	exp, known := s.tokens[token]
	reject := s.rejectTokens
	s.mu.Unlock()
	if !known || time.Now().After(exp) {
		dcrError(w, http.StatusUnauthorized, "InvalidToken", "The access token is invalid or has expired.")
		return http.StatusUnauthorized, nil
	}
	if reject {
		dcrError(w, http.StatusUnauthorized, "InvalidToken", "The caller is not authorized to perform this action on the data collection rule.")
		return http.StatusUnauthorized, nil
	}
	if parts[1] != s.cfg.DCRImmutableID {
		dcrError(w, http.StatusNotFound, "NotFound", fmt.Sprintf("Data collection rule with immutable Id '%s' not found.", parts[1]))
		return http.StatusNotFound, nil
	}
	if v := r.URL.Query().Get("api-version"); v != DCRAPIVersion {
		dcrError(w, http.StatusBadRequest, "InvalidApiVersion", fmt.Sprintf("The api-version '%s' is invalid. The supported version is '%s'.", v, DCRAPIVersion))
		return http.StatusBadRequest, nil
	}
	if parts[3] != s.cfg.Stream {
		dcrError(w, http.StatusBadRequest, "InvalidStream", fmt.Sprintf("Stream '%s' is not declared in the data collection rule.", parts[3]))
		return http.StatusBadRequest, nil
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		dcrError(w, http.StatusUnsupportedMediaType, "UnsupportedMediaType", "The Content-Type must be application/json.")
		return http.StatusUnsupportedMediaType, nil
	}
	body := raw
	switch ce := r.Header.Get("Content-Encoding"); ce {
	case "":
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err == nil {
			body, err = io.ReadAll(io.LimitReader(zr, 64<<20))
		}
		if err != nil {
			dcrError(w, http.StatusBadRequest, "InvalidContentEncoding", "The request body is not valid gzip.")
			return http.StatusBadRequest, nil
		}
	default:
		dcrError(w, http.StatusBadRequest, "InvalidContentEncoding", fmt.Sprintf("Content-Encoding '%s' is not supported.", ce))
		return http.StatusBadRequest, nil
	}
	rec.WireBytes = len(raw)
	rec.BodyBytes = len(body)

	if fault != nil {
		return s.writeFault(w, fault), nil
	}
	if n := max(len(body), len(raw)); n > s.cfg.MaxBodyBytes {
		dcrError(w, http.StatusRequestEntityTooLarge, "ContentLengthLimitExceeded",
			fmt.Sprintf("Maximum allowed content length: %d bytes (1 MB). Provided content length: %d bytes.", s.cfg.MaxBodyBytes, n))
		return http.StatusRequestEntityTooLarge, nil
	}
	var rows []map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&rows); err != nil || dec.More() || bytes.TrimSpace(body)[0] != '[' {
		dcrError(w, http.StatusBadRequest, "InvalidPayload", "The request body must be a JSON array of objects.")
		return http.StatusBadRequest, nil
	}
	for _, row := range rows {
		if row == nil {
			dcrError(w, http.StatusBadRequest, "InvalidPayload", "The request body must be a JSON array of objects.")
			return http.StatusBadRequest, nil
		}
	}
	schema, err := s.rowSchema()
	if err != nil {
		dcrError(w, http.StatusInternalServerError, "InternalServerError", err.Error())
		return http.StatusInternalServerError, nil
	}
	for i, row := range rows {
		msg := ""
		if schema != nil {
			msg = checkRow(schema, row)
		}
		if msg == "" && s.cfg.Plan == PlanAuxiliary {
			msg = checkAuxRow(row)
		}
		if msg != "" {
			dcrError(w, http.StatusBadRequest, "InvalidPayload",
				fmt.Sprintf("The data does not match the schema of stream '%s': record %d: %s.", s.cfg.Stream, i, msg))
			return http.StatusBadRequest, nil
		}
	}
	if s.cfg.Plan == PlanAuxiliary {
		if msg := checkAuxSpan(rows); msg != "" {
			dcrError(w, http.StatusBadRequest, "RecordsTimeRangeIsMoreThan30Minutes", msg)
			return http.StatusBadRequest, nil
		}
	}
	rec.Rows = len(rows)
	w.WriteHeader(http.StatusNoContent)
	return http.StatusNoContent, rows
}

func (s *DCRServer) writeFault(w http.ResponseWriter, f *DCRFault) int {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	if f.RetryAfterMs != "" {
		w.Header().Set("retry-after-ms", f.RetryAfterMs)
	}
	code, msg := f.Code, f.Message
	if code == "" || msg == "" {
		dc, dm := defaultFault(f.Status)
		if code == "" {
			code = dc
		}
		if msg == "" {
			msg = dm
		}
	}
	dcrError(w, f.Status, code, msg)
	return f.Status
}

func defaultFault(status int) (string, string) {
	switch status {
	case http.StatusBadRequest:
		return "InvalidPayload", "The data does not match the schema of the stream: column 'TimeGenerated' has an invalid value."
	case http.StatusUnauthorized:
		return "InvalidToken", "The access token is invalid or has expired."
	case http.StatusForbidden:
		return "Forbidden", "The caller is not authorized to perform this action."
	case http.StatusRequestEntityTooLarge:
		return "ContentLengthLimitExceeded", "Maximum allowed content length: 1048576 bytes (1 MB)."
	case http.StatusTooManyRequests:
		return "TooManyRequests", "Rate limit exceeded. Retry after the time given in the Retry-After header."
	case http.StatusServiceUnavailable:
		return "ServiceUnavailable", "The service is temporarily unavailable."
	default:
		return "InternalServerError", "Service request failed (" + strconv.Itoa(status) + ")."
	}
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
