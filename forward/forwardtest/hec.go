package forwardtest

import (
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaykit/relaykit/internal/hecwire"
)

// HEC status codes and texts, as Splunk documents them (Troubleshoot HTTP
// Event Collector) and returns them in {"text": ..., "code": ...} bodies.
const (
	HECSuccess             = hecwire.Success             // 200 "Success"
	HECTokenDisabled       = hecwire.TokenDisabled       // 403 "Token disabled"
	HECTokenRequired       = hecwire.TokenRequired       // 401 "Token is required"
	HECInvalidAuthz        = hecwire.InvalidAuthz        // 401 "Invalid authorization"
	HECInvalidToken        = hecwire.InvalidToken        // 403 "Invalid token"
	HECNoData              = hecwire.NoData              // 400 "No data"
	HECInvalidDataFormat   = hecwire.InvalidDataFormat   // 400 "Invalid data format"
	HECIncorrectIndex      = hecwire.IncorrectIndex      // 400 "Incorrect index"
	HECInternalError       = hecwire.InternalError       // 500 "Internal server error"
	HECServerBusy          = hecwire.ServerBusy          // 503 "Server is busy"
	HECChannelMissing      = hecwire.ChannelMissing      // 400 "Data channel is missing"
	HECInvalidChannel      = hecwire.InvalidChannel      // 400 "Invalid data channel"
	HECEventRequired       = hecwire.EventRequired       // 400 "Event field is required"
	HECEventBlank          = hecwire.EventBlank          // 400 "Event field cannot be blank"
	HECAckDisabled         = hecwire.AckDisabled         // 400 "ACK is disabled"
	HECIndexedFieldsError  = hecwire.IndexedFieldsError  // 400 "Error in handling indexed fields"
	HECQueryStringDisabled = hecwire.QueryStringDisabled // 400 "Query string authorization is not enabled"
	HECHealthy             = hecwire.Healthy             // 200 "HEC is healthy"
	HECUnhealthyQueuesFull = hecwire.UnhealthyQueuesFull // 503 "HEC is unhealthy, queues are full"
	HECUnhealthyAck        = hecwire.UnhealthyAck        // 503 "HEC is unhealthy, ack service unavailable"
	HECUnhealthyQueueHigh  = hecwire.UnhealthyQueueHigh  // 503 "HEC is unhealthy, queue utilization is high"
)

// HECStatus returns the HTTP status and text HEC sends with code, and false
// for an unknown code.
func HECStatus(code int) (status int, text string, ok bool) { return hecwire.Status(code) }

// HECServerConfig configures an [HECServer]. The zero value accepts the
// token "test-token" for any index, without indexer acknowledgement.
type HECServerConfig struct {
	// Token is the only token accepted. Zero means "test-token".
	Token string
	// Indexes lists the indexes the token may write to; an event for
	// another gets code 7. Nil means any index.
	Indexes []string
	// Ack enables indexer acknowledgement for the token (useACK): requests
	// then need a channel and get an ackId.
	Ack bool
	// MaxContentLength is the largest request body accepted, in bytes
	// after decompression; larger gets 413. Zero means no limit.
	MaxContentLength int
	// TLS serves HTTPS with httptest's certificate (valid for 127.0.0.1);
	// see [HECServer.Client] and [HECServer.ClientTLSConfig].
	TLS bool
}

// HECEvent is one event as the server indexed it.
type HECEvent struct {
	// Event is the "event" value: the string itself, or the JSON text of
	// an object.
	Event string
	// IsObject reports whether "event" was a JSON object.
	IsObject bool
	// Time is the "time" value as sent (e.g. "1700000000.123"), or "".
	Time string
	// Host, Source, SourceType and Index are as sent ("" when absent).
	Host, Source, SourceType, Index string
	// Fields are the indexed fields as sent.
	Fields map[string]string
	// Endpoint is "event" or "raw"; Channel the request's channel.
	Endpoint, Channel string
	// Request numbers the data request that carried the event, from 1.
	Request int
}

