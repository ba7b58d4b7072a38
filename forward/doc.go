// Package forward holds the [relaykit.Sink] implementations that deliver
// batches of events over the network: Splunk HTTP Event Collector ([HEC]),
// Microsoft Sentinel through the Azure Monitor Logs Ingestion API, and
// syslog.
//
// # Delivery
//
// The HTTP sinks share one sender core, configured by [DeliveryConfig]:
//
//   - Encoding into pooled buffers with append-style encoders: no
//     allocation per event once warm.
//   - Splitting: a batch becomes as many requests as needed so that no
//     request body exceeds MaxRequestBytes before compression; an event
//     larger than MaxEventBytes is handed to the failure handler with
//     [ReasonTooLarge] instead of being sent.
//   - Compression: gzip (Content-Encoding: gzip) by default, with pooled
//     github.com/klauspost/compress writers that are Reset per request, so
//     the ~1 MB compressor state is not allocated per request.
//   - Concurrency: at most Concurrency requests in flight per sink, across
//     all concurrent Send calls; Send waits for its own requests.
//   - Timeouts: every attempt is bounded by RequestTimeout; a nil
//     HTTPClient means a client of the sink's own with dial, TLS and
//     response timeouts (never http.DefaultClient).
//   - Retries: network errors, 408, 429 and 5xx (and protocol codes that
//     mean "busy") are retried with exponential backoff and full jitter, or
//     after the Retry-After (or retry-after-ms) the destination asked for,
//     bounded by [RetryConfig]. A 413 splits the request in two. 400, 401
//     and 403 are never retried: resending the same data or the same
//     credentials cannot succeed.
//
// # Failures
//
// Nothing is dropped silently. Every event a sink gives up on (retries
// exhausted, rejected as bad data, too large, unauthorized, context ended)
// is handed exactly once to the [FailureFunc] in DeliveryConfig.OnFailure
// with a Reason constant, and counted in [Stats].EventsFailed. Send returns
// nil when every event was delivered or handed to OnFailure. Without
// OnFailure, Send reports them itself: it returns a [*relaykit.BatchError]
// that lists every undelivered run of the batch with its Reason (runs
// rejected as bad data or too large are marked Permanent), and whose causes
// are [*SendError] values (errors.As finds them). That is the form a
// durable queue (package delivery) reads to retry, spool or dead-letter
// exactly the undelivered events. When ctx ends, the events not yet
// delivered go to OnFailure with [ReasonShutdown] and Send returns an error
// wrapping ctx.Err() (and, without OnFailure, the BatchError).
//
// Errors, logs, Stats and hooks never contain secrets (HEC tokens, bearer
// tokens, client secrets): errors carry the destination name, the HTTP
// status and the destination's own code and text.
//
// # Splunk HEC
//
// [HEC] posts concatenated JSON event objects to /services/collector/event
// (or raw text to /services/collector/raw) with "Authorization: Splunk
// <token>", and follows HEC's response codes: 0 success; 9 (server busy)
// and 18-20 (unhealthy) retried; bad data (5, 6, 12, 13, 15) with an
// invalid-event-number means the events before it were accepted, so that
// event goes to the failure handler with [ReasonRejected] and the rest are
// sent again; token errors (1-4) go to the failure handler with
// [ReasonUnauthorized] and are logged once; an incorrect index (7) rejects
// every event for that index from then on. See [HECConfig] for indexer
// acknowledgement and the health check.
//
// # Microsoft Sentinel
//
// [Sentinel] sends rows to a Log Analytics workspace through the Azure
// Monitor Logs Ingestion API: POST
// {Endpoint}/dataCollectionRules/{DCRImmutableID}/streams/{Stream}?api-version=2023-01-01
// with a gzipped JSON array and a bearer token from a [TokenSource],
// normally an Entra ID client-credentials source ([NewEntraTokenSource]),
// cached and refreshed before expiry. Calls are capped at 1 MiB of
// uncompressed JSON. A 413 halves the request, and a single row over the
// limit goes to the failure handler with [ReasonTooLarge]. A 401 refreshes
// the token once, then fails with [ReasonUnauthorized]. A 400 (schema
// mismatch) fails with [ReasonRejected] and the service's message. 429 and
// 5xx are retried, honouring Retry-After and retry-after-ms. Column names
// are validated at construction.
//
// Rows fit a custom table (Custom-<Table>_CL, mapped by [SentinelColumns])
// or one of Sentinel's built-in tables the Logs Ingestion API accepts
// ([SentinelTable]): Syslog (stream Microsoft-Syslog, facility and
// severity by name) and CommonSecurityLog (stream
// Microsoft-CommonSecurityLog, CEF keys in the columns of Microsoft's
// "CEF and CommonSecurityLog field mapping", the rest in
// AdditionalExtensions), which Sentinel's analytics rules, workbooks and
// ASIM parsers read.
//
// # Syslog
//
// [Syslog] sends RFC 5424 (or RFC 3164) messages over TCP with octet
// counting (RFC 6587), TLS (RFC 5425, verified by default) or UDP (RFC
// 5426): one write per batch on streams, sendmmsg batches on UDP, one
// ordered connection, and reconnect with backoff. Every event is either
// written to a connection that accepted it or handed to the failure
// handler; after a write error the batch is resent on a new connection, so
// delivery is at least once. It has its own [SyslogConfig] and
// [SyslogStats].
//
// # Concurrency and ownership
//
// Sinks are safe for concurrent use by multiple goroutines. Send reads the
// batch only until it returns. The [Failure] given to a FailureFunc, and
// the events in it, are valid only until the FailureFunc returns. A sink
// starts no goroutine that outlives a Send call; Close releases idle
// connections.
//
// # Testing
//
// Package [github.com/relaykit/relaykit/forward/forwardtest] provides
// protocol-faithful test servers for the destinations and TestSink, a
// conformance suite for any Sink.
package forward
