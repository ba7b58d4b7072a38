package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/batch"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/ringbuffer"
)

// dispatcher hands events from the inputs to the workers' rings. A
// producer picks the ring by a shard key (its connection or source address),
// so one connection's events stay in order.
type dispatcher struct {
	rings  []*ringbuffer.MPSC[relaykit.Event]
	ledger *ledger
	// done[i] is the worker of rings[i]'s completion count (worker.done),
	// read by inputs that acknowledge upstream (Kafka; see mark).
	done []*atomic.Uint64
	// acks[i] lets acknowledging inputs wait on rings[i]'s worker (ack.go).
	acks []*ackRing
	// workers[i] consumes rings[i] (see worker for who drains when). A
	// dispatcher without workers (tests) only pushes.
	workers []*worker
}

// worker returns the worker of ring i, or nil.
func (d *dispatcher) worker(i int) *worker {
	if i < len(d.workers) {
		return d.workers[i]
	}
	return nil
}

// Events travel through the rings as values whose byte slices belong to
// the event. Once a batch has been routed (sinks do not retain events), the
// worker recycles those buffers, a slab at a time (eventbatch.go). Inputs
// that push one event at a time take theirs one by one: warm holds single
// events with spare capacity (those an input took and did not use), empty
// holds the holders themselves. In steady state moving an event from an
// input to a sink allocates nothing.
var (
	warmEvents   sync.Pool // *relaykit.Event, reset; no New: newEvent falls back to a slab
	emptyHolders = sync.Pool{New: func() any { return new(relaykit.Event) }}
)

// maxRecycled is the largest message buffer kept for reuse, in bytes, so a
// rare huge event does not pin its memory.
const maxRecycled = 16 << 10

// own returns a copy of ev in recycled buffers.
func own(ev *relaykit.Event) relaykit.Event {
	h := newEvent()
	ev.CopyTo(h)
	out := *h
	*h = relaykit.Event{}
	emptyHolders.Put(h)
	return out
}

// newEvent returns an empty event with recycled buffers for an input to fill
// and hand over with PushOwned or TryPushOwned, which saves the copy Push
// makes.
func newEvent() *relaykit.Event {
	if h, ok := warmEvents.Get().(*relaykit.Event); ok {
		return h
	}
	h := emptyHolders.Get().(*relaykit.Event)
	s := warmSlabs.Get().(*eventSlab)
	s.n--
	*h = s.evs[s.n]
	s.evs[s.n] = relaykit.Event{}
	if s.n > s.lo {
		warmSlabs.Put(s)
	} else {
		s.lo, s.n = 0, 0
		emptySlabs.Put(s)
	}
	h.Reset()
	return h
}

// PushBatch stamps the events without a receive time and hands them to
// the worker of ring i (their buffers go with them), waiting for room as
// Push does. It returns how many were accepted, the first k, which count
// as received; with an error (ctx ended: the shutdown deadline; or the
// ring closed) the rest were not accepted and are still the caller's.
//
// The caller is a stream input, which may wait. When no other goroutine is
// draining the ring, the input becomes its consumer for the call: it moves
// what the ring holds (older events) into the worker's collector, then its
// own events, straight from its slab, and flushes the batches they fill,
// all on its goroutine, where the events are in cache (worker.addDirect).
// Otherwise the events go through the ring, and the input drains it itself
// once a batch's worth waits there (worker.help).
func (d *dispatcher) PushBatch(ctx context.Context, i int, evs []relaykit.Event, st *inputStats) (int, error) {
	st.handing.Add(1)
	defer st.handing.Add(-1)
	stamp(evs)
	r, w := d.rings[i], d.worker(i)
	d.ledger.queued.Add(int64(len(evs)))
	if w != nil && w.consume.TryLock() {
		k, err := w.addDirect(evs)
		w.consume.Unlock()
		if k < len(evs) {
			d.ledger.queued.Add(int64(k - len(evs)))
		}
		st.received.Add(int64(k))
		return k, err
	}
	if w != nil && r.Cap()-r.Len() < len(evs) {
		w.unblock() // full: drain it, or have the worker drain it, before waiting for room
	}
	k, err := r.PushBatch(ctx, evs)
	if k < len(evs) {
		d.ledger.queued.Add(int64(k - len(evs)))
	}
	st.received.Add(int64(k))
	if w != nil && k > 0 {
		w.help()
	}
	return k, err
}

