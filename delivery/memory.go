package delivery

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/relaykit/relaykit"
)

// Mode Memory: no spool, no queue, no sender goroutine. Send runs the
// retry loop on its caller's goroutine:
//
//   - healthy path: one Send to the sink with the caller's batch (no copy,
//     no hand-off), bounded by the attempt timeout;
//   - on failure: the delivered runs are counted, the permanent ones
//     dead-lettered, the retryable ones (shallow copies of the caller's
//     events, which stay valid while Send runs) sent again after
//     max(jittered backoff, the destination's RetryAfter), never before
//     the queue-wide notBefore;
//   - while the destination fails, callers take turns through q.gate, so
//     that an outage costs one request per backoff, not one per caller;
//   - when ctx ends (or Close's deadline), Send returns what it did not
//     deliver as a *relaykit.BatchError of indexes into the caller's batch.

// newMemory returns a Queue in mode Memory.
func newMemory(sink relaykit.Sink, cfg Config) *Queue {
	q := &Queue{
		sink: sink, cfg: cfg,
		log:     cfg.Logger.With("destination", cfg.Name),
		changed: make(chan struct{}),
		wake:    make(chan struct{}, 1),
		closing: make(chan struct{}),
		abort:   make(chan struct{}),
		runDone: make(chan struct{}),
		gate:    make(chan struct{}, 1),
	}
	q.abortCtx, q.abortNow = context.WithCancel(context.Background())
	return q
}

// sendNow is Send in mode Memory.
func (q *Queue) sendNow(ctx context.Context, batch []relaykit.Event) (err error) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	q.sending.Add(1)
	q.mu.Unlock()
	defer q.sending.Done()

	n := int64(len(batch))
	q.c.in.Add(n)
	q.c.pending.Add(n)

	// cur holds the events still to deliver: the caller's batch itself
	// until an attempt fails, then shallow copies of its undelivered
	// events, whose indexes in batch are in idx. next and nextIdx are the
	// spare buffers the undelivered events of an attempt go to.
	cur := batch
	var idx, nextIdx []int
	var next []relaykit.Event
	gated := false
	defer func() {
		if gated {
			<-q.gate
		}
	}()
	backoff := q.cfg.InitialBackoff
	for {
		if err := ctx.Err(); err != nil {
			return q.giveBack(err, batch, cur, idx)
		}
		if !gated && q.unhealthy.Load() {
			// The destination fails: take turns with the other callers.
			select {
			case q.gate <- struct{}{}:
				gated = true
			case <-ctx.Done():
				return q.giveBack(ctx.Err(), batch, cur, idx)
			case <-q.abortCtx.Done():
				return q.giveBack(ErrClosed, batch, cur, idx)
			}
		}
		if d := q.untilAllowed(); d > 0 {
			if cause := q.sleepMemory(ctx, d); cause != nil {
				return q.giveBack(cause, batch, cur, idx)
			}
		}
		err := q.attemptNow(ctx, cur)
		if err == nil {
			q.delivered(cur)
			q.healthy()
			return nil
		}
		// Settle the attempt: count what was delivered, dead-letter what is
		// permanent, keep the rest, in order.
		be := relaykit.AsBatchError(err, len(cur))
		next, nextIdx = next[:0], nextIdx[:0]
		at, delivered := 0, 0
		for _, f := range be.Failed {
			from, to := max(f.From, at), min(f.To, len(cur))
			if from >= to {
				continue
			}
			q.delivered(cur[at:from])
			delivered += from - at
			if f.Permanent {
				q.deadLetter(ctx, cur[from:to], f.Reason, f.Err)
			} else {
				next = append(next, cur[from:to]...)
				for i := from; i < to; i++ {
					nextIdx = append(nextIdx, origIndex(idx, i))
				}
			}
			at = to
		}
		q.delivered(cur[at:])
		delivered += len(cur) - at
		if delivered > 0 {
			q.healthy()
		}
		if len(next) == 0 {
			return nil
		}
		// The undelivered events become cur; cur's buffers are reused for
		// the next attempt's (never the caller's batch).
		if len(idx) == 0 {
			cur, idx, next, nextIdx = next, nextIdx, nil, nil
		} else {
			cur, idx, next, nextIdx = next, nextIdx, cur, idx
		}
		q.c.failures.Add(1)
		q.lastErr.Store(&errBox{err})
		if !q.unhealthy.Swap(true) {
			q.log.Warn("destination failing: Sends wait and retry", "err", err)
		}
		asked := q.throttle(err)
		wait := max(backoff/2+rand.N(backoff/2+1), asked)
		if cause := q.sleepMemory(ctx, wait); cause != nil {
			return q.giveBack(cause, batch, cur, idx)
		}
		backoff = min(2*backoff, q.cfg.MaxBackoff)
	}
}

// origIndex returns the index in the caller's batch of cur[i]: i itself
// while cur is the batch, else idx[i].
func origIndex(idx []int, i int) int {
	if idx == nil {
		return i
	}
	return idx[i]
}

// attemptNow makes one Send of evs to the sink, bounded by the attempt
// timeout and cut short by Close's deadline.
func (q *Queue) attemptNow(ctx context.Context, evs []relaykit.Event) error {
	began := time.Now()
	actx, cancel := context.WithTimeout(ctx, q.attemptTimeout())
	stop := context.AfterFunc(q.abortCtx, cancel)
	err := q.sink.Send(actx, evs)
	timedOut := err != nil && actx.Err() == context.DeadlineExceeded && ctx.Err() == nil
	stop()
	cancel()
	q.c.attempts.Add(1)
	q.observe(time.Since(began), timedOut, err == nil)
	return err
}

// sleepMemory waits for d; it returns ctx.Err() when ctx ends first, or
// ErrClosed when Close's deadline does.
func (q *Queue) sleepMemory(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-q.abortCtx.Done():
		return ErrClosed
	}
}

// giveBack ends a Send that cause cut short: the events of cur, whose
// indexes in batch are idx (cur is batch itself when idx is nil), are
// counted as returned and listed in the error.
func (q *Queue) giveBack(cause error, batch, cur []relaykit.Event, idx []int) error {
	n := int64(len(cur))
	q.c.returned.Add(n)
	q.c.pending.Add(-n)
	be := &relaykit.BatchError{}
	lastErr := cause
	if b := q.lastErr.Load(); b != nil && b.err != nil {
		lastErr = b.err
	}
	for i := range cur {
		j := origIndex(idx, i)
		if k := len(be.Failed); k > 0 && be.Failed[k-1].To == j {
			be.Failed[k-1].To++
			continue
		}
		be.Failed = append(be.Failed, relaykit.FailedRange{From: j, To: j + 1, Reason: relaykit.ReasonShutdown, Err: lastErr})
	}
	return fmt.Errorf("delivery: %s: %d of %d events undelivered: %w (%w)", q.cfg.Name, n, len(batch), cause, be)
}

// closeMemory is Close in mode Memory.
func (q *Queue) closeMemory(ctx context.Context) {
	q.mu.Lock()
	q.closed = true
	q.broadcastLocked()
	q.mu.Unlock()
	close(q.closing)
	done := make(chan struct{})
	go func() { // owned by Close: ends when the Sends in progress have returned
		q.sending.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		q.abortNow()
		<-done
	}
	q.abortNow()
}
