package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/spool"
)

// Queue is a [relaykit.Sink] that delivers batches to another Sink (the
// destination) in order, retrying what fails: through a bounded memory
// queue and a disk spool, so that its callers never wait for the network
// and nothing is lost when the destination is down, slow or hanging, or
// the process dies; or, in mode [Memory], on its caller's goroutine without
// a disk. See the package documentation for the acknowledgement contract,
// ordering, retries, the modes and what each failure costs.
//
// A Queue is safe for concurrent use by multiple goroutines. It starts no
// goroutine of its own: [Queue.Run] is its sender, which the caller runs
// and [Queue.Close] stops.
type Queue struct {
	sink relaykit.Sink
	// enc is sink as a RequestSink, when it is one (and the mode spools):
	// batches are then encoded ahead, and their requests spooled and sent.
	enc   relaykit.RequestSink
	cfg   Config
	log   *slog.Logger
	spool *spool.Spool // every batch in WriteAhead; the backlog in OnFailure; nil in Memory
	retry *spool.Spool // batches that failed from memory (OnFailure); read first; nil in Memory

	mu       sync.Mutex
	mem      []*entry // in order; the sender takes mem[0]
	diskMode bool     // new batches go to the spool only, behind its backlog
	memOnly  int      // WriteAhead entries the failing disk could not take
	closed   bool
	changed  chan struct{} // closed and replaced when room appears or state changes
	cur      *diskBatch    // the spooled batch being sent (sender only; read under mu)

	wake      chan struct{} // a batch arrived
	closing   chan struct{} // Close was called
	abort     chan struct{} // Close's context ended
	runDone   chan struct{} // Run returned
	running   atomic.Bool
	closeMu   sync.Mutex
	closeErr  error
	closeDone bool

	unhealthy               atomic.Bool
	degraded                atomic.Bool // the spool failed to write and has not written since
	ackFailing, readFailing atomic.Bool
	encodeFailing           atomic.Bool // EncodeRequests failed: events are stored
	lastErr                 atomic.Pointer[errBox]
	lostSeen                [2]int64 // storage LostEvents already counted, main and retry (sender only)
	// notBefore is when the destination may next be sent to (unix ns):
	// the end of the last wait it asked for.
	notBefore atomic.Int64
	// How long the destination takes: its last successful attempts, and
	// the bound earned by a timed-out one (under tookMu: Memory mode
	// attempts run on several goroutines).
	tookMu sync.Mutex
	took   [16]time.Duration
	tookAt int
	slow   time.Duration

	// Memory mode: Sends in progress, the gate callers take turns through
	// while the destination fails, and what Close's deadline cancels.
	sending  sync.WaitGroup
	gate     chan struct{}
	abortCtx context.Context
	abortNow context.CancelFunc

	c counters
}

// entry is a batch in memory: pooled copies of the events, or the requests
// a RequestSink encoded from them.
type entry struct {
	evs []relaykit.Event
	// reqs are the batch's requests when isReq (the sink encodes ahead);
	// their buffers are reused by the next EncodeRequests.
	reqs  []relaykit.Request
	isReq bool
	n0    int            // events when accepted
	rec   spool.RecordID // its spool record; zero when held only in memory
	wait  *waiter        // non-nil when Send waits for the outcome
	// discarded: DropOldest removed its spool record. It is still sent
	// from memory, but counted dropped if the Queue stops first.
	discarded bool
	// refused: a WriteAhead batch the failing disk refused (counted in
	// Queue.memOnly).
	refused bool
}

// waiter is what a Send that must wait for its batch's outcome waits on.
type waiter struct {
	done chan struct{}
	err  error
}

// diskBatch is a spooled batch being sent: events (or requests) alias the
// spool's read buffer, valid until the next Peek.
type diskBatch struct {
	sp   *spool.Spool
	id   spool.RecordID
	evs  []relaykit.Event
	reqs []relaykit.Request
	n0   int
}

type errBox struct{ err error }

var (
	entries    = sync.Pool{New: func() any { return new(entry) }}
	reqEntries = sync.Pool{New: func() any { return &entry{isReq: true} }}
)

