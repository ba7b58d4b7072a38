package dest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/storage"
	"github.com/relaykit/relaykit/tap"
)

// destination is one configured destination as the routes see it.
//
// A network destination (HEC, Sentinel, syslog, Kafka) is its sink behind
// a delivery.Queue: Send returns once the batch is accepted under the
// queue's mode (on disk for spool mode always), and the queue's sender
// delivers it in order, spooling through outages. The archive is written
// by the worker that routes the batch: Send returns once the lines are in
// the file.
type Destination struct {
	name, kind string
	sink       relaykit.Sink   // the destination itself
	Queue      *delivery.Queue // nil for the archive
	closer     io.Closer
	Stats      *ledger.DestStats
	ledger     *ledger.Ledger
	dl         *ledger.DeadLetter
	log        *slog.Logger
	tap        *tap.Point // destination:NAME: each batch Send was given, with its outcome
}

// Name names the destination in the router's stats, hooks and errors.
func (d *Destination) Name() string { return d.name }

// Send implements relaykit.Sink for the router.
func (d *Destination) Send(ctx context.Context, batch []relaykit.Event) error {
	if len(batch) == 0 {
		return nil
	}
	d.Stats.In.Add(int64(len(batch)))
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
func (d *Destination) deliver(ctx context.Context, batch []relaykit.Event) error {
	if d.kind != "archive" || ctx.Err() == nil {
		return d.Queue.Send(ctx, batch)
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
	d.Stats.Delivered.Add(int64(len(written)))
	d.Stats.ObserveDelivered(written)
	return err
}

// destEnv is what a destination is built with: the parts of the service
// it reports to and shares, never the service itself.
type Env struct {
	Ledger     *ledger.Ledger     // its counters (Ledger.dest) and drops
	DeadLetter *ledger.DeadLetter // the events it rejects as bad data
	Taps       *tap.Registry      // its tap point, destination:NAME
	Spool      config.SpoolConfig // the spool section: directory, size, fsync
	Loc        *time.Location     // the archive's timezone
	Log        *slog.Logger
}

// newDestination builds the destination name of dc: its sink behind its
// delivery queue.
func New(name string, dc config.DestinationConfig, env Env) (*Destination, error) {
	kind := dc.Spec.Kind()
	d := &Destination{name: name, kind: kind, ledger: env.Ledger, dl: env.DeadLetter, log: env.Log, tap: env.Taps.Point(tapDestination + name)}
	d.Stats = env.Ledger.Dest(name, kind)
	// The sinks make one attempt and report what they did not deliver as
	// a *relaykit.BatchError (with the destination's Retry-After), and the
	// delivery queue in front of them retries (retry.*), spools or
	// dead-letters exactly those events.
	s, err := NewSink(dc.Spec, SinkEnv{Loc: env.Loc, Log: env.Log}, name)
	if err != nil {
		return nil, fmt.Errorf("destinations.%s: %w", name, err)
	}
	d.sink, d.closer = s, s
	if a, ok := s.(*storage.Archive); ok {
		d.Stats.Archive = a
	}
	if err := newQueue(d, dc, env); err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("destinations.%s: %w", name, err)
	}
	return d, nil
}

// newQueue puts the destination's sink behind a delivery queue: a network
// destination's in its own spool directory, the archive's in memory
// (delivery.Memory: retried on the caller's goroutine, no disk of its own).
func newQueue(d *Destination, dc config.DestinationConfig, env Env) error {
	mode, full, dir, memory := delivery.Memory, delivery.Block, "", 0
	qs, retry := dc.Spec.QueueConfig()
	if qs != nil {
		mode, full, memory = config.SpoolModes[qs.Spool.Mode], config.SpoolFulls[qs.Spool.Full], qs.Queue
		dir = filepath.Join(env.Spool.Dir, storage.SanitizeFileName(d.name))
	}
	q, err := delivery.New(d.sink, delivery.Config{
		Name:           d.name,
		Dir:            dir,
		Mode:           mode,
		Full:           full,
		MaxBytes:       int64(env.Spool.MaxSize),
		Fsync:          env.Spool.Fsync,
		MemoryBatches:  memory,
		RetryBudget:    retry.MaxElapsed,
		MaxAttempts:    retry.MaxAttempts,
		InitialBackoff: retry.InitialBackoff,
		MaxBackoff:     retry.MaxBackoff,
		ProbeInterval:  env.Spool.ReplayInterval,
		DeadLetter:     d.deadLetter,
		Hooks: delivery.Hooks{
			// Events and the requests a sink encoded ahead alike.
			OnDeliveredRun: func(n int, oldest, newest int64) {
				d.Stats.Delivered.Add(int64(n))
				d.Stats.ObserveDeliveredRun(n, oldest, newest) // latency histogram (package ledger)
			},
			OnDrop: func(_, reason string, n int) { d.drop(queueDropReason(reason), int64(n)) },
		},
		Logger: env.Log,
	})
	if err != nil {
		return err
	}
	d.Queue = q
	d.Stats.Queue = q
	d.Stats.Spooled = qs != nil
	return nil
}

// deadLetter keeps the events a destination refused as bad data in the
// dead-letter file, counted as dropped(rejected).
func (d *Destination) deadLetter(_ context.Context, evs []relaykit.Event, reason string, _ error) error {
	var err error
	for i := range evs {
		err = errors.Join(err, d.dl.Write("destination:"+d.name, string(evs[i].Host), reason, evs[i].Raw))
	}
	if err != nil {
		return fmt.Errorf("dead letter: %w", err) // the queue counts them dropped under reason
	}
	d.drop(ledger.DropRejected, int64(len(evs)))
	return nil
}

// refused counts the events of a Send the destination did not accept:
// those a *relaykit.BatchError lists, or all. A batch the queue dropped by
// its full policy is counted by the queue already; what the shutdown
// deadline cut short is dropped{shutdown}.
func (d *Destination) Refused(evs []relaykit.Event, err error) {
	if errors.Is(err, delivery.ErrDropped) {
		return
	}
	n := len(evs)
	var be *relaykit.BatchError
	if errors.As(err, &be) {
		n = be.Events()
	}
	reason := ledger.DropSinkError
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		reason = ledger.DropShutdown
	}
	d.drop(reason, int64(n))
}

func (d *Destination) drop(reason string, n int64) {
	d.Stats.Dropped.Add(n)
	d.ledger.Drop(reason, n)
}

// queueDropReason maps a delivery.Queue drop reason to the ledger's: the
// same names, except the sink's permanent failures that no dead letter
// took (rejected, too_large, unauthorized), counted as rejected.
func queueDropReason(reason string) string {
	switch reason {
	case relaykit.ReasonSpoolFull, relaykit.ReasonSpoolOldest, relaykit.ReasonSpoolCorrupt, relaykit.ReasonShutdown:
		return reason
	}
	return ledger.DropRejected
}

// Close closes the queue (the relay has stopped its sender) and the sink.
func (d *Destination) Close() error {
	var err error
	if d.Queue != nil {
		err = d.Queue.Close(context.Background())
	}
	if d.closer != nil {
		err = errors.Join(err, d.closer.Close())
	}
	if err != nil {
		return fmt.Errorf("destination %s: %w", d.name, err)
	}
	return nil
}

// tapDestination names a destination's tap point, "destination:NAME":
// each batch its Send was given, with its outcome.
const tapDestination = "destination:"
