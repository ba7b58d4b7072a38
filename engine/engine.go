package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/internal/cfgerr"
)

// Errors returned by the package. Test for them with [errors.Is].
var (
	// ErrInvalidConfig is wrapped by every error [New] returns for a bad
	// [Config].
	ErrInvalidConfig = errors.New("engine: invalid config")
	// ErrClosed is returned by pushes after [Engine.Shutdown] began, and
	// by Run when called twice.
	ErrClosed = errors.New("engine: closed")
	// ErrNotFinished is wrapped by the error of [Mark.Wait] and
	// [Mark.Done] when events of the mark will not be finished: the Sink
	// refused a batch holding some of them, or the engine stopped before
	// routing them (the drain deadline). An acknowledging input then does
	// not acknowledge: its sender sends them again.
	ErrNotFinished = errors.New("engine: events not finished")
)

// Defaults of [Config].
const (
	DefaultRingSize       = 8192
	DefaultBatchMaxEvents = 1000
	DefaultBatchMaxBytes  = 1 << 20
	DefaultBatchMaxWait   = 100 * time.Millisecond
	DefaultWindowTick     = time.Second
)

// WindowFlusher is a Sink whose steps hold events in time windows (the
// reduction steps of a *pipeline.Router or *pipeline.Swapper): Flush ends
// the windows over at now (ns since the Unix epoch) and sends their
// summaries; now = math.MaxInt64 (pipeline.FlushAll) ends every window.
// An engine whose Sink is a WindowFlusher ends its windows itself: see
// [Config].WindowTick.
type WindowFlusher interface {
	Flush(ctx context.Context, now int64) error
}

// Config configures an [Engine]. Only Sink is required; every zero field
// means the documented default.
type Config struct {
	// Sink receives every batch, typically a route table
	// (*pipeline.Router or *pipeline.Swapper) whose routes end in
	// destinations behind delivery queues. It is called by one goroutine
	// at a time per worker, with batches of that worker in order, and
	// must not retain a batch. A nil error means the batch is finished:
	// delivered, durably accepted or dead-lettered (the acknowledgement
	// contract of relaykit.Sink); the engine does not retry.
	Sink relaykit.Sink
	// Workers is the number of workers, each a ring and a batch
	// collector. Zero means runtime.GOMAXPROCS(0).
	Workers int
	// RingSize is the capacity of each worker's ring, in events: a power
	// of two. Zero means 8192.
	RingSize int
	// BatchMaxEvents cuts a batch at this many events. Zero means 1000.
	BatchMaxEvents int
	// BatchMaxBytes cuts a batch at this size (relaykit.Event.Size), in
	// bytes. Zero means 1 MiB.
	BatchMaxBytes int
	// BatchMaxWait bounds how long an event waits for its batch to fill,
	// from the first event of the batch (or its arrival in a ring). Zero
	// means 100 ms.
	BatchMaxWait time.Duration
	// Clock stamps receive times and batches, and gives the time of
	// window ends. Nil means [clock.Default].
	Clock *clock.Clock
	// WindowTick is how often Run ends the windows that are over when the
	// Sink is a [WindowFlusher] (a route table with suppress or aggregate
	// steps): a summary leaves at most WindowTick after its window ends,
	// however quiet its key. Once the workers have routed their last batch
	// at shutdown, Run ends every window that is still open, so no summary
	// waits for a next run. Zero means 1 s; negative means the engine never
	// calls Flush (the caller ends windows itself).
	WindowTick time.Duration
	// Hooks observe the engine.
	Hooks Hooks
	// Logger logs state changes (never events). Nil means no logging.
	Logger *slog.Logger
}

// Hooks are optional callbacks, in the manner of net/http/httptrace. They
// run synchronously on the goroutine that triggered them and must be fast,
// safe for concurrent use, and must not retain their arguments.
type Hooks struct {
	// OnDrop is called when an input's events are dropped: name is the
	// input, reason one of relaykit's Reason constants (queue_full,
	// shutdown_unqueued, or what the input passed to [Input.Drop]).
	OnDrop func(name, reason string, events int)
	// OnSendError is called when the Sink returned an error for a batch of
	// the given number of events (late ones at the drain deadline
	// included). The events of that batch are not finished.
	OnSendError func(err error, events int)
}

// Validate reports whether [New] would accept c: nil, or a
// *relaykit.FieldError wrapping [ErrInvalidConfig].
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