// Message returns Event, or the "message" member of an object event.
func (e HECEvent) Message() string {
	if !e.IsObject {
		return e.Event
	}
	var m map[string]any
	if json.Unmarshal([]byte(e.Event), &m) == nil {
		if s, ok := m["message"].(string); ok {
			return s
		}
	}
	return ""
}

// HECServer is a strict, protocol-faithful Splunk HTTP Event Collector on
// 127.0.0.1 for tests: it checks the token, decodes gzip, parses stacked
// JSON events the way HEC does (rejecting arrays, events without "event",
// blank events, nested indexed fields, unknown indexes) and answers with
// HEC's codes and texts. It serves /services/collector/event (and
// /services/collector and /event/1.0), /services/collector/raw,
// /services/collector/ack and /services/collector/health, records every
// indexed event, and injects faults on request. Safe for concurrent use.
type HECServer struct {
	// URL is the base URL, e.g. "http://127.0.0.1:41234".
	URL string

	srv *httptest.Server
	cfg HECServerConfig

	mu         sync.Mutex
	events     []HECEvent
	requests   int          // data requests received
	log        []HECRequest // every data request: arrival and status
	throttle   HECThrottle  // answered to every data request until throttleTo
	throttleTo time.Time
	health     int // health requests received
	acks       map[string]*ackChannel
	faults     []fault
	unhealthy  int // health code to answer, 0 = healthy
	disabled   bool
	down       bool // SetDown: every data request fails with 503 code 9
}

type ackChannel struct {
	next    int64
	pending map[int64]bool // ackId -> will be acknowledged
}

type faultKind int

const (
	faultStatus faultKind = iota // answer code (and Retry-After)
	faultReject                  // index events before n, answer code with invalid-event-number n
	faultTooLarge
	faultReset
	faultSlow
	faultLoseAck // accept with an ackId that never becomes true, index nothing
)

type fault struct {
	kind         faultKind
	code         int
	status       int
	retryAfter   string
	retryAfterMs string
	n            int
	delay        time.Duration
}

// HECRequest records one data request (event or raw endpoint).
type HECRequest struct {
	// Time is when the request arrived, by the server's clock (the
	// bubble's fake clock when the handler runs in a testing/synctest
	// bubble).
	Time time.Time
	// Status is the HTTP status answered, or 0 when the connection was
	// closed without a response.
	Status int
}

// HECThrottle is how an [HECServer] answers while it throttles (see
// [HECServer.Throttle]): what Splunk behind a load balancer or a HEC
// with full queues sends to a client that must slow down.
type HECThrottle struct {
	// Status is 429 (Too Many Requests, body code 9) or 503 (HEC code 9
	// "Server is busy"). Zero means 429.
	Status int
	// RetryAfter is sent as the Retry-After header (delay-seconds or an
	// HTTP-date), if set.
	RetryAfter string
	// RetryAfterMs is sent as the retry-after-ms header, if set.
	RetryAfterMs string
}

// Throttle makes every data request answer t for the next d, by the
// server's clock, after the faults already queued: a destination that
// throttles for a while and names the wait it wants. [HECServer.RequestLog]
// tells when each request came. A zero d ends a throttle early.
func (s *HECServer) Throttle(d time.Duration, t HECThrottle) {
	if t.Status == 0 {
		t.Status = http.StatusTooManyRequests
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.throttle, s.throttleTo = t, time.Now().Add(d)
}

// RequestLog returns every data request received so far, in order of
// arrival, with the status answered.
func (s *HECServer) RequestLog() []HECRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]HECRequest(nil), s.log...)
}

