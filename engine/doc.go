// Package engine turns the events of inputs into routed batches, and tells
// inputs when their events are finished, so that those that can acknowledge
// to their senders (a Splunk HEC receiver, RELP, a Kafka consumer, OTLP)
// acknowledge on delivery and nothing else.
//
// # Data path
//
//	inputs (Producer.Push, Input.Push, TryPush, PushWait), by shard
//	  │
//	  ▼
//	worker rings: ringbuffer.MPSC, one per worker
//	  │  drained by the producer itself when nobody else is (inline),
//	  │  else by the worker, woken by the push or by BatchMaxWait
//	  ▼
//	batch.Collector: BatchMaxEvents, BatchMaxBytes, BatchMaxWait
//	  │  one flush at a time per worker, in ring order
//	  ▼
//	Config.Sink.Send(batch): a route table whose routes end in
//	  │  destinations behind delivery.Queue (the one retry loop)
//	  ▼
//	done count advances ─▶ marks settle ─▶ inputs acknowledge
//
// An input registers with [Engine.NewInput] and hands events over by shard:
// a connection, a sender's address, a Kafka partition. The events of one
// shard go to one worker, in order. A stream input reads through a
// [Producer]: it parses a read's frames into the events of a slab (their
// buffers recycled from events already routed, so steady state allocates
// nothing), then pushes them at once. When no other goroutine is draining
// that worker, the producer adds them to the worker's open batch itself and
// routes the batches they fill on its own goroutine, while the events are
// in its processor's cache; otherwise they go through the ring, and the
// producer drains it once a batch's worth waits there. An input that must
// never wait (UDP) uses [Producer.TryPush] or [Input.TryPush]: what finds
// the ring full is counted as dropped{queue_full}. Other inputs push single
// events ([Input.Push], [Input.PushOwned]) and the worker drains them.
//
// A worker with nothing to do parks without a timer; the engine's [Clock]
// sleeps too. An idle engine costs nothing.
//
// # Acknowledgement
//
// An event is finished when the Send of the batch holding it returned nil:
// by the contract of relaykit.Sink, every destination it was routed to
// delivered it, has it on disk (write-ahead), or dead-lettered it with a
// reason. A producer learns this through a [Mark]: [Input.PushWait] pushes
// and waits; [Input.Mark] and [Producer.Mark] return a mark to poll with
// [Mark.Done] (a Kafka consumer commits an offset once the mark taken after
// its record is done) or to wait on with [Mark.Wait]. While anyone waits on
// a worker, it cuts its open batch as soon as its ring is empty instead of
// after BatchMaxWait: a group commit, one flush for every sender waiting.
//
// A mark reports failure ([ErrNotFinished]) when the Sink refused a batch
// holding some of its events, or when the engine stopped (the hard
// deadline) before routing them. Such events may still be delivered: an
// acknowledging input then does not answer, its sender sends them again,
// and the duplicates are counted (InputStats.Abandoned). The engine never
// retries: put each destination behind a delivery.Queue, which retries,
// spools and honours what the destination asks for, and whose Send
// returns nil only on the terms above.
//
// # Shutdown
//
// [Engine.Shutdown] closes the rings (pushes return [ErrClosed]), and the
// workers route what the rings and collectors hold; Run then returns.
// Run's context is the hard deadline: when it ends (or Shutdown's context
// does), pushes waiting for room give up and their events are counted as
// dropped{shutdown_unqueued}, and what is left is routed once with an ended
// context (a delivery queue still takes a batch it has room for, to send it
// after a restart) and counted in Stats.Late.
//
// A program stops its inputs first: their listeners stop reading, and what
// they read is handed over while the engine still runs (ending the inputs'
// pushes with their listeners drops it, counted as shutdown_unqueued).
// Then Shutdown, with the deadline; then the destinations' delivery
// queues (delivery.Queue.Close), then the archives. The root package's
// example SyslogToSentinel runs that order with a comment per step:
// https://pkg.go.dev/github.com/relaykit/relaykit#example-package-SyslogToSentinel
//
// # Ledger
//
// [Engine.Stats] balances at every moment: Received = Routed + Queued +
// the sum of Dropped. What happens after routing (delivered, spooled,
// dead-lettered, reduced, dropped by a route) is the Sink's to count.
//
// # Observing an input
//
// [Input.Observe] gives an input an [Observer] (a live tap point,
// *tap.Point) that a [Producer]'s pushes show their events to, after
// parsing; while it is not active that costs one call per push.
//
// # Concurrency
//
// An [Engine], its [Input] handles and [Mark] values are safe for
// concurrent use by multiple goroutines. A [Producer] belongs to one
// goroutine. The engine starts goroutines only inside [Engine.Run] (one
// per worker, its collector's timer, and its clock) and they have all
// returned when Run returns.
package engine
