package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/batch"
	"github.com/relaykit/relaykit/internal/cfgerr"
	"github.com/relaykit/relaykit/ringbuffer"
)

// worker drains one ring into a batch collector whose flushes go to the
// Sink.
//
// Who drains the ring, and so on which goroutine (and processor, whose
// cache holds the events) a batch is routed: the collector flushes inline
// (batch.Config.InlineFlush), on the goroutine that moved the events in.
//
//   - A producer that may wait (a stream connection, [Producer.Push])
//     hands the events of a read straight to the collector when no one
//     else is draining (addDirect, after what the ring holds), or pushes
//     them into the ring and drains it itself once a batch's worth waits
//     there (help): the events it parsed are routed where they are in
//     cache, and no goroutine is woken for them.
//   - The worker drains what the other pushes bring (UDP, which must never
//     wait; single events, acknowledged ones included): each such push
//     wakes it (notify).
//   - The worker bounds how long events wait in the ring: parked, it is
//     armed to drain and flush BatchMaxWait after the last drain (when
//     producers stop short of a batch), and idle, woken by the next push,
//     once nothing came for BatchMaxWait: an idle engine has no timer
//     running.
//
// consume makes one goroutine at a time the ring's consumer. Flushes run
// one at a time in ring order whoever runs them, which keeps done exact.
type worker struct {
	e    *Engine
	id   int
	ring *ringbuffer.MPSC[relaykit.Event]
	coll *batch.Collector[relaykit.Event]
	// ended is an already canceled context: see lateRoute.
	ended context.Context
	// done counts the events of this worker whose flush returned. Events
	// reach the collector in ring order (direct events after what the
	// ring held) and flushes run one at a time in order, so done ≥ n
	// means the first n events the collector took are settled; fails
	// says which of them failed. Late-routed events are not counted.
	done    atomic.Uint64
	flushed uint64 // events flushed so far, in flush order; flushes run one at a time
	fails   failLog
	ack     ackState

	consume sync.Mutex // held by the goroutine draining the ring
	// direct counts the events producers added to the collector without
	// the ring (addDirect), announced before they are added: a mark adds
	// it to the ring's producer position.
	direct   atomic.Uint64
	drainBuf []relaykit.Event // under consume
	helpAt   int              // ring length from which a producer drains
	maxWait  int64            // BatchMaxWait, ns
	// last is the clock time of the last drain that took events: what the
	// ring holds arrived after it.
	last   atomic.Int64
	state  atomic.Uint32 // workerBusy, workerArmed or workerIdle
	urgent atomic.Uint64 // pushes the worker must drain (notify), and Close
	wake   chan struct{} // a token for a parked worker (cap 1)
}

// States of a worker (worker.state).
const (
	workerBusy  uint32 = iota // draining, or about to look at its ring again
	workerArmed               // parked until BatchMaxWait after the last drain
	workerIdle                // parked with nothing received for BatchMaxWait
)

