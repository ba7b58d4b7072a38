package batch

// Stats is a snapshot of a collector's counters, taken by [Collector.Stats].
// All item counters count items, not bytes. Once the collector is closed
// and Run has returned, Items == FlushedItems + FailedItems + DroppedItems.
// At any time, Items == FlushedItems + FailedItems + DroppedItems +
// PendingItems + OpenItems.
type Stats struct {
	// Items is the number of items accepted by Add.
	Items uint64
	// Batches counts the batches cut (handed to the flushers), by reason.
	Batches BatchCounts
	// FlushedItems is the number of items in flushes that returned nil.
	FlushedItems uint64
	// FlushErrors is the number of flush calls that returned an error.
	FlushErrors uint64
	// FailedItems is the number of items in flushes that returned an error
	// (each was reported to Hooks.OnFlushError).
	FailedItems uint64
	// DroppedItems is the number of items given up without a flush because
	// the drain deadline passed (each was reported to Hooks.OnDrop).
	DroppedItems uint64
	// OpenItems and OpenBytes describe the open batch: its number of items
	// and its size in bytes (0 without Config.Size).
	OpenItems, OpenBytes int
	// PendingItems is the number of items in batches cut and not yet
	// completed: waiting for a flusher or being flushed.
	PendingItems int
	// PendingBatches is the number of such batches (at most MaxInFlight+1).
	PendingBatches int
	// InFlight is the number of flush calls running now.
	InFlight int
}

// BatchCounts counts batches by [Reason].
type BatchCounts struct {
	// Size counts batches cut at MaxEvents.
	Size uint64
	// Bytes counts batches cut because the next item would pass MaxBytes
	// (or one item was larger than MaxBytes on its own).
	Bytes uint64
	// Time counts batches cut by MaxWait since their first item.
	Time uint64
	// Manual counts batches cut by Flush.
	Manual uint64
	// Close counts batches cut by Close or the end of Run's context.
	Close uint64
}

// Total returns the number of batches for all reasons.
func (b BatchCounts) Total() uint64 {
	return b.Size + b.Bytes + b.Time + b.Manual + b.Close
}

// Stats returns a consistent snapshot of the collector's counters. It takes
// the collector's lock briefly and is safe to call at any time.
func (c *Collector[T]) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	if b := c.open; b != nil {
		s.OpenItems, s.OpenBytes = len(b.items), b.bytes
	}
	for _, b := range c.bufs {
		if b.pending {
			s.PendingBatches++
		}
	}
	return s
}
