package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/storage"
	"github.com/relaykit/relaykit/tap"
)

// Spool modes and spool-full policies of a destination (DestSpoolConfig).
const (
	spoolOnFailure = "on_failure" // memory first; the spool takes what fails
	spoolAlways    = "always"     // write-ahead: every batch is spooled before Send returns

	fullBlock      = "block"       // the worker waits for room (TCP backpressure)
	fullDropOldest = "drop_oldest" // the oldest spooled batches make room
	fullDropNewest = "drop_newest" // the new batch is dropped
)

var (
	spoolModes = map[string]delivery.Mode{spoolOnFailure: delivery.OnFailure, spoolAlways: delivery.WriteAhead}
	spoolFulls = map[string]delivery.FullPolicy{fullBlock: delivery.Block, fullDropOldest: delivery.DropOldest, fullDropNewest: delivery.DropNewest}
)

// destination is one configured destination as the routes see it.
//
// A network destination (HEC, Sentinel, syslog, Kafka) is its sink behind
// a delivery.Queue: Send returns once the batch is accepted under the
// queue's mode (on disk for spool mode always), and the queue's sender
// delivers it in order, spooling through outages. The archive is written
// by the worker that routes the batch: Send returns once the lines are in
// the file.
type destination struct {
	name, kind string
	sink       relaykit.Sink   // the destination itself
	queue      *delivery.Queue // nil for the archive
	closer     io.Closer
	stats      *destStats
	ledger     *ledger
	dl         *deadLetter
	log        *slog.Logger
	tap        *tap.Point // destination:NAME: each batch Send was given, with its outcome
}

// Name names the destination in the router's stats, hooks and errors.
func (d *destination) Name() string { return d.name }

// Send implements relaykit.Sink for the router.
func (d *destination) Send(ctx context.Context, batch []relaykit.Event) error {
	if len(batch) == 0 {
		return nil
	}
	d.stats.in.Add(int64(len(batch)))
	err := d.deliver(ctx, batch)
	d.tap.PublishResult(batch, err) // one atomic load when nobody taps
	return err
}

// deliver hands batch to the destination's queue. It is Send without
// counting the events in.
//
// The archive's queue is memory-only: the batch is written on the caller's
// goroutine (a connection's or a worker's, where the events are in cache),
// and while the disk fails the caller waits, retrying (back-pressure on the
// inputs, nothing dropped). At the shutdown deadline (ctx ended, the
// engine's late route) the archive is still written once, rather than
// lose the events.
func (d *destination) deliver(ctx context.Context, batch []relaykit.Event) error {
	if d.kind != "archive" || ctx.Err() == nil {
		return d.queue.Send(ctx, batch)
	}
	err := d.sink.Send(context.WithoutCancel(ctx), batch)
	written := batch
	if err != nil {
		written = nil
		var be *relaykit.BatchError
		if errors.As(err, &be) && len(be.Failed) > 0 {
			written = batch[:be.Failed[0].From]
		}
	}
	d.stats.delivered.Add(int64(len(written)))
	d.stats.observeDelivered(written)
	return err
}

func (r *Relay) newDestination(name string, dc DestinationConfig) (*destination, error) {
	kind := dc.Spec.kind()
	d := &destination{name: name, kind: kind, ledger: r.ledger, dl: r.dl, log: r.log, tap: r.taps.Point(tapDestination + name)}
	d.stats = r.ledger.dest(name, kind)
	// The sinks make one attempt and report what they did not deliver as
	// a *relaykit.BatchError (with the destination's Retry-After), and the
	// delivery queue in front of them retries (retry.*), spools or
	// dead-letters exactly those events.
	s, err := dc.Spec.newSink(r, name)
	if err != nil {
		return nil, fmt.Errorf("destinations.%s: %w", name, err)
	}
	d.sink, d.closer = s, s
	if a, ok := s.(*storage.Archive); ok {
		d.stats.archive = a
	}
	if err := r.newQueue(d, dc); err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("destinations.%s: %w", name, err)
	}
	return d, nil
}

