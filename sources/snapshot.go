package sources

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Source is a snapshot of one key's statistics.
type Source struct {
	// Key is the source.
	Key Key
	// State is the key's state at the last tick (waiting or not is
	// current).
	State State
	// Expected reports whether the key is in Policy.Expected.
	Expected bool
	// Input is the name of the input the key was last seen on, through an
	// [Input] or a Handle taken from one; empty if none.
	Input string
	// Events and Bytes count everything the key sent since it was first
	// tracked (restored counts included), dropped events too.
	Events, Bytes uint64
	// FirstSeen and LastSeen are the times of its first and latest event,
	// to within the clock's resolution; zero if it has not sent.
	FirstSeen, LastSeen time.Time
	// Rate is the key's recent rate in events per second: an
	// exponentially weighted moving average with time constant
	// Config.RateWindow, updated once per Resolution.
	Rate float64
	// Dropped counts the events its rate limit refused in drop mode
	// ([Handle.Allow], [Tracker.AllowAddr]).
	Dropped uint64
	// Paced counts the events beyond its rate limit in pace mode: those
	// for which [Handle.Pace] returned a wait. PacedFor is the sum of the
	// waits.
	Paced    uint64
	PacedFor time.Duration
	// SilentAfter is the key's silence threshold (overrides applied);
	// zero means never silent.
	SilentAfter time.Duration
	// LimitEventsPerSecond and LimitBurst are the key's rate limit
	// (overrides applied); zero means none.
	LimitEventsPerSecond float64
	LimitBurst           int
}

// Limited returns Dropped + Paced: the events over the key's limit.
func (s *Source) Limited() uint64 { return s.Dropped + s.Paced }

// snapshot copies e into a Source.
func snapshot(e *entry) Source {
	s := Source{
		Key:       e.key,
		State:     stateOf(e),
		Expected:  e.expected.Load(),
		Events:    e.events.Load(),
		Bytes:     e.bytes.Load(),
		FirstSeen: timeOf(e.firstSeen.Load()),
		LastSeen:  timeOf(e.lastSeen.Load()),
		Rate:      math.Float64frombits(e.rate.Load()),
		Dropped:   e.dropped.Load(),
		Paced:     e.paced.Load(),
		PacedFor:  time.Duration(e.pacedNs.Load()),
	}
	if in := e.input.Load(); in != nil {
		s.Input = *in
	}
	if sa := e.silentAfter.Load(); sa > 0 {
		s.SilentAfter = time.Duration(sa)
	}
	if em := e.emission.Load(); em > 0 {
		s.LimitEventsPerSecond = 1e9 / float64(em)
		s.LimitBurst = int(e.tolerance.Load() / em)
	}
	return s
}

// Order is the order of [Tracker.Sources].
type Order uint8

// Orders of [Tracker.Sources]. All but ByKey put the largest first; ties
// are in key order.
const (
	// ByKey orders by [Key.Compare].
	ByKey Order = iota
	// ByEvents orders by Source.Events.
	ByEvents
	// ByBytes orders by Source.Bytes.
	ByBytes
	// ByRate orders by Source.Rate.
	ByRate
	// ByDropped orders by Source.Dropped.
	ByDropped
	// ByLimited orders by Source.Limited (dropped plus paced events).
	ByLimited
	// ByLastSeen orders by Source.LastSeen, most recent first.
	ByLastSeen
)

// Query selects and orders the sources [Tracker.Sources] returns.
// The zero Query returns every key in key order.
type Query struct {
	// State selects the keys in that state; StateAny selects all.
	State State
	// Input, if not empty, selects the keys last seen on that input.
	Input string
	// By is the order.
	By Order
	// Top is the number of sources returned at most (the first in the
	// order). Zero means all. With ByDropped or ByLimited, keys with
	// nothing dropped or paced are left out (the "top limited" list).
	Top int
}

