// Package relaykit is the shared vocabulary of the relaykit streaming
// primitives: the [Event] that flows through a relay and the [Sink] that
// accepts batches of events.
//
// The subpackages build on it:
//
//   - ringbuffer: a bounded multi-producer single-consumer ring (generic).
//   - batch: a size / bytes / time batch collector with backpressure (generic).
//   - pipeline: ordered routes with cached, prefiltered regex filters and
//     pipelines of functions.
//   - enrich: IP extraction, GeoIP/ASN and keyed lookups behind a cache.
//   - forward: Sinks for Splunk HEC, Microsoft Sentinel and syslog.
//   - storage: a rotating file writer, an archive Sink and a disk spool.
//   - delivery: any Sink behind a durable queue (memory and spool), in
//     order, through outages, crashes and disk failures.
//   - stream: stream inputs (framing, per-source limits, deadlines).
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
