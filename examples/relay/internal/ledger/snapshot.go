package ledger

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Snapshot is a point-in-time copy of the ledger's totals.
type Snapshot struct {
	Received    int64
	ParseErrors int64
	Truncated   int64
	Invalid     int64
	Routed      int64
	Queued      int64
	Delivered   int64 // forward destinations
	Archived    int64 // archive destinations
	Spooled     int64 // accepted by destinations, not yet delivered (pending)
	Dropped     map[string]int64
	// Reduced counts, by step (suppress, aggregate), the events a step
	// absorbed into a summary; Produced the summaries the steps emitted.
	Reduced, Produced map[string]int64
	// Copies counts the events routes added: non-final routes' copies and
	// the extra destinations a route lists (see ledger).
	Copies int64
	Dest   map[string]DestSnapshot
	Input  map[string]int64 // received per input
	// DeadLetterErrors counts the lines the dead-letter file failed to
	// take (their events are counted as dropped all the same).
	DeadLetterErrors int64
}

// DestSnapshot is one destination's counters.
type DestSnapshot struct {
	In, Delivered, Recovered, Dropped int64
	// Pending is what the destination accepted and has not delivered:
	// Backlog (events in the spool, in spool mode always memory's too)
	// and Memory hold it, and Spooled counts every event ever written to
	// the spool.
	Pending, Backlog, BacklogBytes, Memory, Spooled int64
	// Healthy reports whether the destination took the last batch sent;
	// DiskFailing whether its spool refuses writes (batches then wait in
	// memory until delivered).
	Healthy, DiskFailing bool
}

// Unaccounted is what the destination cannot account for: events handed
// to it (or found in its spool at startup) that are neither delivered,
// dropped nor pending. It is zero, always.
func (d DestSnapshot) Unaccounted() int64 {
	return d.In + d.Recovered - d.Delivered - d.Dropped - d.Pending
}

// ReducedTotal sums Reduced over the steps.
func (s Snapshot) ReducedTotal() int64 { return sumCounts(s.Reduced) }

// ProducedTotal sums Produced over the steps.
func (s Snapshot) ProducedTotal() int64 { return sumCounts(s.Produced) }

func sumCounts(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// DroppedTotal sums the drop reasons.
func (s Snapshot) DroppedTotal() int64 {
	var n int64
	for _, v := range s.Dropped {
		n += v
	}
	return n
}

func (l *Ledger) Snapshot() Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := Snapshot{Dropped: map[string]int64{}, Dest: map[string]DestSnapshot{}, Input: map[string]int64{},
		Reduced: map[string]int64{}, Produced: map[string]int64{}}
	// The engine first: an event it counted received is then routed,
	// queued or dropped by the time the rest is read.
	es := l.Engine.Stats()
	s.Copies = l.copiesLocked()
	s.Reduced, s.Produced = l.reduced.nonZero(), l.produced.nonZero()
	for _, in := range es.Inputs {
		s.Input[in.Name] += in.Received
	}
	for _, in := range l.inputs {
		c := in.Counts()
		s.ParseErrors += c.ParseErrors
		s.Truncated += c.Truncated
		s.Invalid += c.Invalid
	}
	s.Received, s.Routed, s.Queued = es.Received, es.Routed, es.Queued
	s.DeadLetterErrors = l.deadLetterErrors.Load()
	maps.Copy(s.Dropped, es.Dropped)
	for r, v := range l.dropped.nonZero() {
		s.Dropped[r] += v
	}
	for _, d := range l.dests {
		ds := d.Snapshot()
		s.Dest[d.Name] = ds
		if d.Kind == "archive" {
			s.Archived += ds.Delivered
		} else {
			s.Delivered += ds.Delivered
		}
		s.Spooled += ds.Pending
	}
	return s
}

// snapshot reads the destination's counters and its queue's.
func (d *DestStats) Snapshot() DestSnapshot {
	ds := DestSnapshot{In: d.In.Load(), Delivered: d.Delivered.Load(), Dropped: d.Dropped.Load(), Healthy: d.healthy.Load()}
	if d.Queue == nil {
		return ds
	}
	// Read the queue after the relay's own counters: its Pending then
	// never misses an event the hooks counted out meanwhile.
	q := d.Queue.Stats()
	ds.Recovered, ds.Pending, ds.Healthy, ds.DiskFailing = q.Recovered, q.Pending, q.Healthy, q.DiskFailing
	ds.Backlog, ds.BacklogBytes, ds.Memory = q.SpoolEvents, q.SpoolBytes, q.MemoryEvents
	ds.Spooled = q.Spool.AppendedEvents + q.Retry.AppendedEvents
	return ds
}

// String is the one-line summary printed by -stats and at shutdown.
func (s Snapshot) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "received=%d routed=%d delivered=%d archived=%d spooled=%d dropped=%d",
		s.Received, s.Routed, s.Delivered, s.Archived, s.Spooled, s.DroppedTotal())
	if len(s.Dropped) > 0 {
		keys := make([]string, 0, len(s.Dropped))
		for k := range s.Dropped {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%s=%d", k, s.Dropped[k])
		}
		b.WriteString("}")
	}
	fmt.Fprintf(&b, " reduced=%d", s.ReducedTotal())
	writeCounts(&b, s.Reduced)
	fmt.Fprintf(&b, " produced=%d", s.ProducedTotal())
	writeCounts(&b, s.Produced)
	fmt.Fprintf(&b, " queued=%d parse_errors=%d truncated=%d dead_letter_errors=%d", s.Queued, s.ParseErrors, s.Truncated, s.DeadLetterErrors)
	return b.String()
}

// writeCounts writes m as {k=v,...} in key order, nothing when empty.
func writeCounts(b *strings.Builder, m map[string]int64) {
	if len(m) == 0 {
		return
	}
	b.WriteString("{")
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(b, "%s=%d", k, m[k])
	}
	b.WriteString("}")
}
