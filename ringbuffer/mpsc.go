package ringbuffer

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"sync/atomic"
)

// Errors returned by [MPSC] methods. Callers compare with errors.Is.
var (
	// ErrClosed is returned by pushes after [MPSC.Close], and by the consumer
	// methods once the ring is closed and everything accepted before Close has
	// been delivered.
	ErrClosed = errors.New("ringbuffer: closed")

	// ErrFull is returned by the non-blocking pushes when the ring has no free
	// slot. The value was not accepted and no sequence number was used.
	ErrFull = errors.New("ringbuffer: full")

	// ErrInvalidCapacity is returned by [NewMPSC] when the capacity is not a
	// power of two between 1 and [MaxCapacity].
	ErrInvalidCapacity = errors.New("ringbuffer: capacity must be a power of two between 1 and 1<<30")
)

// MaxCapacity is the largest capacity [NewMPSC] accepts, in elements.
const MaxCapacity = 1 << 30

// closedBit is set in the producer cursor by Close. Folding the closed state
// into the cursor makes Close and the claim of a slot mutually linearizable:
// a claim either succeeds before Close (and is delivered) or fails after it.
const closedBit = uint64(1) << 63

// Waiting. A single-value waiter (Pop on an empty ring, Push on a full one)
// looks once more, registers and parks. A batch waiter (PopBatch and Wait on
// an empty ring, PushBatch on a full one) first polls briefly: spinPolls busy
// polls, then yieldPolls polls each after runtime.Gosched, a few
// microseconds in all, then parks. See [MPSC.Wait] for why the two differ.
const (
	spinPolls  = 4
	yieldPolls = 16
)

// backoff is the pre-park phase of a batch waiter: poll i busy-polls, then
// yields the processor to other runnable goroutines, and returns false when
// the waiter should park.
func backoff(i int) bool {
	if i < spinPolls {
		return true
	}
	if i < spinPolls+yieldPolls {
		runtime.Gosched()
		return true
	}
	return false
}

// cacheLinePad separates fields written by different goroutines. 128 bytes
// covers the adjacent-line prefetcher of x86 and the 128-byte lines of some
// arm64 cores.
const cacheLinePad = 128

// slot is one ring element. seq is the publication stamp: a producer that
// claimed position p writes val (and n) and then stores seq = p+1. Stamps of
// one slot grow by the capacity each lap, so a stale stamp never matches.
// n is the length of the run of positions published by that store (1 for a
// single push, the claim size for a batch); only the first slot of a run is
// stamped.
type slot[T any] struct {
	seq atomic.Uint64
	n   uint32
	val T
}

// MPSC is a bounded multi-producer single-consumer FIFO ring of values of
// type T.
//
// The producer methods ([MPSC.TryPush], [MPSC.Offer], [MPSC.Push],
// [MPSC.TryPushBatch], [MPSC.PushBatch]) and [MPSC.Close], [MPSC.Len],
// [MPSC.Cap], [MPSC.Stats] are safe for concurrent use by multiple
// goroutines. The consumer methods ([MPSC.TryPop], [MPSC.Pop], [MPSC.Drain],
// [MPSC.PopBatch], [MPSC.Wait]) must be called by one goroutine at a time:
// there is a single consumer.
//
// Values are copied in and out; after a value is popped its slot is cleared,
// so the ring retains no reference to delivered values.
//
// An MPSC must be created with [NewMPSC]; the zero value is not usable.
type MPSC[T any] struct {
	_ [cacheLinePad]byte

	// Read-only after NewMPSC.
	slots    []slot[T]
	mask     uint64
	capacity uint64
	wakeAt   uint64 // free slots before blocked producers are woken
	clear    bool   // T holds pointers: clear popped slots for the GC
	// releaseEvery is how many TryPop calls may pass between publications
	// of the consumer cursor.
	releaseEvery uint64
	wake         chan struct{} // consumer wake-up token (buffer 1)
	space        chan struct{} // producer wake-up tokens
	done         chan struct{} // closed by Close
	_            [cacheLinePad]byte

	// tail is the producer cursor: the next position to claim, with
	// closedBit set once closed. Claimed with CAS, one per push or batch.
	tail atomic.Uint64
	_    [cacheLinePad - 8]byte

	// headCache is the producers' shared copy of head. It is read on every
	// push and refreshed from head only when the ring looks full.
	headCache atomic.Uint64
	_         [cacheLinePad - 8]byte

	// head is the consumer cursor: every position below it has been
	// delivered and its slot may be reused. Published once per pop or drain.
	head atomic.Uint64
	_    [cacheLinePad - 8]byte

	// Consumer-private state, touched only by the consumer goroutine.
	next      uint64 // next position to deliver
	published uint64 // last value stored in head
	ready     uint64 // positions below ready are known to be published
	_         [cacheLinePad - 24]byte

	// sleeping is 1 while the consumer is parked (or about to park) on wake.
	// Producers read it after each publish and pay for a wake-up only when
	// it is set.
	sleeping      atomic.Uint32
	consumerParks atomic.Uint64
	_             [cacheLinePad - 16]byte

	// waiters counts producers parked (or about to park) on space. The
	// consumer reads it after each publish.
	waiters       atomic.Int64
	producerParks atomic.Uint64
	_             [cacheLinePad - 16]byte

	// refused counts values refused by the non-blocking pushes on a full
	// ring. Written only on that path.
	refused atomic.Uint64
	_       [cacheLinePad - 8]byte
}

