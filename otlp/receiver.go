package otlp

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/internal/cfgerr"
	"github.com/relaykit/relaykit/internal/episode"
	"github.com/relaykit/relaykit/internal/limitread"

	"github.com/klauspost/compress/gzip"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/gzip" // gzip-compressed gRPC requests, as SDKs send them
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/relaykit/relaykit"
)

// ErrInvalidConfig is wrapped by the errors [NewReceiver] and
// [NewExporter] return for a bad configuration.
var ErrInvalidConfig = errors.New("otlp: invalid config")

// Defaults of [ReceiverConfig].
const (
	DefaultMaxBodyBytes = 8 << 20
	DefaultBodyTimeout  = 30 * time.Second
	DefaultSendTimeout  = 30 * time.Second
	DefaultRetryAfter   = time.Second

	// Defaults of the gRPC connection limits of [Receiver.ServerOptions].
	DefaultGRPCIdleTimeout      = 2 * time.Minute
	DefaultGRPCHandshakeTimeout = 10 * time.Second
	DefaultGRPCMaxStreams       = 16
	// GRPCPingMinTime is the shortest interval between a client's
	// keepalive pings that [Receiver.ServerOptions] tolerates (with or
	// without active streams); a client pinging more often is sent
	// GOAWAY (too_many_pings) and disconnected. It is the shortest
	// keepalive interval grpc-go clients allow themselves.
	GRPCPingMinTime = 10 * time.Second
)

// ReceiverConfig configures a [Receiver]. Sink is required; every other
// zero field means the documented default.
type ReceiverConfig struct {
	// Name identifies the receiver in log records and errors.
	Name string
	// Sink receives the events of each request as one batch. A nil error
	// from Send is the only thing the receiver acknowledges.
	Sink relaykit.Sink
	// Mapping converts log records to events; the zero value is the
	// default mapping (see the package documentation).
	Mapping Mapping

	// Token, when set, is the bearer token every request must present:
	// "Authorization: Bearer <Token>" (HTTP header or gRPC metadata).
	// Others are answered 401 / UNAUTHENTICATED. It never appears in
	// errors, logs or Stats. Empty means no authentication (use mutual
	// TLS on the listener, or a network the senders alone reach).
	Token string

	// MaxBodyBytes is the largest request body accepted over HTTP, in
	// bytes, both as received and after gzip decompression; a larger one
	// is answered 413 and counted in [ReceiverStats].TooLarge.
	// Decompression stops at the limit, so a gzip bomb costs no more
	// memory than MaxBodyBytes. For gRPC, pass [Receiver.ServerOptions]
	// to grpc.NewServer: it sets grpc.MaxRecvMsgSize to the same limit
	// (gRPC applies it after decompression too). Zero means 8 MiB.
	MaxBodyBytes int64
	// MaxEventBytes is the largest event accepted, as [relaykit.Event.Size]
	// counts it after decoding; larger records are refused and answered
	// with partial success (rejected_log_records and a message), the
	// others handed to the Sink. Zero means no limit beyond MaxBodyBytes.
	MaxEventBytes int
	// BodyTimeout bounds the reading of one request body. Over HTTP it
	// runs from the start of the request (408 after it), by moving the
	// connection's read deadline. Over gRPC (with [Receiver.ServerOptions])
	// it runs from the arrival of an Export's headers to the arrival of
	// its whole request message: a stream whose message is late is
	// cancelled (answered DEADLINE_EXCEEDED, and reset), nothing of it is
	// handed to the Sink, and it is counted in [ReceiverStats].BodyTimeouts;
	// the connection's other streams go on. Zero means 30 s; negative
	// means no bound from the receiver.
	BodyTimeout time.Duration
	// SendTimeout bounds the Sink's Send of one batch (its ctx deadline).
	// A Send still running then is answered as a refusal (503 /
	// UNAVAILABLE), so the sender retries. Zero means 30 s.
	SendTimeout time.Duration
	// RetryAfter is the wait a refusal asks for: the Retry-After header
	// of a 503 (in whole seconds, rounded up) and the RetryInfo of an
	// UNAVAILABLE status. Zero means 1 s.
	RetryAfter time.Duration

	// GRPCIdleTimeout closes a gRPC connection that has had no active
	// stream for this long (keepalive.ServerParameters.MaxConnectionIdle:
	// GOAWAY, then close). It applies through [Receiver.ServerOptions].
	// Zero means 2 min; negative means never.
	GRPCIdleTimeout time.Duration
	// GRPCHandshakeTimeout bounds the setting up of a gRPC connection:
	// the client's HTTP/2 preface and first SETTINGS frame must arrive
	// within it (grpc.ConnectionTimeout), or the connection is closed. A
	// TLS handshake done by a stream.NetListener has its own deadline
	// (stream.Config.HandshakeTimeout), measured from accept; one done by
	// the server's credentials counts in this one. Zero means 10 s.
	GRPCHandshakeTimeout time.Duration
	// GRPCMaxStreams is the most concurrent streams (export requests in
	// flight) on one gRPC connection (grpc.MaxConcurrentStreams,
	// advertised in SETTINGS: clients queue beyond it). With
	// MaxBodyBytes it bounds the request memory one connection can hold.
	// Zero means 16.
	GRPCMaxStreams uint32

	// Clock stamps ReceiveTime, one read per request. Nil means
	// [clock.Default].
	Clock *clock.Clock

	// Hooks observe requests and Sink errors. Nil hooks cost nothing.
	Hooks ReceiverHooks
	// Logger logs state changes (the Sink refusing batches, and accepting
	// them again, once per episode), never records or secrets. Nil means
	// no logging.
	Logger *slog.Logger
}

