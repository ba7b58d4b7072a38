package delivery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/spool"
)

// Run is the Queue's sender: it delivers batches to the sink, one at a
// time and in order, until Close has been called and nothing is left that
// the destination can take now, or until ctx ends. The order is: batches
// that failed from memory (OnFailure's retry spool), then memory, then the
// spool's backlog.
//
// A batch is retried from memory for up to RetryBudget (each attempt
// bounded by AttemptTimeout), after a jittered backoff or the wait the
// destination asked for, whichever is longer; then (or at once, when the
// destination asks for a wait longer than what is left of the budget) the
// destination is marked unhealthy and later batches go to the spool until
// it recovers. An unhealthy destination is probed with the oldest event
// after a backoff (100 ms doubling up to ProbeInterval, or the wait it
// asked for), each probe bounded by ProbeInterval; the first success makes
// it healthy again. Nothing is sent before the wait a destination asked
// for (capped at MaxRetryAfter) has passed.
//
// In mode Memory there is nothing to send: Run returns nil at once, and
// Send delivers on its caller's goroutine.
//
// After Close it goes on sending, the spool's backlog included, while the
// destination is healthy, until Close's context ends; then what memory
// holds is spooled and Run returns nil. When ctx ends first, Run stops at
// once (cancelling the attempt in flight), spools what memory holds and
// returns ctx.Err(). Run may be called once, and not after Close (Close
// then does Run's work itself).
func (q *Queue) Run(ctx context.Context) error {
	if !q.running.CompareAndSwap(false, true) {
		return fmt.Errorf("delivery: %s: Run called twice, or after Close: %w", q.cfg.Name, ErrClosed)
	}
	defer close(q.runDone)
	if q.cfg.Mode == Memory {
		return nil
	}
	return q.loop(ctx)
}

// loop is the sender of Run (or of Close, when no Run was started).
func (q *Queue) loop(ctx context.Context) error {
	sendCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // owned by Run: ends with sendCtx
		select {
		case <-q.abort:
			cancel()
		case <-sendCtx.Done():
		}
	}()
	wait := time.Duration(0) // probe backoff
	for {
		if sendCtx.Err() != nil {
			q.spoolMemory()
			if isClosed(q.abort) {
				return nil
			}
			return ctx.Err()
		}
		closing := isClosed(q.closing)
		if closing && q.unhealthy.Load() {
			// Shutting down: an unhealthy destination is not probed again.
			q.spoolMemory()
			return nil
		}
		progressed, failed := q.step(sendCtx)
		switch {
		case failed:
			q.spoolMemory() // OnFailure: what failed goes to disk, in order
			if closing && q.unhealthy.Load() {
				continue // shutting down: the loop's top spools and returns, with no wait
			}
			wait = min(max(2*wait, 100*time.Millisecond), q.cfg.ProbeInterval)
			stopping := q.closing
			if closing {
				stopping = nil // already closing: wait out the backoff
			}
			// Never probe sooner than the destination asked.
			t := time.NewTimer(max(wait, q.untilAllowed()))
			select {
			case <-t.C:
			case <-stopping:
			case <-sendCtx.Done():
			}
			t.Stop()
			continue
		case progressed:
			wait = 0
			continue
		}
		if q.idle() && closing {
			return nil
		}
		select {
		case <-q.wake:
		case <-q.closing:
		case <-sendCtx.Done():
		}
	}
}

// step sends the oldest batch: it reports progressed when something was
// delivered (or resolved), failed when the destination (or the disk) did
// not take it.
func (q *Queue) step(ctx context.Context) (progressed, failed bool) {
	if q.cur != nil && q.cur.sp == q.retry {
		return q.sendDisk(ctx, q.retry)
	}
	if b, _ := q.retry.Len(); b > 0 && q.cur == nil {
		return q.sendDisk(ctx, q.retry)
	}
	q.mu.Lock()
	if len(q.mem) > 0 && q.cur == nil {
		e := q.mem[0]
		q.mu.Unlock()
		return q.sendEntry(ctx, e)
	}
	disk := q.diskMode
	q.mu.Unlock()
	if q.cur != nil || disk {
		return q.sendDisk(ctx, q.spool)
	}
	return false, false
}

// idle reports whether nothing is left to send, and switches new batches
// back to memory once the spools are empty and the destination healthy.
func (q *Queue) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.mem) > 0 || q.cur != nil || q.spoolBacklogLocked() > 0 {
		return false
	}
	if q.diskMode && !q.unhealthy.Load() {
		q.diskMode = false
		q.broadcastLocked()
	}
	return true
}