// Sources appends to dst a snapshot of the keys q selects, in q's order,
// and returns the extended slice. Each key's fields are read atomically
// one by one, not as a whole. It costs O(keys) plus a sort of the keys
// selected; it does not block inputs for longer than one shard's scan.
func (t *Tracker) Sources(dst []Source, q Query) []Source {
	if t == nil {
		return dst
	}
	base := len(dst)
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		s.each(func(e *entry) {
			src := snapshot(e)
			if (q.State != StateAny && src.State != q.State) || (q.Input != "" && src.Input != q.Input) {
				return
			}
			if (q.By == ByDropped && src.Dropped == 0) || (q.By == ByLimited && src.Limited() == 0) {
				return
			}
			dst = append(dst, src)
		})
		s.mu.Unlock()
	}
	sel := dst[base:]
	slices.SortFunc(sel, func(a, b Source) int {
		var c int
		switch q.By {
		case ByEvents:
			c = cmp.Compare(b.Events, a.Events)
		case ByBytes:
			c = cmp.Compare(b.Bytes, a.Bytes)
		case ByRate:
			c = cmp.Compare(b.Rate, a.Rate)
		case ByDropped:
			c = cmp.Compare(b.Dropped, a.Dropped)
		case ByLimited:
			c = cmp.Compare(b.Limited(), a.Limited())
		case ByLastSeen:
			c = b.LastSeen.Compare(a.LastSeen)
		}
		if c != 0 {
			return c
		}
		return a.Key.Compare(b.Key)
	})
	if q.Top > 0 && len(sel) > q.Top {
		clear(sel[q.Top:])
		dst = dst[:base+q.Top]
	}
	return dst
}

// Source returns a snapshot of key k, and false if k is not tracked.
func (t *Tracker) Source(k Key) (Source, bool) {
	if t == nil {
		return Source{}, false
	}
	if a, ok := k.Addr(); ok {
		k = AddrKey(a)
	}
	e := t.get(k)
	if e == nil {
		return Source{}, false
	}
	return snapshot(e), true
}

// Stats is a snapshot of a Tracker's counters.
type Stats struct {
	// Keys is the number of keys tracked now, expected ones included.
	Keys int
	// Silent and Limited are the numbers of keys in StateSilent and
	// StateLimited at the last tick.
	Silent, Limited int
	// Evictions counts the keys evicted to make room for new ones.
	Evictions uint64
	// ToSilent and ToActive count the transitions reported.
	ToSilent, ToActive uint64
	// Dropped counts the events refused by rate limits in drop mode;
	// Paced the events over the limit in pace mode, and PacedFor the
	// waits that Pace asked for; over all keys, evicted ones included.
	Dropped, Paced uint64
	PacedFor       time.Duration
}

// Stats returns a snapshot of the tracker's counters. It costs O(keys):
// the limit counters are summed over the keys (while it does, a new key
// that needs an eviction waits).
func (t *Tracker) Stats() Stats {
	if t == nil {
		return Stats{}
	}
	// No key is removed while evictMu is held, so each key's counters are
	// counted once, in its entry or in the evicted sums.
	t.evictMu.Lock()
	defer t.evictMu.Unlock()
	st := Stats{
		Keys:      int(t.count.Load()),
		Silent:    int(t.nSilent.Load()),
		Limited:   int(t.nLimited.Load()),
		Evictions: t.nEvicted.Load(),
		ToSilent:  t.toSilent.Load(),
		ToActive:  t.toActive.Load(),
		Dropped:   t.evictedDropped.Load(),
		Paced:     t.evictedPaced.Load(),
		PacedFor:  time.Duration(t.evictedPacedNs.Load()),
	}
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		s.each(func(e *entry) {
			st.Dropped += e.dropped.Load()
			st.Paced += e.paced.Load()
			st.PacedFor += time.Duration(e.pacedNs.Load())
		})
		s.mu.Unlock()
	}
	return st
}