// stamp sets the receive time of the events that have none (the syslog
// parser sets it as it parses), one clock read for all of them.
func stamp(evs []relaykit.Event) {
	var now int64
	for j := range evs {
		if evs[j].ReceiveTime == 0 {
			if now == 0 {
				now = clock.Nano()
			}
			evs[j].ReceiveTime = now
		}
	}
}

// TryPushBatch is PushBatch without waiting, for UDP: the events the ring
// has no room for are counted as received and dropped{queue_full} (their
// buffers stay with the caller). It returns how many the ring accepted.
func (d *dispatcher) TryPushBatch(i int, evs []relaykit.Event, st *inputStats) int {
	stamp(evs)
	d.ledger.queued.Add(int64(len(evs)))
	k, _ := d.rings[i].TryPushBatch(evs)
	if w := d.worker(i); w != nil && k > 0 {
		w.notify()
	}
	st.received.Add(int64(len(evs)))
	if k < len(evs) {
		d.ledger.queued.Add(int64(k - len(evs)))
		d.ledger.drop(dropQueueFull, int64(len(evs)-k))
	}
	return k
}

// Push stamps ev with the receive time (the relay's coarse clock, not a
// time.Now() per event) and copies it (the caller reuses ev) into the ring
// for shard, waiting for space: stream inputs get backpressure (TCP flow
// control) instead of loss. The event counts as received only once the ring
// accepted it.
func (d *dispatcher) Push(ctx context.Context, shard uint64, ev *relaykit.Event, st *inputStats) error {
	i := int(shard % uint64(len(d.rings)))
	ev.ReceiveTime = clock.Nano()
	d.ledger.queued.Add(1)
	if err := d.rings[i].Push(ctx, own(ev)); err != nil {
		d.ledger.queued.Add(-1)
		return err
	}
	d.notify(i)
	st.received.Add(1)
	return nil
}

// PushOwned is Push for an event from newEvent: its buffers move into the
// ring without a copy, and h must not be used afterwards. A receive time
// already set is kept (the syslog parser's, taken as the frame was read; a
// Kafka record's from the edge relay).
func (d *dispatcher) PushOwned(ctx context.Context, shard uint64, h *relaykit.Event, st *inputStats) error {
	i := int(shard % uint64(len(d.rings)))
	if h.ReceiveTime == 0 {
		h.ReceiveTime = clock.Nano()
	}
	v := *h
	*h = relaykit.Event{}
	emptyHolders.Put(h)
	d.ledger.queued.Add(1)
	if err := d.rings[i].Push(ctx, v); err != nil {
		d.ledger.queued.Add(-1)
		return err
	}
	d.notify(i)
	st.received.Add(1)
	return nil
}

// TryPushOwned is TryPush for an event from newEvent (see PushOwned).
func (d *dispatcher) TryPushOwned(shard uint64, h *relaykit.Event, st *inputStats) {
	i := int(shard % uint64(len(d.rings)))
	h.ReceiveTime = clock.Nano()
	st.received.Add(1)
	d.ledger.queued.Add(1)
	if !d.rings[i].TryPush(*h) {
		d.ledger.queued.Add(-1)
		d.ledger.drop(dropQueueFull, 1)
		h.Reset()
		warmEvents.Put(h)
		return
	}
	*h = relaykit.Event{}
	emptyHolders.Put(h)
	d.notify(i)
}

