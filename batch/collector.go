package batch

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/relaykit/relaykit/clock"
)

// adderSpins is how many times Add tries the lock before parking.
const adderSpins = 100

// errRunTwice is returned by a second call of Run.
var errRunTwice = errors.New("batch: Run called more than once")

// buffer is one batch: the open one, one waiting for a flusher, one being
// flushed, or a free one. There are MaxInFlight+1 buffers.
type buffer[T any] struct {
	items   []T
	bytes   int
	id      uint64 // set when the first item is added; increases in Add order
	firstAt int64  // clock reading when the first item was added, in ns
	reason  Reason
	pending bool // cut and not yet flushed (or dropped)
}

// Collector gathers items added by many goroutines into batches and hands
// each batch to a flush function; see the package documentation for the
// flush rules.
//
// A Collector is safe for concurrent use by multiple goroutines. [Collector.Run]
// must be running for batches to be flushed; it owns the timer and the
// flushing goroutines.
type Collector[T any] struct {
	cfg   Config[T]
	flush func(context.Context, []T) error
	clock *clock.Clock // cheap clock for the first-item stamp
	now   func() int64 // clock.Nano; tests replace it (export_test.go)
	slack time.Duration

	free     chan *buffer[T] // buffers nobody holds
	ready    chan *buffer[T] // batches cut, waiting for a flusher (FIFO)
	arm      chan struct{}   // a batch received its first item
	stopping chan struct{}   // closed when the collector closes

	// flushing holds a token while a goroutine runs inline flushes
	// (Config.InlineFlush): flushes run one at a time, in ready's order.
	// A channel rather than a mutex, so that waiting for it can end with
	// a context.
	flushing chan struct{}

	mu          sync.Mutex
	open        *buffer[T] // nil when every buffer is busy
	closed      bool
	running     bool
	abandoned   bool // the drain deadline passed: drop what is still queued
	cancelFlush context.CancelFunc
	flushCtx    context.Context // of inline flushes: Run's (see start), or one Close cancels
	bufs        []*buffer[T]    // all buffers, for Flush and Close to scan
	progress    chan struct{}   // closed when a batch completes, if waited on
	nextID      uint64
	stats       Stats
}

