// Package ringbuffer provides [MPSC], a bounded multi-producer
// single-consumer FIFO ring, generic over the element type, that never loses
// a value it has accepted.
//
// It is the hand-off between the goroutines that receive events (one per
// listener or connection) and the worker that processes them in batches:
// producers push single values or batches, the consumer drains batches into
// a reused slice.
//
//	q, err := ringbuffer.NewMPSC[Event](4096)
//	...
//	// producers, any number of goroutines:
//	if err := q.Push(ctx, ev); err != nil { ... } // ErrClosed or ctx.Err()
//	// consumer, one goroutine:
//	buf := make([]Event, 256)
//	for {
//		n, err := q.PopBatch(ctx, buf)
//		if err != nil { break } // ErrClosed: everything accepted was delivered
//		process(buf[:n])
//	}
//
// # Accepted values
//
// A value is accepted when the push that carried it returns success:
// [MPSC.TryPush] true, [MPSC.Offer] or [MPSC.Push] nil, or the count
// returned by [MPSC.TryPushBatch] and [MPSC.PushBatch] (the first n values).
// Every accepted value is delivered to the consumer exactly once, and the
// values of one producer are delivered in the order that producer pushed
// them. This holds after the ring was full and pushes were refused, and
// after [MPSC.Close]: the consumer keeps receiving accepted values and sees
// [ErrClosed] only after the last one. A refused push changes nothing in the
// ring; in particular it uses no sequence number, so it cannot leave a hole
// that the consumer would wait on forever.
//
// # Concurrency model
//
// Producers claim positions with one compare-and-swap on a shared producer
// cursor, after checking for space against a cached copy of the consumer
// cursor (the real cursor is read only when the ring looks full). A batch
// claims all its positions with that same single operation. The producer
// then copies its values into the claimed slots and publishes them with one
// atomic store of a sequence stamp into the first slot of the claim.
//
// The consumer reads stamps to find published values, copies them out,
// clears the slots (only if T holds pointers), and publishes its cursor once
// per [MPSC.Drain] or [MPSC.PopBatch] call, not once per value; single
// pops publish it every few values and whenever the ring is found empty.
// The producer cursor, the consumer cursor, the cached copy, the wake-up
// flags and the slot array header sit on separate 128-byte blocks, so
// producers and the consumer do not invalidate each other's cache lines
// except to hand values over.
//
// Waiting never burns a core. A consumer waiting for single values
// ([MPSC.Pop]) looks once more, sets a "sleeping" flag, looks again and
// parks on a channel; a producer checks that flag after publishing and
// sends a wake-up only when it is set, so a busy consumer costs producers
// one shared read per push and no channel operation. A batch consumer
// ([MPSC.Wait], [MPSC.PopBatch]) first polls for a few microseconds (busy
// polls, then polls after runtime.Gosched), then parks the same way.
// Producers blocked on a full ring park likewise: [MPSC.Push] at once,
// [MPSC.PushBatch] after polling briefly; the consumer checks a waiter count
// after publishing its cursor and wakes them once a quarter of the ring is
// free, or before it waits on an empty ring. Single values cross between
// processors one at a time, so a consumer that polls for them keeps a
// processor busy for little; batches cross once per batch, so polling keeps
// both sides running in parallel ([MPSC.Wait] has the details).
//
// All shared state uses sync/atomic; the package is clean under the race
// detector. No operation allocates once the ring is created (Drain
// allocates only if the caller's slice must grow).
//
// # When to use a channel instead
//
// When in doubt, use channels. A buffered Go channel is simpler, works with
// select, supports many consumers, and is fast enough for most programs. Use
// MPSC when one consumer handles values from several producers at high rates
// and can process them in batches, when you need to tell full from closed
// without blocking, or when you want batch pushes and drains that cross
// between cores once per batch rather than once per value. The batch
// methods are where most of the gain is: on a small machine, single-value
// pushes and pops run at about channel speed (there a value that crosses
// between cores on its own costs more than the rest of a push and a pop,
// so both end up handing values over on one core), while 64-value batches
// are three to four times faster (see BENCHMARKS.md). MPSC does not support
// multiple consumers or select, and its consumer must not be shared between
// goroutines without external locking.
//
// # Capacity
//
// The capacity is fixed at creation and must be a power of two; other
// values are rejected with [ErrInvalidCapacity] (not rounded up). Values are
// stored by value in the slots, so a ring of a large struct type uses
// capacity × size of memory; store pointers if values are large and their
// ownership is clear.
package ringbuffer