// sendEntry sends the oldest memory batch.
func (q *Queue) sendEntry(ctx context.Context, e *entry) (progressed, failed bool) {
	var done bool
	var sent int
	if e.isReq {
		done, sent = q.attemptsReq(ctx, &e.reqs)
	} else {
		done, sent = q.attempts(ctx, &e.evs)
	}
	q.c.memEvents.Add(-int64(sent))
	if !done {
		return sent > 0, true
	}
	q.mu.Lock()
	q.mem = q.mem[1:]
	if e.refused {
		q.memOnly--
	}
	rec, w := e.rec, e.wait
	q.broadcastLocked()
	q.mu.Unlock()
	if !rec.IsZero() {
		q.ack(q.spool, rec)
	}
	if w != nil {
		close(w.done)
	}
	e.release()
	return true, false
}

// sendDisk sends the oldest batch of sp: the one in flight, or the next
// one read from disk.
func (q *Queue) sendDisk(ctx context.Context, sp *spool.Spool) (progressed, failed bool) {
	if q.cur == nil {
		rec, err := sp.Peek()
		q.countLost()
		if errors.Is(err, io.EOF) {
			return false, false
		}
		if err != nil {
			if !errors.Is(err, spool.ErrClosed) {
				q.c.diskErrors.Add(1)
				if !q.readFailing.Swap(true) {
					q.log.Error("spool cannot read its backlog", "err", err)
				}
			}
			return false, true
		}
		if q.readFailing.CompareAndSwap(true, false) {
			q.log.Info("spool reads again")
		}
		c := &diskBatch{sp: sp, id: rec.ID, evs: rec.Events, reqs: rec.Requests, n0: len(rec.Events)}
		for i := range c.reqs {
			c.n0 += c.reqs[i].Events
		}
		if c.reqs != nil && q.enc == nil {
			// Requests encoded by a sink this one is not (the destination's
			// type changed): nothing here can send or decode them.
			q.unsendable(c)
			q.ack(sp, c.id)
			return true, false
		}
		q.mu.Lock()
		q.cur = c
		q.mu.Unlock()
	}
	c := q.cur
	var done bool
	var sent int
	if c.reqs != nil {
		done, sent = q.attemptsReq(ctx, &c.reqs)
	} else {
		done, sent = q.attempts(ctx, &c.evs)
	}
	if !done {
		return sent > 0, true
	}
	q.mu.Lock()
	q.cur = nil
	q.mu.Unlock()
	q.ack(sp, c.id)
	q.mu.Lock()
	q.broadcastLocked() // room on disk
	q.mu.Unlock()
	return true, false
}

// ack acknowledges a delivered record. A failure to save the head costs
// at most duplicates after a crash: counted and logged once per episode.
func (q *Queue) ack(sp *spool.Spool, id spool.RecordID) {
	err := sp.Ack(id)
	switch {
	case err == nil:
		if q.ackFailing.CompareAndSwap(true, false) {
			q.log.Info("spool acknowledgements are saved again")
		}
	case !errors.Is(err, spool.ErrClosed):
		q.c.diskErrors.Add(1)
		if !q.ackFailing.Swap(true) {
			q.log.Warn("spool cannot save acknowledgements: a crash now would deliver some batches twice", "err", err)
		}
	}
}

// countLost counts events the spools lost to disk damage since the last
// call.
func (q *Queue) countLost() {
	if q.spool == nil {
		return
	}
	for i, sp := range [2]*spool.Spool{q.spool, q.retry} {
		lost := sp.Stats().LostEvents
		if d := lost - q.lostSeen[i]; d > 0 {
			q.lostSeen[i] = lost
			q.drop(relaykit.ReasonSpoolCorrupt, d)
		}
	}
}

// attempted records what one attempt did: a delivery marks the
// destination healthy, and an attempt that was not a probe is observed
// for the adaptive timeout.
func (q *Queue) attempted(delivered int, probe bool, took time.Duration, timedOut, ok bool) {
	if delivered > 0 {
		q.healthy()
	}
	if !probe {
		q.observe(took, timedOut, ok)
	}
}

// retryWait counts a failed attempt and waits out its backoff (jittered
// uniformly in [backoff/2, backoff], and never shorter than what the
// destination asked for), doubling *backoff up to MaxBackoff. It returns
// false, having marked the destination unhealthy, when the attempts must
// end instead: a failed probe, ctx done, a wait past the retry budget, or
// MaxAttempts spent.
func (q *Queue) retryWait(ctx context.Context, err error, probe bool, start time.Time, attempt int, backoff *time.Duration) bool {
	q.c.failures.Add(1)
	q.lastErr.Store(&errBox{err})
	asked := q.throttle(err)
	wait := max(*backoff/2+rand.N(*backoff/2+1), asked)
	if probe || ctx.Err() != nil || time.Since(start)+wait > q.cfg.RetryBudget ||
		(q.cfg.MaxAttempts > 0 && attempt >= q.cfg.MaxAttempts) {
		q.unhealthyNow(err)
		return false
	}
	sleepCtx(ctx, wait)
	*backoff = min(2**backoff, q.cfg.MaxBackoff)
	return true
}

