// Package kafka provides [Sink], a [relaykit.Sink] that produces events as
// Apache Kafka records with github.com/twmb/franz-go, and [Consumer], the
// consumer-group input that reads them back into an engine and commits a
// record only once its events are delivered.
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
// # Consumer
//
// A [Consumer] is a member of a consumer group: it decodes each record
// into an event ([DecodeJSON] for [EncodingJSON]; for [EncodingRaw] the
// value is the message and the host, source and sourcetype headers fill
// those members), hands a partition's events to an engine through
// ConsumerConfig.Push, and commits offsets only once the engine says the
// events are finished. With the Sink it scales a relay out over Kafka:
//
//	syslog, HEC, OTLP ──▶ edge relays ── Sink (acks=all, idempotent) ──▶ topic, N partitions
//	                                                                          │
//	                         consumer group: each partition to one member ◀───┘
//	                                   │
//	SIEM-tier relays:  Consumer ──Push──▶ engine ──▶ routes ──▶ delivery queues ──▶ Splunk, Sentinel
//	                       ▲                                          │
//	                       └── commit the offset once Ack.Done ◀──────┘  delivered, spooled or dead-lettered
//
// An edge relay is done with an event once Kafka acknowledged its record;
// a SIEM-tier relay commits the record once every destination delivered,
// spooled or dead-lettered its event. A SIEM relay that crashes loses
// nothing: after ConsumerConfig.SessionTimeout the group gives its
// partitions to the others, which read again from the last commit.
//
// The consumer is engine-agnostic: Push returns an [Ack] whose Done says
// when the pushed events are finished. engine.Input.PushBatch has that
// shape and its engine.Mark is an Ack, so wiring the two is one line:
//
//	Push: func(ctx context.Context, shard uint64, evs []relaykit.Event) (kafka.Ack, error) {
//		return in.PushBatch(ctx, shard, evs)
//	},
//
// # Commit contract
//
// Offsets are committed per partition, in offset order, and only past
// records that are finished:
//
//   - After each Push (at most 256 events, all of one partition, with one
//     shard per partition so an engine keeps them in order) the consumer
//     keeps the Ack with the offset after the last record pushed. A
//     commit writes the offset of the newest Ack that reported finished
//     when every Ack before it of that partition did too. A record that
//     does not decode goes to ConsumerConfig.DeadLetter with its topic,
//     partition and offset, is counted, and is finished when DeadLetter
//     returned.
//   - Commits happen every ConsumerConfig.CommitInterval, on
//     [Consumer.Commit], and when partitions are revoked: a rebalance, or
//     leaving the group when Serve's context ends or [Consumer.Shutdown]
//     is called. Polls block rebalances until the polled records are
//     pushed, and a revocation waits for the pushed records to finish
//     (until Shutdown's context ends or RevokeTimeout passes) before
//     committing, so a graceful rebalance or shutdown reads nothing
//     twice. Partitions lost without a revocation
//     (the session expired) are forgotten: their new owner reads again
//     from the last commit.
//   - Delivery is at least once. A crash, or [Consumer.Close], which stops
//     as one, redelivers the records polled since the last commit: at most
//     a CommitInterval's worth plus what the engine held. A revocation
//     that stopped waiting redelivers what had not finished.
//   - An Ack that reports an error (the engine's Sink refused a batch, or
//     the engine stopped first) stalls its partition: Kafka offsets are
//     positional, and committing any later record would commit the
//     refused ones with it. The partition's offset stays at the last
//     record finished before them; records keep flowing to the engine but
//     are not committed, and the partition's next owner (after a
//     rebalance or a restart) reads again from there. The stall is
//     logged, counted (ConsumerStats.Stalls, PartitionStats.Stalled) and
//     reported to ConsumerHooks.OnStalled. Put destinations behind a
//     delivery.Queue, whose Send refuses a batch only at shutdown.
//   - A Push error while Serve was not told to stop (the engine closed)
//     stops the consumer: Serve leaves the group as above and returns the
//     error.
//
// # Concurrency and ownership
//
// A Sink is safe for concurrent use by multiple goroutines; concurrent Send
// calls share one franz-go client and its connections. Send reads the batch
// only until it returns: records point into the events' bytes while they are
// produced and Send waits for every one of them. The client's goroutines
// are stopped by [Sink.Close].
//
// A Consumer's Serve, Shutdown, Commit, Stats and Close are safe for
// concurrent use. Serve polls on the caller's goroutine and commits on one
// of its own, which has returned when Serve does; the client's goroutines
// stop when Serve returns, or at Close for a Consumer that never ran.
// Push and DeadLetter
// are called on Serve's goroutine, one call at a time, in each partition's
// offset order; the events and the value they get are valid only during
// the call. OnStalled runs on the committing goroutine.
//
// # When not to use it
//
// A Consumer is for records that become events of a relay. To process
// records one by one with your own offset handling, use franz-go
// directly; to read a topic without a group (replay, inspection), use a
// kgo client with ConsumePartitions.
package kafka