// ReceiverHooks observe a [Receiver]. They run synchronously on request
// goroutines, possibly several at once: they must be fast, safe for
// concurrent use and must not retain their arguments.
type ReceiverHooks struct {
	// OnRequest is called after an export request was answered, with the
	// transport ("http" or "grpc"), the HTTP status or gRPC code answered
	// (gRPC codes as ints: 0 OK), the log records decoded, the body bytes
	// read (HTTP, before decompression; 0 for gRPC) and the time from the
	// start of the request to the answer.
	OnRequest func(transport string, status, records, bytes int, took time.Duration)
	// OnSendError is called when the Sink refused a batch (answered 503 /
	// UNAVAILABLE), with the Sink's error and the records of the batch. It
	// has the shape of every OnSendError hook in relaykit.
	OnSendError func(err error, events int)
}

// Validate reports whether [NewReceiver] would accept cfg: nil, or a
// *relaykit.FieldError wrapping [ErrInvalidConfig].
func (cfg ReceiverConfig) Validate() error { return cfg.fill() }

func (cfg *ReceiverConfig) fill() error {
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(ErrInvalidConfig, field, format, args...)
	}
	switch {
	case cfg.Sink == nil:
		return bad("Sink", "required")
	case strings.ContainsAny(cfg.Token, " \t\r\n"):
		return bad("Token", "contains white space")
	case cfg.Mapping.Names > CollectorNames:
		return bad("Mapping.Names", "unknown names %d", cfg.Mapping.Names)
	}
	for _, v := range []struct {
		field string
		n     int64
	}{
		{"MaxBodyBytes", cfg.MaxBodyBytes}, {"MaxEventBytes", int64(cfg.MaxEventBytes)}, {"SendTimeout", int64(cfg.SendTimeout)},
		{"RetryAfter", int64(cfg.RetryAfter)}, {"GRPCHandshakeTimeout", int64(cfg.GRPCHandshakeTimeout)},
	} {
		if v.n < 0 {
			return bad(v.field, "must not be negative")
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Default()
	}
	if cfg.BodyTimeout == 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	if cfg.SendTimeout == 0 {
		cfg.SendTimeout = DefaultSendTimeout
	}
	if cfg.RetryAfter == 0 {
		cfg.RetryAfter = DefaultRetryAfter
	}
	if cfg.GRPCIdleTimeout == 0 {
		cfg.GRPCIdleTimeout = DefaultGRPCIdleTimeout
	}
	if cfg.GRPCHandshakeTimeout == 0 {
		cfg.GRPCHandshakeTimeout = DefaultGRPCHandshakeTimeout
	}
	if cfg.GRPCMaxStreams == 0 {
		cfg.GRPCMaxStreams = DefaultGRPCMaxStreams
	}
	return nil
}