// Stats is a snapshot of an [MPSC]'s counters, taken by [MPSC.Stats].
// The fields are read one after another, not as one atomic snapshot.
type Stats struct {
	// Pushed is the number of values accepted since NewMPSC.
	Pushed uint64
	// Popped is the number of values delivered to the consumer, as
	// published to the producers: it may lag single pops (see
	// [MPSC.TryPop]).
	Popped uint64
	// RefusedFull is the number of values refused by TryPush, Offer and
	// TryPushBatch because the ring was full. Blocking pushes wait instead
	// of being refused and are not counted.
	RefusedFull uint64
	// ConsumerParks is the number of times the consumer parked on an
	// empty ring (see [MPSC.Wait] and [MPSC.Pop]).
	ConsumerParks uint64
	// ProducerParks is the number of times a producer parked on a full ring
	// (see [MPSC.Push] and [MPSC.PushBatch]).
	ProducerParks uint64
	// ProducersWaiting is the number of producers parked on a full ring
	// now (or about to park): registered for room and not yet woken. A
	// parked producer is woken once a quarter of the ring is free, so it
	// may wait while Len is a little below Cap.
	ProducersWaiting int
	// Len is the number of accepted values not yet delivered.
	Len int
	// Cap is the capacity, in values.
	Cap int
}

// NewMPSC returns an empty ring that holds up to capacity values.
//
// The capacity must be a power of two between 1 and [MaxCapacity]; other
// values are rejected with [ErrInvalidCapacity] rather than rounded up, so
// the memory a ring uses is exactly what the caller asked for. NewMPSC
// allocates all slots up front; no later operation allocates.
func NewMPSC[T any](capacity int) (*MPSC[T], error) {
	if capacity < 1 || capacity > MaxCapacity || capacity&(capacity-1) != 0 {
		return nil, ErrInvalidCapacity
	}
	c := uint64(capacity)
	q := &MPSC[T]{
		slots:        make([]slot[T], capacity),
		mask:         c - 1,
		capacity:     c,
		wakeAt:       max(1, c/4),
		releaseEvery: max(1, min(64, c/8)),
		clear:        hasPointers(reflect.TypeFor[T]()),
		wake:         make(chan struct{}, 1),
		space:        make(chan struct{}, 1<<16),
		done:         make(chan struct{}),
	}
	return q, nil
}

// Cap returns the capacity of the ring, in values.
func (q *MPSC[T]) Cap() int { return int(q.capacity) }

// Len returns the number of accepted values not yet delivered to the
// consumer. It includes values whose producers are still copying them in.
// The result is a snapshot and may be stale by the time it is used.
func (q *MPSC[T]) Len() int {
	h := q.head.Load()
	t := q.tail.Load() &^ closedBit
	return int(t - h)
}

// Stats returns a snapshot of the ring's counters. It is safe to call from
// any goroutine and does not slow the producers or the consumer down.
func (q *MPSC[T]) Stats() Stats {
	h := q.head.Load()
	t := q.tail.Load() &^ closedBit
	return Stats{
		Pushed:           t,
		Popped:           h,
		RefusedFull:      q.refused.Load(),
		ConsumerParks:    q.consumerParks.Load(),
		ProducerParks:    q.producerParks.Load(),
		ProducersWaiting: int(max(q.waiters.Load(), 0)),
		Len:              int(t - h),
		Cap:              int(q.capacity),
	}
}