// newEntry copies batch into a pooled entry; a warm queue copies without
// allocating.
func newEntry(batch []relaykit.Event) *entry {
	e := entries.Get().(*entry)
	if cap(e.evs) < len(batch) {
		evs := make([]relaykit.Event, len(batch))
		copy(evs, e.evs[:cap(e.evs)])
		e.evs = evs
	}
	e.evs = e.evs[:len(batch)]
	for i := range batch {
		batch[i].CopyTo(&e.evs[i])
	}
	e.n0 = len(batch)
	return e
}

func (e *entry) release() {
	e.rec, e.wait, e.discarded, e.refused = spool.RecordID{}, nil, false, false
	if e.isReq {
		if e.reqs = e.reqs[:0]; e.pooledBytes() <= maxPooledRequests {
			reqEntries.Put(e) // the requests' buffers are reused by EncodeRequests
		}
		return
	}
	if cap(e.evs) > 4096 {
		return
	}
	e.evs = e.evs[:cap(e.evs)] // keep every event's buffers for reuse
	entries.Put(e)
}

// pending returns the events e still holds.
func (e *entry) pending() int {
	if !e.isReq {
		return len(e.evs)
	}
	n := 0
	for i := range e.reqs {
		n += e.reqs[i].Events
	}
	return n
}