// TryPush is Push without waiting, for UDP: a full ring drops the datagram
// and counts it as received and dropped(queue_full).
func (d *dispatcher) TryPush(shard uint64, ev *relaykit.Event, st *inputStats) {
	i := int(shard % uint64(len(d.rings)))
	ev.ReceiveTime = clock.Nano()
	st.received.Add(1)
	d.ledger.queued.Add(1)
	if !d.rings[i].TryPush(own(ev)) {
		d.ledger.queued.Add(-1)
		d.ledger.drop(dropQueueFull, 1)
		return
	}
	d.notify(i)
}

// notify wakes the worker of ring i, if parked, to drain what an input
// that does not drain pushed.
func (d *dispatcher) notify(i int) {
	if w := d.worker(i); w != nil {
		w.notify()
	}
}

// worker drains one ring into a batch collector whose flushes go through
// the route table.
//
// Who drains the ring, and so on which goroutine (and processor, whose
// cache holds the events) a batch is routed: the collector flushes inline
// (batch.Config.InlineFlush), on the goroutine that moved the events in.
//
//   - A stream input (syslog TCP/TLS, JSON lines), which may wait, hands
//     the events of a read straight to the collector when no one else is
//     draining (addDirect, after what the ring holds), or pushes them
//     into the ring and drains it itself once a batch's worth waits there
//     (help): the events it parsed are routed and archived where they are
//     in cache, and no goroutine is woken for them.
//   - The worker drains what the other inputs push (UDP, which must never
//     wait; the single-event inputs, acknowledging ones included): each
//     such push wakes it (notify).
//   - The worker bounds how long events wait in the ring: parked, it is
//     armed to drain and flush batch_max_wait after the last drain (when
//     stream inputs stop short of a batch), and idle, woken by the next
//     push of any input, once nothing came for batch_max_wait: an idle
//     relay has no timer running.
//
// consume makes one goroutine at a time the ring's consumer. Flushes run
// one at a time in ring order whoever runs them, which keeps done exact.
type worker struct {
	id     int
	ring   *ringbuffer.MPSC[relaykit.Event]
	coll   *batch.Collector[relaykit.Event]
	ledger *ledger
	routes *pipeline.Swapper
	ended  context.Context // already canceled; see lateRoute
	// done counts the events of this worker whose flush returned, that
	// is, every destination delivered, spooled or dropped them. Events
	// reach the collector in ring order (stream inputs' direct events
	// after what the ring held) and flushes run one at a time in order, so
	// done ≥ n means the first n events the collector took are finished
	// (dispatcher.mark).
	// Late-routed events are not counted: an acknowledging input then
	// redelivers them rather than risk acknowledging too early.
	done atomic.Uint64
	// stuck is set when a batch could not be handed to every destination
	// before the shutdown deadline: done stops there.
	stuck  bool
	failed sendFailures    // of the flush in progress (flushes run one at a time)
	hard   context.Context // the shutdown deadline, set before the inputs start
	ack    ackRing         // inputs waiting for done to reach their mark (ack.go)

	consume sync.Mutex // held by the goroutine draining the ring
	// direct counts the events stream inputs added to the collector
	// without the ring (addDirect), announced before they are added:
	// dispatcher.mark adds it to the ring's producer position.
	direct   atomic.Uint64
	drainBuf []relaykit.Event // under consume
	helpAt   int              // ring length from which a stream input drains
	maxWait  int64            // batch_max_wait, ns
	// last is the clock.Nano() of the last drain that took events: what
	// the ring holds arrived after it.
	last   atomic.Int64
	state  atomic.Uint32 // workerBusy, workerArmed or workerIdle
	urgent atomic.Uint64 // pushes the worker must drain (notify), and Close
	wake   chan struct{} // a token for a parked worker (cap 1)
}

// States of a worker (worker.state).
const (
	workerBusy  uint32 = iota // draining, or about to look at its ring again
	workerArmed               // parked until batch_max_wait after the last drain
	workerIdle                // parked with nothing received for batch_max_wait
)