// Closed reports whether [MPSC.Close] has been called. Values accepted
// before Close may still be waiting for the consumer.
func (q *MPSC[T]) Closed() bool { return q.tail.Load()&closedBit != 0 }

// Close stops the ring from accepting values: later pushes, and pushes
// blocked waiting for space, return [ErrClosed]. Every value accepted before
// Close is still delivered to the consumer, whose methods return ErrClosed
// only after the last one. Close wakes a parked consumer and all blocked
// producers.
//
// Close is idempotent: calls after the first do nothing and return nil. It
// is safe to call from any goroutine, producer or consumer.
func (q *MPSC[T]) Close() error {
	if q.tail.Or(closedBit)&closedBit != 0 {
		return nil
	}
	close(q.done)
	q.wakeConsumer()
	return nil
}

// ---- producers ----

// claim reserves up to n consecutive positions with one CAS on the tail. It
// returns the first position and how many were reserved; got is 0 when the
// ring is full (err nil) or closed (err ErrClosed). A refused claim changes
// nothing: no position is consumed.
func (q *MPSC[T]) claim(n uint64) (pos, got uint64, err error) {
	for {
		t := q.tail.Load()
		if t&closedBit != 0 {
			return 0, 0, ErrClosed
		}
		used := t - q.headCache.Load()
		if used >= q.capacity || q.capacity-used < n {
			// Looks full: refresh the cached consumer cursor.
			h := q.head.Load()
			if int64(t-h) < 0 {
				continue // t is stale: the consumer passed it
			}
			q.headCache.Store(h)
			used = t - h
			if used >= q.capacity {
				if q.tail.Load() != t {
					continue // moved meanwhile; look again
				}
				return 0, 0, nil
			}
		}
		got = min(n, q.capacity-used)
		if q.tail.CompareAndSwap(t, t+got) {
			return t, got, nil
		}
	}
}

// publish makes the run [pos, pos+n) visible to the consumer with a single
// store, after the values have been written, and wakes the consumer if it
// is parked.
func (q *MPSC[T]) publish(s *slot[T], pos, n uint64) {
	s.n = uint32(n)
	s.seq.Store(pos + 1)
	if q.sleeping.Load() != 0 {
		q.wakeConsumer()
	}
}

func (q *MPSC[T]) wakeConsumer() {
	if q.sleeping.CompareAndSwap(1, 0) {
		q.wake <- struct{}{} // never blocks: one token per parked period
	}
}

// TryPush appends v if the ring has a free slot and reports whether it did.
// It never blocks and never allocates. It returns false when the ring is
// full or closed; use [MPSC.Offer] to tell the two apart. A refused value
// uses no slot and no sequence number.
func (q *MPSC[T]) TryPush(v T) bool {
	return q.Offer(v) == nil
}

// Offer is [MPSC.TryPush] reporting why a value was refused: it returns
// nil when v was accepted, [ErrFull] when the ring had no free slot, and
// [ErrClosed] after Close. It never blocks and never allocates.
func (q *MPSC[T]) Offer(v T) error {
	if t, ok := q.claimOne(); ok {
		q.put(t, v)
		return nil
	}
	return q.offerSlow(v)
}

// claimOne is the common case of claim(1): one CAS when the cached consumer
// cursor shows a free slot. It fails, changing nothing, when the ring looks
// full, is closed (the closed bit makes t-headCache larger than any
// capacity) or another producer moved the cursor first; the caller then
// takes the slow path through claim.
func (q *MPSC[T]) claimOne() (uint64, bool) {
	t := q.tail.Load()
	return t, t-q.headCache.Load() < q.capacity && q.tail.CompareAndSwap(t, t+1)
}

func (q *MPSC[T]) offerSlow(v T) error {
	pos, got, err := q.claim(1)
	if got == 0 {
		if err == nil {
			q.refused.Add(1)
			return ErrFull
		}
		return err
	}
	q.put(pos, v)
	return nil
}

// put writes v into the claimed position pos and publishes it as a run of
// one.
func (q *MPSC[T]) put(pos uint64, v T) {
	s := &q.slots[pos&q.mask]
	s.val = v
	s.n = 1
	s.seq.Store(pos + 1)
	if q.sleeping.Load() != 0 {
		q.wakeConsumer()
	}
}