// ReceiverStats is a snapshot of a receiver's counters; they only grow.
type ReceiverStats struct {
	// Requests counts export requests that passed authentication, over
	// HTTP and gRPC.
	Requests, GRPCRequests int64
	// Bytes counts HTTP request body bytes read, as received; DecodedBytes
	// the same bodies after decompression.
	Bytes, DecodedBytes int64
	// Records counts log records decoded; RecordsAccepted those the Sink
	// accepted; RecordsRetried those in batches the Sink refused (the
	// sender was told to retry them); RecordsRejected those refused with
	// partial success (over MaxEventBytes), which are not retried (counted
	// when the request is answered with success).
	Records, RecordsAccepted, RecordsRetried, RecordsRejected int64
	// Unauthorized counts requests without the token (401 /
	// UNAUTHENTICATED); BadContentType HTTP requests with another content
	// type or encoding (415); TooLarge HTTP bodies over MaxBodyBytes
	// (413); BadRequests bodies that are not a valid export request (400 /
	// INVALID_ARGUMENT: truncated protobuf, invalid JSON, broken gzip);
	// BodyTimeouts bodies not read within BodyTimeout (408 over HTTP,
	// a cancelled stream over gRPC); BodyErrors HTTP bodies broken off by
	// the sender.
	Unauthorized, BadContentType, TooLarge, BadRequests, BodyTimeouts, BodyErrors int64
	// SendErrors counts batches the Sink refused, or did not accept within
	// SendTimeout; Closed requests refused because the receiver was
	// closed.
	SendErrors, Closed int64
}

// Receiver is an OTLP logs receiver: an http.Handler for OTLP/HTTP (POST
// /v1/logs, protobuf or JSON) and a gRPC LogsService for OTLP/gRPC. It
// hands the log records of each request, as one batch of events, to a
// [relaykit.Sink] and answers success only after Send returned nil. It
// starts no goroutines; its methods are safe for concurrent use.
type Receiver struct {
	cfg    ReceiverConfig
	token  []byte
	retry  string // Retry-After header value
	pool   sync.Pool
	closed atomic.Bool

	requests, grpcRequests, bytes, decoded                    atomic.Int64
	records, accepted, retried, rejected                      atomic.Int64
	unauthorized, badType, tooLarge, badRequests, bodyTimeout atomic.Int64
	bodyErrors, sendErrors, closedN                           atomic.Int64
	refusing                                                  episode.Log
}

var _ http.Handler = (*Receiver)(nil)

// NewReceiver returns a receiver for cfg, or a *relaykit.FieldError
// wrapping [ErrInvalidConfig]. It starts no goroutine.
func NewReceiver(cfg ReceiverConfig) (*Receiver, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	secs := (cfg.RetryAfter + time.Second - 1) / time.Second
	r := &Receiver{cfg: cfg, retry: strconv.FormatInt(int64(secs), 10)}
	if cfg.Token != "" {
		r.token = []byte("Bearer " + cfg.Token)
	}
	return r, nil
}

// Stats returns a snapshot of the receiver's counters.
func (r *Receiver) Stats() ReceiverStats {
	return ReceiverStats{
		Requests: r.requests.Load(), GRPCRequests: r.grpcRequests.Load(), Bytes: r.bytes.Load(), DecodedBytes: r.decoded.Load(),
		Records: r.records.Load(), RecordsAccepted: r.accepted.Load(), RecordsRetried: r.retried.Load(), RecordsRejected: r.rejected.Load(),
		Unauthorized: r.unauthorized.Load(), BadContentType: r.badType.Load(), TooLarge: r.tooLarge.Load(),
		BadRequests: r.badRequests.Load(), BodyTimeouts: r.bodyTimeout.Load(), BodyErrors: r.bodyErrors.Load(),
		SendErrors: r.sendErrors.Load(), Closed: r.closedN.Load(),
	}
}