func newWorker(e *Engine, id int) (*worker, error) {
	cfg := e.cfg
	ring, err := ringbuffer.NewMPSC[relaykit.Event](cfg.RingSize)
	if err != nil {
		return nil, cfgerr.New(ErrInvalidConfig, "RingSize", "%v", err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	w := &worker{
		e: e, id: id, ring: ring, ended: ended,
		drainBuf: make([]relaykit.Event, 256), helpAt: min(cfg.BatchMaxEvents, cfg.RingSize/2),
		maxWait: int64(cfg.BatchMaxWait), wake: make(chan struct{}, 1),
	}
	w.coll, err = batch.NewCollector(batch.Config[relaykit.Event]{
		MaxEvents:   cfg.BatchMaxEvents,
		MaxBytes:    cfg.BatchMaxBytes,
		Size:        func(e relaykit.Event) int { return e.Size() },
		MaxWait:     cfg.BatchMaxWait,
		MaxInFlight: 1,
		InlineFlush: true,
		// The collector runs until the hard deadline (see run); once that
		// has passed, nothing waits: flushes in progress see their context
		// end, and the batches behind them take the late route (OnDrop).
		DrainTimeout: time.Nanosecond,
		Clock:        e.clock,
		Hooks: batch.Hooks[relaykit.Event]{
			OnDrop: func(b []relaykit.Event, _ string) { w.lateRoute(b) },
		},
	}, w.flush)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return w, nil
}

// help is called by a producer after it pushed: with a batch's worth in
// the ring it moves what the ring holds (at most twice that, so it gets
// back to its connection) into the collector, which flushes full batches
// on this goroutine, unless another goroutine is draining; an idle worker
// is woken (it starts the BatchMaxWait clock).
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

// addDirect adds the events of a producer's read to the collector, after
// what the ring holds (which is older), and returns how many it added
// (fewer only with an error: the hard deadline, or the engine closed).
// The caller holds w.consume.
//
// If the ring cannot be emptied first (a producer has claimed slots and
// is still copying its events in, and everything behind that waits for
// it, the caller's own earlier events perhaps among them), the events go
// through the ring instead, behind what it holds: a producer's events
// never overtake its own.
func (w *worker) addDirect(evs []relaykit.Event) (int, error) {
	// Announced before the ring is drained, so that a mark taken after a
	// push into the ring counts every event added before that push's.
	n := uint64(len(evs))
	w.direct.Add(n)
	w.drainLocked(math.MaxInt)
	if w.ring.Len() > 0 {
		w.direct.Add(-n)
		return w.pushThroughLocked(evs)
	}
	k, err := w.coll.AddBatch(w.e.hard, evs)
	if k < len(evs) {
		w.direct.Add(-uint64(len(evs) - k))
	}
	w.last.Store(w.e.clock.Nano())
	w.kickAcks()
	return k, err
}

// pushThroughLocked puts evs into the ring without waiting (the caller is
// its consumer: it drains to make room), then moves what it can into the
// collector. The caller holds w.consume.
func (w *worker) pushThroughLocked(evs []relaykit.Event) (int, error) {
	done := 0
	for done < len(evs) {
		k, err := w.ring.TryPushBatch(evs[done:])
		done += k
		if errors.Is(err, ringbuffer.ErrClosed) {
			return done, ErrClosed
		}
		if done == len(evs) {
			break
		}
		if w.drainLocked(w.ring.Cap()) == 0 {
			if err := w.e.hard.Err(); err != nil {
				return done, err
			}
			runtime.Gosched() // a producer is still copying its events in
		}
	}
	w.drainLocked(math.MaxInt)
	return done, nil
}

// unblock is called by a producer that found the ring too full for its
// push: it drains the ring if no one else is, else it wakes the worker,
// which drains it once the goroutine draining now is done.
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
// many it moved. The caller holds w.consume. With an acknowledging
// producer waiting and the ring emptied, it cuts the open batch too, so
// that producer's sender waits for a flush, not for BatchMaxWait.
func (w *worker) drainLocked(limit int) int {
	took := 0
	for took < limit {
		n := len(w.ring.Drain(w.drainBuf[:0], min(len(w.drainBuf), limit-took)))
		if n == 0 {
			break
		}
		took += n
		if k, err := w.coll.AddBatch(w.e.hard, w.drainBuf[:n]); err != nil {
			w.lateRoute(w.drainBuf[k:n])
		}
		clear(w.drainBuf[:n])
	}
	if took > 0 {
		w.last.Store(w.e.clock.Nano())
	}
	w.kickAcks()
	return took
}

// kickAcks cuts the open batch when an acknowledging producer waits and
// the ring is empty. The caller holds w.consume.
func (w *worker) kickAcks() {
	if w.ack.waiting.Load() > 0 && w.ring.Len() == 0 {
		_ = w.coll.Flush(w.e.hard)
	}
}

// lateRoute routes events the hard deadline caught before they could be
// batched or flushed, with an ended context: a delivery queue still takes
// a batch it has room for (it is on disk for the next run), and an archive
// may still write. They are not counted as finished.
func (w *worker) lateRoute(b []relaykit.Event) {
	if len(b) == 0 {
		return
	}
	n := int64(len(b))
	w.e.queued.Add(-n)
	w.e.routed.Add(n)
	w.e.late.Add(n)
	if err := w.e.cfg.Sink.Send(w.ended, b); err != nil {
		w.e.sendErrors.Add(1)
		w.e.failed.Add(n)
		if h := w.e.cfg.Hooks.OnSendError; h != nil {
			h(err, len(b))
		}
	}
}

// flush hands a batch the collector cut to the Sink.
func (w *worker) flush(ctx context.Context, b []relaykit.Event) error {
	n := len(b)
	w.e.queued.Add(-int64(n))
	w.e.routed.Add(int64(n))
	from := w.flushed
	w.flushed += uint64(n)
	if err := w.e.cfg.Sink.Send(ctx, b); err != nil {
		w.e.sendErrors.Add(1)
		w.e.failed.Add(int64(n))
		w.fails.add(from, w.flushed, err) // before done moves past them
		if h := w.e.cfg.Hooks.OnSendError; h != nil {
			h(err, n)
		}
	}
	w.done.Add(uint64(n))
	w.ack.progress()
	recycle(b)
	return nil
}

// run drains the ring into the collector, when the producers do not (see
// worker), until the ring is closed and empty, then closes the collector,
// which flushes what is open. An AddBatch still waiting at the hard
// deadline (the Sink stuck) gives up and the events take the late route.
func (w *worker) run() error {
	defer w.ack.stop()
	// The collector's context is the hard deadline: the flushes it runs
	// (its MaxWait cuts) and those it cancels then see it end.
	collDone := make(chan error, 1)
	go func() { collDone <- w.coll.Run(w.e.hard) }()

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	expired := false
	res := int64(w.e.clock.Resolution())
	for {
		urgent := w.urgent.Load()
		w.consume.Lock()
		if expired {
			now := w.e.clock.Nano()
			if last := w.last.Load(); now < last+w.maxWait-res {
				// Someone drained meanwhile: what the ring holds is
				// younger than BatchMaxWait. Sleep again.
				w.consume.Unlock()
				timer.Reset(time.Duration(last + w.maxWait - now))
				expired = w.sleep(workerArmed, urgent, timer.C)
				continue
			}
		}
		took := w.drainLocked(math.MaxInt)
		if expired && took > 0 {
			// These waited in the ring for up to BatchMaxWait.
			_ = w.coll.Flush(w.e.hard)
		}
		closed := w.ring.Closed() && w.ring.Len() == 0
		w.consume.Unlock()
		if closed {
			break
		}
		now := w.e.clock.Nano()
		last := w.last.Load()
		if took == 0 && now >= last+w.maxWait {
			expired = w.sleep(workerIdle, urgent, nil)
			continue
		}
		timer.Reset(time.Duration(max(last+w.maxWait-now, 0)))
		expired = w.sleep(workerArmed, urgent, timer.C)
	}
	// Close flushes what is open; at the hard deadline what is left takes
	// the late route (OnDrop).
	closeCtx, cancel := context.WithCancel(context.Background())
	stopAt := context.AfterFunc(w.e.hard, cancel)
	cerr := w.coll.Close(closeCtx)
	stopAt()
	cancel()
	if err := <-collDone; err != nil && !errors.Is(err, batch.ErrClosed) {
		cerr = errors.Join(cerr, err)
	}
	// A drain cut short is not a loss: late batches were routed late.
	if cerr != nil && !errors.Is(cerr, batch.ErrClosed) && !errors.Is(cerr, batch.ErrDrainTimeout) {
		return fmt.Errorf("engine: worker %d: %w", w.id, cerr)
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

// position is the number of events handed to this worker so far (ring and
// direct): a mark taken now covers every event pushed before it.
func (w *worker) position() uint64 {
	return w.ring.Stats().Pushed + w.direct.Load()
}

// WorkerStats are one worker's counters.
type WorkerStats struct {
	// Ring is the ring's snapshot (pushes, parks, length).
	Ring ringbuffer.Stats
	// Batches is the collector's snapshot (batches by reason, items).
	Batches batch.Stats
	// Direct counts events producers added to the collector without the
	// ring.
	Direct uint64
	// Finished counts the events whose batch the Sink returned from.
	Finished uint64
}

func (w *worker) stats() WorkerStats {
	return WorkerStats{Ring: w.ring.Stats(), Batches: w.coll.Stats(), Direct: w.direct.Load(), Finished: w.done.Load()}
}
