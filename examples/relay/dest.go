package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/storage"
)

// Spool modes and spool-full policies of a destination (DestSpoolConfig).
const (
	spoolOnFailure = "on_failure" // memory first; the spool takes what fails
	spoolAlways    = "always"     // write-ahead: every batch is spooled before its first send

	fullBlock      = "block"       // the worker waits for room (TCP backpressure)
	fullDropOldest = "drop_oldest" // the oldest spooled batches make room
	fullDropNewest = "drop_newest" // the new batch is dropped
)

// destination is one configured destination: a Sink (HEC, Sentinel,
// syslog, archive) with the relay's delivery policy and accounting.
//
// The archive is written synchronously by the worker that routes the batch
// (it is local and quick). A network destination never makes the worker
// wait for the network: Send copies the batch into a bounded memory queue,
// or appends it to the destination's spool, and returns. The destination's
// own goroutine (Run) sends, one batch at a time:
//
//  1. the retry spool: batches that failed from the memory queue (older
//     than anything else still owed);
//  2. the memory queue;
//  3. the spool: batches that arrived while a backlog existed.
//
// New batches go to the spool instead of memory whenever the spool has a
// backlog, the destination is known to be unhealthy, the memory queue is
// full, or the mode is "always"; the switch back to memory happens only
// under mu once both spools are empty. So every batch is sent after every
// batch handed to the destination before it (per-destination order), and
// only one batch is in flight at a time. The sink may split a batch into
// several requests sent concurrently (HEC/Sentinel delivery concurrency):
// within a batch, order across requests is not kept.
//
// In-memory retrying is bounded by the sink's retry budget (retry.max_elapsed,
// 2 s by default); what fails after it goes to the retry spool, and the
// destination is marked unhealthy. An unhealthy destination is probed by
// sending the oldest spooled batch (the sink checks HEC's health endpoint
// first) with a backoff capped at spool.replay_interval; the first success
// makes it healthy and replay runs on at the destination's pace.
type destination struct {
	name, kind string
	sink       relaykit.Sink
	closer     io.Closer
	stats      *destStats
	ledger     *ledger
	dl         *deadLetter
	log        *slog.Logger

	// Network destinations only (nil for the archive).
	spool    *storage.Spool // backlog; with mode always, every batch
	retry    *storage.Spool // batches that failed from memory; mode on_failure
	mode     string
	full     string
	probeMax time.Duration
	queue    chan *memBatch
	wake     chan struct{} // a batch was queued or spooled
	closing  chan struct{} // closed when the workers are done
	done     chan struct{} // closed when Run returned

	// mu orders the choice between memory and spool in Send against the
	// switch back to memory in Run. onDisk may be set without it (going to
	// disk never lets a batch overtake), but is cleared only under it.
	mu     sync.Mutex
	onDisk atomic.Bool // new batches go to the spool

	roomMu sync.Mutex
	room   chan struct{} // closed (and replaced) when the spool shrinks

	unhealthy atomic.Bool
}

// memBatch is a batch copied for the memory queue; pooled with its events'
// buffers, so a warm relay copies without allocating.
type memBatch struct{ evs []relaykit.Event }

var memBatches = sync.Pool{New: func() any { return new(memBatch) }}

func copyBatch(b []relaykit.Event) *memBatch {
	mb := memBatches.Get().(*memBatch)
	if cap(mb.evs) < len(b) {
		evs := make([]relaykit.Event, len(b))
		copy(evs, mb.evs[:cap(mb.evs)])
		mb.evs = evs
	}
	mb.evs = mb.evs[:len(b)]
	for i := range b {
		b[i].CopyTo(&mb.evs[i])
	}
	return mb
}

func (mb *memBatch) release() {
	if len(mb.evs) > 4096 {
		return
	}
	memBatches.Put(mb)
}

type acctKey struct{}

// callAcct collects what the failure handler received during one Send.
type callAcct struct {
	mu       sync.Mutex
	failed   int64 // retryable: the destination did not take them now
	rejected int64 // fatal: dead-lettered and dropped
	keep     bool  // copy failed events into evs
	evs      []relaykit.Event
}

