// Package forward holds the [relaykit.Sink] implementations that deliver
// batches of events over the network: Splunk HTTP Event Collector ([HEC]),
// Microsoft Sentinel through the Azure Monitor Logs Ingestion API, and
// syslog.
//
// # Delivery
//
// The HTTP sinks share one sender core, configured by [HTTPConfig]:
//
//   - Encoding into pooled buffers with append-style encoders: no
//     allocation per event once warm.
//   - Splitting: a batch becomes as many requests as needed so that no
//     request body exceeds MaxRequestBytes before compression; an event
//     larger than MaxEventBytes is not sent and is reported with
//     [relaykit.ReasonTooLarge].
//   - Compression: gzip (Content-Encoding: gzip) by default, with pooled
//     github.com/klauspost/compress writers that are Reset per request, so
//     the ~1 MB compressor state is not allocated per request.
//   - Concurrency: at most Concurrency requests in flight per sink, across
//     all concurrent Send calls; Send waits for its own requests.
//   - Timeouts: every request is bounded by HTTPConfig.Timeout; a nil
//     HTTPClient means a client of the sink's own with dial, TLS and
//     response timeouts (never http.DefaultClient).
//
// # One attempt, classified failures
//
// A sink does not retry. Send makes one attempt per request and returns
// nil when every event was delivered, or a [*relaykit.BatchError] that
// lists every undelivered run of the batch (errors.As finds it; its causes
// are [*SendError] values), each classified:
//
//   - permanent: sending the same events again cannot succeed. The
//     destination refused them as invalid data ([relaykit.ReasonRejected]:
//     400, HEC bad data, Sentinel schema mismatch), too large
//     ([relaykit.ReasonTooLarge]), or refused the credentials
//     ([relaykit.ReasonUnauthorized]: 401, 403, HEC token errors).
//   - retryable ([relaykit.ReasonSinkError]): network errors, timeouts,
//     408, 429, 5xx, HEC codes 8, 9 and 18-20, a failed health check, an
//     indexer acknowledgement that did not come within its bound.
//   - retryable after a delay: as above, with FailedRange.RetryAfter set
//     to the wait the destination named: Retry-After (delay-seconds or an
//     HTTP-date), retry-after-ms or x-ms-retry-after-ms (Azure), on a 429,
//     a 503 or an HEC code 9.
//   - retryable, [relaykit.ReasonShutdown]: ctx ended before the events
//     were delivered; the error then also wraps ctx.Err().
//
// The retry loop is [github.com/relaykit/relaykit/delivery.Queue]: put a
// sink behind one to retry, with backoff, never sooner than the
// destination asked, spooling through outages and dead-lettering what is
// permanent. Used without a queue, a sink makes one attempt and says what
// happened; a caller that retries by itself must honour
// [relaykit.BatchError.RetryAfter].
//
// Some steps send events of a request again because the protocol says so,
// not to retry a failure: a 413 splits the request in two and sends both
// halves (a single event too large fails permanently); Sentinel answers a
// 401 by fetching a fresh token and sending the request once more; HEC's
// partial accept (invalid-event-number) sends the events after the
// rejected one, which HEC never processed. With HEC indexer
// acknowledgement, Send polls for the acknowledgement of each request.
//
// Nothing is dropped silently: every undelivered event is in the error and
// counted in [Stats].EventsFailed by reason. Errors, logs, Stats and hooks
// never contain secrets (HEC tokens, bearer tokens, client secrets):
// errors carry the destination name, the HTTP status and the
// destination's own code and text.
//
// # Splunk HEC
//
// [HEC] posts concatenated JSON event objects to /services/collector/event
// (or raw text to /services/collector/raw) with "Authorization: Splunk
// <token>", and follows HEC's response codes: 0 success; 9 (server busy)
// and 18-20 (unhealthy) retryable; bad data (5, 6, 12, 13, 15) with an
// invalid-event-number means the events before it were accepted, so that
// event is rejected and the rest are sent on; token errors (1-4) are
// unauthorized and logged once; an incorrect index (7) rejects every event
// for that index from then on. See [HECConfig] for indexer acknowledgement
// and the health check.
//
// # Microsoft Sentinel
//
// [Sentinel] sends rows to a Log Analytics workspace through the Azure
// Monitor Logs Ingestion API: POST
// {Endpoint}/dataCollectionRules/{DCRImmutableID}/streams/{Stream}?api-version=2023-01-01
// with a gzipped JSON array and a bearer token from a [TokenSource],
// normally an Entra ID client-credentials source ([NewEntraTokenSource]),
// cached and refreshed before expiry. Calls are capped at 1,000,000 bytes,
// uncompressed and compressed (Azure documents "1 MB" for both; a
// compressed body over it, from data that hardly compresses, is halved
// before it is sent). Calls to an Auxiliary-plan table hold rows whose
// TimeGenerated span less than 30 minutes, which the service requires of
// them (it refuses a wider call whole: RecordsTimeRangeIsMoreThan30Minutes).
// A 413 halves the request, and a single row over the limit is too large. A 401 refreshes the token once, then is
// unauthorized. A 400 (schema mismatch) is rejected with the service's
// message. 429 and 5xx are retryable with the Retry-After or
// retry-after-ms the service named. Column names are validated at
// construction.
//
// Rows fit a custom table (Custom-<Table>_CL, mapped by [SentinelColumns])
// or one of Sentinel's built-in tables the Logs Ingestion API accepts
// ([SentinelTable]): Syslog (stream Microsoft-Syslog, facility and
// severity by name) and CommonSecurityLog (stream
// Microsoft-CommonSecurityLog, CEF keys in the columns of Microsoft's
// "CEF and CommonSecurityLog field mapping", the rest in
// AdditionalExtensions), which Sentinel's analytics rules, workbooks and
// ASIM parsers read. [SentinelConfig.Plan] names the table's plan
// ([SentinelPlan]): Basic writes the rows of Analytics; Auxiliary, for
// custom tables, writes TimeGenerated with 6 fractional digits and no
// dynamic column, as Azure requires.
//
// # Encoding ahead: wire-ready requests
//
// [HEC] and [Sentinel] are [relaykit.RequestSink] values: EncodeRequests
// encodes a batch exactly as Send would send it (the same rows or event
// objects, split at the same limits, the same events refused) into
// [relaykit.Request] values whose Body is the request body as it goes on
// the wire, gzipped, with an Index of where each event's encoding ends;
// SendRequests sends such bodies as they are, one attempt each, with the
// same classification as Send. A delivery.Queue in front of the sink uses
// them: each batch is encoded and compressed once, before it is written
// ahead, and the spool holds what the destination will receive. The
// protocol steps that change a request (a 413 split, the rest after an HEC
// partial accept, a compressed body over Sentinel's limit) decompress the
// stored body and rebuild from its rows; CutRequest does the same for a
// queue that retries or probes part of a request, and DecodeRequest
// recovers events from rows (for dead letters: what the destination
// receives, not every field the events had). A request's Format names the
// sink and layout ("sentinel.Syslog", "sentinel.CommonSecurityLog",
// "sentinel.custom", "hec.event", "hec.raw", with "+gzip" when compressed):
// a stored request of another format of the same sink kind (after a
// configuration change) is decoded and sent as events.
//
// # Compression
//
// HTTP sinks gzip each request body once, with a pooled
// klauspost/compress writer, at [HTTPConfig].GzipLevel: 1 (the default)
// to 9, [GzipHuffmanOnly] or [GzipStateless]. gzip is the only encoding
// the Logs Ingestion API takes (its Content-Encoding parameter is
// "always 'gzip'"), so zstd is not offered. The level changes the CPU a
// request costs and the bytes it puts on the wire, never what is billed:
// Sentinel bills the ingested (uncompressed) data, Splunk licenses
// indexed data. Measured on request bodies of 440 rows from realistic
// 1.2 KB lines (BenchmarkSentinelGzipLevels in the bench module; CPU time
// per row, medians of 10 runs on a shared 2-vCPU AMD EPYC; Syslog rows
// are 1 439 bytes of JSON, CommonSecurityLog rows 2 022):
//
//	level          Syslog µs/row  wire B/row   CSL µs/row  wire B/row
//	huffman_only   3.0            963 (1.5×)   4.4         1 337 (1.5×)
//	stateless      6.2            411          5.7         307
//	1 (default)    6.3            393 (3.7×)   4.3         277 (7.3×)
//	2              7.9            377          4.8         274
//	6              13.0           344          12.5        218
//	9              50.3           323 (4.5×)   46.2        200 (10×)
//
// Level 1 is the default: above it every level costs 25 % to 8× more CPU
// for 4-18 % fewer bytes. Huffman-only halves the CPU of syslog-like
// text but sends 2.5× the bytes (570 more per row: 57 MB/s more uplink
// at 100 k rows/s), and saves nothing on CEF, whose repeated labels level
// 1 skips through as fast as Huffman coding reads every byte; choose it
// for a CPU-bound relay with ample bandwidth to the endpoint (a private
// link). Stateless is never better than 1 with whole bodies compressed at
// once. DisableGzip sends the JSON as it is.
//
// # Syslog
//
// [Syslog] is a [relaykit.RequestSink] too: its requests are a batch's
// messages formatted and framed as Send writes them (Format
// "syslog.5424.octet", ".lf" or ".dgram"; "syslog.3164..." for RFC 3164),
// uncompressed; decoding one parses its messages as the syslog inputs do.
//
// [Syslog] sends RFC 5424 (or RFC 3164) messages over TCP with octet
// counting (RFC 6587), TLS (RFC 5425, verified by default) or UDP (RFC
// 5426): one write per batch on streams, sendmmsg batches on UDP, one
// ordered connection. One attempt dials at most once (a connection left
// open by an earlier Send that turns out dead is replaced once); every
// event is either written to a connection that accepted it or reported
// retryable, so behind a retrying queue delivery is at least once. It has
// its own [SyslogConfig] and [SyslogStats].
//
// # Concurrency and ownership
//
// Sinks are safe for concurrent use by multiple goroutines. Send reads the
// batch only until it returns. A sink starts no goroutine that outlives a
// Send call; Close releases idle connections.
//
// # Testing
//
// Package [github.com/relaykit/relaykit/forward/forwardtest] provides
// protocol-faithful test servers for the destinations and TestSink, a
// conformance suite for any Sink.
package forward
