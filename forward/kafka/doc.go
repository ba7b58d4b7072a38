// Package kafka provides [Sink], a [relaykit.Sink] that produces events as
// Apache Kafka records with github.com/twmb/franz-go.
//
// # Why a sub-package
//
// A program that imports package forward for Splunk HEC or Sentinel must
// not link a Kafka client: franz-go (with its protocol messages, SASL
// mechanisms and lz4/zstd/snappy codecs) adds several megabytes to a binary
// and a dependency to audit. Go links what the import graph reaches, so the
// Kafka sink lives here, in its own package, rather than in forward. The
// dependency points one way: kafka imports forward for the error types
// every sink shares ([forward.SendError], [forward.ErrInvalidConfig]) and
// reports failures with the relaykit.Reason* names, so a relay handles a
// Kafka failure exactly like an HEC failure; forward never imports kafka.
// The
// module requires franz-go, but module requirements cost nothing to a
// program whose packages do not import it.
//
// # Records
//
// Each event becomes one record:
//
//   - Topic: Config.Topic, or the value of Config.TopicField when the event
//     has it (topic names are validated: [a-zA-Z0-9._-], at most 249 bytes).
//   - Key: the event's host ([KeyHost]), a field ([KeyField]), or none
//     ([KeyNone]): records without a key use franz-go's sticky partitioner,
//     which fills one partition's batch before moving on (the cheapest
//     layout), while keyed records of one host or field value always land
//     in the same partition, in order.
//   - Value: the archive's JSON object ([EncodingJSON], see [AppendJSON]) or
//     the raw message ([EncodingRaw]).
//   - Headers: "host", "source" and "sourcetype" when the event has them
//     (unless Config.OmitHeaders), so a consumer can route without decoding
//     the value.
//   - Timestamp: the time of the Send call (CreateTime; one clock read per
//     batch), from which franz-go also measures Config.DeliveryTimeout.
//
// # Delivery
//
// By default the producer waits for every in-sync replica (acks=all) and is
// idempotent: franz-go retries a failed produce request with the same
// producer ID and sequence numbers, so a retry never writes a record twice
// and never reorders a partition. These retries are part of the Kafka
// protocol (the idempotent producer's sequence numbers make them safe
// where a resend by the caller is not), so they stay inside the sink,
// bounded by Config.DeliveryTimeout; the sink adds no retry loop of its
// own. [Sink.Send] produces every record of the batch and returns only
// when each one was acknowledged or failed: a batch counts as delivered
// only when every record is acknowledged. Send reports what it did not
// deliver in a [*relaykit.BatchError]: records franz-go could not deliver
// within DeliveryTimeout are retryable ([relaykit.ReasonSinkError]); an
// event whose record would exceed Config.MaxRecordBytes is never produced
// and fails permanently with [relaykit.ReasonTooLarge]; a topic the broker
// refuses as invalid with [relaykit.ReasonRejected]; authorization
// failures with [relaykit.ReasonUnauthorized]; records the context ended
// before they were written are retryable with [relaykit.ReasonShutdown].
// Put the sink behind a delivery.Queue to retry what is retryable.
// Nothing is dropped silently: every event is counted in [Stats] as sent
// or failed.
//
// # Security
//
// Config.TLS enables TLS to the brokers; Config.SASL selects PLAIN,
// SCRAM-SHA-256 or SCRAM-SHA-512 (RFC 5802, RFC 7677, KIP-84). Use SASL
// PLAIN only over TLS. Passwords never appear in errors, logs or Stats.
//
// # Concurrency and ownership
//
// A Sink is safe for concurrent use by multiple goroutines; concurrent Send
// calls share one franz-go client and its connections. Send reads the batch
// only until it returns: records point into the events' bytes while they are
// produced and Send waits for every one of them. The client's goroutines
// are stopped by [Sink.Close].
package kafka