// Close makes the receiver refuse every later request as unavailable
// (503 / UNAVAILABLE with the retry delay), so that senders keep their
// records and send them again, to this relay after a restart or to
// another. Requests already handed to the Sink finish as they would. The
// servers are the caller's to shut down (after Close, so that no request
// is cut). Close is idempotent and returns nil.
func (r *Receiver) Close() error {
	r.closed.Store(true)
	return nil
}

// reqState is what one request needs, pooled.
type reqState struct {
	body, plain []byte
	zr          *gzip.Reader
	br          bytes.Reader
	dec         decoder
	batch       []relaykit.Event
	grpc        grpcRequest
	clock       *clock.Clock // the receiver's: stamps ReceiveTime
}

// maxPooledBytes bounds the memory a pooled request state keeps.
const maxPooledBytes = 16 << 20

func (r *Receiver) get() *reqState {
	if st, ok := r.pool.Get().(*reqState); ok {
		return st
	}
	return &reqState{dec: decoder{m: r.cfg.Mapping}, clock: r.cfg.Clock}
}

func (r *Receiver) put(st *reqState) {
	if 3*(cap(st.body)+cap(st.plain)) > maxPooledBytes {
		return
	}
	r.pool.Put(st)
}

// export refuses the records of st.batch (decoded) over MaxEventBytes,
// and hands the rest to the Sink. It returns the number refused and the
// Sink's error.
func (r *Receiver) export(ctx context.Context, st *reqState) (refused int, err error) {
	r.records.Add(int64(len(st.batch)))
	if max := r.cfg.MaxEventBytes; max > 0 {
		kept := 0
		for i := range st.batch {
			if st.batch[i].Size() > max {
				continue
			}
			if i != kept {
				// Swap, so that the refused event's buffers stay pooled.
				st.batch[i], st.batch[kept] = st.batch[kept], st.batch[i]
			}
			kept++
		}
		refused = len(st.batch) - kept
		st.batch = st.batch[:kept]
	}
	if len(st.batch) == 0 {
		r.rejected.Add(int64(refused))
		return refused, nil
	}
	sctx, cancel := context.WithTimeout(ctx, r.cfg.SendTimeout)
	defer cancel()
	if err := r.cfg.Sink.Send(sctx, st.batch); err != nil {
		r.sendErrors.Add(1)
		r.retried.Add(int64(len(st.batch)))
		r.refusing.Fail(r.cfg.Logger, "otlp: the sink refuses batches, answering unavailable (further refusals are counted, not logged)", "input", r.cfg.Name, "err", err)
		if f := r.cfg.Hooks.OnSendError; f != nil {
			f(err, len(st.batch))
		}
		return refused, err
	}
	r.refusing.OK(r.cfg.Logger, "otlp: the sink accepts batches again", "input", r.cfg.Name)
	r.accepted.Add(int64(len(st.batch)))
	r.rejected.Add(int64(refused)) // answered with partial success: not sent again
	return refused, nil
}

// response returns the export response for refused records.
func (r *Receiver) response(refused int) plogotlp.ExportResponse {
	resp := plogotlp.NewExportResponse()
	if refused > 0 {
		ps := resp.PartialSuccess()
		ps.SetRejectedLogRecords(int64(refused))
		ps.SetErrorMessage(fmt.Sprintf("%d log records larger than %d bytes", refused, r.cfg.MaxEventBytes))
	}
	return resp
}

// authorized reports whether the Authorization value presents the token.
func (r *Receiver) authorized(v string) bool {
	if r.token == nil {
		return true
	}
	return subtle.ConstantTimeCompare([]byte(v), r.token) == 1
}

// ---- HTTP ----

type contentKind uint8

const (
	kindProto contentKind = iota
	kindJSON
)

const (
	protoType = "application/x-protobuf"
	jsonType  = "application/json"
)

// ServeHTTP serves OTLP/HTTP logs: POST to a path ending in /v1/logs
// (so the receiver may be mounted at any prefix), Content-Type
// application/x-protobuf or application/json, optionally gzipped. The
// answer is in the request's content type: an ExportLogsServiceResponse
// (with partial success for refused records) on success, a
// google.rpc.Status otherwise. Other paths are answered 404, other methods
// 405, other content types or encodings 415.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	start := time.Now()
	code, records, wire := r.serveHTTP(w, req)
	if f := r.cfg.Hooks.OnRequest; f != nil {
		f("http", code, records, wire, time.Since(start))
	}
}

