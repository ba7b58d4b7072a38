package delivery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/spool"
)

// Close stops the Queue: Send returns ErrClosed from now on, and Run
// delivers what is queued, the spool's backlog included, while the
// destination is healthy and ctx lasts. When ctx ends (or the destination
// fails), what memory holds is spooled, Run returns, and Close closes the
// spools. Without a running Run, Close does that work itself, within ctx.
//
// Close returns nil when every accepted event was delivered, dead-lettered
// or is on disk for the next run; otherwise an error wrapping ErrDropped
// says how many events held only in memory (OnFailure, or a failing disk)
// could not be spooled: they are counted as relaykit.ReasonShutdown, and their
// waiting Sends get the error. Close is idempotent: later calls return the
// first call's result.
//
// In mode Memory, Close makes later Sends return ErrClosed and waits for
// the Sends in progress; when ctx ends first, it cuts them short (they
// return an error wrapping ErrClosed with the events they did not
// deliver) and waits for them to return. It returns nil.
func (q *Queue) Close(ctx context.Context) error {
	q.closeMu.Lock()
	defer q.closeMu.Unlock()
	if q.closeDone {
		return q.closeErr
	}
	q.closeDone = true
	if q.cfg.Mode == Memory {
		q.closeMemory(ctx)
		return nil
	}
	q.mu.Lock()
	q.closed = true
	q.broadcastLocked()
	q.mu.Unlock()
	close(q.closing)
	if q.running.CompareAndSwap(false, true) {
		// No Run: deliver what is queued here, within ctx.
		_ = q.loop(ctx)
		close(q.runDone)
	} else {
		select {
		case <-q.runDone:
		case <-ctx.Done():
			close(q.abort)
			<-q.runDone
		}
	}
	var errs []error
	q.mu.Lock()
	var lost, discarded int64
	for _, e := range q.mem {
		n := int64(e.pending())
		q.c.memEvents.Add(-n)
		if !e.rec.IsZero() {
			continue // on disk: pending for the next run
		}
		if e.discarded {
			discarded += n // DropOldest took their disk copy
			continue
		}
		lost += n
		if w := e.wait; w != nil {
			w.err = fmt.Errorf("delivery: %s: shut down: %w", q.cfg.Name, ErrDropped)
			close(w.done)
		}
	}
	q.mem = nil
	q.mu.Unlock()
	q.countLost()
	q.drop(relaykit.ReasonSpoolOldest, discarded)
	if lost > 0 {
		q.drop(relaykit.ReasonShutdown, lost)
		errs = append(errs, fmt.Errorf("delivery: %s: %d events held in memory could not be spooled: %w", q.cfg.Name, lost, ErrDropped))
	}
	errs = append(errs, q.spool.Close(), q.retry.Close())
	q.closeErr = errors.Join(errs...)
	return q.closeErr
}

// Stats is a snapshot of a [Queue]'s counters. The ledger holds at every
// moment: In + Recovered = Delivered + DeadLettered + the sum of Dropped +
// Returned + Pending.
type Stats struct {
	// In counts events Send took in: accepted, or dropped by the full
	// policy (not those refused with ErrClosed or a context error); in
	// mode Memory, every event given to Send.
	In int64
	// Recovered counts events found in the spools at New, left by an
	// earlier process.
	Recovered int64
	// Delivered counts events the destination took.
	Delivered int64
	// DeadLettered counts events the destination refused permanently and
	// Config.DeadLetter took.
	DeadLettered int64
	// Dropped counts events dropped, by reason: the Drop* constants, and
	// the sink's reasons for permanent failures no dead-letter handler
	// took.
	Dropped map[string]int64
	// Returned counts events a Send in mode Memory gave back to its caller
	// undelivered, because ctx ended (or Close cut it short); zero in the
	// other modes.
	Returned int64
	// Pending is the events accepted (or recovered) and not yet delivered,
	// dead-lettered or dropped: in memory, on disk, or both; in mode
	// Memory, those of the Sends in progress.
	Pending int64

	// MemoryBatches and MemoryEvents are what memory holds now.
	MemoryBatches, MemoryEvents int64
	// SpoolBatches, SpoolEvents and SpoolBytes are what the spools hold
	// now (in WriteAhead, memory's batches too); SpoolOldest is when the
	// oldest was appended (zero when none).
	SpoolBatches, SpoolEvents, SpoolBytes int64
	SpoolOldest                           time.Time

	// Healthy reports whether the destination took the last batch sent.
	Healthy bool
	// DiskFailing reports whether the last spool write failed: batches are
	// then held in memory (and their Sends wait) until delivered.
	DiskFailing bool
	// LastError is the destination's last error, or nil.
	LastError error

	// Attempts counts Sends to the sink, and Failures those that left
	// events undelivered.
	Attempts, Failures int64
	// Throttled counts failed attempts whose destination asked for a wait
	// (relaykit.FailedRange.RetryAfter), and ThrottledFor sums those
	// waits, each capped at Config.MaxRetryAfter: the time the
	// destination told the Queue to hold off.
	Throttled    int64
	ThrottledFor time.Duration
	// DiskErrors counts failed spool operations (writes, fsyncs, reads,
	// acknowledgements); DeadLetterErrors failed dead-letter calls.
	DiskErrors, DeadLetterErrors int64
	// Spool and Retry are the spools' own counters: damage found (Corrupt,
	// LostEvents, MissingSegments, TornBytes), errors by kind.
	Spool, Retry spool.Stats
}