// NewHECServer starts an HEC server on 127.0.0.1 and closes it when the
// test ends; it fails the test if the server cannot start. It is
// [StartHECServer] for tests.
func NewHECServer(t testing.TB, cfg HECServerConfig) *HECServer {
	t.Helper()
	s, err := StartHECServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// StartHECServer starts an HEC server on a free port of 127.0.0.1, for use
// outside tests too (a demo program, a stand-in beside a service under
// test). The caller must call [HECServer.Close]. The error reports a
// failure to listen.
func StartHECServer(cfg HECServerConfig) (*HECServer, error) {
	if cfg.Token == "" {
		cfg.Token = "test-token"
	}
	s := &HECServer{cfg: cfg, acks: make(map[string]*ackChannel)}
	mux := http.NewServeMux()
	mux.HandleFunc("/services/collector", s.logged(s.serveEvent))
	mux.HandleFunc("/services/collector/event", s.logged(s.serveEvent))
	mux.HandleFunc("/services/collector/event/1.0", s.logged(s.serveEvent))
	mux.HandleFunc("/services/collector/raw", s.logged(s.serveRaw))
	mux.HandleFunc("/services/collector/raw/1.0", s.logged(s.serveRaw))
	mux.HandleFunc("/services/collector/ack", s.serveAck)
	mux.HandleFunc("/services/collector/health", s.serveHealth)
	mux.HandleFunc("/services/collector/health/1.0", s.serveHealth)
	srv, err := startServer(mux, cfg.TLS)
	if err != nil {
		return nil, err
	}
	s.srv = srv
	s.URL = s.srv.URL
	return s, nil
}

// Handler returns the server's handler, for driving it without a network
// (e.g. through an http.RoundTripper inside a testing/synctest bubble).
// Faults that need a connection (ResetConnection) then do not apply.
func (s *HECServer) Handler() http.Handler { return s.srv.Config.Handler }

// Close shuts the server down; it is idempotent.
func (s *HECServer) Close() { s.srv.Close() }

// Client returns an HTTP client that trusts the server (for TLS).
func (s *HECServer) Client() *http.Client { return s.srv.Client() }

// ClientTLSConfig returns a TLS client configuration whose RootCAs hold the
// server's certificate, or nil without TLS. Each call returns a new value.
func (s *HECServer) ClientTLSConfig() *tls.Config { return clientTLSConfig(s.srv) }

// Certificate returns the PEM of the server's certificate (TLS only).
func (s *HECServer) Certificate() []byte {
	if s.srv.Certificate() == nil {
		return nil
	}
	return pemCert(s.srv.Certificate().Raw)
}

// Token returns the accepted token.
func (s *HECServer) Token() string { return s.cfg.Token }

// Events returns a copy of every indexed event, in arrival order,
// duplicates included.
func (s *HECServer) Events() []HECEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]HECEvent(nil), s.events...)
}

// Messages returns [HECEvent.Message] of every indexed event, in order.
func (s *HECServer) Messages() []string {
	evs := s.Events()
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Message()
	}
	return out
}

// Counts returns how often each message was indexed.
func (s *HECServer) Counts() map[string]int {
	out := make(map[string]int)
	for _, m := range s.Messages() {
		out[m]++
	}
	return out
}

// Requests returns the number of data requests received (event and raw),
// faulted ones included.
func (s *HECServer) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// HealthChecks returns the number of health requests received.
func (s *HECServer) HealthChecks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.health
}

func (s *HECServer) push(f fault, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults = append(s.faults, f)
	}
}

// Busy makes the next n data requests fail with 503, code 9 "Server is
// busy".
func (s *HECServer) Busy(n int) { s.push(fault{kind: faultStatus, code: HECServerBusy}, n) }

// Fail makes the next n data requests fail with the given HEC code (and its
// HTTP status), e.g. [HECInvalidToken] or [HECUnhealthyQueuesFull].
func (s *HECServer) Fail(n, code int) { s.push(fault{kind: faultStatus, code: code}, n) }

// TooManyRequests makes the next n data requests fail with 429 and
// Retry-After: retryAfter (whole seconds, at least 1).
func (s *HECServer) TooManyRequests(n int, retryAfter time.Duration) {
	sec := max(1, int(retryAfter/time.Second))
	s.push(fault{kind: faultStatus, status: http.StatusTooManyRequests, retryAfter: strconv.Itoa(sec)}, n)
}

// RejectEvent makes the next data request index its events before index
// eventNumber (0-based) and answer 400, code 6 "Invalid data format" with
// "invalid-event-number": eventNumber, as HEC does for a malformed event.
func (s *HECServer) RejectEvent(eventNumber int) {
	s.push(fault{kind: faultReject, code: HECInvalidDataFormat, n: eventNumber}, 1)
}