func (r *Receiver) serveHTTP(w http.ResponseWriter, req *http.Request) (code, records, wire int) {
	if !strings.HasSuffix(strings.TrimSuffix(req.URL.Path, "/"), "/v1/logs") {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return http.StatusNotFound, 0, 0
	}
	if req.Method != http.MethodPost {
		w.Header()["Allow"] = []string{http.MethodPost}
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return http.StatusMethodNotAllowed, 0, 0
	}
	kind, ok := contentType(req.Header.Get("Content-Type"))
	if !ok {
		r.badType.Add(1)
		http.Error(w, "unsupported content type: use application/x-protobuf or application/json", http.StatusUnsupportedMediaType)
		return http.StatusUnsupportedMediaType, 0, 0
	}
	if !r.authorized(req.Header.Get("Authorization")) {
		r.unauthorized.Add(1)
		w.Header()["Www-Authenticate"] = []string{"Bearer"}
		return writeStatus(w, kind, http.StatusUnauthorized, codes.Unauthenticated, "missing or wrong bearer token"), 0, 0
	}
	r.requests.Add(1)
	if r.closed.Load() {
		r.closedN.Add(1)
		w.Header()["Retry-After"] = []string{r.retry}
		return writeStatus(w, kind, http.StatusServiceUnavailable, codes.Unavailable, "receiver is shutting down"), 0, 0
	}
	st := r.get()
	defer r.put(st)
	body, wire, code := r.readBody(w, req, st, kind)
	if code != 0 {
		return code, 0, wire
	}
	var err error
	if kind == kindJSON {
		exp := plogotlp.NewExportRequest()
		if err = exp.UnmarshalJSON(body); err == nil {
			st.batch = st.dec.appendEvents(st.batch[:0], exp.Logs(), st.clock.Nano())
		}
	} else {
		st.batch, err = st.dec.appendEventsProto(st.batch[:0], body, st.clock.Nano())
	}
	if err != nil {
		r.badRequests.Add(1)
		return writeStatus(w, kind, http.StatusBadRequest, codes.InvalidArgument, "invalid export request: "+err.Error()), 0, wire
	}
	refused, err := r.export(req.Context(), st)
	records = len(st.batch) + refused
	if err != nil {
		w.Header()["Retry-After"] = []string{r.retry}
		return writeStatus(w, kind, http.StatusServiceUnavailable, codes.Unavailable, "destination busy, retry later"), records, wire
	}
	resp := r.response(refused)
	var out []byte
	if kind == kindJSON {
		out, err = resp.MarshalJSON()
	} else {
		out, err = resp.MarshalProto()
	}
	if err != nil { // cannot happen for this message
		http.Error(w, "encoding the response failed", http.StatusInternalServerError)
		return http.StatusInternalServerError, records, wire
	}
	h := w.Header()
	h["Content-Type"] = contentTypes[kind]
	h["Content-Length"] = []string{strconv.Itoa(len(out))}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
	return http.StatusOK, records, wire
}

var contentTypes = [...][]string{kindProto: {protoType}, kindJSON: {jsonType}}

// contentType returns the kind of an OTLP/HTTP Content-Type.
func contentType(v string) (contentKind, bool) {
	switch v {
	case protoType:
		return kindProto, true
	case jsonType:
		return kindJSON, true
	}
	mt, _, err := mime.ParseMediaType(v)
	switch {
	case err != nil:
		return 0, false
	case mt == protoType:
		return kindProto, true
	case mt == jsonType:
		return kindJSON, true
	}
	return 0, false
}

// writeStatus answers status with a google.rpc.Status in the request's
// content type and returns status.
func writeStatus(w http.ResponseWriter, kind contentKind, httpStatus int, c codes.Code, msg string) int {
	s := &spb.Status{Code: int32(c), Message: msg}
	var out []byte
	if kind == kindJSON {
		out, _ = protojson.Marshal(s)
	} else {
		out, _ = proto.Marshal(s)
	}
	h := w.Header()
	h["Content-Type"] = contentTypes[kind]
	h["Content-Length"] = []string{strconv.Itoa(len(out))}
	w.WriteHeader(httpStatus)
	_, _ = w.Write(out)
	return httpStatus
}