// attempts sends *evs until every event is delivered or dead-lettered
// (done), or the retry budget is spent. When the destination is unhealthy
// the first attempt is a probe: the oldest event alone, bounded by
// ProbeInterval; once it is delivered the rest follows as usual. No
// attempt starts before the wait the destination asked for has passed;
// a wait longer than what is left of the budget ends the attempts at once.
// It leaves in *evs the events still undelivered, in order, and returns
// how many left it this call.
func (q *Queue) attempts(ctx context.Context, evs *[]relaykit.Event) (done bool, sent int) {
	if d := q.untilAllowed(); d > 0 && !sleepCtx(ctx, d) {
		return false, 0
	}
	probe := q.unhealthy.Load()
	start := time.Now()
	backoff := q.cfg.InitialBackoff
	for attempt := 1; ; attempt++ {
		batch, timeout := *evs, q.attemptTimeout()
		if probe {
			batch, timeout = batch[:1], q.cfg.ProbeInterval
		}
		began := time.Now()
		actx, cancel := context.WithTimeout(ctx, timeout)
		err := q.sink.Send(actx, batch)
		timedOut := err != nil && actx.Err() == context.DeadlineExceeded && ctx.Err() == nil
		cancel()
		q.c.attempts.Add(1)
		before := len(*evs)
		kept, delivered := q.settle(ctx, batch, err)
		*evs = joinRest(*evs, len(kept), len(batch))
		sent += before - len(*evs)
		q.attempted(delivered, probe, time.Since(began), timedOut, err == nil)
		if len(*evs) == 0 {
			return true, sent
		}
		if probe && err == nil {
			probe = false // alive: send the rest
			start, attempt = time.Now(), 0
			continue
		}
		if !q.retryWait(ctx, err, probe, start, attempt, &backoff) {
			return false, sent
		}
	}
}

// retryAfter returns the wait err's destination asked for: the
// RetryAfter() of the first error in its chain that has one (a
// *relaykit.BatchError: the longest among its retryable runs), or zero.
func retryAfter(err error) time.Duration {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) {
		return max(ra.RetryAfter(), 0)
	}
	return 0
}

// throttle notes the wait the destination asked for in err, capped at
// MaxRetryAfter, so that no attempt starts before it has passed; counts
// it and calls OnThrottled. It returns the wait, or zero.
func (q *Queue) throttle(err error) time.Duration {
	d := min(retryAfter(err), q.cfg.MaxRetryAfter)
	if d <= 0 {
		return 0
	}
	until := time.Now().Add(d).UnixNano()
	for {
		old := q.notBefore.Load()
		if old >= until || q.notBefore.CompareAndSwap(old, until) {
			break
		}
	}
	q.c.throttled.Add(1)
	q.c.throttledFor.Add(int64(d))
	if h := q.cfg.Hooks.OnThrottled; h != nil {
		h(q.cfg.Name, d)
	}
	return d
}

// untilAllowed returns how long until the destination may be sent to
// again, or zero (or less) when it may now.
func (q *Queue) untilAllowed() time.Duration {
	nb := q.notBefore.Load()
	if nb == 0 {
		return 0
	}
	return time.Until(time.Unix(0, nb))
}

// sleepCtx waits for d, and reports false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// joinRest returns evs with evs[k:n] (events settled by an attempt on
// evs[:n]) moved behind the rest, and cut off: the undelivered evs[:k] and
// evs[n:] in order. It rotates by swapping, so each event's buffers stay
// owned once.
func joinRest(evs []relaykit.Event, k, n int) []relaykit.Event {
	if k < n && n < len(evs) {
		slices.Reverse(evs[k:n])
		slices.Reverse(evs[n:])
		slices.Reverse(evs[k:])
	}
	return evs[:len(evs)-(n-k)]
}

// attemptTimeout is the bound of one attempt: AttemptTimeout, unless the
// destination has shown it needs longer: three times the slowest of its
// last 16 successful sends, or twice the bound of a send that ran out of
// time (so a destination that is slow, not hung, gets there), at most 16
// times AttemptTimeout.
func (q *Queue) attemptTimeout() time.Duration {
	q.tookMu.Lock()
	defer q.tookMu.Unlock()
	return q.attemptTimeoutLocked()
}

func (q *Queue) attemptTimeoutLocked() time.Duration {
	return min(max(q.cfg.AttemptTimeout, 3*slices.Max(q.took[:]), q.slow), 16*q.cfg.AttemptTimeout)
}