// New opens the spool in cfg.Dir (and its retry spool) and returns a Queue
// in front of sink; in mode Memory it opens nothing. A backlog left by an
// earlier process is counted in Stats.Recovered and sent first once Run
// starts. The sink should report partial failures as a
// *relaykit.BatchError (the forward sinks do): then exactly the
// undelivered events are retried, never sooner than the RetryAfter the
// sink reports, and those refused permanently go to Config.DeadLetter.
// New returns an error wrapping ErrInvalidConfig for a bad cfg, or the
// spool's error (spool.ErrLocked when another Queue or process uses Dir).
func New(sink relaykit.Sink, cfg Config) (*Queue, error) {
	if sink == nil {
		return nil, fmt.Errorf("%w: nil sink", ErrInvalidConfig)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Mode == Memory {
		return newMemory(sink, cfg), nil
	}
	scfg := spool.Config{Dir: cfg.Dir, MaxBytes: cfg.MaxBytes, SegmentBytes: cfg.SegmentBytes, Fsync: cfg.Fsync, FS: cfg.FS}
	sp, err := spool.Open(scfg)
	if err != nil {
		return nil, fmt.Errorf("delivery: %s: %w", cfg.Name, err)
	}
	scfg.Dir = filepath.Join(cfg.Dir, "retry")
	rs, err := spool.Open(scfg)
	if err != nil {
		_ = sp.Close()
		return nil, fmt.Errorf("delivery: %s: %w", cfg.Name, err)
	}
	q := &Queue{
		sink: sink, cfg: cfg, spool: sp, retry: rs,
		enc:     encoder(sink),
		log:     cfg.Logger.With("destination", cfg.Name),
		changed: make(chan struct{}),
		wake:    make(chan struct{}, 1),
		closing: make(chan struct{}),
		abort:   make(chan struct{}),
		runDone: make(chan struct{}),
	}
	_, e1 := sp.Len()
	_, e2 := rs.Len()
	q.c.recovered.Store(e1 + e2)
	q.c.pending.Store(e1 + e2)
	q.diskMode = e1+e2 > 0
	if e1+e2 > 0 {
		q.log.Info("spool backlog found", "events", e1+e2)
	}
	return q, nil
}

// Send accepts batch for delivery; see the package documentation for
// exactly what a nil error promises in each mode. It copies what it needs
// and does not retain batch. In mode Memory it delivers batch itself (see
// [Memory]). It returns:
//   - nil: the batch is accepted (WriteAhead: on disk, or, while the disk
//     fails, delivered; OnFailure: in memory or on disk; Memory: delivered
//     or dead-lettered);
//   - an error wrapping ErrDropped when the full policy dropped it;
//   - ctx.Err() when ctx ended while Send waited (for room under Block,
//     or for delivery while the disk fails); the batch may still be
//     delivered later. In mode Memory, an error wrapping ctx.Err() and a
//     *relaykit.BatchError of the events not delivered, which the Queue no
//     longer holds;
//   - ErrClosed after Close.
func (q *Queue) Send(ctx context.Context, batch []relaykit.Event) error {
	n := int64(len(batch))
	if n == 0 {
		return nil
	}
	if q.cfg.Mode == Memory {
		return q.sendNow(ctx, batch)
	}
	// pre is the batch encoded ahead (a RequestSink), on this goroutine,
	// before the write-ahead; nil for a sink that stores events.
	var pre *entry
	if q.enc != nil {
		q.mu.Lock()
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return ErrClosed
		}
		var ok bool
		if pre, ok = q.encode(ctx, batch); ok && pre == nil {
			return nil // every event was dead-lettered
		}
		if pre != nil {
			n = int64(pre.n0)
			defer func() {
				if pre != nil { // not handed over
					pre.release()
				}
			}()
		}
	}
	// take returns the batch's entry: its requests, or a copy of its events.
	take := func() *entry {
		if e := pre; e != nil {
			pre = nil
			return e
		}
		return newEntry(batch)
	}
	retry := time.Duration(0) // wait before trying a failing disk again
	q.mu.Lock()
	for {
		if q.closed {
			q.mu.Unlock()
			return ErrClosed
		}
		toMemory := !q.diskMode && len(q.mem) < q.cfg.MemoryBatches
		if q.cfg.Mode == OnFailure && toMemory {
			q.pushLocked(take(), n)
			q.mu.Unlock()
			return nil
		}
		if q.memOnly > 0 {
			// The disk failed under batches held only in memory: later
			// batches are held behind them, in order, until they are out.
			if len(q.mem) >= q.cfg.MemoryBatches {
				if err := q.waitLocked(ctx, 0); err != nil {
					return err
				}
				continue
			}
			e := take()
			e.refused = true
			q.memOnly++
			return q.holdLocked(ctx, e, n)
		}
		var id spool.RecordID
		var err error
		if pre != nil {
			id, err = q.spool.AppendRequests(pre.reqs)
		} else {
			id, err = q.spool.Append(batch)
		}
		switch {
		case err == nil:
			q.diskRecovered()
			if toMemory && q.cfg.Mode == WriteAhead {
				e := take()
				e.rec = id
				q.pushLocked(e, n)
			} else {
				q.diskMode = true // memory is full: later batches follow on disk
				q.acceptLocked(n)
			}
			q.mu.Unlock()
			return nil
		case errors.Is(err, spool.ErrFull):
			switch q.cfg.Full {
			case DropOldest:
				if q.discardLocked() {
					continue
				}
			case Block:
				if q.spoolBacklogLocked() > 0 {
					if err := q.waitLocked(ctx, 0); err != nil {
						return err
					}
					continue
				}
			}
			// DropNewest, or nothing to wait for: the batch alone is
			// larger than the spool. It counts as taken in, and dropped.
			q.c.in.Add(n)
			q.c.pending.Add(n)
			q.mu.Unlock()
			q.drop(relaykit.ReasonSpoolFull, n)
			return fmt.Errorf("delivery: %s: %w: %w", q.cfg.Name, ErrDropped, err)
		default:
			q.diskFailed(err)
			switch {
			case !id.IsZero():
				// Written, but the fsync failed: on disk, not known to be
				// durable. It is sent like any other; the caller is told
				// only once it was delivered.
				if toMemory {
					e := take()
					e.rec = id
					return q.holdLocked(ctx, e, n)
				}
				q.diskMode = true
				q.acceptLocked(n)
				return q.waitAckedLocked(ctx, id)
			case toMemory:
				// Nothing written: hold the batch in memory, in order,
				// until it is delivered.
				e := take()
				e.refused = true
				q.memOnly++
				return q.holdLocked(ctx, e, n)
			default:
				// A backlog is ahead of it on a disk that refuses: try
				// again when something changes or after a backoff.
				retry = min(max(2*retry, 100*time.Millisecond), time.Second)
				if err := q.waitLocked(ctx, retry); err != nil {
					return err
				}
			}
		}
	}
}

