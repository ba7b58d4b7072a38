package otlp

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/cfgerr"
	"github.com/relaykit/relaykit/internal/episode"
	"github.com/relaykit/relaykit/internal/gzipool"
	"github.com/relaykit/relaykit/internal/version"
)

// Protocol selects the OTLP transport of an [Exporter].
type Protocol uint8

const (
	// HTTPProtobuf posts binary protobuf to /v1/logs. The default.
	HTTPProtobuf Protocol = iota
	// HTTPJSON posts OTLP/JSON to /v1/logs.
	HTTPJSON
	// GRPC calls LogsService/Export.
	GRPC
)

// Defaults of [ExporterConfig].
const (
	DefaultTimeout         = 30 * time.Second
	DefaultMaxRequestBytes = 4 << 20
)

// ReasonUnavailable is the [relaykit.FailedRange] Reason of events the
// exporter could not deliver now and that may succeed later: a retryable
// answer (HTTP 429, 502, 503, 504; gRPC UNAVAILABLE and the other
// retryable codes) or no answer at all.
const ReasonUnavailable = "unavailable"

// ExporterConfig configures an [Exporter]. Endpoint is required; every
// other zero field means the documented default.
type ExporterConfig struct {
	// Name names the destination in errors, stats and hooks. Zero means
	// "otlp".
	Name string
	// Protocol selects OTLP/HTTP with protobuf (zero) or JSON, or
	// OTLP/gRPC.
	Protocol Protocol
	// Endpoint is where to send. For HTTP, a URL "http(s)://host:port" to
	// which "/v1/logs" is added, or a URL with a path, used as it is (as
	// OTEL_EXPORTER_OTLP_LOGS_ENDPOINT is). For gRPC, "https://host:port"
	// (TLS) or "http://host:port" (plaintext).
	Endpoint string
	// Headers are sent with every request (HTTP headers or gRPC
	// metadata), e.g. an API key. Their values never appear in errors or
	// logs.
	Headers map[string]string
	// Token, when set, is sent as "Authorization: Bearer <Token>". It
	// never appears in errors or logs.
	Token string
	// TLS configures TLS for https endpoints (server roots, client
	// certificate for mutual TLS, ServerName); forward.TLSConfig builds
	// one from files. Nil means the system roots and TLS 1.2 at least.
	// It must be nil with HTTPClient, which has its own.
	TLS *tls.Config
	// DisableGzip sends bodies uncompressed. By default they are gzipped
	// with pooled writers at GzipLevel (Content-Encoding: gzip;
	// grpc-encoding gzip).
	DisableGzip bool
	// GzipLevel is the compression level, 1 (fastest) to 9 (smallest),
	// -2 (Huffman coding only) or -3 (klauspost/compress's stateless
	// level-1 matching), for HTTP and gRPC. Zero means 1.
	GzipLevel int
	// Timeout bounds one request, from sending it until the answer is
	// read. Zero means 30 s.
	Timeout time.Duration
	// MaxRequestBytes bounds the encoded (protobuf, uncompressed) size of
	// one request: a batch is split into requests of at most this size,
	// sent one after the other. An event that alone exceeds it fails
	// permanently with [relaykit.ReasonTooLarge]. Zero means 4 MiB, the
	// default receive limit of gRPC servers and of the Collector.
	MaxRequestBytes int
	// Mapping converts events to log records; the zero value is the
	// default mapping (see the package documentation).
	Mapping Mapping
	// HTTPClient sends HTTP requests. Nil means a client of the
	// exporter's own with dial, TLS and response timeouts; Close closes
	// its idle connections.
	HTTPClient *http.Client
	// DialOptions are added to the exporter's own for its gRPC
	// connection (after the transport credentials).
	DialOptions []grpc.DialOption
	// Hooks observe requests. Nil hooks cost nothing.
	Hooks ExporterHooks
	// Logger logs state changes (the destination failing and accepting
	// again, once per episode), never records or secrets. Nil means no
	// logging.
	Logger *slog.Logger
}