// NewCollector returns a collector that passes batches to flush. It copies
// cfg, fills defaults and returns an error wrapping [ErrInvalidConfig] if cfg
// is invalid. It panics if flush is nil.
//
// flush is called from the goroutines of [Collector.Run], by up to
// cfg.MaxInFlight at once, and must be safe for that. The batch it receives
// is never empty and is valid only until flush returns: the collector reuses
// the slice for later batches, so flush must not retain it (copy what must
// outlive the call). An error returned by flush is reported to
// Hooks.OnFlushError together with the batch and counted in [Stats]; it is
// never retried by the collector. flush must not call Flush or Close on
// its own collector: they wait for the flush in progress. The context passed to flush is Run's
// context, detached from its cancellation: flushes keep running while Run
// drains, and their context is canceled when the drain deadline passes.
func NewCollector[T any](cfg Config[T], flush func(context.Context, []T) error) (*Collector[T], error) {
	if flush == nil {
		panic("batch: NewCollector with nil flush function")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	n := cfg.MaxInFlight + 1
	c := &Collector[T]{
		cfg:      cfg,
		flush:    flush,
		clock:    cfg.Clock,
		free:     make(chan *buffer[T], n),
		ready:    make(chan *buffer[T], n),
		arm:      make(chan struct{}, 1),
		stopping: make(chan struct{}),
		flushing: make(chan struct{}, 1),
	}
	if c.clock == nil {
		c.clock = clock.Default()
	}
	c.slack = c.clock.Resolution()
	c.now = c.clock.Nano
	if cfg.InlineFlush {
		// Inline flushes may start before Run: the drain deadline of
		// Close cancels them too.
		c.flushCtx, c.cancelFlush = context.WithCancel(context.Background())
	}
	for range n {
		b := new(buffer[T])
		c.bufs = append(c.bufs, b)
		c.free <- b
	}
	return c, nil
}

// Add appends v to the open batch and returns nil, cutting the batch when a
// limit is reached (see the package documentation). The collector stores v
// as given: memory v refers to must not change until v has been flushed.
//
// Add does not wait while a batch buffer is available. When all
// MaxInFlight+1 buffers are taken (MaxInFlight batches being flushed and the
// next one full as well), Add blocks until a flush completes or ctx ends, in
// which case it returns ctx.Err() and v is not added. After Close, or once Run's context has ended, Add returns
// [ErrClosed].
func (c *Collector[T]) Add(ctx context.Context, v T) error {
	size := c.sizeOf(&v)
	c.lockAdder()
	if err := c.addLocked(ctx, &v, size); err != nil {
		return err // unlocked
	}
	c.mu.Unlock()
	c.flushCut(ctx)
	return nil
}

// AddBatch adds the items in order, as if by calling Add for each, but
// takes the collector's lock once rather than once per item while buffers
// are available: it is the cheap way to hand over what a queue drained. The
// items are copied; the slice is not retained. It returns the number of
// items added, which is less than len(items) only with an error: ctx's error
// if it had to wait and ctx ended, or [ErrClosed]. Other goroutines' items
// are not interleaved with these while AddBatch holds the lock, which it
// releases only to wait for a free buffer.
func (c *Collector[T]) AddBatch(ctx context.Context, items []T) (int, error) {
	c.lockAdder()
	if c.closed {
		c.mu.Unlock()
		return 0, ErrClosed
	}
	for i := range items {
		if err := c.addLocked(ctx, &items[i], c.sizeOf(&items[i])); err != nil {
			c.flushCut(ctx)
			return i, err // unlocked
		}
	}
	c.mu.Unlock()
	c.flushCut(ctx)
	return len(items), nil
}

// flushCut flushes, with Config.InlineFlush, the batches cut and not yet
// taken by a flush (see flushReady). It is called without c.mu.
func (c *Collector[T]) flushCut(ctx context.Context) {
	if c.cfg.InlineFlush && len(c.ready) > 0 {
		_ = c.flushReady(ctx)
	}
}

// flushReady flushes the batches waiting in ready, in order, on the calling
// goroutine (Config.InlineFlush). If another goroutine is flushing, it
// waits for that flush until ctx ends, in which case it returns ctx.Err()
// and leaves the batches to that goroutine, which looks at ready again
// after it lets go of the flush token. It is called without c.mu.
func (c *Collector[T]) flushReady(ctx context.Context) error {
	select {
	case c.flushing <- struct{}{}:
	default:
		select {
		case c.flushing <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.mu.Lock()
	fctx := c.flushCtx
	c.mu.Unlock()
	for {
		c.flushQueued(fctx)
		<-c.flushing
		// A batch cut after the last look, by a goroutine that then found
		// the token taken, is ours unless another goroutine took it since.
		if len(c.ready) == 0 {
			return nil
		}
		select {
		case c.flushing <- struct{}{}:
		default:
			return nil
		}
	}
}

// flushQueued flushes what ready holds, holding the flush token.
func (c *Collector[T]) flushQueued(ctx context.Context) {
	for {
		select {
		case b, ok := <-c.ready:
			if !ok {
				return
			}
			_ = c.flushOne(ctx, b) // reported through hooks and Stats
		default:
			return
		}
	}
}

// lockAdder takes c.mu for an adder. Critical sections under c.mu last tens
// of nanoseconds, so an adder that finds the lock taken retries a bounded
// number of times before parking: with more adders than processors,
// sync.Mutex.Lock does not spin (another goroutine is runnable), and parking
// and waking cost far more than the wait.
func (c *Collector[T]) lockAdder() {
	for range adderSpins {
		if c.mu.TryLock() {
			return
		}
	}
	c.mu.Lock()
}

// sizeOf returns the size of *v in bytes, 0 without a Size function.
func (c *Collector[T]) sizeOf(v *T) int {
	if c.cfg.Size == nil {
		return 0
	}
	return max(c.cfg.Size(*v), 0)
}

// addLocked appends *v, whose size is size, to the open batch. It is called
// with c.mu held and returns nil with c.mu held, or an error with c.mu
// released.
func (c *Collector[T]) addLocked(ctx context.Context, v *T, size int) error {
	var b *buffer[T]
	for {
		if c.closed {
			c.mu.Unlock()
			return ErrClosed
		}
		b = c.open
		if b == nil {
			if err := c.acquireLocked(ctx); err != nil {
				return err // unlocked
			}
			continue
		}
		if c.cfg.MaxBytes > 0 && len(b.items) > 0 && b.bytes+size > c.cfg.MaxBytes {
			c.cutLocked(ReasonBytes)
			continue
		}
		break
	}
	if b.items == nil {
		b.items = make([]T, 0, c.cfg.MaxEvents)
	}
	b.items = append(b.items, *v)
	b.bytes += size
	c.stats.Items++
	if len(b.items) == 1 {
		c.startLocked(b)
	}
	if len(b.items) >= c.cfg.MaxEvents {
		c.cutLocked(ReasonSize)
	} else if c.cfg.MaxBytes > 0 && b.bytes >= c.cfg.MaxBytes {
		c.cutLocked(ReasonBytes)
	}
	return nil
}

// startLocked stamps the first item of b and tells Run to arm the timer.
func (c *Collector[T]) startLocked(b *buffer[T]) {
	c.nextID++
	b.id = c.nextID
	if c.cfg.MaxWait > 0 {
		b.firstAt = c.now()
		select {
		case c.arm <- struct{}{}:
		default: // a signal is pending; Run reads the current batch
		}
	}
}

// acquireLocked installs a free buffer as the open batch, waiting for one if
// needed. It returns with c.mu held and nil, or without it and ctx's error or
// ErrClosed.
func (c *Collector[T]) acquireLocked(ctx context.Context) error {
	select {
	case b := <-c.free:
		c.open = b
		return nil
	default:
	}
	c.mu.Unlock()
	if c.cfg.InlineFlush {
		// Every buffer is cut: flush what waits (or wait for the flush
		// in progress), which frees one; the caller looks again.
		if err := c.flushReady(ctx); err != nil {
			return err
		}
		c.mu.Lock()
		return nil
	}
	select {
	case b := <-c.free:
		c.mu.Lock()
		if c.open == nil && !c.closed {
			c.open = b
		} else {
			c.free <- b // never blocks: cap(free) is the number of buffers
		}
		return nil
	case <-c.stopping:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cutLocked hands the open batch, which must not be empty, to the flushers
// and installs a free buffer if there is one.
func (c *Collector[T]) cutLocked(r Reason) {
	b := c.open
	b.reason = r
	c.open = nil
	b.pending = true
	c.stats.PendingItems += len(b.items)
	switch r {
	case ReasonSize:
		c.stats.Batches.Size++
	case ReasonBytes:
		c.stats.Batches.Bytes++
	case ReasonTime:
		c.stats.Batches.Time++
	case ReasonManual:
		c.stats.Batches.Manual++
	case ReasonClose:
		c.stats.Batches.Close++
	}
	c.ready <- b // never blocks: cap(ready) is the number of buffers
	select {
	case nb := <-c.free:
		c.open = nb
	default:
	}
}

// Flush cuts the open batch, if it has items (an empty batch is never
// flushed), and waits until it and every batch cut before it have been
// flushed, or until ctx ends, in which case it returns ctx.Err(). It returns
// nil even if a flush failed: flush errors go to Hooks.OnFlushError and
// [Stats]. Run must be running for Flush to complete. After Close it returns
// [ErrClosed].
func (c *Collector[T]) Flush(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	if c.open != nil && len(c.open.items) > 0 {
		c.cutLocked(ReasonManual)
	}
	target := c.nextID
	if c.cfg.InlineFlush {
		c.mu.Unlock()
		if err := c.flushReady(ctx); err != nil {
			return err
		}
		c.mu.Lock()
	}
	return c.waitLocked(ctx, target)
}

// waitLocked waits, with c.mu held, until no batch with an id up to target
// is pending. It returns with c.mu released.
func (c *Collector[T]) waitLocked(ctx context.Context, target uint64) error {
	for {
		done := true
		for _, b := range c.bufs {
			if b.pending && b.id <= target {
				done = false
				break
			}
		}
		if done {
			c.mu.Unlock()
			return nil
		}
		if c.progress == nil {
			c.progress = make(chan struct{})
		}
		ch := c.progress
		c.mu.Unlock()
		select {
		case <-ch:
			c.mu.Lock()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// start marks the collector running (for Run or Pump) and returns the
// context flushes run under: ctx's values without its cancellation, ended
// by cancel. It returns ErrClosed after Close and errRunTwice when Run or
// Pump already runs.
func (c *Collector[T]) start(ctx context.Context) (context.Context, context.CancelFunc, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, ErrClosed
	}
	if c.running {
		return nil, nil, errRunTwice
	}
	c.running = true
	flushCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if c.cfg.InlineFlush {
		// Flushes that started before Run keep the earlier context; the
		// drain deadline cancels both, and closeInline ends them, not
		// Run's return (Run returns as soon as Close is called, while
		// Close may still be flushing).
		prev := c.cancelFlush
		c.cancelFlush = func() { prev(); cancel() }
		c.flushCtx = flushCtx
		return flushCtx, func() {}, nil
	}
	c.cancelFlush = cancel
	return flushCtx, cancel, nil
}

// Run flushes batches until ctx ends or [Collector.Close] is called. It owns
// the MaxWait timer and the MaxInFlight goroutines that call the flush
// function; it is meant to run on its own goroutine, for example under an
// errgroup, for the collector's whole life.
//
// When ctx ends, Run closes the collector (Add then returns [ErrClosed]),
// cuts the open batch and waits up to Config.DrainTimeout for every cut
// batch to be flushed. It returns nil if they were, or a [*DrainError]
// (matching [ErrDrainTimeout]) with the count of items not flushed. Either
// way it waits for its goroutines before returning: a flush function that
// ignores the cancellation of its context delays Run's return.
//
// When Close is called, Run returns nil once its goroutines are done; Close
// reports the outcome of the drain. If the collector is already closed (Close
// may win the race with a Run just started on another goroutine), Run
// returns nil at once: Close has flushed what there was. Run returns an
// error if it is already running.
func (c *Collector[T]) Run(ctx context.Context) error {
	flushCtx, cancel, err := c.start(ctx)
	if errors.Is(err, ErrClosed) {
		return nil
	}
	if err != nil {
		return err
	}
	defer cancel()

	var wg sync.WaitGroup
	for range c.flushers() {
		wg.Go(func() { c.work(flushCtx) })
	}
	err = c.loop(ctx)
	wg.Wait()
	return err
}

// loop runs the MaxWait timer until ctx ends or the collector closes.
func (c *Collector[T]) loop(ctx context.Context) error {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var armed uint64 // id of the batch the timer is set for
	for {
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.DrainTimeout)
			defer cancel()
			return c.close(dctx, false)
		case <-c.stopping:
			return nil
		case <-c.arm:
			c.mu.Lock()
			if b := c.open; b != nil && len(b.items) > 0 && b.id != armed {
				armed = b.id
				timer.Reset(c.remaining(b.firstAt))
			}
			c.mu.Unlock()
		case <-timer.C:
			c.mu.Lock()
			if b := c.open; b != nil && len(b.items) > 0 && b.id == armed && !c.closed {
				c.cutLocked(ReasonTime)
			}
			c.mu.Unlock()
			c.flushCut(ctx)
		}
	}
}

// flushers returns the number of flushing goroutines Run and Pump start:
// none with InlineFlush.
func (c *Collector[T]) flushers() int {
	if c.cfg.InlineFlush {
		return 0
	}
	return c.cfg.MaxInFlight
}

// remaining returns how long the batch that started at firstAt may still
// stay open. The cheap clock lags real time by up to its resolution, so only
// a delay beyond that (Run woke late) is subtracted: a batch is not cut
// before MaxWait has passed, as far as the cached clock can tell.
func (c *Collector[T]) remaining(firstAt int64) time.Duration {
	late := time.Duration(c.now()-firstAt) - c.slack
	if late <= 0 {
		return c.cfg.MaxWait
	}
	return max(c.cfg.MaxWait-late, 0)
}

// work is one flushing goroutine: it flushes cut batches in FIFO order
// until the collector closes and the queue is empty.
func (c *Collector[T]) work(ctx context.Context) {
	for b := range c.ready {
		_ = c.flushOne(ctx, b) // reported through hooks and Stats
	}
}

// flushOne calls the flush function for b (or drops b after the drain
// deadline), reports the outcome and returns b to the free list.
func (c *Collector[T]) flushOne(ctx context.Context, b *buffer[T]) error {
	n, size := len(b.items), b.bytes
	c.mu.Lock()
	drop := c.abandoned
	if !drop {
		c.stats.InFlight++
	}
	c.mu.Unlock()

	var err error
	if drop {
		if h := c.cfg.Hooks.OnDrop; h != nil {
			h(b.items, DropDrainTimeout)
		}
	} else {
		start := time.Now()
		err = c.flush(ctx, b.items)
		took := time.Since(start)
		if err != nil {
			if h := c.cfg.Hooks.OnFlushError; h != nil {
				h(b.items, err)
			}
		}
		if h := c.cfg.Hooks.OnFlush; h != nil {
			h(b.reason, n, size, took)
		}
	}
	clear(b.items) // release what the items refer to
	b.items = b.items[:0]
	b.bytes = 0

	c.mu.Lock()
	switch {
	case drop:
		c.stats.DroppedItems += uint64(n)
	case err != nil:
		c.stats.InFlight--
		c.stats.FlushErrors++
		c.stats.FailedItems += uint64(n)
	default:
		c.stats.InFlight--
		c.stats.FlushedItems += uint64(n)
	}
	c.stats.PendingItems -= n
	b.pending = false
	if c.progress != nil {
		close(c.progress)
		c.progress = nil
	}
	c.free <- b // never blocks: cap(free) is the number of buffers; wakes a blocked Add
	c.mu.Unlock()
	return err
}

// Close closes the collector: Add and Flush then return [ErrClosed], and Run
// returns nil. It cuts the open batch, if it has items, and waits until
// every cut batch has been flushed, or until ctx ends. In that case it cancels the context
// of the flushes still running, has the batches still waiting for a flusher
// dropped (Hooks.OnDrop) and returns a [*DrainError], matching
// [ErrDrainTimeout], with the number of items not flushed; Run returns once
// the running flushes return.
//
// If Run is not running, Close flushes the remaining batches itself, on the
// calling goroutine, with ctx. Close is idempotent: later calls return nil.
func (c *Collector[T]) Close(ctx context.Context) error {
	return c.close(ctx, true)
}

// close implements Close and the end of Run. fromClose tells whether the
// caller is Close (which must flush by itself when Run is not running).
func (c *Collector[T]) close(ctx context.Context, fromClose bool) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	if c.open != nil && len(c.open.items) > 0 {
		c.cutLocked(ReasonClose)
	}
	close(c.ready) // every send on ready happens under c.mu with !c.closed
	close(c.stopping)
	if c.cfg.InlineFlush {
		c.mu.Unlock()
		return c.closeInline(ctx)
	}
	if fromClose && !c.running {
		c.mu.Unlock()
		return c.drainInline(ctx)
	}
	if err := c.waitLocked(ctx, c.nextID); err != nil {
		c.mu.Lock()
		c.abandoned = true
		n := c.stats.PendingItems
		cancel := c.cancelFlush
		c.mu.Unlock()
		cancel()
		return &DrainError{Unflushed: n, Err: context.Cause(ctx)}
	}
	return nil
}

// closeInline ends close with Config.InlineFlush: the closer flushes what
// waits, after the flush in progress on another goroutine, if any. If ctx
// ends while that flush runs, its context is canceled, as Run's flushers'
// would be, and the batches behind it are dropped.
func (c *Collector[T]) closeInline(ctx context.Context) error {
	c.mu.Lock()
	cancel := c.cancelFlush
	c.mu.Unlock()
	defer cancel() // nothing flushes after close
	select {
	case c.flushing <- struct{}{}:
	case <-ctx.Done():
		c.mu.Lock()
		c.abandoned = true
		n := c.stats.PendingItems
		c.mu.Unlock()
		cancel()
		c.flushing <- struct{}{} // the flush in progress returns, the rest is dropped
		<-c.flushing
		return &DrainError{Unflushed: n, Err: context.Cause(ctx)}
	}
	defer func() { <-c.flushing }()
	return c.drainInline(ctx)
}

// drainInline flushes the queued batches on the calling goroutine; used by
// Close when Run is not running.
func (c *Collector[T]) drainInline(ctx context.Context) error {
	unflushed := 0
	for b := range c.ready {
		n := len(b.items)
		if ctx.Err() != nil {
			c.mu.Lock()
			c.abandoned = true
			c.mu.Unlock()
			unflushed += n
			_ = c.flushOne(ctx, b) // drops b
			continue
		}
		if err := c.flushOne(ctx, b); err != nil && ctx.Err() != nil {
			unflushed += n // the flush was cut short by the deadline
		}
	}
	if unflushed > 0 {
		return &DrainError{Unflushed: unflushed, Err: context.Cause(ctx)}
	}
	return nil
}