// newQueue puts the destination's sink behind a delivery queue: a network
// destination's in its own spool directory, the archive's in memory
// (delivery.Memory: retried on the caller's goroutine, no disk of its own).
func (r *Relay) newQueue(d *destination, dc DestinationConfig) error {
	mode, full, dir, memory := delivery.Memory, delivery.Block, "", 0
	qs, retry := dc.Spec.queueSettings()
	if qs != nil {
		mode, full, memory = spoolModes[qs.Spool.Mode], spoolFulls[qs.Spool.Full], qs.Queue
		dir = filepath.Join(r.cfg.Spool.Dir, storage.SanitizeFileName(d.name))
	}
	q, err := delivery.New(d.sink, delivery.Config{
		Name:           d.name,
		Dir:            dir,
		Mode:           mode,
		Full:           full,
		MaxBytes:       int64(r.cfg.Spool.MaxSize),
		Fsync:          r.cfg.Spool.Fsync,
		MemoryBatches:  memory,
		RetryBudget:    retry.MaxElapsed,
		MaxAttempts:    retry.MaxAttempts,
		InitialBackoff: retry.InitialBackoff,
		MaxBackoff:     retry.MaxBackoff,
		ProbeInterval:  r.cfg.Spool.ReplayInterval,
		DeadLetter:     d.deadLetter,
		Hooks: delivery.Hooks{
			// Events and the requests a sink encoded ahead alike.
			OnDeliveredRun: func(n int, oldest, newest int64) {
				d.stats.delivered.Add(int64(n))
				d.stats.observeDeliveredRun(n, oldest, newest) // latency histogram (metrics.go)
			},
			OnDrop: func(_, reason string, n int) { d.drop(queueDropReason(reason), int64(n)) },
		},
		Logger: r.log,
	})
	if err != nil {
		return err
	}
	d.queue = q
	d.stats.queue = q
	return nil
}

// deadLetter keeps the events a destination refused as bad data in the
// dead-letter file, counted as dropped(rejected).
func (d *destination) deadLetter(_ context.Context, evs []relaykit.Event, reason string, _ error) error {
	var err error
	for i := range evs {
		err = errors.Join(err, d.dl.Write("destination:"+d.name, string(evs[i].Host), reason, evs[i].Raw))
	}
	if err != nil {
		return fmt.Errorf("dead letter: %w", err) // the queue counts them dropped under reason
	}
	d.drop(dropRejected, int64(len(evs)))
	return nil
}

// refused counts the events of a Send the destination did not accept:
// those a *relaykit.BatchError lists, or all. A batch the queue dropped by
// its full policy is counted by the queue already; what the shutdown
// deadline cut short is dropped{shutdown}.
func (d *destination) refused(evs []relaykit.Event, err error) {
	if errors.Is(err, delivery.ErrDropped) {
		return
	}
	n := len(evs)
	var be *relaykit.BatchError
	if errors.As(err, &be) {
		n = be.Events()
	}
	reason := dropSinkError
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		reason = dropShutdown
	}
	d.drop(reason, int64(n))
}

func (d *destination) drop(reason string, n int64) {
	d.stats.dropped.Add(n)
	d.ledger.drop(reason, n)
}

// queueDropReason maps a delivery.Queue drop reason to the ledger's: the
// same names, except the sink's permanent failures that no dead letter
// took (rejected, too_large, unauthorized), counted as rejected.
func queueDropReason(reason string) string {
	switch reason {
	case relaykit.ReasonSpoolFull, relaykit.ReasonSpoolOldest, relaykit.ReasonSpoolCorrupt, relaykit.ReasonShutdown:
		return reason
	}
	return dropRejected
}

// Close closes the queue (the relay has stopped its sender) and the sink.
func (d *destination) Close() error {
	var err error
	if d.queue != nil {
		err = d.queue.Close(context.Background())
	}
	if d.closer != nil {
		err = errors.Join(err, d.closer.Close())
	}
	if err != nil {
		return fmt.Errorf("destination %s: %w", d.name, err)
	}
	return nil
}