// Send implements relaykit.Sink for the router.
func (d *destination) Send(ctx context.Context, batch []relaykit.Event) error {
	if len(batch) == 0 {
		return nil
	}
	n := int64(len(batch))
	d.stats.in.Add(n)
	if d.spool == nil {
		d.sendArchive(ctx, batch)
		return nil
	}
	d.mu.Lock()
	if !d.onDisk.Load() {
		mb := copyBatch(batch)
		select {
		case d.queue <- mb:
			d.stats.memory.Add(n)
			d.mu.Unlock()
			d.signal()
			return nil
		default:
			// Memory is full: this batch and the next ones queue behind
			// on disk until the sender has caught up.
			mb.release()
			d.onDisk.Store(true)
		}
	}
	d.spoolLocked(ctx, batch)
	d.mu.Unlock()
	d.signal()
	return nil
}

// spoolLocked appends batch to the spool, applying the spool-full policy.
// d.mu is held; the block policy releases it while it waits.
func (d *destination) spoolLocked(ctx context.Context, batch []relaykit.Event) {
	n := int64(len(batch))
	for {
		room := d.roomSignal()
		err := d.spool.Append(batch)
		if err == nil {
			d.stats.spooled.Add(n)
			return
		}
		if !errors.Is(err, storage.ErrSpoolFull) {
			d.drop(dropSpoolFull, n)
			d.log.Error("spool refused batch", "destination", d.name, "events", n, "err", err)
			return
		}
		switch d.full {
		case fullDropOldest:
			b, e, derr := d.spool.Discard()
			if derr == nil && b > 0 {
				d.drop(dropSpoolOldest, e)
				d.log.Warn("spool full: dropped the oldest batches", "destination", d.name, "batches", b, "events", e)
				continue
			}
		case fullBlock:
			d.mu.Unlock()
			select {
			case <-room:
				d.mu.Lock()
				continue
			case <-ctx.Done():
				d.mu.Lock()
			}
		}
		d.drop(dropSpoolFull, n)
		return
	}
}

func (d *destination) drop(reason string, n int64) {
	d.stats.dropped.Add(n)
	d.ledger.drop(reason, n)
}

func (d *destination) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// roomSignal returns a channel closed the next time the spool shrinks.
func (d *destination) roomSignal() <-chan struct{} {
	d.roomMu.Lock()
	defer d.roomMu.Unlock()
	return d.room
}

// roomFreed wakes Senders blocked on a full spool.
func (d *destination) roomFreed() {
	if d.full != fullBlock {
		return
	}
	d.roomMu.Lock()
	close(d.room)
	d.room = make(chan struct{})
	d.roomMu.Unlock()
}

// sendArchive writes batch to a local sink (the archive) in the worker.
func (d *destination) sendArchive(ctx context.Context, batch []relaykit.Event) {
	// At shutdown it still writes rather than lose the events it has no
	// spool for.
	err := d.sink.Send(context.WithoutCancel(ctx), batch)
	d.stats.batches.Add(1)
	if err != nil {
		d.stats.errors.Add(1)
		d.drop(dropSinkError, int64(len(batch)))
		d.setHealthy(false, err)
		return
	}
	d.stats.delivered.Add(int64(len(batch)))
	d.stats.observeDelivered(batch) // latency histogram (metrics.go)
	d.setHealthy(true, nil)
}

// deliver sends batch once (with the sink's bounded retries) and returns
// the accounting of the call. Rejected events are dead-lettered and counted
// as dropped here; failed ones are the caller's. With keep, copies of the
// failed events are in acct.evs.
func (d *destination) deliver(ctx context.Context, batch []relaykit.Event, keep bool, acct *callAcct) {
	*acct = callAcct{keep: keep, evs: acct.evs[:0]}
	err := d.sink.Send(context.WithValue(ctx, acctKey{}, acct), batch)
	d.stats.batches.Add(1)
	if err != nil && acct.failed == 0 && acct.rejected == 0 {
		// The sink reported the whole batch undelivered through its error.
		d.stats.errors.Add(1)
		acct.failed = int64(len(batch))
		if keep {
			acct.add(batch)
		}
	}
	if acct.failed > 0 {
		d.setHealthy(false, err)
	} else {
		if acct.rejected == 0 {
			d.stats.observeDelivered(batch) // latency histogram (metrics.go)
		}
		d.setHealthy(true, nil)
	}
}

