package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// ackState lets acknowledging producers wait on a worker:
//
//  1. a producer announces itself (waiting) before it pushes, so the
//     worker, draining, sees it;
//  2. it pushes its events and takes a [Mark]: the worker's position after
//     its last event;
//  3. the worker, whenever it has emptied its ring while someone waits,
//     cuts the open batch without waiting for BatchMaxWait (kickAcks): a
//     group commit, so a waiting sender costs a flush, not a flush per
//     event, and under load batches fill up as before;
//  4. after each flush the worker wakes the waiters (progress); a waiter
//     whose mark the finished count has reached is answered.
//
// Ordering makes the count sufficient: the ring is FIFO and flushes run
// one at a time, in order.
type ackState struct {
	waiting atomic.Int64 // producers waiting on this worker
	stopped atomic.Bool  // the worker's run returned: done stops here
	mu      sync.Mutex
	ch      chan struct{} // closed at the next progress; nil when nobody waits
}

// progress wakes every waiter (after a flush).
func (a *ackState) progress() {
	a.mu.Lock()
	if a.ch != nil {
		close(a.ch)
		a.ch = nil
	}
	a.mu.Unlock()
}

// stop marks the worker stopped and wakes the waiters.
func (a *ackState) stop() {
	a.stopped.Store(true)
	a.progress()
}

// next returns the channel the next progress closes.
func (a *ackState) next() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ch == nil {
		a.ch = make(chan struct{})
	}
	return a.ch
}

// failLog remembers the positions of the last batches the Sink refused,
// so that a mark learns whether any of its events were among them.
type failLog struct {
	mu    sync.Mutex
	n     atomic.Uint64 // failures ever; read without the lock on the happy path
	ring  [64]failure
	first uint64 // the oldest position the ring still covers: before it, failures may have been forgotten
}

type failure struct {
	from, to uint64 // positions [from, to) of the failed batch
	err      error
}

// add records a refused batch [from, to).
func (f *failLog) add(from, to uint64, err error) {
	f.mu.Lock()
	i := f.n.Load() % uint64(len(f.ring))
	if f.n.Load() >= uint64(len(f.ring)) {
		f.first = f.ring[i].to // the one overwritten is forgotten
	}
	f.ring[i] = failure{from: from, to: to, err: err}
	f.n.Add(1)
	f.mu.Unlock()
}

// overlaps returns the error of a refused batch that overlaps (from, to],
// the positions of a mark's events, or nil. A range older than what the
// log remembers counts as failed.
func (f *failLog) overlaps(from, to uint64) error {
	n := f.n.Load()
	if n == 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n > uint64(len(f.ring)) && from < f.first {
		return fmt.Errorf("%w: more batches failed than the engine remembers", ErrNotFinished)
	}
	for i := range min(n, uint64(len(f.ring))) {
		r := f.ring[i]
		if r.from < to && from < r.to {
			return fmt.Errorf("%w: %w", ErrNotFinished, r.err)
		}
	}
	return nil
}

// Mark stands for events pushed into one worker: those between the
// position before a push and the position after it, or, from
// [Input.Mark], everything the worker took before it. It reports when
// every one of them is finished: their batch's Send returned nil (the
// Sink delivered, durably accepted or dead-lettered them). The zero Mark
// is finished. A Mark is a small value, safe to copy and to use from any
// goroutine.
type Mark struct {
	w        *worker
	from, to uint64 // the worker's positions: (from, to]
}

// Done reports, without waiting, whether the events of m are settled: ok
// is true once every batch holding them returned; err is nil when each
// was finished, and wraps [ErrNotFinished] when the Sink refused a batch
// holding some of them or the engine stopped before routing them all.
func (m Mark) Done() (ok bool, err error) {
	if m.w == nil {
		return true, nil
	}
	done := m.w.done.Load()
	// Failures are logged before done moves past them: read done first.
	if err := m.w.fails.overlaps(m.from, min(m.to, done)); err != nil {
		return true, err
	}
	if done >= m.to {
		return true, nil
	}
	if m.w.ack.stopped.Load() && m.w.done.Load() < m.to {
		return true, fmt.Errorf("%w: the engine stopped before routing them", ErrNotFinished)
	}
	return false, nil
}

// Wait waits until the events of m are settled (see [Mark.Done]) or ctx
// ends, and returns nil only when every one of them was finished. While
// it waits, the worker cuts its open batch as soon as its ring is empty
// rather than after BatchMaxWait.
func (m Mark) Wait(ctx context.Context) error {
	if m.w == nil {
		return nil
	}
	a := &m.w.ack
	a.waiting.Add(1)
	defer a.waiting.Add(-1)
	m.w.notify() // drain and cut: the push may have come before we waited
	return m.wait(ctx)
}

// wait is Wait for a caller that announced itself before pushing.
func (m Mark) wait(ctx context.Context) error {
	a := &m.w.ack
	for {
		if ok, err := m.Done(); ok {
			return err
		}
		ch := a.next()
		// Again after taking the channel: a flush that finished in
		// between closed an earlier one or will close this one.
		if ok, err := m.Done(); ok {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// Since returns the mark of the events m covers and prev does not: those
// its worker took after prev was taken, up to m. A stream input that
// answers its sender a read at a time takes a mark when the connection
// opens and after each answer, and waits on p.Mark().Since(last) for the
// next: a batch the Sink refused before last (another connection's, or
// one already reported) fails every positional mark after it, but not
// this one. Events that other shards of the worker pushed between the two
// marks are covered too (a failure among them fails m: the sender sends
// again, and duplicates are the cost). If prev is the zero Mark or of
// another worker, Since returns m.
func (m Mark) Since(prev Mark) Mark {
	if prev.w == nil || prev.w != m.w {
		return m
	}
	m.from = min(max(m.from, prev.to), m.to)
	return m
}