// TooLarge makes the next n data requests fail with 413.
func (s *HECServer) TooLarge(n int) { s.push(fault{kind: faultTooLarge}, n) }

// ResetConnection makes the next n data requests end with the connection
// closed after part of the body was read, without a response.
func (s *HECServer) ResetConnection(n int) { s.push(fault{kind: faultReset}, n) }

// Slow delays the response to the next n data requests by d (or until the
// client gives up), then handles them normally.
func (s *HECServer) Slow(n int, d time.Duration) { s.push(fault{kind: faultSlow, delay: d}, n) }

// LoseAcks makes the next n data requests answer Success with an ackId
// that is never acknowledged, and index nothing: data lost inside Splunk.
// Only with Ack.
func (s *HECServer) LoseAcks(n int) { s.push(fault{kind: faultLoseAck}, n) }

// SetUnhealthy makes the health endpoint answer code (18, 19 or 20, with
// 503); 0 makes it healthy again.
func (s *HECServer) SetUnhealthy(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unhealthy = code
}

// SetDown starts (true) or ends (false) an outage of any length: while it
// lasts every data request is answered 503, code 9 "Server is busy" (after
// the faults queued before it), and the health endpoint answers 503, code
// 18 "HEC is unhealthy, queues are full" unless [HECServer.SetUnhealthy]
// chose another code — what a Splunk indexer with full queues does.
func (s *HECServer) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// DisableToken makes the token disabled (code 1) or enabled again.
func (s *HECServer) DisableToken(disabled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.disabled = disabled
}

func reply(w http.ResponseWriter, code int, extra string) {
	status, _, _ := hecwire.Status(code)
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	b := hecwire.AppendReply(nil, code, true)
	_, _ = w.Write(append(append(b, extra...), '}'))
}

// auth checks the Authorization header as HEC does.
func (s *HECServer) auth(w http.ResponseWriter, r *http.Request) bool {
	h := r.Header.Get("Authorization")
	switch {
	case h == "":
		reply(w, HECTokenRequired, "")
		return false
	case !strings.HasPrefix(h, "Splunk "):
		reply(w, HECInvalidAuthz, "")
		return false
	case strings.TrimPrefix(h, "Splunk ") != s.cfg.Token:
		reply(w, HECInvalidToken, "")
		return false
	}
	s.mu.Lock()
	disabled := s.disabled
	s.mu.Unlock()
	if disabled {
		reply(w, HECTokenDisabled, "")
		return false
	}
	return true
}

// channel returns the request's channel; ok false after an error reply.
func (s *HECServer) channel(w http.ResponseWriter, r *http.Request, required bool) (string, bool) {
	ch := r.Header.Get("X-Splunk-Request-Channel")
	if ch == "" {
		ch = r.URL.Query().Get("channel")
	}
	switch {
	case ch == "" && required:
		reply(w, HECChannelMissing, "")
		return "", false
	case ch != "" && !hecwire.IsChannel(ch):
		reply(w, HECInvalidChannel, "")
		return "", false
	}
	return ch, true
}

// body reads and decodes the request body; ok false after an error reply.
func (s *HECServer) body(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	var rd io.Reader = r.Body
	switch enc := strings.ToLower(r.Header.Get("Content-Encoding")); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			reply(w, HECInvalidDataFormat, "")
			return nil, false
		}
		defer func() { _ = zr.Close() }()
		rd = zr
	default:
		w.WriteHeader(http.StatusUnsupportedMediaType)
		_, _ = io.WriteString(w, `{"text":"unsupported content encoding"}`)
		return nil, false
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		reply(w, HECInvalidDataFormat, "")
		return nil, false
	}
	if s.cfg.MaxContentLength > 0 && len(b) > s.cfg.MaxContentLength {
		tooLarge(w, len(b), s.cfg.MaxContentLength)
		return nil, false
	}
	return b, true
}

func tooLarge(w http.ResponseWriter, n, limit int) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	_, _ = fmt.Fprintf(w, "Content-Length of %d too large (maximum is %d)", n, limit)
}