// readBody reads the request body within MaxBodyBytes and BodyTimeout and
// decompresses it. A non-zero code means it answered the request.
func (r *Receiver) readBody(w http.ResponseWriter, req *http.Request, st *reqState, kind contentKind) (body []byte, wire, code int) {
	enc := req.Header.Get("Content-Encoding")
	gz := strings.EqualFold(enc, "gzip")
	if !gz && enc != "" && !strings.EqualFold(enc, "identity") {
		r.badType.Add(1)
		w.Header()["Connection"] = []string{"close"}
		return nil, 0, writeStatus(w, kind, http.StatusUnsupportedMediaType, codes.InvalidArgument, "unsupported Content-Encoding: use gzip or none")
	}
	var rc *http.ResponseController
	if r.cfg.BodyTimeout > 0 {
		rc = http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(r.cfg.BodyTimeout)) != nil {
			rc = nil
		}
	}
	limit := r.cfg.MaxBodyBytes
	var err error
	st.body, err = limitread.Append(st.body[:0], req.Body, limit)
	wire = len(st.body)
	r.bytes.Add(int64(wire))
	if err != nil {
		// The rest of the body is not wanted: close the connection after
		// the answer rather than let net/http read it.
		w.Header()["Connection"] = []string{"close"}
	} else if rc != nil {
		_ = rc.SetReadDeadline(time.Time{})
	}
	switch {
	case errors.Is(err, limitread.ErrTooLarge):
		r.tooLarge.Add(1)
		return nil, wire, writeStatus(w, kind, http.StatusRequestEntityTooLarge, codes.ResourceExhausted, fmt.Sprintf("body larger than %d bytes", limit))
	case err != nil:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			r.bodyTimeout.Add(1)
			return nil, wire, writeStatus(w, kind, http.StatusRequestTimeout, codes.DeadlineExceeded, "request body not received in time")
		}
		r.bodyErrors.Add(1)
		return nil, wire, writeStatus(w, kind, http.StatusBadRequest, codes.InvalidArgument, "request body could not be read")
	}
	body = st.body
	if gz {
		st.br.Reset(st.body)
		if st.zr == nil {
			st.zr, err = gzip.NewReader(&st.br)
		} else {
			err = st.zr.Reset(&st.br)
		}
		if err == nil {
			st.plain, err = limitread.Append(st.plain[:0], st.zr, limit)
		}
		switch {
		case errors.Is(err, limitread.ErrTooLarge):
			r.tooLarge.Add(1) // a gzip bomb, or just too much: cut at the limit
			return nil, wire, writeStatus(w, kind, http.StatusRequestEntityTooLarge, codes.ResourceExhausted, fmt.Sprintf("body larger than %d bytes after decompression", limit))
		case err != nil:
			r.badRequests.Add(1)
			return nil, wire, writeStatus(w, kind, http.StatusBadRequest, codes.InvalidArgument, "invalid gzip body")
		}
		body = st.plain
	}
	r.decoded.Add(int64(len(body)))
	return body, wire, 0
}

// ---- gRPC ----

// RegisterGRPC registers the receiver as the OTLP LogsService
// (opentelemetry.proto.collector.logs.v1.LogsService/Export) of s.
// Create s with [Receiver.ServerOptions] so that its message size limit
// is MaxBodyBytes.
//
// The service reads the request message itself (see the package
// documentation, # Decoding): a message that is not a valid export
// request is answered INVALID_ARGUMENT and counted in
// [ReceiverStats].BadRequests. A unary interceptor on s sees that
// request as a value of an unexported type rather than pdata's.
func (r *Receiver) RegisterGRPC(s *grpc.Server) {
	if rawCodecOK() {
		s.RegisterService(&logsServiceDesc, &grpcLogs{r: r})
		return
	}
	plogotlp.RegisterGRPCServer(s, &grpcLogs{r: r})
}