// ExporterHooks observe an [Exporter]. They run synchronously in Send,
// possibly on several goroutines at once: they must be fast, safe for
// concurrent use and must not retain their arguments.
type ExporterHooks struct {
	// OnSend is called after a request the destination accepted (in
	// whole or in part), with the destination name, the records it held,
	// its body size in bytes as sent (HTTP; 0 for gRPC) and the time it
	// took. It has the shape of forward.Hooks.OnSend.
	OnSend func(dest string, events, bytes int, took time.Duration)
	// OnSendError is called after each failed request, retryable or not,
	// with its *ExportError and the records it held. It has the shape of
	// every OnSendError hook in relaykit.
	OnSendError func(err error, events int)
	// OnPartialSuccess is called when the destination accepted a request
	// in part: rejected records (possibly 0, a warning) and its message.
	OnPartialSuccess func(dest string, rejected int64, message string)
}

// ExportError describes a failed OTLP export request. The errors in a
// [relaykit.BatchError] returned by [Exporter.Send] are of this type.
type ExportError struct {
	// Destination is the exporter's Name.
	Destination string
	// StatusCode is the HTTP status, or 0 for gRPC or without an answer.
	StatusCode int
	// Code is the gRPC status code (codes.OK for HTTP).
	Code codes.Code
	// Message is the destination's message: its google.rpc.Status
	// message, or the error_message of a partial success.
	Message string
	// Retryable reports whether sending the same records again may
	// succeed; RetryAfter is the wait the destination asked for, if any.
	Retryable  bool
	RetryAfter time.Duration
	// Err is the transport error when there was no answer, or nil.
	Err error
}