// acceptLocked counts n events as accepted and wakes the sender.
func (q *Queue) acceptLocked(n int64) {
	q.c.in.Add(n)
	q.c.pending.Add(n)
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *Queue) pushLocked(e *entry, n int64) {
	q.mem = append(q.mem, e)
	q.c.memEvents.Add(n)
	q.acceptLocked(n)
}

// holdLocked queues e and waits until it is delivered (or spooled, or
// dropped), or ctx ends. It unlocks q.mu.
func (q *Queue) holdLocked(ctx context.Context, e *entry, n int64) error {
	w := &waiter{done: make(chan struct{})}
	e.wait = w
	q.pushLocked(e, n)
	q.mu.Unlock()
	select {
	case <-w.done:
		return w.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitAckedLocked waits until the spool record id is acknowledged, or ctx
// ends. It unlocks q.mu.
func (q *Queue) waitAckedLocked(ctx context.Context, id spool.RecordID) error {
	for !q.spool.Acked(id) {
		if err := q.waitLocked(ctx, 0); err != nil {
			return err
		}
		if q.closed {
			break
		}
	}
	q.mu.Unlock()
	if !q.spool.Acked(id) {
		return ErrClosed
	}
	return nil
}

// waitLocked waits until the state changes, d passes (if positive), or ctx
// ends; it returns with q.mu held, or unlocked with ctx's error.
func (q *Queue) waitLocked(ctx context.Context, d time.Duration) error {
	ch := q.changed
	q.mu.Unlock()
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ch:
	case <-timer:
	case <-ctx.Done():
		return ctx.Err()
	}
	q.mu.Lock()
	return nil
}

// broadcastLocked wakes every Send waiting in waitLocked.
func (q *Queue) broadcastLocked() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// spoolBacklogLocked returns the events on disk.
func (q *Queue) spoolBacklogLocked() int64 {
	if q.spool == nil {
		return 0
	}
	_, a := q.spool.Len()
	_, b := q.retry.Len()
	return a + b
}

// discardLocked drops the oldest spool segment for DropOldest and counts
// what it cost: batches still held in memory, or being sent, lost only
// their disk copy. It reports whether anything was discarded.
func (q *Queue) discardLocked() bool {
	d, err := q.spool.Discard()
	if err != nil {
		q.diskFailed(err)
		return false
	}
	if d.Batches == 0 {
		return false
	}
	lost := d.Events
	in := func(id spool.RecordID) bool { return !id.IsZero() && !id.Less(d.First) && !d.Last.Less(id) }
	for _, e := range q.mem {
		if in(e.rec) {
			// Still sent from memory; dropped only if the Queue stops
			// before (see Close).
			lost -= int64(e.n0)
			e.rec = spool.RecordID{}
			e.discarded = true
		}
	}
	if c := q.cur; c != nil && c.sp == q.spool && in(c.id) {
		lost -= int64(c.n0)
	}
	q.mu.Unlock()
	q.drop(relaykit.ReasonSpoolOldest, lost)
	q.mu.Lock()
	q.broadcastLocked()
	return true
}

// drop counts n events dropped for reason. It logs the first drop of each
// reason, and then at most once a minute, with the total so far: drops come
// in floods.
func (q *Queue) drop(reason string, n int64) {
	if n <= 0 {
		return
	}
	total, logIt := q.c.addDropped(reason, n)
	q.c.pending.Add(-n)
	if logIt {
		q.log.Warn("events dropped", "reason", reason, "events", n, "total", total)
	}
	if h := q.cfg.Hooks.OnDrop; h != nil {
		h(q.cfg.Name, reason, int(n))
	}
}

// diskFailed notes a spool error: counted, logged once per episode.
func (q *Queue) diskFailed(err error) {
	q.c.diskErrors.Add(1)
	if !q.degraded.Swap(true) {
		q.log.Error("spool cannot write: holding batches in memory until delivered", "err", err)
	}
}

// diskRecovered ends a disk failure episode.
func (q *Queue) diskRecovered() {
	if q.degraded.Load() && q.degraded.CompareAndSwap(true, false) {
		q.log.Info("spool writes again")
	}
}
