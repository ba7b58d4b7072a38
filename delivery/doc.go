// Package delivery is relaykit's one retry loop: it puts any
// [relaykit.Sink] behind a [Queue] that retries what the sink did not
// deliver, never sooner than the destination asked, through a bounded
// memory queue and a disk spool (ordered replay, probing of a destination
// that is down, full policies), or, in mode [Memory], on the caller's
// goroutine without a disk. A Queue is itself a Sink, so it drops into a
// pipeline route in place of the destination it wraps:
//
//	// The sink makes one attempt per request and reports what it did not
//	// deliver as a *relaykit.BatchError: the queue retries.
//	hec, _ := forward.NewHEC(forward.HECConfig{URL: url, Token: token})
//	q, _ := delivery.New(hec, delivery.Config{Name: "splunk", Dir: "/var/lib/agent/spool/splunk"})
//	go q.Run(ctx) // the sender
//	router, _ := pipeline.NewRouter([]pipeline.Route{
//		{Name: "all", Sinks: []relaykit.Sink{q}},
//	}, pipeline.Config{})
//	...
//	q.Close(drainCtx) // after the producers stopped
//
// Callers of Send never wait for the network: Send copies the batch into
// memory and, in the default mode, appends it to the spool, then returns.
// The Queue's sender, [Queue.Run], delivers one batch at a time, in order.
// Mode Memory is the exception: see below.
//
// # Wire-ready requests
//
// A sink that is a [relaykit.RequestSink] (forward.Sentinel, forward.HEC)
// has each batch encoded ahead: Send calls its EncodeRequests, on Send's
// own goroutine, before the write-ahead, and from then on the Queue holds,
// spools and retries the requests the destination will receive (encoded,
// compressed, split at its limits) instead of the events. Memory holds
// them instead of copies of the events; the spool stores them as they
// are, so the backlog takes about the bytes it will take on the wire (a
// quarter to a seventh of the events' records); the sender sends them with
// SendRequests as they are, from memory or from the disk backlog, and a
// body sent from disk is byte for byte the one memory would have sent.
// Nothing is decoded or encoded again on the way, except on slow paths:
//
//   - events the sink cannot encode at all (too large, refused before
//     sending) are dead-lettered by Send itself, on its caller's goroutine;
//   - events of a request the destination refused permanently are decoded
//     from the request (as well as its format allows: what the destination
//     receives) and dead-lettered;
//   - a request the destination took in part (a partial accept, a split
//     half) is cut to the events still to send (CutRequest), and a probe
//     of an unhealthy destination is the oldest event cut from its request
//     (once per outage).
//
// Every guarantee below holds for requests as it does for events: order
// (the requests of one batch are sent together; the sink may send them
// concurrently), retries and Retry-After, probing, the acknowledgement
// contract, full policies, disk faults and damage (a damaged record costs
// the events of its requests). Deliveries of requests are reported to
// Hooks.OnDeliveredRun (their count and receive-time range), not to
// Hooks.OnDelivered, which needs the events. A sink that is not a
// RequestSink (forward/kafka, an archive, any user type) has its events
// stored as before; a spool written by an earlier release (events) is
// sent through Send after an upgrade. Mode Memory always sends events.
//
// # Acknowledgement contract
//
// Send returning nil means exactly this (see also [relaykit.Sink]):
//
//   - [WriteAhead] (the default): the batch is on disk (in the page cache,
//     or on stable storage with Config.Fsync) and will be delivered, even
//     if the process is killed before it is sent. While the disk refuses
//     writes, Send returns nil only once the batch was delivered (or
//     spooled after all): a caller never hears "accepted" for a batch only
//     memory holds.
//   - [OnFailure]: the batch is in memory (or on disk, when memory is full
//     or the destination down). A crash loses what memory holds.
//   - [Memory]: the batch is delivered (or, for the events the destination
//     refused permanently, dead-lettered).
//
// In every mode an event the destination refuses permanently (a
// [relaykit.FailedRange] marked Permanent: invalid, too large,
// unauthorized), or that a RequestSink cannot encode, is handed to
// Config.DeadLetter with its reason, or counted as dropped under it. An input that acknowledges to its senders (Kafka
// offset commits, HTTP responses, RELP) acknowledges on a nil Send and on
// nothing else.
//
// What each mode costs when things go wrong, with the default
// configuration:
//
//	                          WriteAhead                    OnFailure
//	destination down          nothing (spooled)             nothing (spooled after RetryBudget)
//	kill -9 of the process    nothing Send accepted         what memory held (≤ MemoryBatches
//	                          (a batch in flight may be     batches), the retry in flight
//	                          delivered twice)
//	power loss                the page cache's unwritten    the same, plus memory
//	                          records; nothing with Fsync
//	disk full or failing      nothing: Sends wait for       nothing while memory has room;
//	                          delivery (back-pressure)      then Sends wait (back-pressure)
//	damaged spool record      that record's events          that record's events
//	                          (spool_corrupt)               (spool_corrupt)
//
// # Order
//
// Per Queue, batches are delivered in the order Send accepted them: the
// sender sends the oldest batch first (batches OnFailure moved to disk
// after a failure, then memory, then the spool's backlog), and while a
// backlog exists on disk every new batch queues behind it on disk; the
// switch back to memory happens only once the spools are empty. One batch
// is in flight at a time. A sink may split one batch into several
// requests sent concurrently (the forward sinks' Concurrency): order
// across those requests is the sink's business.
//
// # Retries, probing and hung destinations
//
// The Queue is the retry loop; the sink makes one attempt per Send and
// says what happened (the sinks of package forward do exactly that). Only
// the events the sink reports undelivered (a [relaykit.BatchError]) are
// sent again: those marked Permanent go to the dead letter, the others
// are retried.
//
// A batch is retried from memory for RetryBudget (2 s), each attempt
// bounded by AttemptTimeout (the budget), so a destination that hangs
// rather than answering costs the same as one that refuses. After a
// failed attempt the Queue waits a jittered backoff (100 ms doubling up
// to 1 s), or the wait the destination asked for when that is longer. A
// destination that is slow rather than hung earns longer attempts (see
// Config.AttemptTimeout). When the budget is spent the destination is
// marked unhealthy: new batches go to the spool, and the oldest event is
// sent alone as a probe after a backoff of 100 ms doubling up to
// ProbeInterval (1 s), each probe bounded by ProbeInterval. The first
// success makes it healthy again and the backlog is sent at the
// destination's pace, behind which new batches queue. So delivery resumes
// at most about 2 s after a destination that refused or hung answers
// again. A batch of which part was delivered before a crash is sent whole
// again after the restart, and one whose attempt ran out of time after the
// destination had taken it is sent again (at-least-once).
//
// # Throttling: the destination's Retry-After
//
// A sink reports the wait a destination asked for in
// [relaykit.FailedRange].RetryAfter (HTTP 429 or 503 with Retry-After or
// retry-after-ms, HEC code 9, gRPC RetryInfo); the Queue reads it with
// [relaykit.BatchError.RetryAfter] (or the RetryAfter() method of any
// error in the chain). It never sends to that destination sooner: not the
// retry, not a probe, not the first attempt of the next batch. The wait
// is capped by Config.MaxRetryAfter (5 min), so that a bogus header
// cannot park a destination for days. A wait longer than what is left of
// the retry budget means the destination is throttling: the batch goes to
// the spool at once (in OnFailure; in WriteAhead it is there already) and
// the destination is probed when the wait ends, rather than the batch
// sleeping in memory. Against a destination answering 429 with
// Retry-After: 10, that is one request every 10 s. Every such wait is
// counted in Stats.Throttled and Stats.ThrottledFor and reported to
// Hooks.OnThrottled.
//
// # Memory mode: retries without a disk
//
// [Memory] has no spool, no queue and no sender: Send delivers the batch
// itself, on its caller's goroutine (no copy of the batch, no hand-off to
// another goroutine on the healthy path, so an archive written by a
// connection's goroutine keeps its events in that core's cache), and
// returns once every event is delivered or dead-lettered. While the
// destination fails it retries with the same loop (backoff, RetryAfter,
// dead letter, hooks), blocking its caller: back-pressure instead of a
// spool. Callers that Send concurrently never see their own batches
// reordered (each Send returns before the next starts); while the
// destination fails they take turns, one attempt at a time. There is no
// retry budget: a Send retries until delivered or until its ctx ends, and
// then returns an error wrapping ctx.Err() and a [relaykit.BatchError]
// listing the events it did not deliver, by their index in the caller's
// batch, which the caller owns again (and counts; Stats.Returned counts
// them too). Run returns nil at once in this mode; Close waits for the
// Sends in progress and, when its ctx ends, cuts them short (their error
// wraps [ErrClosed]). Use it for a destination that needs no disk copy: a
// local archive, a test, an agent that would rather slow its input than
// buffer.
//
// # The disk
//
// The spool is a spool.Spool in Config.Dir (locked: one Queue per
// directory, in any process). In WriteAhead the disk copy is written and
// then acknowledged after delivery; it is read back only after a restart,
// or when memory was full and later batches went to disk only. ENOSPC, EIO
// and fsync errors never drop a batch while the destination takes it: the
// Queue holds it in memory, in order, and sends it from there, and Send
// waits for its delivery; when memory is full, Send waits for room. The
// state shows in Stats.DiskFailing and one log line per episode, and ends
// without a restart when a write succeeds again. Damage found on disk
// costs what it touched (see package spool) and is counted in
// Stats.Dropped[relaykit.ReasonSpoolCorrupt] and Stats.Spool.
//
// # Full policies
//
// When the spool reaches MaxBytes: [Block] (the default) makes Send wait
// for room, [DropOldest] discards the oldest segment's records (never
// waiting for the sender), [DropNewest] refuses the new batch with an
// error wrapping [ErrDropped]. Every drop is counted in Stats.Dropped by
// reason (the relaykit.Reason* names: spool_full, spool_oldest,
// spool_corrupt, shutdown, and the sink's reasons for permanent failures
// no dead letter took) and reported through Hooks.OnDrop(name, reason,
// events), the shape of every OnDrop hook in relaykit.
//
// # Shutdown
//
// Stop the producers, then call [Queue.Close] with a deadline: Send
// returns ErrClosed, and Run delivers what is queued, the spool's backlog
// included, while the destination is healthy; when the deadline passes (or
// the destination fails) memory is spooled and Run returns. A graceful
// stop so leaves nothing behind that the destination could take. In an
// agent the producers are the engine: the inputs stop, then
// engine.Engine.Shutdown routes what it holds into the queues, then Close
// (the root package's example SyslogToSentinel:
// https://pkg.go.dev/github.com/relaykit/relaykit#example-package-SyslogToSentinel).
//
// # Accounting
//
// [Queue.Stats] keeps a ledger that holds at every moment:
//
//	In + Recovered = Delivered + DeadLettered + Σ Dropped + Returned + Pending
//
// (Returned is zero except in mode Memory.)
//
// # Concurrency
//
// A Queue is safe for concurrent use by multiple goroutines. It starts no
// goroutine of its own: the caller runs Run (one goroutine, the sender),
// and Close stops it and waits for it. In mode Memory, Send runs on its
// caller's goroutine, and so do the sink, DeadLetter and the hooks. A
// RequestSink's EncodeRequests runs on Send's caller (several at once
// when several goroutines call Send), and so does DeadLetter for the
// events it cannot encode.
//
// When not to use it: a destination that is itself durable and local (a
// file archive written synchronously) gains nothing from a second disk
// copy; put it behind a Queue in mode Memory, or call it directly.
package delivery