// Error returns the destination, the status and the message. It never
// contains headers or tokens.
func (e *ExportError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "otlp: export to %s", e.Destination)
	switch {
	case e.StatusCode != 0:
		fmt.Fprintf(&b, ": HTTP %d", e.StatusCode)
	case e.Code != codes.OK:
		fmt.Fprintf(&b, ": %s", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Unwrap returns Err.
func (e *ExportError) Unwrap() error { return e.Err }

// ExporterStats is a snapshot of an exporter's counters; they only grow.
type ExporterStats struct {
	// Requests counts requests sent; Bytes their bodies as sent (HTTP).
	Requests, Bytes int64
	// Delivered counts records the destination accepted; Rejected those
	// it rejected in a partial success; Failed those of requests that
	// failed permanently (and events over MaxRequestBytes); Retryable
	// those of requests that failed and may succeed later.
	Delivered, Rejected, Failed, Retryable int64
}

// Exporter is a [relaykit.Sink] that sends events as OTLP log records
// over OTLP/HTTP (protobuf or JSON) or OTLP/gRPC. It makes one attempt
// per request and classifies failures (see the package documentation);
// put it behind a delivery.Queue, the one retry loop. It is safe for
// concurrent use; Close releases its connections.
type Exporter struct {
	cfg     ExporterConfig
	name    string
	url     string
	client  *http.Client
	ownHTTP bool
	conn    *grpc.ClientConn
	grpcC   plogotlp.GRPCClient
	headers [][2]string
	md      metadata.MD
	pool    sync.Pool
	rawGRPC bool // the "proto" codec passes stored request bodies through (rawCodecOK)

	requests, bytes, delivered, rejected, failed, retryable atomic.Int64
	failing                                                 episode.Log
}

var _ relaykit.RequestSink = (*Exporter)(nil)

// Validate reports whether [NewExporter] would accept cfg, without
// connecting: nil, or a *relaykit.FieldError wrapping [ErrInvalidConfig].
func (cfg ExporterConfig) Validate() error {
	_, err := cfg.fill()
	return err
}

func (cfg *ExporterConfig) fill() (*url.URL, error) {
	if cfg.Name == "" {
		cfg.Name = "otlp"
	}
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(ErrInvalidConfig, field, format, args...)
	}
	u, err := url.Parse(cfg.Endpoint)
	switch {
	case cfg.Endpoint == "":
		return nil, bad("Endpoint", "required")
	case err != nil, u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return nil, bad("Endpoint", "must be http(s)://host[:port][/path]")
	case u.User != nil:
		return nil, bad("Endpoint", "must not hold credentials")
	case cfg.Protocol > GRPC:
		return nil, bad("Protocol", "unknown protocol %d", cfg.Protocol)
	case cfg.Protocol == GRPC && u.Path != "" && u.Path != "/":
		return nil, bad("Endpoint", "a gRPC endpoint has no path")
	case cfg.GzipLevel != 0 && !gzipool.Valid(cfg.GzipLevel):
		return nil, bad("GzipLevel", "%d is not 1..9, -2 (Huffman only) or -3 (stateless)", cfg.GzipLevel)
	case cfg.Timeout < 0:
		return nil, bad("Timeout", "must not be negative")
	case cfg.MaxRequestBytes < 0:
		return nil, bad("MaxRequestBytes", "must not be negative")
	case cfg.Mapping.Names > CollectorNames:
		return nil, bad("Mapping.Names", "unknown names %d", cfg.Mapping.Names)
	case strings.ContainsAny(cfg.Token, " \t\r\n"):
		return nil, bad("Token", "contains white space")
	case cfg.HTTPClient != nil && cfg.TLS != nil:
		return nil, bad("TLS", "set while HTTPClient is supplied; configure TLS on the client")
	}
	for k, v := range cfg.Headers {
		if strings.ContainsAny(k+v, "\r\n") {
			return nil, bad("Headers", "header %q contains a line break", k)
		}
	}
	if cfg.GzipLevel == 0 {
		cfg.GzipLevel = 1
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxRequestBytes == 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return u, nil
}

// NewExporter returns an exporter for cfg, or a *relaykit.FieldError
// wrapping [ErrInvalidConfig]. For gRPC it creates the connection, which connects
// on the first Send.
func NewExporter(cfg ExporterConfig) (*Exporter, error) {
	u, err := cfg.fill()
	if err != nil {
		return nil, err
	}
	x := &Exporter{cfg: cfg, name: cfg.Name}
	for k, v := range cfg.Headers {
		x.headers = append(x.headers, [2]string{k, v})
	}
	if cfg.Token != "" {
		x.headers = append(x.headers, [2]string{"Authorization", "Bearer " + cfg.Token})
	}
	if cfg.Protocol == GRPC {
		creds := insecure.NewCredentials()
		if u.Scheme == "https" {
			tc := cfg.TLS
			if tc == nil {
				tc = &tls.Config{MinVersion: tls.VersionTLS12}
			}
			creds = credentials.NewTLS(tc)
		}
		opts := []grpc.DialOption{grpc.WithTransportCredentials(creds), grpc.WithUserAgent(version.UserAgent)}
		if !cfg.DisableGzip {
			//lint:ignore SA1019 the per-connection compressor keeps the pooled, level-1 writers without replacing the process-wide "gzip" registration; supported throughout grpc-go 1.x
			opts = append(opts, grpc.WithCompressor(&grpcGzip{level: cfg.GzipLevel}))
		}
		opts = append(opts, cfg.DialOptions...)
		conn, err := grpc.NewClient(u.Host, opts...)
		if err != nil {
			return nil, cfgerr.New(ErrInvalidConfig, "Endpoint", "%v", err)
		}
		x.conn, x.grpcC, x.rawGRPC = conn, plogotlp.NewGRPCClient(conn), rawCodecOK()
		x.md = metadata.MD{}
		for _, h := range x.headers {
			x.md.Append(strings.ToLower(h[0]), h[1])
		}
		return x, nil
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/logs"
	}
	x.url = u.String()
	x.client = cfg.HTTPClient
	if x.client == nil {
		x.client, x.ownHTTP = newHTTPClient(cfg.TLS, cfg.Timeout), true
	}
	return x, nil
}

// newHTTPClient returns the client an exporter owns when none is given.
func newHTTPClient(tc *tls.Config, timeout time.Duration) *http.Client {
	if tc == nil {
		tc = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       tc,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   8,
		DisableCompression:    true, // bodies are gzipped by the exporter
	}
	return &http.Client{Transport: tr, Timeout: timeout}
}

// Close closes the gRPC connection, or the idle connections of the
// exporter's own HTTP client. Send must not be called after it. Close is
// idempotent and returns nil (or the gRPC connection's close error).
func (x *Exporter) Close() error {
	if x.conn != nil {
		if err := x.conn.Close(); err != nil && status.Code(err) != codes.Canceled {
			return err
		}
	}
	if x.ownHTTP {
		x.client.CloseIdleConnections()
	}
	return nil
}

// Stats returns a snapshot of the exporter's counters.
func (x *Exporter) Stats() ExporterStats {
	return ExporterStats{
		Requests: x.requests.Load(), Bytes: x.bytes.Load(), Delivered: x.delivered.Load(),
		Rejected: x.rejected.Load(), Failed: x.failed.Load(), Retryable: x.retryable.Load(),
	}
}

// sendState is what one Send needs, pooled.
type sendState struct {
	enc    encoder
	z      []byte
	failed []relaykit.FailedRange
}

// overhead bounds the bytes a message adds around a nested one: its tag
// and length prefix.
const overhead = 6

// Send exports batch as OTLP log records, split into requests of at most
// MaxRequestBytes, one attempt each. It returns nil when the destination
// accepted every record, and otherwise a *relaykit.BatchError listing the
// undelivered events with [ExportError] causes:
//   - retryable answers (HTTP 429, 502, 503, 504; gRPC CANCELLED,
//     DEADLINE_EXCEEDED, ABORTED, OUT_OF_RANGE, UNAVAILABLE, DATA_LOSS,
//     and RESOURCE_EXHAUSTED with RetryInfo) and network errors: the
//     request's events and all after it, not permanent, with Reason
//     [ReasonUnavailable] and the RetryAfter the destination named
//     (Retry-After, RetryInfo); later requests are not sent;
//   - other answers (HTTP 4xx and 5xx, other gRPC codes): the request's
//     events, permanent, Reason [relaykit.ReasonUnauthorized] for HTTP
//     401 and 403 and gRPC UNAUTHENTICATED and PERMISSION_DENIED,
//     [relaykit.ReasonTooLarge] for HTTP 413, [relaykit.ReasonRejected]
//     otherwise; later requests are sent;
//   - a partial success rejecting N records: the last N events of the
//     request, permanent, [relaykit.ReasonRejected], with the
//     destination's message (OTLP does not say which records were
//     rejected; see the package documentation);
//   - an event larger than MaxRequestBytes alone: permanent,
//     [relaykit.ReasonTooLarge], never sent.
//
// Send does not retain batch.
func (x *Exporter) Send(ctx context.Context, batch []relaykit.Event) error {
	st, _ := x.pool.Get().(*sendState)
	if st == nil {
		st = new(sendState)
	}
	defer func() {
		st.failed = st.failed[:0]
		if cap(st.z) <= maxPooledBytes {
			x.pool.Put(st)
		}
	}()
	x.pack(ctx, st, batch, func(ld plog.Logs, start, end int) bool {
		xe, rejected, msg := x.export(ctx, st, ld, end-start)
		return x.settle(st, start, end, len(batch), xe, rejected, msg)
	})
	if len(st.failed) == 0 {
		return nil
	}
	return &relaykit.BatchError{Failed: append([]relaykit.FailedRange(nil), st.failed...)}
}

// pack groups batch into requests of at most MaxRequestBytes, as Send
// sends them, and calls flush with each (its logs and the events [start,
// end) it holds) until flush returns false. Events larger than a request
// alone are reported permanently failed. When ctx ends, the events not
// packed yet are reported unavailable.
func (x *Exporter) pack(ctx context.Context, st *sendState, batch []relaykit.Event, flush func(ld plog.Logs, start, end int) bool) {
	limit := x.cfg.MaxRequestBytes
	i := 0
	for i < len(batch) {
		if err := ctx.Err(); err != nil {
			x.fail(st, i, len(batch), false, ReasonUnavailable, &ExportError{Destination: x.name, Retryable: true, Err: err})
			return
		}
		ld := plog.NewLogs()
		st.enc.reset(x.cfg.Mapping, ld)
		start, size := i, 0
		for i < len(batch) {
			lr, a := st.enc.add(&batch[i])
			var n int
			switch {
			case a.resource:
				n = (&plog.ProtoMarshaler{}).ResourceLogsSize(st.enc.rl) + overhead
			case a.scope:
				n = (&plog.ProtoMarshaler{}).ScopeLogsSize(st.enc.sl) + overhead
			default:
				n = (&plog.ProtoMarshaler{}).LogRecordSize(lr) + overhead
			}
			if size+n <= limit {
				size += n
				i++
				continue
			}
			st.enc.undo()
			if i > start {
				break // send what fits; this event starts the next request
			}
			x.fail(st, i, i+1, true, relaykit.ReasonTooLarge, &ExportError{Destination: x.name,
				Message: fmt.Sprintf("event encodes to %d bytes, over MaxRequestBytes %d", n, limit)})
			i++
			start = i
		}
		if i == start {
			continue
		}
		if !flush(ld, start, i) {
			return
		}
	}
}

// settle accounts for the outcome of the request of events [start, end)
// of a batch of total events, and reports whether the next request is to
// be sent: not after a retryable failure, which fails the rest too.
func (x *Exporter) settle(st *sendState, start, end, total int, xe *ExportError, rejected int64, msg string) bool {
	switch {
	case xe == nil && rejected > 0:
		r := min(int(rejected), end-start)
		x.fail(st, end-r, end, true, relaykit.ReasonRejected, &ExportError{Destination: x.name, Message: msg})
		x.delivered.Add(int64(end - start - r))
	case xe == nil:
		x.delivered.Add(int64(end - start))
	case xe.Retryable:
		x.fail(st, start, total, false, ReasonUnavailable, xe)
		return false
	default:
		x.fail(st, start, end, true, permanentReason(xe), xe)
	}
	return true
}

func permanentReason(xe *ExportError) string {
	switch {
	case xe.StatusCode == http.StatusUnauthorized, xe.StatusCode == http.StatusForbidden,
		xe.Code == codes.Unauthenticated, xe.Code == codes.PermissionDenied:
		return relaykit.ReasonUnauthorized
	case xe.StatusCode == http.StatusRequestEntityTooLarge:
		return relaykit.ReasonTooLarge
	}
	return relaykit.ReasonRejected
}

// fail records batch[from:to] as undelivered.
func (x *Exporter) fail(st *sendState, from, to int, permanent bool, reason string, xe *ExportError) {
	if from >= to {
		return
	}
	if permanent {
		x.failed.Add(int64(to - from))
	} else {
		x.retryable.Add(int64(to - from))
	}
	st.failed = append(st.failed, relaykit.FailedRange{From: from, To: to, Permanent: permanent,
		RetryAfter: xe.RetryAfter, Reason: reason, Err: xe})
}

// export sends one request of records log records and returns its
// failure, or the number of records rejected in a partial success and its
// message.
func (x *Exporter) export(ctx context.Context, st *sendState, ld plog.Logs, records int) (*ExportError, int64, string) {
	start := time.Now()
	x.requests.Add(1)
	var (
		xe   *ExportError
		ps   plogotlp.ExportPartialSuccess
		wire int
	)
	req := plogotlp.NewExportRequestFromLogs(ld)
	if x.grpcC != nil {
		xe, ps = x.exportGRPC(ctx, req)
	} else {
		xe, ps, wire = x.exportHTTP(ctx, st, req)
	}
	return x.report(xe, ps, records, wire, start)
}

// report counts a partial success and calls the hooks for a request of
// records records, wire bytes, begun at start; it returns export's
// results.
func (x *Exporter) report(xe *ExportError, ps plogotlp.ExportPartialSuccess, records, wire int, start time.Time) (*ExportError, int64, string) {
	var rejected int64
	if xe == nil && (ps.RejectedLogRecords() != 0 || ps.ErrorMessage() != "") {
		rejected = max(ps.RejectedLogRecords(), 0)
		x.rejected.Add(rejected)
		if f := x.cfg.Hooks.OnPartialSuccess; f != nil {
			f(x.name, rejected, ps.ErrorMessage())
		}
	}
	if xe != nil {
		x.failing.Fail(x.cfg.Logger, "otlp: export failing (further failures are counted, not logged)", "destination", x.name, "err", xe)
		if f := x.cfg.Hooks.OnSendError; f != nil {
			f(xe, records)
		}
		return xe, 0, ""
	}
	x.failing.OK(x.cfg.Logger, "otlp: destination accepts exports again", "destination", x.name)
	if f := x.cfg.Hooks.OnSend; f != nil {
		f(x.name, records, wire, time.Since(start))
	}
	return nil, rejected, ps.ErrorMessage()
}

func (x *Exporter) exportGRPC(ctx context.Context, req plogotlp.ExportRequest) (*ExportError, plogotlp.ExportPartialSuccess) {
	ctx, cancel := context.WithTimeout(ctx, x.cfg.Timeout)
	defer cancel()
	if len(x.md) > 0 {
		ctx = metadata.NewOutgoingContext(ctx, x.md)
	}
	resp, err := x.grpcC.Export(ctx, req) // gzipped by the connection's compressor unless DisableGzip
	if err == nil {
		return nil, resp.PartialSuccess()
	}
	return x.grpcError(ctx, err), noPartial()
}

// grpcError returns the ExportError of a failed Export call (ctx is the
// call's).
func (x *Exporter) grpcError(ctx context.Context, err error) *ExportError {
	s := status.Convert(err)
	xe := &ExportError{Destination: x.name, Code: s.Code(), Message: s.Message()}
	var retryInfo *errdetails.RetryInfo
	for _, d := range s.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			retryInfo = ri
		}
	}
	if retryInfo != nil && retryInfo.GetRetryDelay() != nil {
		xe.RetryAfter = min(max(retryInfo.GetRetryDelay().AsDuration(), 0), maxRetryAfter)
	}
	switch s.Code() {
	case codes.Canceled, codes.DeadlineExceeded, codes.Aborted, codes.OutOfRange, codes.Unavailable, codes.DataLoss:
		xe.Retryable = true
	case codes.ResourceExhausted:
		xe.Retryable = retryInfo != nil
	}
	if cerr := ctx.Err(); cerr != nil && (s.Code() == codes.Canceled || s.Code() == codes.DeadlineExceeded) {
		xe.Err = cerr
	}
	return xe
}

