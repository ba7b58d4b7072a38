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
)

// spoolQueue is one destination's disk queue of failed batches
// (storage.Spool).
type spoolQueue interface {
	// Append stores batch; an error means it was not stored.
	Append(batch []relaykit.Event) error
	// Replay hands stored batches, oldest first, to fn until fn fails or
	// the queue is empty; a batch is removed once fn returned nil.
	Replay(ctx context.Context, fn func(batch []relaykit.Event) error) error
	Close() error
}

// destination wraps a Sink with the relay's accounting and failure policy:
//
//   - events the sink delivers count as delivered;
//   - events it gives up on (forward.FailureFunc) after retries, or because
//     the relay is shutting down, go to the destination's spool and are
//     replayed when the destination is healthy again; events it rejects as
//     bad data or too large go to the dead-letter file (dropped{rejected});
//   - a sink without a failure handler (the archive) that fails counts its
//     batch as dropped{sink_error}.
type destination struct {
	name, kind string
	sink       relaykit.Sink
	closer     io.Closer
	stats      *destStats
	spool      spoolQueue // nil: no spool (archive)
	ledger     *ledger
	dl         *deadLetter
	log        *slog.Logger

	replayMu sync.Mutex
	failedAt atomic.Int64 // unix ns of the last failure; 0 when healthy
}

type acctKey struct{}

// callAcct counts the events the failure handler received during one Send.
type callAcct struct{ failed atomic.Int64 }

// Send implements relaykit.Sink for the router.
func (d *destination) Send(ctx context.Context, batch []relaykit.Event) error {
	d.stats.in.Add(int64(len(batch)))
	d.send(ctx, batch)
	return nil
}

// send delivers batch and accounts for every event of it: delivered,
// spooled or dropped. It reports whether everything was delivered.
func (d *destination) send(ctx context.Context, batch []relaykit.Event) bool {
	acct := &callAcct{}
	if d.spool == nil {
		// The archive is local and quick: at shutdown it still writes
		// rather than lose the events it has no spool for.
		ctx = context.WithoutCancel(ctx)
	}
	err := d.sink.Send(context.WithValue(ctx, acctKey{}, acct), batch)
	d.stats.batches.Add(1)
	failed := acct.failed.Load()
	if err != nil && failed == 0 {
		// The sink reported the whole batch undelivered through its error.
		d.stats.errors.Add(1)
		d.fail(ctx, batch, forward.ReasonRetriesExhausted, err)
		failed = int64(len(batch))
	}
	d.stats.delivered.Add(int64(len(batch)) - failed)
	if failed == 0 {
		d.stats.observeDelivered(batch) // latency histogram (metrics.go)
		if d.failedAt.Swap(0) != 0 {
			d.stats.healthy.Store(true)
			d.log.Info("destination recovered", "destination", d.name)
		}
		return true
	}
	return false
}

// onFailure is the forward.FailureFunc of the destination's sink.
func (d *destination) onFailure(ctx context.Context, f forward.Failure) {
	if acct, ok := ctx.Value(acctKey{}).(*callAcct); ok {
		acct.failed.Add(int64(len(f.Events)))
	}
	d.stats.errors.Add(1)
	d.fail(ctx, f.Events, f.Reason, f.Err)
}

func (d *destination) fail(_ context.Context, evs []relaykit.Event, reason string, err error) {
	n := int64(len(evs))
	if d.failedAt.Swap(time.Now().UnixNano()) == 0 {
		d.stats.healthy.Store(false)
		d.log.Warn("destination failing", "destination", d.name, "reason", reason, "err", err)
	}
	switch {
	case reason == forward.ReasonRejected || reason == forward.ReasonTooLarge:
		for i := range evs {
			d.dl.Write("destination:"+d.name, string(evs[i].Host), reason, evs[i].Raw)
		}
		d.stats.dropped.Add(n)
		d.ledger.drop(dropRejected, n)
	case d.spool == nil:
		d.stats.dropped.Add(n)
		d.ledger.drop(dropSinkError, n)
	default:
		// Counted before the append, so a replay that picks the batch up
		// at once never takes it for one left by an earlier run.
		d.stats.spooled.Add(n)
		if serr := d.spool.Append(evs); serr != nil {
			d.stats.spooled.Add(-n)
			d.stats.dropped.Add(n)
			d.ledger.drop(dropSpoolFull, n)
			d.log.Error("spool refused batch", "destination", d.name, "events", n, "err", serr)
		}
	}
}

// replay sends spooled batches again. While the destination is failing it
// sends one batch as a probe; once that is delivered it drains the spool.
// Events that fail again are spooled again by the failure handler (at the
// tail), so replay never loses or duplicates a spooled event.
func (d *destination) replay(ctx context.Context) {
	if d.spool == nil {
		return
	}
	if !d.replayMu.TryLock() {
		return
	}
	defer d.replayMu.Unlock()
	stop := false
	err := d.spool.Replay(ctx, func(b []relaykit.Event) error {
		if stop || ctx.Err() != nil {
			return errStopReplay
		}
		n := int64(len(b))
		// Batches beyond what this process spooled were left by an
		// earlier run.
		if waiting := d.stats.spooled.Load() - d.stats.replayed.Load() + d.stats.recovered.Load(); waiting < n {
			d.stats.recovered.Add(n - max(waiting, 0))
		}
		d.stats.replayed.Add(n)
		if !d.send(ctx, b) {
			// Failed events were re-spooled; this batch is done with.
			stop = true
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopReplay) && ctx.Err() == nil {
		d.log.Error("spool replay", "destination", d.name, "err", err)
	}
}

var errStopReplay = errors.New("replay stopped")

// replayLoop replays every interval until ctx ends.
func (d *destination) replayLoop(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d.replay(ctx)
		}
	}
}

func (d *destination) Close() error {
	var err error
	if d.closer != nil {
		err = d.closer.Close()
	}
	if d.spool != nil {
		err = errors.Join(err, d.spool.Close())
	}
	if err != nil {
		return fmt.Errorf("destination %s: %w", d.name, err)
	}
	return nil
}
