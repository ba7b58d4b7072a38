// Package hec is a Splunk HTTP Event Collector (HEC) receiver: an
// http.Handler that an importer mounts in its own http.Server, so that the
// applications, logging libraries and agents that send HEC (Splunk's
// logging libraries, the OpenTelemetry Collector's splunk_hec exporter,
// Fluent Bit, Vector, relaykit's own forward.HEC) can send to a relay
// instead of Splunk, unchanged.
//
// It lives beside package stream and not in it, so that importing stream
// for the framer links neither net/http nor a JSON parser.
//
// # Protocol
//
// The handler follows Splunk's "Format events for HTTP Event Collector"
// and "Troubleshoot HTTP Event Collector" (Getting Data In manual):
//
//   - POST /services/collector/event (also /services/collector and
//     /services/collector/event/1.0): JSON event objects one after the
//     other, each with "event" (a string, or any JSON value, kept as its
//     compact JSON text) and optional "time" (epoch seconds, number or
//     string, with a fraction), "host", "source", "sourcetype", "index" and
//     "fields" (flat: string, number or boolean values, or arrays of them
//     for multi-value fields; an object inside is code 15);
//   - POST /services/collector/raw: one event per line (LF, a CR before it
//     removed, blank lines skipped), metadata from the query parameters
//     host, source, sourcetype, index and time; it needs a channel, as
//     Splunk's raw endpoint does;
//   - POST /services/collector/ack: {"acks":[ids]} answered
//     {"acks":{"id":bool}};
//   - GET /services/collector/health: code 17, or 18 while unhealthy.
//
// Authentication is "Authorization: Splunk <token>", or HTTP Basic
// authentication with the token as the password (any user name), as
// Splunk accepts; the query parameter "token" only with
// [Config].AllowQueryStringToken (code 16 otherwise). Bodies may be
// gzipped (Content-Encoding: gzip; pooled klauspost readers). Answers are
// HEC's: the HTTP status and {"text":...,"code":N} body of each code
// ([Status]), "invalid-event-number" with the codes of a bad event, 413
// with Splunk's text for a body over [Config].MaxBodyBytes.
//
// A bad event at position n (0-based) is answered with its code and
// invalid-event-number n after the events before it were handed to the
// Sink, as HEC indexes the events before a bad one; a sender such as
// forward.HEC then sends only the rest again.
//
// # Events
//
// Each event becomes a [relaykit.Event]: Time from "time" (nanoseconds;
// zero when absent), Host, Source, SourceType and Index from the metadata
// (or the token's defaults), Raw the event string (or the JSON text of a
// non-string event), Fields the indexed fields in the order sent (a
// multi-value field gives one Field per value, keys repeating).
// ReceiveTime is the time the request was decoded (one read per request
// of [Config].Clock).
//
// forward.HEC sends an event's syslog priority as the fields "facility"
// and "severity", by name (kern ... local7; emerg ... debug). An event
// whose fields hold both, with such names, gets them back as its
// Priority (and [relaykit.FlagPriority]) and loses the two fields, unless
// [Config].KeepPriorityFields is set. So an Event sent by forward.HEC
// (default settings) comes out of the handler equal to what went in,
// except: ReceiveTime is the handler's; Time is whole milliseconds (what
// forward.HEC sends) and is the sender's ReceiveTime when its Time was
// zero; Flags other than FlagPriority are not carried; and an event that
// had fields named facility and severity holding syslog names, but no
// priority, comes out with a priority instead.
//
// # Acknowledgement
//
// The handler gives each request's events, as one batch, to
// [Config].Sink, and answers success only after Send returned nil: under
// the delivery contract the batch is then delivered, durably accepted, or
// each rejected event dead-lettered. Any error from Send, or a Send that
// is still running after [Config].SendTimeout (its ctx deadline), is
// answered 503, code 9 ("Server is busy"): HEC senders retry that, so
// back-pressure from the Sink reaches them and nothing is lost.
//
// With indexer acknowledgement ([Token].Ack, HEC's useACK), a request
// must name a channel (header X-Splunk-Request-Channel or query parameter
// channel, a GUID; code 10 or 11 otherwise) and is answered at once with
// {"text":"Success","code":0,"ackId":N}, N counting from 0 per channel.
// Its batch is sent in the background, at most [Config].AckConcurrency at
// once (a request waits for a free slot up to SendTimeout, then gets code
// 9). /services/collector/ack reports an id true only after its Send
// returned nil, and forgets it once reported true. An id whose Send
// failed stays false (and is forgotten): the sender sends the request
// again when its acknowledgement timeout passes.
//
// Ack state is bounded: a channel holds at most [Config].MaxPendingAcks
// ids not yet reported true, and at most [Config].MaxAckChannels channels
// hold state; a request beyond either is answered 503, code 9, as Splunk
// answers at max_number_of_acked_requests_pending_query_per_ack_channel.
// A channel without requests or queries for [Config].AckChannelIdle is
// dropped (HEC's maxIdleTime); its ids then answer false, and the
// senders, which stopped asking, were gone anyway. Idle channels are
// dropped by the requests that look at the state: the handler runs no
// timer.
//
// # TLS and limits
//
// The handler bounds each request body to [Config].MaxBodyBytes, as
// received and after decompression (a gzip bomb is cut at the limit and
// counted in [Stats].TooLarge), and its reading to [Config].BodyTimeout
// (408, [Stats].BodyTimeouts) by moving the connection's read deadline;
// the server's ReadHeaderTimeout and IdleTimeout remain the caller's to
// set.
//
// Connections and TLS are the server's: HEC serves port 8088 over HTTPS
// by default. An http.Server on a plain net.Listener accepts any number
// of connections from anyone, so one sender that opens thousands costs
// every other sender. Serve it on a stream.NetListener instead, with
// stream/streamhttp's ConnState as its ConnState hook (see the example):
// connections are then capped per source IP address (64 by default) and
// in all (1024, the longest-idle kept-alive connection evicted for a
// newcomer, never one with a request in flight), and for a listener with
// stream.Config.TLS the handshake must be done within its
// HandshakeTimeout (10 s) from accept, each refusal, eviction and cut
// counted in the listener's stream.Stats. Behind a load balancer, a
// listener with stream.Config.ProxyProtocol reads the PROXY header of
// each connection, and the sender it names is the request's RemoteAddr
// ([Request].RemoteAddr) and what the per-source cap counts;
// stream/tlscert keeps the listener's certificate.
//
// # Concurrency, ownership and cost
//
// A Handler is safe for concurrent use. The batch handed to Send, and
// the events' byte slices, are valid only until Send returns (the
// [relaykit.Sink] contract): they are pooled and reused by later
// requests. [FromContext] gives the Sink the request's token name, route
// hint and channel. The handler starts goroutines only for acknowledged
// requests (one per batch in flight, at most AckConcurrency); Close or
// Shutdown stops and waits for them.
//
// Once warm, decoding does not allocate per event beyond what the
// events' own byte slices need to grow: a pooled request state holds the
// body buffers, the gzip reader, the fastjson scanner and the batch, and
// each event's buffers are reused by the next request. net/http's own
// allocations per request remain.
package hec