// Push appends v, waiting while the ring is full. It returns nil once v is
// accepted, [ErrClosed] if the ring is or becomes closed before v is
// accepted, and ctx.Err() if ctx ends first; in both error cases v was not
// accepted. If a slot is free, Push succeeds even when ctx is already done.
//
// A Push that finds the ring full looks once more and parks, without
// spinning or yielding (see [MPSC.Wait]); the consumer wakes parked
// producers once a quarter of the ring is free (or it is about to wait on
// an empty ring), so waiting costs no CPU and one wake-up serves many
// values.
func (q *MPSC[T]) Push(ctx context.Context, v T) error {
	if t, ok := q.claimOne(); ok {
		q.put(t, v)
		return nil
	}
	return q.pushSlow(ctx, v)
}

func (q *MPSC[T]) pushSlow(ctx context.Context, v T) error {
	for {
		pos, got, err := q.claim(1)
		if err != nil {
			return err
		}
		if got == 1 {
			q.put(pos, v)
			return nil
		}
		if err := q.waitSpace(ctx, false); err != nil {
			return err
		}
	}
}

// TryPushBatch appends as many leading values of vs as there are free
// slots, claiming them with one atomic operation, and returns how many it
// appended. The appended values are contiguous in the ring, so they reach
// the consumer in order with no other producer's values between them. It
// returns [ErrFull] if fewer than len(vs) values were appended because the
// ring was full, and [ErrClosed] (with 0) after Close. It never blocks and
// never allocates.
func (q *MPSC[T]) TryPushBatch(vs []T) (int, error) {
	if len(vs) == 0 {
		if q.Closed() {
			return 0, ErrClosed
		}
		return 0, nil
	}
	pos, got, err := q.claim(uint64(len(vs)))
	if err != nil {
		return 0, err
	}
	if got > 0 {
		q.fill(pos, vs[:got])
	}
	if int(got) < len(vs) {
		q.refused.Add(uint64(len(vs)) - got)
		return int(got), ErrFull
	}
	return int(got), nil
}

// PushBatch appends all of vs in order, waiting for space while the ring is
// full. Each wait-free stretch is claimed with one atomic operation: when
// the ring has room for the whole batch, that is one for all of vs. Values
// of one call stay in order relative to each other, but another producer's
// values may be interleaved between the stretches of a batch larger than
// the free space.
//
// It returns the number of values accepted, which is len(vs) with a nil
// error, or fewer with [ErrClosed] or ctx.Err(). The accepted values are the
// first n of vs and will be delivered. On a full ring it polls briefly, then
// parks like [MPSC.Push].
func (q *MPSC[T]) PushBatch(ctx context.Context, vs []T) (int, error) {
	done := 0
	for done < len(vs) {
		pos, got, err := q.claim(uint64(len(vs) - done))
		if err != nil {
			return done, err
		}
		if got > 0 {
			q.fill(pos, vs[done:done+int(got)])
			done += int(got)
			continue
		}
		if err := q.waitSpace(ctx, true); err != nil {
			return done, err
		}
	}
	if len(vs) == 0 && q.Closed() {
		return 0, ErrClosed
	}
	return done, nil
}

// fill writes vs into the claimed run starting at pos and publishes it.
func (q *MPSC[T]) fill(pos uint64, vs []T) {
	for i := 1; i < len(vs); i++ {
		q.slots[(pos+uint64(i))&q.mask].val = vs[i]
	}
	s := &q.slots[pos&q.mask]
	s.val = vs[0]
	q.publish(s, pos, uint64(len(vs)))
}

// hasSpace reports whether a claim could succeed now, or the ring closed.
func (q *MPSC[T]) hasSpace() bool {
	h := q.head.Load()
	t := q.tail.Load()
	return t&closedBit != 0 || t-h < q.capacity
}