// help is called by a stream input after it pushed: with a batch's worth
// in the ring it moves what the ring holds (at most twice that, so it
// gets back to its connection) into the collector, which flushes full
// batches on this goroutine, unless another goroutine is draining; an idle
// worker is woken (it starts the batch_max_wait clock).
func (w *worker) help() {
	if n := w.ring.Len(); n >= w.helpAt && w.consume.TryLock() {
		w.drainLocked(2 * n)
		w.consume.Unlock()
		return
	}
	if w.state.Load() == workerIdle && w.state.CompareAndSwap(workerIdle, workerBusy) {
		w.wake <- struct{}{} // never blocks: one token per parked period
	}
}

// addDirect adds the events of a stream input's read to the collector,
// after what the ring holds (which is older), and returns how many it
// added (fewer only with the collector's error, at the shutdown deadline).
// The caller holds w.consume.
func (w *worker) addDirect(evs []relaykit.Event) (int, error) {
	// Announced before the ring is drained, so that a mark taken after a
	// push into the ring counts every event added before that push's
	// (see dispatcher.mark).
	w.direct.Add(uint64(len(evs)))
	w.drainLocked(math.MaxInt)
	k, err := w.coll.AddBatch(w.hard, evs)
	if k < len(evs) {
		w.direct.Add(^uint64(len(evs) - k - 1)) // subtract
	}
	w.last.Store(clock.Nano())
	w.kickAcks()
	return k, err
}

// unblock is called by a stream input that found the ring too full for
// its push: it drains the ring if no one else is, else it wakes the
// worker, which drains it once the goroutine draining now is done.
func (w *worker) unblock() {
	if w.consume.TryLock() {
		w.drainLocked(w.ring.Cap())
		w.consume.Unlock()
		return
	}
	w.notify()
}

// notify is called after a push the worker must drain soon: it wakes the
// worker if it is parked.
func (w *worker) notify() {
	w.urgent.Add(1)
	for {
		s := w.state.Load()
		if s == workerBusy {
			return
		}
		if w.state.CompareAndSwap(s, workerBusy) {
			w.wake <- struct{}{} // never blocks: one token per parked period
			return
		}
	}
}

// closeRing closes the ring (pushes fail from now on) and wakes the worker
// to drain it and stop.
func (w *worker) closeRing() {
	_ = w.ring.Close()
	w.notify()
}

// drainLocked moves up to limit events from the ring into the collector,
// which flushes the batches they fill on this goroutine, and returns how
// many it moved. The caller holds w.consume. With an acknowledging input
// waiting and the ring emptied, it cuts the open batch too (ack.go), so
// that input's sender waits for a flush, not for batch_max_wait.
func (w *worker) drainLocked(limit int) int {
	took := 0
	for took < limit {
		n := len(w.ring.Drain(w.drainBuf[:0], min(len(w.drainBuf), limit-took)))
		if n == 0 {
			break
		}
		took += n
		if k, err := w.coll.AddBatch(w.hard, w.drainBuf[:n]); err != nil {
			w.lateRoute(w.drainBuf[k:n])
		}
		clear(w.drainBuf[:n])
	}
	if took > 0 {
		w.last.Store(clock.Nano())
	}
	w.kickAcks()
	return took
}

// kickAcks cuts the open batch when an acknowledging input waits and the
// ring is empty (ack.go). The caller holds w.consume.
func (w *worker) kickAcks() {
	if w.ack.waiting.Load() > 0 && w.ring.Len() == 0 {
		_ = w.coll.Flush(w.hard)
	}
}

// lateRoute routes events the shutdown deadline caught before they could be
// batched or flushed, with an ended context: a delivery queue still takes
// a batch it has room for (it is on disk for the next run), and archives
// still write. What a destination refuses now is counted as
// dropped{shutdown}.
func (w *worker) lateRoute(b []relaykit.Event) {
	w.ledger.queued.Add(-int64(len(b)))
	w.ledger.routed.Add(int64(len(b)))
	var late sendFailures // lateRoute may run on the collector's goroutine too
	if err := w.routes.Route(context.WithValue(w.ended, failuresKey{}, &late), b); err != nil {
		for _, f := range late.items {
			if !errors.Is(f.err, delivery.ErrDropped) {
				f.d.drop(dropShutdown, int64(len(f.evs)))
			}
		}
	}
}

