package batch

import (
	"context"
	"fmt"
	"sync"
)

// Queue is the consumer side of a bounded queue that [Collector.Pump]
// drains into a collector. *ringbuffer.MPSC[T] satisfies it; so does any
// type with these two methods and this behaviour.
type Queue[T any] interface {
	// PopBatch waits until at least one item is ready, moves up to len(dst)
	// items into dst, oldest first, and returns how many. It returns a
	// non-nil error only when the queue is closed and every item accepted
	// before Close has been returned, or when ctx ends (then ctx.Err()).
	PopBatch(ctx context.Context, dst []T) (int, error)
	// Close stops the queue from accepting items; items already accepted
	// are still returned by PopBatch. It must be idempotent and safe to call
	// from any goroutine.
	Close() error
}

// DropCanceled is the reason given to Hooks.OnDrop for items
// [Collector.Pump] took from its queue but could not add because the
// collector was closed under it (by [Collector.Close]).
const DropCanceled = "canceled"

// pumpBatch is the most items Pump moves from the queue per PopBatch call.
const pumpBatch = 256

// Pump runs the collector fed from q: it is [Collector.Run] plus the
// consumer of q, with the shutdown order that loses nothing. Call it instead
// of Run (not as well), on its own goroutine, for the collector's whole life;
// q's producers push into q from any number of goroutines.
//
// Pump moves items from q into the collector in slices of up to 256 (one
// PopBatch and one [Collector.AddBatch] per slice, into a buffer allocated
// once per call: no allocation per item), so a queue that runs ahead of the
// flushes makes Pump, not the producers' pushes, wait in AddBatch, and q
// fills up until its producers see backpressure.
//
// Shutdown begins either when ctx ends or when q is closed by its owner.
// When ctx ends, Pump closes q (its producers get the queue's closed error)
// and starts a drain budget of Config.DrainTimeout. It then, in order:
//
//  1. moves every item q accepted into the collector (PopBatch until q
//     reports closed and drained);
//  2. closes the collector: the open batch is cut and every cut batch is
//     flushed;
//  3. waits for the flushes and returns.
//
// A shutdown that begins with q being closed has the same steps and the
// same budget, counted from the moment Pump saw q closed and drained.
//
// Pump returns nil when every item was flushed (a flush that returned an
// error counts as flushed here: it went to Hooks.OnFlushError). If the drain
// budget runs out first, the items still in q and those Pump holds are
// handed to Hooks.OnDrop with reason [DropDrainTimeout], the collector is
// abandoned as [Collector.Close] describes, and Pump returns a [*DrainError]
// counting every item not flushed. Either way every item q accepted is
// flushed, failed or dropped, each with its hook and its count in [Stats]
// (which counts the items Pump dropped before adding them in Items and
// DroppedItems, so its ledger still balances).
//
// If [Collector.Close] is called while Pump runs, Pump hands the items it
// holds to Hooks.OnDrop with reason [DropCanceled] and returns [ErrClosed];
// items left in q are the caller's. Pump returns ErrClosed at once if the
// collector was closed before, and an error if Run or Pump is already
// running.
func (c *Collector[T]) Pump(ctx context.Context, q Queue[T]) error {
	flushCtx, cancel, err := c.start(ctx)
	if err != nil {
		return err
	}
	defer cancel()

	// popCtx is ctx that also ends when the collector is closed under Pump
	// (by Close), so a PopBatch waiting on an idle queue notices.
	popCtx, endPop := context.WithCancel(ctx)
	defer endPop()
	var wg sync.WaitGroup
	for range c.flushers() {
		wg.Go(func() { c.work(flushCtx) })
	}
	// The timer loop ends when the collector closes (c.stopping), not with
	// ctx: shutdown is the pump's to order.
	wg.Go(func() {
		_ = c.loop(context.WithoutCancel(ctx))
		endPop()
	})
	err = c.pump(ctx, popCtx, q)
	wg.Wait()
	return err
}

// pump is the consumer loop of Pump; see there for the order of shutdown.
// popCtx is ctx, also ended when the collector closes.
func (c *Collector[T]) pump(ctx, popCtx context.Context, q Queue[T]) error {
	buf := make([]T, min(c.cfg.MaxEvents, pumpBatch))
	var (
		drain   context.Context    // the drain budget, once shutdown began
		stop    context.CancelFunc // releases drain's timer
		dropped int                // items dropped at the drain deadline
	)
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	startDrain := func() {
		_ = q.Close()
		drain, stop = context.WithTimeout(context.WithoutCancel(ctx), c.cfg.DrainTimeout)
		popCtx = drain
	}
	for {
		n, perr := q.PopBatch(popCtx, buf)
		for items := buf[:n]; len(items) > 0; {
			k, aerr := c.AddBatch(popCtx, items)
			items = items[k:]
			switch {
			case aerr == nil:
			case aerr == ErrClosed:
				c.dropItems(items, DropCanceled)
				clear(buf)
				return fmt.Errorf("batch: Pump: collector closed while pumping: %w", ErrClosed)
			case drain == nil:
				// ctx ended while AddBatch waited for a flusher: shutdown
				// begins, and the rest is added under the drain budget.
				startDrain()
			default:
				// The drain budget ran out while AddBatch waited.
				dropped += len(items)
				c.dropItems(items, DropDrainTimeout)
				items = nil
			}
		}
		clear(buf[:n]) // release what the items refer to
		if perr == nil {
			continue
		}
		if drain == nil && c.isClosed() {
			return fmt.Errorf("batch: Pump: collector closed while pumping: %w", ErrClosed)
		}
		if drain == nil && ctx.Err() != nil {
			startDrain() // the shutdown signal: close q, then drain it
			continue
		}
		if drain != nil && drain.Err() != nil {
			// Out of budget. q is closed, so what it still holds (a push
			// that claimed a slot before Close publishes it within
			// nanoseconds) comes back at once: sweep waits on no deadline.
			dropped += c.sweep(q, buf)
			break
		}
		// q is closed and drained.
		if drain == nil {
			startDrain()
		}
		break
	}
	cerr := c.close(drain, false)
	if dropped == 0 {
		return cerr
	}
	if de, ok := cerr.(*DrainError); ok {
		de.Unflushed += dropped
		return de
	}
	return &DrainError{Unflushed: dropped, Err: context.Cause(drain)}
}

// isClosed reports whether the collector is closed.
func (c *Collector[T]) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// sweep empties q, which must be closed, handing what it held to OnDrop,
// and returns how many items that was.
func (c *Collector[T]) sweep(q Queue[T], buf []T) int {
	total := 0
	for {
		n, err := q.PopBatch(context.Background(), buf)
		if n > 0 {
			total += n
			c.dropItems(buf[:n], DropDrainTimeout)
			clear(buf[:n])
		}
		if err != nil {
			return total
		}
	}
}

// dropItems reports items that never reached a batch to Hooks.OnDrop and
// counts them as accepted and dropped.
func (c *Collector[T]) dropItems(items []T, reason string) {
	if len(items) == 0 {
		return
	}
	if h := c.cfg.Hooks.OnDrop; h != nil {
		h(items, reason)
	}
	c.mu.Lock()
	c.stats.Items += uint64(len(items))
	c.stats.DroppedItems += uint64(len(items))
	c.mu.Unlock()
}
