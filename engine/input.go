package engine

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/relaykit/relaykit"
)

// Input is one source of events registered with [Engine.NewInput]: a
// listener, a consumer, a generator. Its methods hand events to the
// engine's workers; each picks the worker by a shard key (a connection, a
// sender's address, a partition), so the events of one shard stay in
// order. An Input is safe for concurrent use by multiple goroutines.
//
// Events handed over with Push, PushWait and TryPush are copied into
// recycled buffers (the caller keeps its event); the Owned variants and a
// [Producer] move the buffers of events from [NewEvent] or the
// producer's slab without a copy.
type Input struct {
	e    *Engine
	name string
	obs  Observer // nil: not observed (observe.go)

	received  atomic.Int64
	handing   atomic.Int64
	abandoned atomic.Int64
	refused   atomic.Int64
	dropped   [maxReasons]atomic.Int64 // by index in relaykit.Reasons; last: other
}

// maxReasons bounds the counters of an Input: relaykit.Reasons and "other".
const maxReasons = 24

// reasonIndex returns the counter of reason.
func reasonIndex(reason string) int {
	if i := slices.Index(relaykit.Reasons, reason); i >= 0 && i < maxReasons-1 {
		return i
	}
	return maxReasons - 1
}

// Name returns the input's name.
func (in *Input) Name() string { return in.name }

// Workers returns the number of the engine's workers: shards that differ
// modulo Workers go to different workers. An input that keeps a
// [Producer] per worker (a UDP reader, whose datagrams come from many
// senders) makes one for each shard 0 to Workers-1.
func (in *Input) Workers() int { return len(in.e.workers) }

// Drop counts n events the input read and will not hand over, for reason
// (relaykit.ReasonInvalidJSON, ReasonRcvbufFull, ReasonRateLimit, ...): they
// count as received and dropped, so that the engine's ledger balances.
func (in *Input) Drop(reason string, n int) {
	if n <= 0 {
		return
	}
	in.received.Add(int64(n))
	in.dropped[reasonIndex(reason)].Add(int64(n))
	if h := in.e.cfg.Hooks.OnDrop; h != nil {
		h(in.name, reason, n)
	}
}

// drop counts n events the engine refused (their receipt is counted by the
// caller).
func (in *Input) drop(reason string, n int) {
	in.dropped[reasonIndex(reason)].Add(int64(n))
	if h := in.e.cfg.Hooks.OnDrop; h != nil {
		h(in.name, reason, n)
	}
}

// InputStats are one input's counters.
type InputStats struct {
	// Name is the input's name.
	Name string
	// Received counts events handed over, and those counted by Drop.
	Received int64
	// Dropped counts events dropped by reason.
	Dropped map[string]int64
	// Handing is the number of producers inside a hand-over now: waiting
	// for room in a ring, or routing the batches their events filled.
	// When it stays at the number of busy connections, the destinations
	// hold the senders back.
	Handing int64
	// Abandoned counts events of PushWait calls whose wait ended before
	// they were finished: they are still routed, and a sender that
	// resends them makes duplicates. Refused counts events such calls
	// could not push at all (rings full until ctx ended).
	Abandoned, Refused int64
}

// Stats returns a snapshot of the input's counters.
func (in *Input) Stats() InputStats {
	s := InputStats{Name: in.name, Received: in.received.Load(), Handing: in.handing.Load(),
		Abandoned: in.abandoned.Load(), Refused: in.refused.Load(), Dropped: map[string]int64{}}
	for i := range in.dropped {
		if v := in.dropped[i].Load(); v != 0 {
			r := "other"
			if i < len(relaykit.Reasons) && i < maxReasons-1 {
				r = relaykit.Reasons[i]
			}
			s.Dropped[r] = v
		}
	}
	return s
}

// stamp sets the receive time of the events that have none, one clock read
// for all of them.
func (in *Input) stamp(evs []relaykit.Event) {
	var now int64
	for j := range evs {
		if evs[j].ReceiveTime == 0 {
			if now == 0 {
				now = in.e.clock.Nano()
			}
			evs[j].ReceiveTime = now
		}
	}
}