func (c Config) withDefaults() (Config, error) {
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(ErrInvalidConfig, field, format, args...)
	}
	switch {
	case c.Sink == nil:
		return c, bad("Sink", "required")
	case c.Workers < 0:
		return c, bad("Workers", "%d must not be negative", c.Workers)
	case c.RingSize < 0, c.RingSize&(c.RingSize-1) != 0:
		return c, bad("RingSize", "%d is not a power of two", c.RingSize)
	case c.BatchMaxEvents < 0:
		return c, bad("BatchMaxEvents", "%d must not be negative", c.BatchMaxEvents)
	case c.BatchMaxBytes < 0:
		return c, bad("BatchMaxBytes", "%d must not be negative", c.BatchMaxBytes)
	case c.BatchMaxWait < 0:
		return c, bad("BatchMaxWait", "%s must not be negative", c.BatchMaxWait)
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.RingSize == 0 {
		c.RingSize = DefaultRingSize
	}
	if c.BatchMaxEvents == 0 {
		c.BatchMaxEvents = DefaultBatchMaxEvents
	}
	if c.BatchMaxBytes == 0 {
		c.BatchMaxBytes = DefaultBatchMaxBytes
	}
	if c.BatchMaxWait == 0 {
		c.BatchMaxWait = DefaultBatchMaxWait
	}
	if c.WindowTick == 0 {
		c.WindowTick = DefaultWindowTick
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Engine turns the events of inputs into routed batches: per-worker ring
// → batch collector → Sink, with acknowledgements. See the package
// documentation. An Engine is safe for concurrent use by multiple
// goroutines.
type Engine struct {
	cfg     Config
	clock   *clock.Clock
	workers []*worker

	mu     sync.Mutex
	inputs []*Input

	queued     atomic.Int64 // in rings and collectors
	routed     atomic.Int64 // handed to the Sink
	late       atomic.Int64 // routed with an ended context at the drain deadline
	failed     atomic.Int64 // in batches the Sink refused
	sendErrors atomic.Int64

	// hard ends at the drain deadline: Run's context, or Shutdown's when
	// it ends first. Waits inside the engine give up then.
	hard       context.Context
	cancelHard context.CancelFunc
	runBy      atomic.Int32 // runByNone, runByRun or runByShutdown
	closed     atomic.Bool
	runDone    chan struct{}
	runErr     error
}

// New returns an engine configured by cfg, with its rings empty, or a
// *relaykit.FieldError wrapping [ErrInvalidConfig]. Inputs may push
// before Run starts (up to the rings' capacity).
func New(cfg Config) (*Engine, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, clock: cfg.Clock, runDone: make(chan struct{})}
	if e.clock == nil {
		e.clock = clock.Default()
	}
	e.hard, e.cancelHard = context.WithCancel(context.Background())
	for i := range cfg.Workers {
		w, err := newWorker(e, i)
		if err != nil {
			return nil, err
		}
		e.workers = append(e.workers, w)
	}
	return e, nil
}

// Clock returns the engine's clock, for inputs that stamp events
// themselves and for storage writers that should read the same time.
func (e *Engine) Clock() *clock.Clock { return e.clock }

// Workers returns the number of workers.
func (e *Engine) Workers() int { return len(e.workers) }

// Run runs the workers until [Engine.Shutdown]
// has drained them, or ctx ends. ctx is the hard deadline: when it ends,
// pushes still waiting for room give up, and what the rings and collectors
// still hold is routed at once with an ended context (a delivery queue
// still takes what it has room for; what a destination refuses then is
// the Sink's to count), then Run returns. Run may be called once. A Run
// that starts after Shutdown took on its work (see Shutdown) waits for
// that work to end and returns Shutdown's result: a program stopped
// before its Run goroutine started sees no error of its own making.
func (e *Engine) Run(ctx context.Context) error {
	if !e.runBy.CompareAndSwap(runByNone, runByRun) {
		if e.runBy.Load() == runByShutdown {
			// Shutdown came first and did Run's work (a program told to
			// stop before its Run goroutine started): its result is Run's.
			<-e.runDone
			return e.runErr
		}
		return fmt.Errorf("engine: Run called twice: %w", ErrClosed)
	}
	return e.run(ctx)
}

// Who runs the workers (Engine.runBy).
const (
	runByNone int32 = iota
	runByRun
	runByShutdown
)

func (e *Engine) run(ctx context.Context) error {
	defer close(e.runDone)
	stop := context.AfterFunc(ctx, func() {
		e.cancelHard()
		e.closeRings()
	})
	defer stop()
	flusher, _ := e.cfg.Sink.(WindowFlusher)
	if e.cfg.WindowTick < 0 {
		flusher = nil
	}
	var ticking sync.WaitGroup
	stopTicks := make(chan struct{})
	if flusher != nil {
		ticking.Go(func() { e.endWindows(flusher, stopTicks) })
	}
	errs := make([]error, len(e.workers))
	var workers sync.WaitGroup
	for i, w := range e.workers {
		workers.Go(func() { errs[i] = w.run() })
	}
	workers.Wait()
	close(stopTicks)
	ticking.Wait()
	if flusher != nil {
		// Every batch is routed: the windows still open end now, their
		// summaries sent before Run returns (with the hard deadline's
		// context, like the last batches).
		if err := flusher.Flush(e.hard, math.MaxInt64); err != nil {
			e.cfg.Logger.Warn("engine: summaries of the open windows not accepted at shutdown", "err", err)
		}
	}
	e.runErr = errors.Join(errs...)
	return e.runErr
}

// endWindows ends the Sink's windows that are over every WindowTick until
// stop is closed. What the Sink refuses is its own to count (the router's
// hooks); it is logged at debug level here.
func (e *Engine) endWindows(f WindowFlusher, stop <-chan struct{}) {
	t := time.NewTicker(e.cfg.WindowTick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if err := f.Flush(e.hard, e.clock.Nano()); err != nil {
				e.cfg.Logger.Debug("engine: summaries not accepted at the end of their window", "err", err)
			}
		}
	}
}

