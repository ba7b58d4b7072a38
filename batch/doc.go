// Package batch gathers items added by many goroutines into batches, by
// count, by size in bytes and by time, and hands each batch to a flush
// function with bounded concurrency and backpressure.
//
// It is the stage between a queue and a slow consumer (a router, a network
// sink): sending 1000 events in one call instead of one at a time is what
// makes a relay fast, and a collector must do it without batches that
// outgrow their limits, timers that drift, unbounded memory when the
// consumer falls behind, or errors that vanish. The package is generic and
// imports nothing of relaykit.
//
// # Flush rules
//
// A batch is cut (handed to the flush function) when the first of these
// happens:
//
//   - it holds [Config].MaxEvents items (reason [ReasonSize]);
//   - its size, the sum of [Config].Size over its items, reaches
//     [Config].MaxBytes, or adding the next item would take it past
//     MaxBytes: the batch is cut first and the item starts the next one
//     ([ReasonBytes]). A batch never exceeds MaxBytes, except that an item
//     larger than MaxBytes on its own is flushed alone, in a batch of one;
//   - [Config].MaxWait has passed since its first item was added
//     ([ReasonTime]). The clock starts at the first item of each batch; it is
//     not a free-running ticker, so a batch is neither cut early because a
//     tick happened to come soon after its first item, nor late because an
//     earlier flush was slow (once cut, it may still wait for a free
//     flusher);
//   - [Collector.Flush] is called ([ReasonManual]);
//   - the collector closes: [Collector.Close], or the end of the context
//     given to [Collector.Run] ([ReasonClose]).
//
// An empty batch is never flushed. The batch given to the flush function is
// valid only until it returns: the collector reuses the slice, which is how
// it adds items without allocating.
//
// # Concurrency and backpressure
//
// A [Collector] is safe for concurrent use. [Collector.Add] appends under a
// short lock and never waits while a buffer is free; [Collector.AddBatch]
// appends a slice of items under one lock, the cheap way to hand over what a
// queue drained. [Collector.Run] owns
// every goroutine: the MaxWait timer and [Config].MaxInFlight flushing
// goroutines that take cut batches in FIFO order. At most MaxInFlight+1
// batches exist (the open one plus one per flusher), so memory is bounded:
// when all flushers are busy and the next batch is full as well, Add blocks
// until a flush completes or its context ends. With MaxInFlight = 1 (the
// default), batches are flushed one at a time in the order their items were
// added.
//
// With [Config].InlineFlush there are no flushing goroutines: the goroutine
// that cuts a batch flushes it (an adder before its Add returns, the caller
// of Flush, Run for the MaxWait timer), one flush at a time, in cut order.
// A batch is then flushed where its items are in cache and no goroutine is
// woken for it; an adder that cuts a batch takes as long as its flush, so
// this suits adders that may wait, such as the one goroutine moving a
// queue's items into the collector.
//
// # Feeding from a queue
//
// A relay's producers usually push into a bounded queue (a
// ringbuffer.MPSC) and one goroutine moves what it holds into the
// collector. [Collector.Pump] is that goroutine together with Run: it takes
// any [Queue] (PopBatch and Close; *ringbuffer.MPSC[T] has both) and, when
// its context ends, shuts down in the order that loses nothing: close the
// queue, drain it into the collector, then close the collector, all within
// Config.DrainTimeout. It moves items in slices through one buffer and
// allocates nothing per item.
//
// # Errors and shutdown
//
// Nothing is lost silently. A flush error is passed to Hooks.OnFlushError
// with the batch (so the caller can spill it) and counted in [Stats]; the
// collector does not retry. On shutdown — Close(ctx), or the end of Run's
// context followed by up to Config.DrainTimeout — the open batch is cut and
// the collector waits for every cut batch. If the deadline passes first, the
// running flushes see their context canceled, the batches still waiting are
// handed to Hooks.OnDrop, and a [*DrainError] matching [ErrDrainTimeout]
// reports how many items were not flushed.
//
// # Time
//
// The collector reads no clock per item. The first item of each batch is
// stamped with relaykit's coarse clock ([Config].Clock, package
// github.com/relaykit/relaykit/clock: an atomic load while it is read
// often), and Run measures MaxWait with a [time.Timer] armed when it
// learns of the new batch. If Run learns of it late (it was busy, or
// starved of CPU), the delay shown by the stamp beyond the clock's
// resolution (1 ms by default) is taken off the timer, so the deadline
// stays tied to the first item. The batch is therefore cut no sooner than
// MaxWait after the clock's time of its first item, which lags real time
// by at most its resolution on a machine that is not overloaded.
//
// Package batch imports one relaykit package, clock, which imports
// nothing of relaykit's. The clock runs a ticker goroutine only while it
// is read often and stops it by itself 100 ticks after the last read; a
// goleak check at the end of a test finds it gone.
//
// # When not to use it
//
// A single goroutine that already holds its items in a slice needs no
// collector: slice the slice. If items must be handed over one at a time
// with no batching, use a channel.
package batch
