package main

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/relaykit/relaykit"
)

// Acknowledging inputs (HEC, RELP) answer their senders only once a batch
// is finished: every destination it was routed to delivered it, has it on
// disk (spool mode always), or dead-lettered it with a reason; an archive
// wrote it. They use the mechanism the Kafka input commits by
// (dispatcher.mark, worker.done), waiting on it instead of polling:
//
//  1. the input announces itself to the worker of its ring (ackRing.waiting)
//     before it pushes, so the worker cannot miss it;
//  2. it pushes the batch (one request or RELP window) into the ring and
//     takes a mark: the ring's producer position after its last event;
//  3. the worker, whenever it has emptied its ring while someone waits,
//     cuts the open batch without waiting for batch_max_wait (ackKick):
//     a group commit, so a waiting sender costs a flush, not a flush per
//     event, and under load the batches fill up as before;
//  4. after each flush the worker wakes the waiters (ackRing.progress); a
//     waiter whose mark the finished count has reached answers its sender.
//
// Ordering makes the count sufficient: the ring is FIFO and flushes run one
// at a time, in order. A flush that could not hand every event to every
// destination before the shutdown deadline leaves the worker stuck: the
// count stops and waiters give up (their senders send again). The config
// refuses spool mode on_failure and the drop policies with these inputs,
// as with Kafka: a finished flush then means durable.
type ackRing struct {
	waiting atomic.Int64 // inputs waiting on this ring's worker
	stuck   atomic.Bool  // see worker.stuck: the count will not reach later marks
	mu      sync.Mutex
	ch      chan struct{} // closed at the next progress; nil when nobody waits
}

// progress wakes every waiter (after a flush, or when the worker is stuck).
func (a *ackRing) progress() {
	a.mu.Lock()
	if a.ch != nil {
		close(a.ch)
		a.ch = nil
	}
	a.mu.Unlock()
}

// next returns the channel the next progress closes.
func (a *ackRing) next() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ch == nil {
		a.ch = make(chan struct{})
	}
	return a.ch
}

// errAckStuck is returned to an acknowledging input when the worker of its
// ring stopped counting at the shutdown deadline.
var errAckStuck = errors.New("relay: shutting down: the batch could not be finished before the deadline")

// ackStats counts what an acknowledging input could not acknowledge.
type ackStats struct {
	// abandoned counts events pushed into a ring whose wait ended before
	// they were finished (the sender's deadline, shutdown): they are still
	// delivered, and the sender, not having an answer, sends them again,
	// so each is a duplicate.
	abandoned atomic.Int64
	// refused counts events not pushed at all because the wait ended
	// first (rings full until the deadline): the sender keeps them.
	refused atomic.Int64
}

// pushAck pushes batch (copied: the caller keeps it) into the ring of
// shard, then waits until every event of it is finished, or ctx ends. It
// returns nil only when the batch is finished; otherwise the sender must
// not be told it was accepted. Events pushed before a failure are counted
// in as.abandoned, those not pushed in as.refused.
func (d *dispatcher) pushAck(ctx context.Context, shard uint64, batch []relaykit.Event, st *inputStats, as *ackStats) error {
	if len(batch) == 0 {
		return nil
	}
	ring := int(shard % uint64(len(d.rings)))
	a := d.acks[ring]
	a.waiting.Add(1) // before the first push: the worker sees it when it pops
	defer a.waiting.Add(-1)
	for i := range batch {
		if err := d.Push(ctx, shard, &batch[i], st); err != nil {
			as.abandoned.Add(int64(i))
			as.refused.Add(int64(len(batch) - i))
			return err
		}
	}
	_, pos := d.mark(shard)
	if err := d.await(ctx, ring, pos); err != nil {
		as.abandoned.Add(int64(len(batch)))
		return err
	}
	return nil
}

// pushOwnedAck is pushAck for events from newEvent, handed over as with
// PushOwned: none of evs may be used afterwards (on failure the events
// not handed over are recycled).
func (d *dispatcher) pushOwnedAck(ctx context.Context, shard uint64, evs []*relaykit.Event, st *inputStats, as *ackStats) error {
	if len(evs) == 0 {
		return nil
	}
	ring := int(shard % uint64(len(d.rings)))
	a := d.acks[ring]
	a.waiting.Add(1)
	defer a.waiting.Add(-1)
	for i, ev := range evs {
		if err := d.PushOwned(ctx, shard, ev, st); err != nil {
			as.abandoned.Add(int64(i))
			as.refused.Add(int64(len(evs) - i))
			for _, e := range evs[i+1:] { // PushOwned took evs[i] anyway
				e.Reset()
				warmEvents.Put(e)
			}
			return err
		}
	}
	_, pos := d.mark(shard)
	if err := d.await(ctx, ring, pos); err != nil {
		as.abandoned.Add(int64(len(evs)))
		return err
	}
	return nil
}

// await waits until ring's worker has finished pos events, or ctx ends, or
// the worker is stuck.
func (d *dispatcher) await(ctx context.Context, ring int, pos uint64) error {
	a := d.acks[ring]
	for {
		if d.finished(ring) >= pos {
			return nil
		}
		ch := a.next()
		// Again after taking the channel: a flush that finished in
		// between closed an earlier one or will close this one.
		if d.finished(ring) >= pos {
			return nil
		}
		if a.stuck.Load() {
			return errAckStuck
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}