// observe learns from a full attempt how long the destination takes.
func (q *Queue) observe(took time.Duration, timedOut, ok bool) {
	q.tookMu.Lock()
	defer q.tookMu.Unlock()
	switch {
	case timedOut:
		q.slow = min(2*q.attemptTimeoutLocked(), 16*q.cfg.AttemptTimeout)
	case ok:
		q.took[q.tookAt] = took
		q.tookAt = (q.tookAt + 1) % len(q.took)
		if took < q.cfg.AttemptTimeout/4 {
			q.slow /= 2 // faster again: earn the bound back slowly
		}
	}
}

// settle accounts for the outcome of one Send of evs: delivered runs are
// counted (and given to OnDelivered), permanently refused runs
// dead-lettered, and the retryable events are returned, in order, moved to
// the front of evs, with the number delivered. Events are swapped, never
// copied, so that each event's buffers stay owned once.
func (q *Queue) settle(ctx context.Context, evs []relaykit.Event, err error) ([]relaykit.Event, int) {
	if err == nil {
		q.delivered(evs)
		return evs[:0], len(evs)
	}
	be := relaykit.AsBatchError(err, len(evs))
	keep, at, delivered := 0, 0, 0
	for _, f := range be.Failed {
		from, to := max(f.From, at), min(f.To, len(evs))
		if from >= to {
			continue
		}
		q.delivered(evs[at:from])
		delivered += from - at
		if f.Permanent {
			q.deadLetter(ctx, evs[from:to], f.Reason, f.Err)
		} else {
			for i := from; i < to; i++ {
				evs[keep], evs[i] = evs[i], evs[keep]
				keep++
			}
		}
		at = to
	}
	q.delivered(evs[at:])
	delivered += len(evs) - at
	return evs[:keep], delivered
}

func (q *Queue) delivered(evs []relaykit.Event) {
	if len(evs) == 0 {
		return
	}
	q.c.delivered.Add(int64(len(evs)))
	q.c.pending.Add(-int64(len(evs)))
	if h := q.cfg.Hooks.OnDelivered; h != nil {
		h(evs)
	}
	if h := q.cfg.Hooks.OnDeliveredRun; h != nil {
		var oldest, newest int64
		for i := range evs {
			if rt := evs[i].ReceiveTime; rt != 0 {
				if oldest == 0 || rt < oldest {
					oldest = rt
				}
				newest = max(newest, rt)
			}
		}
		h(len(evs), oldest, newest)
	}
}

func (q *Queue) deadLetter(ctx context.Context, evs []relaykit.Event, reason string, cause error) {
	n := int64(len(evs))
	if q.cfg.DeadLetter != nil {
		err := q.cfg.DeadLetter(context.WithoutCancel(ctx), evs, reason, cause)
		if err == nil {
			q.c.deadLettered.Add(n)
			q.c.pending.Add(-n)
			return
		}
		q.c.deadLetterErrors.Add(1)
		q.log.Error("dead letter failed: events dropped", "reason", reason, "events", n, "err", err)
	}
	q.drop(reason, n)
}

func (q *Queue) healthy() {
	if q.unhealthy.Load() && q.unhealthy.Swap(false) { // no write on the healthy path
		q.log.Info("destination recovered")
	}
}

func (q *Queue) unhealthyNow(err error) {
	q.mu.Lock()
	q.diskMode = true
	q.mu.Unlock()
	if !q.unhealthy.Swap(true) {
		q.log.Warn("destination unhealthy: spooling, probing", "err", err)
	}
}

// spoolMemory moves what memory holds to disk where it is not there yet:
// in OnFailure every batch to the retry spool (read before anything else),
// in WriteAhead the batches a failing disk had refused, to the spool
// (they are the newest: later batches were held behind them). Batches
// already on disk keep their memory copy, to be sent from it. Batches the
// disk still refuses stay in memory. It runs on the sender, or in Close
// without one.
func (q *Queue) spoolMemory() {
	q.mu.Lock()
	defer q.mu.Unlock()
	kept := q.mem[:0]
	failing := false
	moved := false
	for _, e := range q.mem {
		if !e.rec.IsZero() || e.discarded || failing {
			kept = append(kept, e)
			continue
		}
		sp := q.retry
		if q.cfg.Mode == WriteAhead {
			sp = q.spool
		}
		var err error
		if e.isReq {
			_, err = sp.AppendRequests(e.reqs)
		} else {
			_, err = sp.Append(e.evs)
		}
		if err != nil {
			q.diskFailed(err)
			failing = true
			kept = append(kept, e)
			continue
		}
		q.diskRecovered()
		moved = true
		q.c.memEvents.Add(-int64(e.pending()))
		if e.refused {
			q.memOnly--
		}
		if w := e.wait; w != nil {
			close(w.done) // durably spooled: accepted
		}
		e.release()
	}
	clear(q.mem[len(kept):])
	q.mem = kept
	if moved {
		q.diskMode = true
		q.broadcastLocked()
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