type counters struct {
	in, recovered, delivered, deadLettered atomic.Int64
	pending, memEvents, returned           atomic.Int64
	attempts, failures                     atomic.Int64
	throttled, throttledFor                atomic.Int64
	diskErrors, deadLetterErrors           atomic.Int64
	dropMu                                 sync.Mutex
	dropped                                map[string]int64
	dropLogged                             map[string]time.Time
}

// addDropped counts a drop and says whether to log it: the first of its
// reason, then once a minute.
func (c *counters) addDropped(reason string, n int64) (total int64, log bool) {
	c.dropMu.Lock()
	defer c.dropMu.Unlock()
	if c.dropped == nil {
		c.dropped, c.dropLogged = map[string]int64{}, map[string]time.Time{}
	}
	c.dropped[reason] += n
	now := time.Now()
	if last, ok := c.dropLogged[reason]; !ok || now.Sub(last) >= time.Minute {
		c.dropLogged[reason] = now
		log = true
	}
	return c.dropped[reason], log
}

// Stats returns a snapshot of the counters.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	mb := int64(len(q.mem))
	q.mu.Unlock()
	s := Stats{
		In:               q.c.in.Load(),
		Recovered:        q.c.recovered.Load(),
		Delivered:        q.c.delivered.Load(),
		DeadLettered:     q.c.deadLettered.Load(),
		Pending:          q.c.pending.Load(),
		MemoryBatches:    mb,
		MemoryEvents:     q.c.memEvents.Load(),
		Healthy:          !q.unhealthy.Load(),
		DiskFailing:      q.degraded.Load(),
		Returned:         q.c.returned.Load(),
		Attempts:         q.c.attempts.Load(),
		Failures:         q.c.failures.Load(),
		Throttled:        q.c.throttled.Load(),
		ThrottledFor:     time.Duration(q.c.throttledFor.Load()),
		DiskErrors:       q.c.diskErrors.Load(),
		DeadLetterErrors: q.c.deadLetterErrors.Load(),
		Dropped:          map[string]int64{},
	}
	if q.spool != nil {
		s.Spool, s.Retry = q.spool.Stats(), q.retry.Stats()
	}
	if b := q.lastErr.Load(); b != nil {
		s.LastError = b.err
	}
	q.c.dropMu.Lock()
	for k, v := range q.c.dropped {
		s.Dropped[k] = v
	}
	q.c.dropMu.Unlock()
	for _, sp := range []spool.Stats{s.Spool, s.Retry} {
		s.SpoolBatches += sp.Batches
		s.SpoolEvents += sp.Events
		s.SpoolBytes += sp.Bytes
		if !sp.Oldest.IsZero() && (s.SpoolOldest.IsZero() || sp.Oldest.Before(s.SpoolOldest)) {
			s.SpoolOldest = sp.Oldest
		}
	}
	return s
}

// Name returns Config.Name, for routers and metrics.
func (q *Queue) Name() string { return q.cfg.Name }