func (a *callAcct) add(evs []relaykit.Event) {
	n := len(a.evs)
	for i := range evs {
		if n+i < cap(a.evs) {
			a.evs = a.evs[:n+i+1]
		} else {
			a.evs = append(a.evs, relaykit.Event{})
		}
		evs[i].CopyTo(&a.evs[n+i])
	}
}

// onFailure is the forward.FailureFunc of the destination's sink.
func (d *destination) onFailure(ctx context.Context, f forward.Failure) {
	acct, _ := ctx.Value(acctKey{}).(*callAcct)
	n := int64(len(f.Events))
	d.stats.errors.Add(1)
	if f.Reason == forward.ReasonRejected || f.Reason == forward.ReasonTooLarge {
		for i := range f.Events {
			d.dl.Write("destination:"+d.name, string(f.Events[i].Host), f.Reason, f.Events[i].Raw)
		}
		d.drop(dropRejected, n)
		if acct != nil {
			acct.mu.Lock()
			acct.rejected += n
			acct.mu.Unlock()
		}
		return
	}
	if acct == nil {
		// Not from deliver (cannot happen: every send goes through it).
		d.drop(dropSinkError, n)
		return
	}
	acct.mu.Lock()
	acct.failed += n
	if acct.keep {
		acct.add(f.Events)
	}
	acct.mu.Unlock()
	if d.unhealthy.Load() {
		return
	}
	d.log.Warn("destination failing: spooling", "destination", d.name, "reason", f.Reason, "err", f.Err)
}

func (d *destination) setHealthy(ok bool, err error) {
	if ok {
		if d.unhealthy.Swap(false) {
			d.stats.healthy.Store(true)
			d.log.Info("destination recovered", "destination", d.name)
		}
		return
	}
	if !d.unhealthy.Swap(true) {
		d.stats.healthy.Store(false)
		if err != nil {
			d.log.Warn("destination unhealthy", "destination", d.name, "err", err)
		}
	}
	d.onDisk.Store(true)
}

var errStopReplay = errors.New("replay stopped")