func newWorker(id int, cfg WorkersConfig, l *ledger, routes *pipeline.Swapper, drain time.Duration) (*worker, error) {
	ring, err := ringbuffer.NewMPSC[relaykit.Event](cfg.RingSize)
	if err != nil {
		return nil, fmt.Errorf("workers.ring_size: %w", err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	w := &worker{
		id: id, ring: ring, ledger: l, routes: routes, ended: ended, hard: context.Background(),
		drainBuf: make([]relaykit.Event, 256), helpAt: min(cfg.BatchMaxEvents, cfg.RingSize/2),
		maxWait: int64(cfg.BatchMaxWait), wake: make(chan struct{}, 1),
	}
	w.coll, err = batch.NewCollector(batch.Config[relaykit.Event]{
		MaxEvents:    cfg.BatchMaxEvents,
		MaxBytes:     int(cfg.BatchMaxBytes),
		Size:         func(e relaykit.Event) int { return e.Size() },
		MaxWait:      cfg.BatchMaxWait,
		MaxInFlight:  1,
		InlineFlush:  true,
		DrainTimeout: drain,
		Now:          clock.Nano,
		Hooks: batch.Hooks[relaykit.Event]{
			// A flush never fails (the route table accounts for every event
			// itself). Batches the drain deadline caught before a flusher
			// took them are routed with an ended context: spooled, not lost.
			OnDrop: func(b []relaykit.Event, _ string) { w.lateRoute(b) },
		},
	}, w.flush)
	if err != nil {
		return nil, fmt.Errorf("workers: %w", err)
	}
	return w, nil
}

func (w *worker) flush(ctx context.Context, b []relaykit.Event) error {
	w.ledger.queued.Add(-int64(len(b)))
	w.ledger.routed.Add(int64(len(b)))
	if err := w.routes.Route(context.WithValue(ctx, failuresKey{}, &w.failed), b); err != nil {
		if !w.redeliver() {
			// The shutdown deadline came first: from here on nothing of
			// this ring counts as finished, so an acknowledging input
			// redelivers rather than acknowledge past the loss.
			w.stuck = true
		}
	}
	if !w.stuck {
		w.done.Add(uint64(len(b)))
	} else {
		w.ack.stuck.Store(true)
	}
	w.ack.progress()
	recycle(b)
	return nil
}

// failuresKey is the context key of a flush's sendFailures (routes.go).
type failuresKey struct{}

// sendFailures collects, during one Route call, what destinations did not
// accept: copies of exactly those events.
type sendFailures struct {
	items []failedSend
}

type failedSend struct {
	d   *destination
	evs []relaykit.Event
	err error
}

// add records the events of a failed Send (those a *relaykit.BatchError
// lists, or all), copied: the router reuses its buffers.
func (fs *sendFailures) add(d *destination, evs []relaykit.Event, err error) {
	f := failedSend{d: d, err: err}
	var be *relaykit.BatchError
	if errors.As(err, &be) {
		for _, r := range be.Failed {
			for i := r.From; i < min(r.To, len(evs)); i++ {
				f.evs = append(f.evs, evs[i].Clone())
			}
		}
	} else {
		for i := range evs {
			f.evs = append(f.evs, evs[i].Clone())
		}
	}
	fs.items = append(fs.items, f)
}

// redeliver sends again what destinations did not accept during the last
// Route, with a backoff (100 ms doubling to 1 s), until they accept it:
// an archive whose disk fails holds the worker (and so its inputs) until
// it writes again, rather than lose a batch. Batches a queue dropped by
// its full policy are counted there and not sent again. It gives up at the
// shutdown deadline, counting what is left as dropped{shutdown}, and then
// reports false.
func (w *worker) redeliver() bool {
	defer func() { w.failed.items = w.failed.items[:0] }()
	ok := true
	for _, f := range w.failed.items {
		wait := 100 * time.Millisecond
		err := f.err
		for len(f.evs) > 0 && !errors.Is(err, delivery.ErrDropped) {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-w.hard.Done():
			}
			t.Stop()
			if w.hard.Err() != nil {
				f.d.drop(dropShutdown, int64(len(f.evs)))
				ok = false
				break
			}
			err = f.d.deliver(w.hard, f.evs)
			if err == nil {
				break
			}
			var be *relaykit.BatchError
			if errors.As(err, &be) && len(be.Failed) > 0 {
				f.evs = f.evs[be.Failed[0].From:] // the rest of it is written
			}
			wait = min(2*wait, time.Second)
		}
	}
	return ok
}

// Run drains the ring into the collector, when the inputs do not (see
// worker), until the ring is closed and empty, then stops the collector,
// which flushes what is open within its drain timeout. w.hard, set before
// the inputs start, ends at the shutdown deadline: an AddBatch still
// waiting then (destinations stuck) gives up and the events take the late
// route (see lateRoute).
func (w *worker) Run() error {
	collCtx, stopColl := context.WithCancel(context.Background())
	defer stopColl()
	collDone := make(chan error, 1)
	go func() { collDone <- w.coll.Run(collCtx) }()

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	expired := false
	for {
		urgent := w.urgent.Load()
		w.consume.Lock()
		if expired {
			now := clock.Nano()
			if last := w.last.Load(); now < last+w.maxWait-int64(clock.resolution) {
				// Someone drained meanwhile: what the ring holds is
				// younger than batch_max_wait. Sleep again.
				w.consume.Unlock()
				timer.Reset(time.Duration(last + w.maxWait - now))
				expired = w.sleep(workerArmed, urgent, timer.C)
				continue
			}
		}
		took := w.drainLocked(math.MaxInt)
		if expired && took > 0 {
			// These waited in the ring for up to batch_max_wait.
			_ = w.coll.Flush(w.hard)
		}
		closed := w.ring.Closed() && w.ring.Len() == 0
		w.consume.Unlock()
		if closed {
			break
		}
		now := clock.Nano()
		last := w.last.Load()
		if took == 0 && now >= last+w.maxWait {
			expired = w.sleep(workerIdle, urgent, nil)
			continue
		}
		timer.Reset(time.Duration(max(last+w.maxWait-now, 0)))
		expired = w.sleep(workerArmed, urgent, timer.C)
	}
	stopColl()
	// A drain timeout is not a loss: late batches were spooled (OnDrop) and
	// flushes cut short spooled what they had not delivered.
	if cerr := <-collDone; cerr != nil && !errors.Is(cerr, batch.ErrClosed) && !errors.Is(cerr, batch.ErrDrainTimeout) {
		return fmt.Errorf("worker %d: %w", w.id, cerr)
	}
	return nil
}

// sleep parks the worker in state s until a push wakes it or, when armed,
// tc fires (it then reports true). It does not park if a push the worker
// must drain came since urgent was read, or, idle, if the ring holds
// anything: the pushers saw it busy and did not wake it.
func (w *worker) sleep(s uint32, urgent uint64, tc <-chan time.Time) bool {
	w.state.Store(s)
	if w.urgent.Load() != urgent || s == workerIdle && w.ring.Len() > 0 {
		if w.state.CompareAndSwap(s, workerBusy) {
			return false
		}
		// A pusher woke us meanwhile: take its token.
	}
	select {
	case <-w.wake:
		return false
	case <-tc:
		if !w.state.CompareAndSwap(s, workerBusy) {
			<-w.wake // a pusher woke us at the same time: take its token
		}
		return true
	}
}
