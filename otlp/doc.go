// Package otlp receives and sends OpenTelemetry logs (OTLP): a [Receiver]
// that OpenTelemetry SDKs, Collectors and agents can export to over
// OTLP/HTTP (protobuf or JSON) and OTLP/gRPC, an [Exporter] Sink that
// sends events to any OTLP backend, and the one [Mapping] between relaykit
// events and the OTel log data model that both use.
//
// It is a package of its own so that importers of stream, stream/hec and
// forward link no gRPC or protobuf. The OTLP types are those of
// go.opentelemetry.io/collector/pdata (plog, plogotlp), the Collector's
// own, which read and write OTLP/JSON with its deviations from the
// protobuf JSON mapping. Importing this package registers gRPC's gzip
// compressor, and pdata registers its OTLP-aware gRPC "proto" codec
// (which falls back to the standard one for other messages).
//
// # Receiver
//
// [Receiver] is an http.Handler for POST .../v1/logs (Content-Type
// application/x-protobuf or application/json, optionally
// Content-Encoding gzip, answered in the request's content type) and,
// through [Receiver.RegisterGRPC], the gRPC
// opentelemetry.proto.collector.logs.v1.LogsService. Both follow the
// acknowledgement contract of stream/hec and the RELP server: each
// request's records become one batch of events handed to
// [ReceiverConfig].Sink, and the sender is answered success only after
// Send returned nil (delivered, durably accepted, or dead-lettered). A Send
// error, or a Send still running after SendTimeout, is answered 503 with
// Retry-After (HTTP) or UNAVAILABLE with a RetryInfo (gRPC); OTLP senders
// retry both, so back-pressure reaches them and nothing answered is lost.
// Records over MaxEventBytes are refused with a partial success
// (rejected_log_records and a message) and the rest accepted.
//
// Bodies are capped at MaxBodyBytes as received and after decompression
// (413; a gzip bomb is cut at the limit), their reading bounded by
// BodyTimeout (408). Wrong content types and encodings get 415, bodies
// that are not export requests (truncated protobuf, invalid JSON, broken
// gzip) 400, a missing or wrong bearer token 401 / UNAUTHENTICATED.
// For gRPC, [Receiver.ServerOptions] sets the same size limit.
//
// # Decoding
//
// Protobuf requests (OTLP/HTTP application/x-protobuf and OTLP/gRPC) are
// decoded straight from their bytes into events, without pdata: the
// decoder reads an ExportLogsServiceRequest and fills the events
// [Mapping.AppendEvents] would fill from the pdata of the same bytes, and
// refuses exactly the bytes pdata's UnmarshalProto refuses (answered 400 /
// INVALID_ARGUMENT, counted in [ReceiverStats].BadRequests). It follows
// pdata's wire rules: a message field sent twice is merged, a scalar sent
// twice keeps the last value, the deprecated instrumentation_library_logs
// field stands in for scope_logs when there are none, unknown fields are
// skipped, and strings are not checked for valid UTF-8 (pdata does not
// check them either; their bytes go into the events as they came). The
// tests hold the decoder to pdata with hand-built and generated requests
// and a fuzz test. OTLP/JSON is decoded by pdata, then mapped.
//
// For gRPC, [Receiver.RegisterGRPC] registers the LogsService itself:
// the request message is decoded in the "proto" codec's call to its
// UnmarshalProto method, which pdata's codec makes for OTLP-shaped
// messages, with grpc-go's buffer (copied only when the message came in
// several). Should the program register another "proto" codec that does
// not, RegisterGRPC registers pdata's service instead (same answers, but
// a message that is not an export request is then answered INTERNAL, by
// grpc-go).
//
// # gRPC deadlines
//
// A sender owes a whole request in bounded time over gRPC too.
// [Receiver.ServerOptions] closes a connection whose HTTP/2 preface and
// settings do not arrive within GRPCHandshakeTimeout (10 s) and one
// without streams for GRPCIdleTimeout (2 min, GOAWAY first), takes at most
// GRPCMaxStreams (16) streams per connection, refuses keepalive pings
// more often than every 10 s, and gives an Export BodyTimeout (30 s)
// from its headers to the end of its message. grpc-go reads a unary
// request before calling the handler, on the stream's context, so the
// deadline is a timer, armed by a tap handle, that cancels that context;
// the handler disarms it. A late stream is answered DEADLINE_EXCEEDED and
// reset, nothing of it reaches the Sink, and it counts in
// [ReceiverStats].BodyTimeouts; the connection's other streams, and other
// connections, are not affected. A stream the sender resets, or whose
// connection it closes, is dropped by grpc-go with what it buffered, and
// not counted.
//
// Connections and TLS are the servers': serve the handler with an
// http.Server on a stream.NetListener with stream/streamhttp's ConnState
// as its ConnState hook, and the gRPC service with a grpc.Server on another NetListener
// (see the examples), to get the stream inputs' limits per source address
// and in all, and for a listener with TLS its handshake deadline. A
// NetListener with TLS hands the gRPC server *tls.Conn connections whose
// handshake it has done: give its tls.Config NextProtos ["h2"] (gRPC
// clients require ALPN h2), and do not add TLS credentials to the
// grpc.Server. gRPC connections are HTTP/2, busy from their first byte,
// so the listener never evicts them. Behind a load balancer, listeners
// with stream.Config.ProxyProtocol read the PROXY header of each
// connection, and the sender it names is the HTTP request's RemoteAddr
// and the gRPC call's peer (peer.FromContext); stream/tlscert keeps the
// listeners' certificate.
//
// # Exporter
//
// [Exporter] is a relaykit.Sink that sends events as OTLP log records
// over OTLP/HTTP (protobuf or JSON) or OTLP/gRPC, gzipped with pooled
// writers at level 1 by default (for gRPC through a per-connection
// compressor, so the process-wide "gzip" registration is left alone). It makes one attempt per request and classifies failures as
// the OTLP specification's "Failures" sections say, in a
// *relaykit.BatchError: HTTP 429, 502, 503 and 504 and the gRPC codes
// CANCELLED, DEADLINE_EXCEEDED, ABORTED, OUT_OF_RANGE, UNAVAILABLE and
// DATA_LOSS (RESOURCE_EXHAUSTED only with a RetryInfo) are retryable, with
// the RetryAfter of the Retry-After header or RetryInfo; every other
// answer is permanent. delivery.Queue is the one retry loop: put the
// exporter behind one.
//
// A batch is split into requests of at most MaxRequestBytes (encoded
// size), sent in order. A partial success names how many records the
// destination rejected, not which: the exporter reports the last N
// records of the request as permanently failed (Reason rejected, with the
// destination's message), so that exactly N are dead-lettered, and never
// sends them again. The dead letter may therefore hold records that were
// accepted while rejected ones are counted delivered; a destination that
// needs exact accounting must refuse the whole request instead.
//
// The exporter is a relaykit.RequestSink: EncodeRequests packs a batch as
// Send does and keeps each request's ExportLogsServiceRequest marshalled
// (protobuf, or JSON for HTTPJSON) and gzipped, for a delivery.Queue to
// spool and send later with SendRequests, which posts the stored body as
// it is (OTLP/HTTP) or hands it to grpc-go as the marshalled message
// (OTLP/gRPC: the exporter's compressor passes a body that is gzip
// already, which no marshalled request is, through unchanged). Cutting
// part of a stored request, or decoding its events for a dead letter,
// unmarshals it with pdata.
//
// # Mapping
//
// Each log record becomes one event and each event one log record. The
// syslog part follows the data model's syslog appendix (HOSTNAME,
// APP-NAME, PROCID, MSGID, facility, severity), or with
// [CollectorNames] the flat attribute names of the OpenTelemetry
// Collector's syslog receiver:
//
//	Event                  OTLP, SpecNames (default)          OTLP, CollectorNames
//	---------------------  ---------------------------------  ---------------------------
//	Time                   time_unix_nano                     same
//	ReceiveTime            observed_time_unix_nano (1)        same
//	Host                   resource host.name                 attribute hostname
//	Source                 resource service.name              attribute appname
//	Raw                    body (2)                           same
//	Priority: severity     severity_number (3), severity_text same
//	          facility     attribute syslog.facility (int)    attributes facility, priority (int)
//	field procid           attribute syslog.procid            attribute proc_id
//	field msgid            attribute syslog.msgid             attribute msg_id
//	fields sd.<id>.<p>     attribute syslog.structured_data   attribute structured_data
//	                       {id: {p: value}} (4)               same shape
//	SourceType, Index      attributes relaykit.source_type,   same
//	                       relaykit.index (5)
//	Flags (but priority)   attribute relaykit.flags (int) (5) same
//	resource.<key>         resource attribute <key>           same (host.name, service.name too)
//	scope.name, .version   instrumentation scope name, version
//	scope.attr.<key>       scope attribute <key>
//	otel.severity_number,  severity_number and severity_text of records
//	otel.severity_text     that are not syslog (decimal number, text)
//	otel.trace_id, .span_id trace_id, span_id (lower-case hex)
//	otel.flags, .event_name, .dropped_attributes_count    the record's own
//	otel.resource.schema_url, .dropped_attributes_count   the resource's
//	otel.scope.schema_url, .dropped_attributes_count      the scope's
//	attr.<key>             attribute <key> that would be read as one of
//	                       the names above (see FieldPrefixEscaped)
//	<key> (any other)      attribute <key>
//	otel.types             the types of non-string values (6)
//
// (1) A record without an observed time (the first collector sets it)
// gets the time the receiver decoded it. (2) A string body is Raw as it
// is. (3) Syslog severities 0-7 map to FATAL, ERROR3, ERROR2, ERROR,
// WARN, INFO2, INFO, DEBUG with the texts emerg, alert, crit, err,
// warning, notice, info, debug, as the Collector's syslog parser does; a
// record becomes an event with a Priority only when its facility (and
// with CollectorNames its priority) attribute and both severity fields
// agree with such a priority, otherwise they stay fields and attributes.
// (4) An element without parameters is an empty map; an SD-ID that
// contains '.' is split at its first '.' on the way back. (5) Left out
// with [Mapping].OmitEventMeta. (6) See "Values" below.
//
// Routes select on these fields as on any other: on "http.method" for a
// log attribute, "resource.k8s.namespace.name" for a resource attribute,
// "otel.severity_text" for an SDK record's level.
//
// # Values
//
// Field values are text. A string is itself. Other OTLP values are
// written as text and their type is listed in the field otel.types, as
// entries "<type>:<field key>" separated by ';' (with '%' and ';' in the
// key escaped as %25 and %3B; the body is named otel.body): int (decimal),
// double (Go's shortest exact form; NaN, +Inf, -Inf), bool (true, false),
// bytes (standard base64), empty (no value: empty text), json (an array
// or key/value list as plain JSON: objects keep their order, an int is an
// integer literal and a double always has a fraction or exponent, so
// "1.0" stays a double) and otlpjson (an array or list holding bytes,
// empty values or infinite doubles, which plain JSON cannot say: the
// OTLP/JSON AnyValue form, {"arrayValue":{"values":[...]}}). A field
// whose text no longer parses as its type (a pipeline step changed it)
// is sent as a string.
//
// # Round trips
//
// A log record received and sent again comes out with every field it
// had: the same timestamps, severity, body (and its type), trace context,
// flags, event name, dropped counts, schema URLs, scope and resource, and
// attributes with their values and types. Attribute order can change
// (OTLP attributes are maps), and neighbouring records with equal
// resources and scopes share one ResourceLogs and ScopeLogs. An event
// parsed from syslog (or CEF) and sent over OTLP to another relay is
// decoded into the same event: times, host, source, sourcetype, index,
// priority and flags, message, and fields in order. The tests check
// both, for both name sets.
//
// # Concurrency and cost
//
// [Receiver], [Exporter] and [Mapping] are safe for concurrent use. The
// batch a Receiver hands to its Sink, and the events' byte slices, are
// valid only until Send returns: they are pooled. The receiver starts
// no goroutines; the exporter's gRPC connection has those of grpc-go,
// stopped by Close.
//
// Protobuf requests are decoded into reused buffers without allocating
// once the receiver's pooled state is warm (see BenchmarkDecode, which
// compares it with pdata's decoding and the mapping). OTLP/JSON requests
// go through pdata, which allocates for each decoded record, attribute
// and string, and encoding builds a pdata tree per request: there OTLP
// costs allocations per record (see BenchmarkReceiverHTTP and
// BenchmarkExporter).
//
// # When not to use it
//
// For traces and metrics: this package handles logs only. For a
// destination that speaks syslog or HEC natively, forward's sinks are
// cheaper.
package otlp