// ServerOptions returns the grpc.ServerOptions the receiver needs; pass
// them all to grpc.NewServer:
//   - grpc.MaxRecvMsgSize(MaxBodyBytes), which gRPC applies to a message
//     after decompression (gzip is registered by this package);
//   - grpc.KeepaliveParams with MaxConnectionIdle GRPCIdleTimeout (other
//     parameters grpc-go's defaults), and grpc.KeepaliveEnforcementPolicy
//     allowing pings every [GRPCPingMinTime], with or without streams;
//   - grpc.ConnectionTimeout(GRPCHandshakeTimeout);
//   - grpc.MaxConcurrentStreams(GRPCMaxStreams);
//   - with a positive BodyTimeout, grpc.InTapHandle with the receiver's
//     body deadline (see [ReceiverConfig].BodyTimeout). grpc-go takes one
//     tap handle per server (a second one panics): add no other.
//
// TLS credentials and the like are the caller's to add.
func (r *Receiver) ServerOptions() []grpc.ServerOption {
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(int(min(r.cfg.MaxBodyBytes, 1<<31-1))),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: GRPCPingMinTime, PermitWithoutStream: true}),
		grpc.ConnectionTimeout(r.cfg.GRPCHandshakeTimeout),
		grpc.MaxConcurrentStreams(r.cfg.GRPCMaxStreams),
	}
	if r.cfg.GRPCIdleTimeout > 0 {
		opts = append(opts, grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: r.cfg.GRPCIdleTimeout}))
	}
	if r.cfg.BodyTimeout > 0 {
		opts = append(opts, grpc.InTapHandle(r.tapBody))
	}
	return opts
}

// exportMethod is the full name of the one method the body deadline
// applies to.
const exportMethod = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"

// bodyWatch is the body deadline of one gRPC Export stream.
//
// grpc-go reads a unary request message before it calls the handler, on
// the stream's context: the context a tap handle returns. So the tap
// handle arms a timer that cancels that context, and the handler, which
// runs once the message is in, disarms it. A cancelled context fails the
// read; grpc-go answers the stream with the status of the context's Err
// and resets it, dropping what it buffered.
type bodyWatch struct {
	state  atomic.Uint32 // watchWaiting, watchReceived, watchExpired, watchEnded
	timer  *time.Timer
	cancel context.CancelFunc
	r      *Receiver
}

const (
	watchWaiting uint32 = iota
	watchReceived
	watchExpired
	watchEnded // the stream ended before its message arrived
)

// watchCtx is the stream context under a body deadline. Its Err is
// context.DeadlineExceeded once the deadline cancelled it, so that
// grpc-go answers DEADLINE_EXCEEDED (to a context.Canceled it answers
// CANCELLED). Done is the cancel context's, and so is Value but for the
// watch's key: contexts derived from it are registered with that cancel
// context directly, without a goroutine.
type watchCtx struct {
	context.Context
	w *bodyWatch
}

func (c *watchCtx) Err() error {
	if c.w.state.Load() == watchExpired {
		return context.DeadlineExceeded
	}
	return c.Context.Err()
}

func (c *watchCtx) Value(key any) any {
	if key == (bodyWatchKey{}) {
		return c.w
	}
	return c.Context.Value(key)
}

type bodyWatchKey struct{}

// tapBody arms the body deadline of an Export stream. It runs on the
// connection's reader goroutine, under the transport's lock: it only
// starts a timer.
func (r *Receiver) tapBody(ctx context.Context, info *tap.Info) (context.Context, error) {
	if info.FullMethodName != exportMethod {
		return ctx, nil
	}
	w := &bodyWatch{r: r}
	ctx, w.cancel = context.WithCancel(ctx)
	w.timer = time.AfterFunc(r.cfg.BodyTimeout, w.expire)
	context.AfterFunc(ctx, w.end) // the stream ended (any way): stop the timer
	return &watchCtx{Context: ctx, w: w}, nil
}

// expire cancels a stream whose message has not arrived.
func (w *bodyWatch) expire() {
	if w.state.CompareAndSwap(watchWaiting, watchExpired) {
		w.r.bodyTimeout.Add(1)
		w.cancel()
	}
}

