// Package relaykit is the shared vocabulary of the relaykit streaming
// primitives: the [Event] that flows through a relay, the [Sink] that
// accepts batches of events, and the [Request] a [RequestSink] encodes a
// batch into ahead of sending it (what a queue stores for such a sink).
//
// The subpackages build on it:
//
//   - ringbuffer: a bounded multi-producer single-consumer ring (generic).
//   - batch: a size / bytes / time batch collector with backpressure (generic).
//   - syslog: allocation-free RFC 5424, RFC 3164 and CEF parsers.
//   - pipeline: ordered routes with cached, prefiltered regex filters,
//     pipelines of functions, and reduction steps.
//   - enrich: IP extraction, GeoIP/ASN and keyed lookups behind a cache.
//   - forward: Sinks for Splunk HEC, Microsoft Sentinel and syslog, which
//     make one attempt and classify failures; forward/kafka for Kafka.
//   - otlp: an OTLP logs receiver and exporter.
//   - storage: a rotating file writer and an archive Sink.
//   - spool: the disk queue of batches.
//   - delivery: any Sink behind a queue (memory and spool): the one retry
//     loop, in order, through outages, crashes and disk failures.
//   - engine: inputs to routed batches, with acknowledgements.
//   - stream: stream inputs (framing, per-source limits, deadlines);
//     stream/hec and stream/relp, the acknowledging inputs.
//   - sources: per-source statistics, silence detection, rate limits.
//   - tap: observation points on the data path.
//
// This package imports only the standard library, so any package may depend
// on it without pulling in HTTP, regular expressions or database readers.
//
// # Ownership
//
// An [Event] owns its byte slices. A [Sink] receives a batch ([]Event) that it
// may read until Send returns and must not retain afterwards; to keep an event,
// copy it with [Event.Clone] or [Event.CopyTo].
//
// # Acknowledgement
//
// A nil error from [Sink.Send] means the batch was delivered, durably
// accepted, or dead-lettered (see the contract on [Sink]); a partial
// failure is reported as a [*BatchError]. Inputs that acknowledge to their
// senders rely on exactly this.
//
// # Times
//
// Times on an Event are int64 nanoseconds since the Unix epoch (UTC), so that
// setting them never allocates and comparing them is one instruction. Zero
// means unknown.
package relaykit