// pushBatch hands evs (their buffers go with them) to worker w, waiting for
// room. It returns how many were accepted, the first k, which count as
// received; with an error (ctx ended, or the engine closed) the rest were
// not accepted and are still the caller's.
//
// When no other goroutine is draining w's ring, the caller becomes its
// consumer for the call: it moves what the ring holds (older events) into
// the collector, then its own events, and flushes the batches they fill,
// all on its goroutine, where the events are in cache (addDirect).
// Otherwise the events go through the ring, and the caller drains it
// itself once a batch's worth waits there (help).
func (in *Input) pushBatch(ctx context.Context, w *worker, evs []relaykit.Event) (int, error) {
	in.handing.Add(1)
	defer in.handing.Add(-1)
	in.stamp(evs)
	in.e.queued.Add(int64(len(evs)))
	if w.consume.TryLock() {
		if w.ring.Closed() {
			w.consume.Unlock()
			in.e.queued.Add(-int64(len(evs)))
			return 0, ErrClosed
		}
		k, err := w.addDirect(evs)
		w.consume.Unlock()
		if k < len(evs) {
			in.e.queued.Add(int64(k - len(evs)))
		}
		in.received.Add(int64(k))
		return k, err
	}
	if w.ring.Cap()-w.ring.Len() < len(evs) {
		w.unblock() // full: drain it, or have the worker drain it, before waiting for room
	}
	k, err := w.ring.PushBatch(ctx, evs)
	if k < len(evs) {
		in.e.queued.Add(int64(k - len(evs)))
	}
	in.received.Add(int64(k))
	if k > 0 {
		w.help()
	}
	if err != nil && w.ring.Closed() {
		err = ErrClosed
	}
	return k, err
}

// tryPushBatch is pushBatch without waiting: the events the ring has no
// room for are counted as received and dropped{queue_full} (their buffers
// stay with the caller). It returns how many the ring accepted.
func (in *Input) tryPushBatch(w *worker, evs []relaykit.Event) int {
	in.stamp(evs)
	in.e.queued.Add(int64(len(evs)))
	k, _ := w.ring.TryPushBatch(evs)
	if k > 0 {
		w.notify()
	}
	in.received.Add(int64(len(evs)))
	if k < len(evs) {
		in.e.queued.Add(int64(k - len(evs)))
		in.drop(relaykit.ReasonQueueFull, len(evs)-k)
	}
	return k
}

// Push copies ev (the caller keeps it) into the ring of shard's worker,
// waiting for room: a stream sender gets back-pressure instead of loss.
// The receive time is set to the engine's clock if ev has none. It
// returns ctx's error, or [ErrClosed] after Shutdown; the event then
// does not count as received.
func (in *Input) Push(ctx context.Context, shard uint64, ev *relaykit.Event) error {
	h := NewEvent()
	ev.CopyTo(h)
	return in.PushOwned(ctx, shard, h)
}

// PushOwned is Push for an event from [NewEvent]: its buffers move into
// the ring without a copy, and h must not be used afterwards (also on
// error: it is given back).
func (in *Input) PushOwned(ctx context.Context, shard uint64, h *relaykit.Event) error {
	w := in.e.worker(shard)
	if h.ReceiveTime == 0 {
		h.ReceiveTime = in.e.clock.Nano()
	}
	in.e.queued.Add(1)
	if err := w.ring.Push(ctx, *h); err != nil {
		in.e.queued.Add(-1)
		ReleaseEvent(h)
		if w.ring.Closed() {
			return ErrClosed
		}
		return err
	}
	*h = relaykit.Event{}
	emptyHolders.Put(h)
	w.notify()
	in.received.Add(1)
	return nil
}

// TryPush is Push without waiting, for inputs that must never wait (UDP):
// when the ring is full the event is counted as received and
// dropped{queue_full}, and TryPush reports false.
func (in *Input) TryPush(shard uint64, ev *relaykit.Event) bool {
	h := NewEvent()
	ev.CopyTo(h)
	return in.TryPushOwned(shard, h)
}