// end stops the timer of a stream that ended.
func (w *bodyWatch) end() {
	w.state.CompareAndSwap(watchWaiting, watchEnded)
	w.timer.Stop()
}

// received disarms the body deadline of the stream of ctx, if it has one,
// and reports whether the message arrived in time.
func received(ctx context.Context) bool {
	w, ok := ctx.Value(bodyWatchKey{}).(*bodyWatch)
	if !ok {
		return true
	}
	if !w.state.CompareAndSwap(watchWaiting, watchReceived) {
		return w.state.Load() == watchReceived
	}
	w.timer.Stop()
	return true
}

type grpcLogs struct {
	plogotlp.UnimplementedGRPCServer
	r *Receiver
}

// Export serves an Export through pdata's service, the fallback of
// RegisterGRPC (see rawCodecOK).
func (g *grpcLogs) Export(ctx context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	start := time.Now()
	st := g.r.get()
	defer g.r.put(st)
	st.batch = st.dec.appendEvents(st.batch[:0], req.Logs(), st.clock.Nano())
	refused, err := g.answer(ctx, st, nil, start)
	if err != nil {
		return plogotlp.ExportResponse{}, err
	}
	return g.r.response(refused), nil
}

// answer answers an Export whose request was decoded into st.batch, or
// failed to decode with decErr: it checks the body deadline, the token
// and the receiver's state, exports the batch, and calls OnRequest. It
// returns the number of records refused, or the status error to answer.
func (g *grpcLogs) answer(ctx context.Context, st *reqState, decErr error, start time.Time) (refused int, err error) {
	// grpc-go answers in the request's compression unless told otherwise.
	// An export response is a few bytes (empty, or a partial success):
	// gzipping it costs a compressor reset per request (4-5 % of the
	// relay's CPU in a profile) and saves nothing. Identity is always
	// allowed; the error (no stream in ctx) cannot happen under a server.
	_ = grpc.SetSendCompressor(ctx, encoding.Identity)
	refused, c, records, err := g.export(ctx, st, decErr)
	if f := g.r.cfg.Hooks.OnRequest; f != nil {
		f("grpc", int(c), records, 0, time.Since(start))
	}
	return refused, err
}

func (g *grpcLogs) export(ctx context.Context, st *reqState, decErr error) (refused int, c codes.Code, records int, err error) {
	r := g.r
	if !received(ctx) {
		// The deadline fired between the message's arrival and this
		// call: the stream is cancelled already, and counted.
		return 0, codes.DeadlineExceeded, 0, status.Error(codes.DeadlineExceeded, "request message not received in time")
	}
	if r.token != nil {
		md, _ := metadata.FromIncomingContext(ctx)
		v := md.Get("authorization")
		if len(v) == 0 || !r.authorized(v[0]) {
			r.unauthorized.Add(1)
			return 0, codes.Unauthenticated, 0, status.Error(codes.Unauthenticated, "missing or wrong bearer token")
		}
	}
	r.grpcRequests.Add(1)
	if r.closed.Load() {
		r.closedN.Add(1)
		return 0, codes.Unavailable, 0, r.unavailable("receiver is shutting down")
	}
	if decErr != nil {
		r.badRequests.Add(1)
		return 0, codes.InvalidArgument, 0, status.Error(codes.InvalidArgument, "invalid export request: "+decErr.Error())
	}
	refused, err = r.export(ctx, st)
	records = len(st.batch) + refused
	if err != nil {
		return refused, codes.Unavailable, records, r.unavailable("destination busy, retry later")
	}
	return refused, codes.OK, records, nil
}

// unavailable returns an UNAVAILABLE status with RetryInfo.
func (r *Receiver) unavailable(msg string) error {
	s := &spb.Status{Code: int32(codes.Unavailable), Message: msg}
	if ri, err := anyRetryInfo(r.cfg.RetryAfter); err == nil {
		s.Details = append(s.Details, ri)
	}
	return status.ErrorProto(s)
}

// anyRetryInfo returns a google.rpc.RetryInfo detail asking for d.
func anyRetryInfo(d time.Duration) (*anypb.Any, error) {
	return anypb.New(&errdetails.RetryInfo{RetryDelay: durationpb.New(d)})
}