// begin counts a data request and applies the next fault. It returns the
// fault to apply after parsing (reject, lose ack) and false when the
// request was fully answered.
func (s *HECServer) begin(w http.ResponseWriter, r *http.Request) (*fault, bool) {
	now := time.Now()
	s.mu.Lock()
	s.requests++
	var f *fault
	switch {
	case len(s.faults) > 0:
		f = &s.faults[0]
		s.faults = s.faults[1:]
	case now.Before(s.throttleTo):
		t := s.throttle
		f = &fault{kind: faultStatus, retryAfter: t.RetryAfter, retryAfterMs: t.RetryAfterMs}
		if t.Status == http.StatusServiceUnavailable {
			f.code = HECServerBusy
		} else {
			f.status = t.Status
		}
	case s.down:
		f = &fault{kind: faultStatus, code: HECServerBusy}
	}
	s.mu.Unlock()
	if f == nil {
		return nil, true
	}
	switch f.kind {
	case faultStatus:
		_, _ = io.Copy(io.Discard, r.Body)
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		if f.retryAfterMs != "" {
			w.Header().Set("retry-after-ms", f.retryAfterMs)
		}
		if f.status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(f.status)
			_, _ = io.WriteString(w, `{"text":"Too many requests","code":9}`)
			return nil, false
		}
		reply(w, f.code, "")
		return nil, false
	case faultTooLarge:
		n, _ := io.Copy(io.Discard, r.Body)
		tooLarge(w, int(n), max(1, int(n)-1))
		return nil, false
	case faultReset:
		_, _ = io.CopyN(io.Discard, r.Body, 16)
		rw := w
		if sw, ok := w.(*statusWriter); ok {
			rw = sw.ResponseWriter
		}
		hj, ok := rw.(http.Hijacker)
		if !ok {
			panic(http.ErrAbortHandler)
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return nil, false
	case faultSlow:
		// Read the body first: only then does net/http watch the
		// connection and cancel r.Context() when the client gives up.
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, false
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		t := time.NewTimer(f.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return nil, false
		}
		return nil, true
	}
	return f, true
}

// statusWriter remembers the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// logged serves a data request through h and records it in the request
// log.
func (s *HECServer) logged(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			s.mu.Lock()
			s.log = append(s.log, HECRequest{Time: at, Status: sw.status})
			s.mu.Unlock()
		}()
		h(sw, r)
	}
}

func (s *HECServer) serveEvent(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if !s.auth(w, r) {
		return
	}
	ch, ok := s.channel(w, r, s.cfg.Ack)
	if !ok {
		return
	}
	f, ok := s.begin(w, r)
	if !ok {
		return
	}
	b, ok := s.body(w, r)
	if !ok {
		return
	}
	evs, code, bad := s.parseEvents(b)
	if f != nil && f.kind == faultReject && f.n < len(evs) {
		code, bad, evs = f.code, f.n, evs[:f.n]
	}
	if code != HECSuccess {
		s.index(evs, "event", ch) // HEC indexes the events before the bad one
		if bad >= 0 {
			reply(w, code, fmt.Sprintf(`,"invalid-event-number":%d`, bad))
		} else {
			reply(w, code, "")
		}
		return
	}
	s.succeed(w, evs, "event", ch, f)
}

func (s *HECServer) serveRaw(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if !s.auth(w, r) {
		return
	}
	ch, ok := s.channel(w, r, true)
	if !ok {
		return
	}
	f, ok := s.begin(w, r)
	if !ok {
		return
	}
	b, ok := s.body(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	if idx := q.Get("index"); idx != "" && !s.indexAllowed(idx) {
		reply(w, HECIncorrectIndex, "")
		return
	}
	var evs []HECEvent
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		evs = append(evs, HECEvent{Event: line, Host: q.Get("host"), Source: q.Get("source"),
			SourceType: q.Get("sourcetype"), Index: q.Get("index")})
	}
	if len(evs) == 0 {
		reply(w, HECNoData, "")
		return
	}
	s.succeed(w, evs, "raw", ch, f)
}