func (x *Exporter) exportHTTP(ctx context.Context, st *sendState, req plogotlp.ExportRequest) (*ExportError, plogotlp.ExportPartialSuccess, int) {
	var body []byte
	var err error
	ctype := protoType
	if x.cfg.Protocol == HTTPJSON {
		body, err = req.MarshalJSON()
		ctype = jsonType
	} else {
		body, err = req.MarshalProto()
	}
	if err != nil {
		return &ExportError{Destination: x.name, Err: err}, noPartial(), 0
	}
	if !x.cfg.DisableGzip {
		st.z, _ = gzipool.Append(st.z[:0], body, x.cfg.GzipLevel) // level checked in NewExporter
		body = st.z
	}
	return x.postHTTP(ctx, body, ctype, !x.cfg.DisableGzip)
}

// postHTTP posts an encoded request body (gzipped or not) and classifies
// the answer.
func (x *Exporter) postHTTP(ctx context.Context, body []byte, ctype string, gzipped bool) (*ExportError, plogotlp.ExportPartialSuccess, int) {
	x.bytes.Add(int64(len(body)))
	ctx, cancel := context.WithTimeout(ctx, x.cfg.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, x.url, bytes.NewReader(body))
	if err != nil {
		return &ExportError{Destination: x.name, Err: err}, noPartial(), len(body)
	}
	h := hr.Header
	h["Content-Type"] = []string{ctype}
	h["User-Agent"] = []string{version.UserAgent}
	if gzipped {
		h["Content-Encoding"] = []string{"gzip"}
	}
	for _, kv := range x.headers {
		h.Set(kv[0], kv[1])
	}
	resp, err := x.client.Do(hr)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is known; keep the cause
		}
		return &ExportError{Destination: x.name, Retryable: true, Err: err}, noPartial(), len(body)
	}
	rb, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	json := strings.Contains(resp.Header.Get("Content-Type"), "json")
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if rerr != nil {
			// Accepted, but the answer was cut: partial success unknown.
			return nil, noPartial(), len(body)
		}
		er := plogotlp.NewExportResponse()
		if len(rb) > 0 {
			if json {
				err = er.UnmarshalJSON(rb)
			} else {
				err = er.UnmarshalProto(rb)
			}
			if err != nil {
				return nil, noPartial(), len(body)
			}
		}
		return nil, er.PartialSuccess(), len(body)
	}
	xe := &ExportError{Destination: x.name, StatusCode: resp.StatusCode, Message: statusMessage(rb, json)}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		xe.Retryable = true
		xe.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return xe, noPartial(), len(body)
}

// statusMessage returns the message of a google.rpc.Status body, or a
// short printable prefix of another body.
func statusMessage(b []byte, json bool) string {
	var s spb.Status
	var err error
	if json {
		err = protojson.Unmarshal(b, &s)
	} else {
		err = proto.Unmarshal(b, &s)
	}
	if err == nil && s.GetMessage() != "" {
		return s.GetMessage()
	}
	if len(b) > 200 {
		b = b[:200]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0xfffd {
			return -1
		}
		return r
	}, string(b))
}

// maxRetryAfter caps a destination's requested wait.
const maxRetryAfter = time.Hour

// parseRetryAfter returns the wait of a Retry-After value: delay-seconds
// or an HTTP-date (RFC 9110 section 10.2.3), relative to now; 0 when
// there is none or it cannot be parsed.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return min(time.Duration(s*float64(time.Second)), maxRetryAfter)
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d, maxRetryAfter)
		}
	}
	return 0
}

// noPartial returns an empty partial success (no rejected records).
func noPartial() plogotlp.ExportPartialSuccess {
	return plogotlp.NewExportResponse().PartialSuccess()
}