// waitSpace blocks until the ring may have a free slot (nil), closes
// (ErrClosed) or ctx ends (ctx.Err()). Callers retry their claim after nil.
// A batch waiter (batch true) polls briefly before it parks; a single-value
// waiter parks at once (see [MPSC.Wait]).
func (q *MPSC[T]) waitSpace(ctx context.Context, batch bool) error {
	for i := 0; batch && backoff(i); i++ {
		if q.hasSpace() {
			return nil
		}
	}
	if q.hasSpace() {
		return nil
	}
	// Register, then look again: the consumer publishes head and then reads
	// waiters, so either it sees us or we see its progress.
	q.waiters.Add(1)
	if q.hasSpace() {
		q.unwait()
		return nil
	}
	q.producerParks.Add(1)
	select {
	case <-q.space:
		return nil // the consumer deregistered us
	case <-q.done:
		q.unwait()
		return ErrClosed
	case <-ctx.Done():
		q.unwait()
		return ctx.Err()
	}
}

// unwait removes one registration made by waitSpace. If the consumer has
// already taken it (and so sent, or is sending, a token for it), the token
// is consumed so none is left stale.
func (q *MPSC[T]) unwait() {
	for {
		w := q.waiters.Load()
		if w == 0 {
			<-q.space
			return
		}
		if q.waiters.CompareAndSwap(w, w-1) {
			return
		}
	}
}

// ---- consumer ----

// release publishes the consumer cursor h and wakes blocked producers when
// enough space is free.
func (q *MPSC[T]) release(h uint64) {
	q.published = h
	q.head.Store(h)
	if q.waiters.Load() != 0 {
		t := q.tail.Load() &^ closedBit
		if q.capacity-(t-h) >= q.wakeAt {
			q.wakeProducers()
		}
	}
}

func (q *MPSC[T]) wakeProducers() {
	n := q.waiters.Swap(0)
	for ; n > 0; n-- {
		q.space <- struct{}{}
	}
}

// readyAt reports whether position h is published, extending q.ready over
// the run that starts there. Consumer only.
func (q *MPSC[T]) readyAt(h uint64) bool {
	if h < q.ready {
		return true
	}
	s := &q.slots[h&q.mask]
	if s.seq.Load() != h+1 {
		return false
	}
	q.ready = h + uint64(s.n)
	return true
}

// TryPop removes and returns the oldest value if one is ready. It never
// blocks and never allocates. Consumer only.
//
// To save a shared write per value, TryPop (and so Pop) publishes the
// consumer cursor to the producers every min(64, Cap/8) values, and
// whenever it finds the ring empty, rather than after every value; until
// then producers, Len and Stats count the popped slots as still in use.
// Drain, PopBatch and Wait always publish.
func (q *MPSC[T]) TryPop() (T, bool) {
	h := q.next
	s := &q.slots[h&q.mask]
	if h >= q.ready {
		if s.seq.Load() != h+1 {
			q.idle(h)
			var zero T
			return zero, false
		}
		q.ready = h + uint64(s.n)
	}
	v := s.val
	if q.clear {
		var zero T
		s.val = zero
	}
	q.next = h + 1
	if h+1-q.published >= q.releaseEvery {
		q.release(h + 1)
	}
	return v, true
}

// idle publishes the consumer cursor h when a pop finds nothing ready.
func (q *MPSC[T]) idle(h uint64) {
	if h != q.published {
		q.release(h)
	}
}

// Pop removes and returns the oldest value, waiting for one if the ring is
// empty: it parks at once, without the polling phase of [MPSC.Wait] (which
// explains why). It returns [ErrClosed] once the ring is closed
// and every accepted value has been delivered, and ctx.Err() if ctx ends
// while waiting. Consumer only.
func (q *MPSC[T]) Pop(ctx context.Context) (T, error) {
	for {
		if v, ok := q.TryPop(); ok {
			return v, nil
		}
		if err := q.wait(ctx, false); err != nil {
			var zero T
			return zero, err
		}
	}
}

// Drain appends to dst the ready values, oldest first, up to limit values
// (limit <= 0 means no limit), and returns the extended slice. It never
// blocks, and it allocates only if dst lacks capacity: pass dst[:0] of a
// reused slice. The consumer cursor is published once for the whole drain.
// Consumer only.
func (q *MPSC[T]) Drain(dst []T, limit int) []T {
	h := q.next
	end := h + uint64(limit)
	if limit <= 0 {
		end = ^uint64(0)
	}
	var zero T
	for h < end && q.readyAt(h) {
		// Copy the whole known-ready run without re-reading stamps.
		stop := min(q.ready, end)
		for ; h < stop; h++ {
			s := &q.slots[h&q.mask]
			dst = append(dst, s.val)
			if q.clear {
				s.val = zero
			}
		}
	}
	if h != q.next {
		q.next = h
		q.release(h)
	}
	return dst
}