// Run is the destination's sender; see the type's comment. Sends use ctx
// (it ends at the shutdown deadline). After closing is closed it goes on
// sending, spools included, while the destination is healthy and ctx
// lasts, so a graceful stop leaves nothing behind that the destination
// could take (with spool mode always every batch is in the spool). Once
// the destination fails or ctx ends, what is left in memory goes to the
// retry spool, the spools stay for the next run, and Run returns.
func (d *destination) Run(ctx context.Context) {
	defer close(d.done)
	var acct callAcct
	wait := time.Duration(0)
	for {
		closing := isClosed(d.closing)
		progressed := false
		failed := false
		// At shutdown an unhealthy destination is not probed again: its
		// spools wait for the next run.
		drain := !closing || !d.unhealthy.Load()
		if drain && d.retry != nil && d.retry.Stats().Batches > 0 {
			progressed, failed = d.replay(ctx, d.retry, &acct)
		}
		if !failed {
			select {
			case mb := <-d.queue:
				d.sendMemory(ctx, mb, &acct)
				continue
			default:
			}
		}
		if !failed && drain && d.spool.Stats().Batches > 0 {
			var p bool
			p, failed = d.replay(ctx, d.spool, &acct)
			progressed = progressed || p
		}
		if failed {
			// The destination is down: what waits in memory goes to disk
			// now (behind the retry spool, ahead of the spool: its order).
			d.spoolMemory()
			// Probe again after a backoff: 100 ms doubling up to probeMax.
			wait = min(max(2*wait, 100*time.Millisecond), d.probeMax)
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-d.closing:
			case <-ctx.Done():
			}
			t.Stop()
			if ctx.Err() != nil && !closing {
				// Shutdown deadline: drain memory into the retry spool.
				<-d.closing
			}
			continue
		}
		wait = 0
		if progressed {
			continue
		}
		d.mu.Lock()
		if d.mode == spoolOnFailure && !d.unhealthy.Load() && d.spool.Stats().Batches == 0 &&
			(d.retry == nil || d.retry.Stats().Batches == 0) {
			d.onDisk.Store(false)
		}
		d.mu.Unlock()
		if closing && len(d.queue) == 0 {
			return
		}
		select {
		case <-d.wake:
		case <-d.closing:
		case <-ctx.Done():
			if !closing {
				<-d.closing
			}
		}
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

// sendMemory sends a batch from the memory queue; what the destination does
// not take goes to the retry spool.
func (d *destination) sendMemory(ctx context.Context, mb *memBatch, acct *callAcct) {
	n := int64(len(mb.evs))
	defer func() {
		d.stats.memory.Add(-n)
		mb.release()
	}()
	if d.unhealthy.Load() || ctx.Err() != nil {
		d.toRetry(mb.evs)
		return
	}
	d.deliver(ctx, mb.evs, true, acct)
	d.stats.delivered.Add(n - acct.failed - acct.rejected)
	if acct.failed > 0 {
		d.toRetry(acct.evs)
	}
}

// spoolMemory moves every batch of the memory queue to the retry spool.
func (d *destination) spoolMemory() {
	for {
		select {
		case mb := <-d.queue:
			d.toRetry(mb.evs)
			d.stats.memory.Add(-int64(len(mb.evs)))
			mb.release()
		default:
			return
		}
	}
}

func (d *destination) toRetry(evs []relaykit.Event) {
	n := int64(len(evs))
	if err := d.retry.Append(evs); err != nil {
		d.drop(dropSpoolFull, n)
		d.log.Error("retry spool refused batch", "destination", d.name, "events", n, "err", err)
		return
	}
	d.stats.spooled.Add(n)
}

// replay sends batches of sp in order until it is empty (progressed),
// a batch fails (failed: it stays first in sp), the memory queue has a
// batch while replaying the retry spool, or ctx ends. A batch
// of which a part was delivered before another part failed is sent whole
// again later: those events are counted as duplicated.
func (d *destination) replay(ctx context.Context, sp *storage.Spool, acct *callAcct) (progressed, failed bool) {
	err := sp.Replay(ctx, func(b []relaykit.Event) error {
		if ctx.Err() != nil {
			return errStopReplay
		}
		n := int64(len(b))
		d.deliver(ctx, b, false, acct)
		if acct.failed > 0 {
			// Rejected events are dropped again when the batch is retried:
			// undo this call's count of them.
			if acct.rejected > 0 {
				d.stats.dropped.Add(-acct.rejected)
				d.ledger.drop(dropRejected, -acct.rejected)
			}
			if ok := n - acct.failed - acct.rejected; ok > 0 {
				d.stats.duplicated.Add(ok)
			}
			failed = true
			return errStopReplay
		}
		d.stats.delivered.Add(n - acct.rejected)
		d.stats.replayed.Add(n)
		progressed = true
		d.roomFreed()
		return nil
	})
	if err != nil && !errors.Is(err, errStopReplay) && ctx.Err() == nil {
		d.log.Error("spool replay", "destination", d.name, "err", err)
		failed = true
	}
	return progressed, failed
}

// backlog returns the events waiting in the destination's spools.
func (d *destination) backlog() (events, bytes int64, oldest time.Time) {
	for _, sp := range []*storage.Spool{d.retry, d.spool} {
		if sp == nil {
			continue
		}
		st := sp.Stats()
		events += st.Events
		bytes += st.Bytes
		if !st.Oldest.IsZero() && (oldest.IsZero() || st.Oldest.Before(oldest)) {
			oldest = st.Oldest
		}
	}
	return events, bytes, oldest
}

func (d *destination) Close() error {
	var err error
	if d.closer != nil {
		err = d.closer.Close()
	}
	if d.spool != nil {
		err = errors.Join(err, d.spool.Close())
	}
	if d.retry != nil {
		err = errors.Join(err, d.retry.Close())
	}
	if err != nil {
		return fmt.Errorf("destination %s: %w", d.name, err)
	}
	return nil
}