func (s *HECServer) succeed(w http.ResponseWriter, evs []HECEvent, endpoint, ch string, f *fault) {
	lose := f != nil && f.kind == faultLoseAck
	if !lose {
		s.index(evs, endpoint, ch)
	}
	if !s.cfg.Ack {
		reply(w, HECSuccess, "")
		return
	}
	s.mu.Lock()
	a := s.acks[ch]
	if a == nil {
		a = &ackChannel{pending: make(map[int64]bool)}
		s.acks[ch] = a
	}
	id := a.next
	a.next++
	a.pending[id] = !lose
	s.mu.Unlock()
	reply(w, HECSuccess, fmt.Sprintf(`,"ackId":%d`, id))
}

func (s *HECServer) index(evs []HECEvent, endpoint, ch string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range evs {
		e.Endpoint, e.Channel, e.Request = endpoint, ch, s.requests
		s.events = append(s.events, e)
	}
}

func (s *HECServer) indexAllowed(idx string) bool {
	if s.cfg.Indexes == nil {
		return true
	}
	for _, i := range s.cfg.Indexes {
		if i == idx {
			return true
		}
	}
	return false
}

// parseEvents parses stacked JSON event objects as HEC does: each value
// must be valid JSON (encoding/json checks the syntax strictly), and
// hecwire's decoder, the one stream/hec's receiver uses, checks the event.
// It returns the events parsed, HECSuccess or the code of the first bad
// event, and that event's 0-based number (-1 when the whole body is bad).
func (s *HECServer) parseEvents(b []byte) ([]HECEvent, int, int) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, HECNoData, -1
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var evs []HECEvent
	var d hecwire.Decoder
	for n := 0; ; n++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			return evs, HECSuccess, -1
		} else if err != nil {
			return evs, HECInvalidDataFormat, n
		}
		d.Reset(raw)
		ev, code := d.Next()
		if code != HECSuccess {
			return evs, code, n
		}
		e := HECEvent{Event: string(ev.Event), IsObject: ev.IsObject, Time: string(ev.Time),
			Host: string(ev.Host), Source: string(ev.Source), SourceType: string(ev.SourceType), Index: string(ev.Index)}
		if e.Index != "" && !s.indexAllowed(e.Index) {
			return evs, HECIncorrectIndex, n
		}
		if len(ev.Fields) > 0 {
			e.Fields = make(map[string]string, len(ev.Fields))
			multi := map[string][]string{}
			for _, f := range ev.Fields {
				if f.Multi {
					multi[string(f.Key)] = append(multi[string(f.Key)], string(f.Value))
					continue
				}
				e.Fields[string(f.Key)] = string(f.Value)
			}
			for k, vs := range multi {
				j, _ := json.Marshal(vs)
				e.Fields[k] = string(j) // a multi-value field, as its JSON array
			}
		}
		evs = append(evs, e)
	}
}

func (s *HECServer) serveAck(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if !s.auth(w, r) {
		return
	}
	if !s.cfg.Ack {
		reply(w, HECAckDisabled, "")
		return
	}
	ch, ok := s.channel(w, r, true)
	if !ok {
		return
	}
	var q struct {
		Acks []int64 `json:"acks"`
	}
	b, ok := s.body(w, r)
	if !ok {
		return
	}
	if err := json.Unmarshal(b, &q); err != nil || q.Acks == nil {
		reply(w, HECInvalidDataFormat, "")
		return
	}
	s.mu.Lock()
	a := s.acks[ch]
	out := make(map[string]bool, len(q.Acks))
	for _, id := range q.Acks {
		ok := a != nil && a.pending[id]
		if ok {
			// HEC forgets an ackId once it reported it true.
			delete(a.pending, id)
		}
		out[strconv.FormatInt(id, 10)] = ok
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(map[string]any{"acks": out})
}

func (s *HECServer) serveHealth(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	s.health++
	code := s.unhealthy
	if code == 0 && s.down {
		code = HECUnhealthyQueuesFull
	}
	s.mu.Unlock()
	if code == 0 {
		code = HECHealthy
	}
	reply(w, code, "")
}