// TryPushOwned is TryPush for an event from [NewEvent] (see PushOwned).
func (in *Input) TryPushOwned(shard uint64, h *relaykit.Event) bool {
	w := in.e.worker(shard)
	if h.ReceiveTime == 0 {
		h.ReceiveTime = in.e.clock.Nano()
	}
	in.received.Add(1)
	in.e.queued.Add(1)
	if !w.ring.TryPush(*h) {
		in.e.queued.Add(-1)
		in.drop(relaykit.ReasonQueueFull, 1)
		ReleaseEvent(h)
		return false
	}
	*h = relaykit.Event{}
	emptyHolders.Put(h)
	w.notify()
	return true
}

// Mark returns a mark covering every event shard's worker took so far: a
// caller that pushed a partition's records, one Push at a time, learns
// from it when all of them (and everything before them on that worker)
// are finished. Such a mark reports any failure of that worker before it
// as its own: an input that acknowledges by position (Kafka offsets) must
// stop acknowledging at the first.
func (in *Input) Mark(shard uint64) Mark {
	w := in.e.worker(shard)
	return Mark{w: w, to: w.position()}
}

// PushBatch copies evs (the caller keeps them) into shard's worker, in
// order, waiting for room, and returns a mark covering them (and what
// other inputs pushed to that worker meanwhile): a consumer that
// acknowledges by position polls it with [Mark.Done], in order, and stops
// at the first that reports a failure. On error (ctx ended, or
// [ErrClosed]) the events from the first not accepted on were not pushed,
// and the mark covers those that were.
func (in *Input) PushBatch(ctx context.Context, shard uint64, evs []relaykit.Event) (Mark, error) {
	w := in.e.worker(shard)
	from := w.position()
	for i := range evs {
		if err := in.Push(ctx, shard, &evs[i]); err != nil {
			return Mark{w: w, from: from, to: w.position()}, err
		}
	}
	return Mark{w: w, from: from, to: w.position()}, nil
}

// PushWait copies evs into shard's worker, in order, and waits until every
// one of them is finished (see [Mark]) or ctx ends. It returns nil only
// when all were finished: only then may the sender be told they were
// accepted. On error, the events already pushed are still routed and are
// counted in InputStats.Abandoned, the others in Refused. While it waits,
// the worker cuts its open batch as soon as its ring is empty: a group
// commit for every sender waiting on that worker.
func (in *Input) PushWait(ctx context.Context, shard uint64, evs []relaykit.Event) error {
	if len(evs) == 0 {
		return nil
	}
	w := in.e.worker(shard)
	w.ack.waiting.Add(1) // before the first push: the worker sees it when it drains
	defer w.ack.waiting.Add(-1)
	from := w.position()
	for i := range evs {
		if err := in.Push(ctx, shard, &evs[i]); err != nil {
			in.abandoned.Add(int64(i))
			in.refused.Add(int64(len(evs) - i))
			return err
		}
	}
	m := Mark{w: w, from: from, to: w.position()}
	if err := m.wait(ctx); err != nil {
		in.abandoned.Add(int64(len(evs)))
		return err
	}
	return nil
}

// PushOwnedWait is PushWait for events from [NewEvent], handed over as with
// PushOwned: none of evs may be used afterwards (on failure the events not
// handed over are given back).
func (in *Input) PushOwnedWait(ctx context.Context, shard uint64, evs []*relaykit.Event) error {
	if len(evs) == 0 {
		return nil
	}
	w := in.e.worker(shard)
	w.ack.waiting.Add(1)
	defer w.ack.waiting.Add(-1)
	from := w.position()
	for i, ev := range evs {
		if err := in.PushOwned(ctx, shard, ev); err != nil {
			in.abandoned.Add(int64(i))
			in.refused.Add(int64(len(evs) - i))
			for _, e := range evs[i+1:] { // PushOwned gave evs[i] back
				ReleaseEvent(e)
			}
			return err
		}
	}
	m := Mark{w: w, from: from, to: w.position()}
	if err := m.wait(ctx); err != nil {
		in.abandoned.Add(int64(len(evs)))
		return err
	}
	return nil
}