// Shutdown stops the engine gracefully: pushes from now on return
// [ErrClosed], the workers route what the rings and collectors hold, and
// Run returns. If ctx ends first, Shutdown ends the hard deadline as
// Run's context would (see Run) and waits for Run to return. It returns
// Run's error. Without a Run under way, Shutdown does Run's work on the
// calling goroutine. Shutdown is idempotent.
func (e *Engine) Shutdown(ctx context.Context) error {
	e.closeRings()
	if e.runBy.CompareAndSwap(runByNone, runByShutdown) {
		stop := context.AfterFunc(ctx, e.cancelHard)
		defer stop()
		return e.run(context.Background())
	}
	select {
	case <-e.runDone:
	case <-ctx.Done():
		e.cancelHard()
		<-e.runDone
	}
	return e.runErr
}

func (e *Engine) closeRings() {
	if e.closed.Swap(true) {
		return
	}
	for _, w := range e.workers {
		w.closeRing()
	}
}

// worker returns the worker of a shard.
func (e *Engine) worker(shard uint64) *worker { return e.workers[shard%uint64(len(e.workers))] }

// NewInput registers an input under name (used in Stats and hooks) and
// returns its handle. Inputs are not removed; register each once.
func (e *Engine) NewInput(name string) *Input {
	in := &Input{e: e, name: name}
	e.mu.Lock()
	e.inputs = append(e.inputs, in)
	e.mu.Unlock()
	return in
}

// Stats is a snapshot of an engine's counters. For every moment it holds
// that Received = Routed + Queued + the sum of Dropped.
type Stats struct {
	// Received counts events the inputs handed over (and those they
	// counted with [Input.Drop]).
	Received int64
	// Queued is the number of events in rings and collectors now.
	Queued int64
	// Routed counts events handed to the Sink, Late ones included.
	Routed int64
	// Late counts events routed with an ended context at the hard
	// deadline (see [Engine.Run]).
	Late int64
	// SendErrors counts batches the Sink refused, and FailedEvents their
	// events (not finished; see [Mark]).
	SendErrors, FailedEvents int64
	// Dropped counts the inputs' dropped events by reason.
	Dropped map[string]int64
	// Inputs holds each input's counters, in the order they were
	// registered.
	Inputs []InputStats
	// Workers holds each worker's counters.
	Workers []WorkerStats
}

// Stats returns a snapshot of the engine's counters. It reads every
// input's and worker's counters: O(inputs + workers).
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	inputs := slices.Clone(e.inputs)
	e.mu.Unlock()
	s := Stats{Dropped: map[string]int64{}}
	// Inputs first: an event counted received is then in Queued, Routed
	// or Dropped when those are read.
	for _, in := range inputs {
		is := in.Stats()
		s.Inputs = append(s.Inputs, is)
		s.Received += is.Received
		for r, n := range is.Dropped {
			s.Dropped[r] += n
		}
	}
	s.Queued = e.queued.Load()
	s.Routed = e.routed.Load()
	s.Late = e.late.Load()
	s.SendErrors, s.FailedEvents = e.sendErrors.Load(), e.failed.Load()
	for _, w := range e.workers {
		s.Workers = append(s.Workers, w.stats())
	}
	return s
}

// Flush cuts every worker's open batch and routes it now, on the
// caller's goroutine where no other goroutine is draining the worker
// (otherwise that goroutine does). It is what a caller does before a
// route-table reload that must see no old batch, or in tests.
func (e *Engine) Flush(ctx context.Context) error {
	var err error
	for _, w := range e.workers {
		w.consume.Lock()
		w.drainLocked(w.ring.Cap())
		if ferr := w.coll.Flush(ctx); ferr != nil {
			err = errors.Join(err, ferr)
		}
		w.consume.Unlock()
	}
	return err
}