// PopBatch waits until at least one value is ready (see [MPSC.Wait]), then
// moves up to len(dst) ready values into dst, oldest first, and returns how
// many it moved. The consumer cursor is published once per call. It returns
// [ErrClosed] once the ring is closed and every accepted value has been
// delivered, and ctx.Err() if ctx ends while waiting. With len(dst) == 0 it
// returns 0 and nil without waiting (or ErrClosed as above). Consumer only.
func (q *MPSC[T]) PopBatch(ctx context.Context, dst []T) (int, error) {
	if len(dst) == 0 {
		if q.closedAndDrained() {
			return 0, ErrClosed
		}
		return 0, nil
	}
	for {
		if n := len(q.Drain(dst[:0], len(dst))); n > 0 {
			return n, nil
		}
		if err := q.wait(ctx, true); err != nil {
			return 0, err
		}
	}
}

// closedAndDrained reports whether the ring is closed and every accepted
// value has been delivered. Consumer only.
func (q *MPSC[T]) closedAndDrained() bool {
	t := q.tail.Load()
	return t&closedBit != 0 && t&^closedBit == q.next
}

// poll reports whether the consumer can proceed: nil if a value is ready,
// ErrClosed if closed and drained, errEmpty otherwise.
func (q *MPSC[T]) poll() error {
	if q.readyAt(q.next) {
		return nil
	}
	if q.closedAndDrained() {
		return ErrClosed
	}
	return errEmpty
}

var errEmpty = errors.New("ringbuffer: empty")

// Wait blocks until a value is ready to pop (nil), the ring is closed and
// drained ([ErrClosed]), or ctx ends (ctx.Err()). It polls briefly (a few
// busy polls, then a few polls after runtime.Gosched, some microseconds in
// all), then parks the goroutine on a channel: an idle consumer uses no
// CPU. A producer pays for a wake-up (one channel send) only on the
// transition out of the parked state, never per value. Consumer only.
//
// Wait and [MPSC.PopBatch] wait like this because a batch consumer gains
// from running beside its producers on another processor: a value crosses
// between processors once per batch there. [MPSC.Pop] waits for single
// values and parks at once instead, without polling: a goroutine that
// yields goes to the scheduler's global run queue, and its processor takes
// it back from there before it would take a runnable goroutine queued on
// another processor, so a single-value consumer that keeps finding one
// value per yield keeps its processor to itself, each value crossing
// between processors on its own, while a producer queued behind another
// one waits for the scheduler's 10 ms time slice. Parked, the consumer
// leaves its processor to that producer, and the producer that wakes it
// queues it on its own processor, where the values are in cache. A Push
// that finds the ring full parks at once for the same reason; PushBatch
// polls briefly first. BENCHMARKS.md (ringbuffer) has the traces and the
// figures.
func (q *MPSC[T]) Wait(ctx context.Context) error {
	return q.wait(ctx, true)
}

// wait is Wait; batch false parks without the polling phase.
func (q *MPSC[T]) wait(ctx context.Context, batch bool) error {
	if q.next != q.published {
		q.release(q.next)
	}
	for {
		for i := 0; batch && backoff(i); i++ {
			if err := q.poll(); err != errEmpty {
				return err
			}
		}
		if err := q.poll(); err != errEmpty {
			return err
		}
		// Blocked producers must not wait for a consumer that is about to
		// sleep.
		if q.waiters.Load() != 0 {
			q.wakeProducers()
		}
		q.sleeping.Store(1)
		if err := q.poll(); err != errEmpty {
			q.unsleep()
			return err
		}
		q.consumerParks.Add(1)
		select {
		case <-q.wake:
			// The waker cleared sleeping; look again.
		case <-ctx.Done():
			q.unsleep()
			return ctx.Err()
		}
	}
}

// unsleep clears the sleeping flag; if a waker already cleared it, its token
// is consumed so none is left stale.
func (q *MPSC[T]) unsleep() {
	if !q.sleeping.CompareAndSwap(1, 0) {
		<-q.wake
	}
}

// hasPointers reports whether values of type t may hold pointers, in which
// case popped slots are cleared so the ring does not keep garbage alive.
// Computed once per ring; any doubt answers true.
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	default:
		return true
	}
}
