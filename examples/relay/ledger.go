package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/storage"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/udp"
)

// clock is the relay's coarse clock: receive times, batch stamps and the
// storage writers' rotation checks read it instead of calling time.Now per
// event. Relay.Run runs it; it sleeps while the relay is idle.
var clock = engine.NewClock(time.Millisecond)

// Drop reasons the relay counts itself (metric labels); the inputs' own
// (queue_full, rcvbuf_full, invalid_json, shutdown_unqueued, rate_limit) are counted by
// the engine.
const (
	dropUnrouted     = relaykit.ReasonUnrouted     // no route matched
	dropFiltered     = relaykit.ReasonFiltered     // a pipeline step dropped it (drop, sample)
	dropSpoolFull    = relaykit.ReasonSpoolFull    // the destination's spool was full (policy drop_newest)
	dropSpoolOldest  = relaykit.ReasonSpoolOldest  // spooled, then discarded for room (policy drop_oldest)
	dropSpoolCorrupt = relaykit.ReasonSpoolCorrupt // destroyed on disk: a damaged spool record or a missing segment
	dropRejected     = relaykit.ReasonRejected     // destination refused it as bad data (dead-lettered)
	dropSinkError    = relaykit.ReasonSinkError    // a sink the router could not hand it to
	dropShutdown     = relaykit.ReasonShutdown     // the shutdown deadline came before a destination accepted it

	// The inputs' reasons, counted by the engine.
	dropQueueFull   = relaykit.ReasonQueueFull        // UDP datagram arrived while the worker ring was full
	dropInvalidJSON = relaykit.ReasonInvalidJSON      // JSON line (or Kafka record) failed validation (dead-lettered)
	dropRcvbuf      = relaykit.ReasonRcvbufFull       // the kernel dropped a UDP datagram: the socket buffer (read_buffer) was full
	dropUnqueued    = relaykit.ReasonShutdownUnqueued // read, but the shutdown deadline came before the engine took it
	dropRateLimit   = relaykit.ReasonRateLimit        // over its source's rate limit (sources.rate_limit)
)

// dropReasons are the labels of relay_dropped_events_total: every reason
// of relaykit's, the engine's and the relay's.
var dropReasons = relaykit.Reasons

// inputStats counts one input. Fields are updated with atomics by the
// input's goroutines.
type inputStats struct {
	name, kind  string
	in          *engine.Input // received events and the input's drops
	bytes       atomic.Int64
	parseErrors atomic.Int64 // forwarded raw with FlagParseError
	truncated   atomic.Int64 // frames cut at the max message size
	invalid     atomic.Int64 // JSON lines that failed validation
	// kernelDropped counts UDP datagrams the kernel dropped at the input's
	// socket (SO_RXQ_OVFL); they are in received and dropped{rcvbuf_full}.
	kernelDropped atomic.Int64

	// udp is a UDP input's listener: its reads, read errors and kernel
	// drops.
	udp *udp.Listener

	// Stream inputs (syslog TCP/TLS, JSON lines): the listener's
	// connection counters, the framers' byte accounting, and the budget
	// of their read buffers.
	listener *stream.Listener
	framing  stream.Counters
	buffers  *stream.ReadBudget
}

// destStats counts one destination. A network destination's queue keeps
// the rest (backlog, memory, spool damage): see DestSnapshot.
type destStats struct {
	name, kind string
	in         atomic.Int64 // events the router handed to the destination
	delivered  atomic.Int64 // accepted by the destination (or written, for archives)
	dropped    atomic.Int64 // lost with a reason counted in the ledger
	healthy    atomic.Bool  // archive: the last write succeeded
	queue      *delivery.Queue
	archive    *storage.Archive // archives: its write counts
	latency    latencyHist      // receive -> delivered
}

// latencyBounds are the upper bounds, in seconds, of the buckets of
// relay_destination_latency_seconds.
var latencyBounds = [...]float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// latencyBoundsNs are latencyBounds in nanoseconds.
var latencyBoundsNs = func() (b [len(latencyBounds)]int64) {
	for i, s := range latencyBounds {
		b[i] = int64(s * 1e9)
	}
	return b
}()

// latencyHist is a histogram of receive -> delivered times. A batch is
// bucketed locally and then added with one atomic add per non-empty
// bucket, so a batch costs one clock read and a few atomics, not a
// histogram update per event.
type latencyHist struct {
	buckets [len(latencyBounds) + 1]atomic.Uint64 // last: +Inf
	count   atomic.Uint64
	sumNs   atomic.Int64
}

// observeDelivered records the receive -> delivered time of every event of
// batch (events without a receive time are skipped), with one clock read
// for the batch. Call it where a batch counts as delivered.
func (s *destStats) observeDelivered(batch []relaykit.Event) {
	if len(batch) == 0 {
		return
	}
	now := time.Now().UnixNano()
	var local [len(latencyBounds) + 1]uint64
	var n uint64
	var sum int64
	for i := range batch {
		rt := batch[i].ReceiveTime
		if rt == 0 {
			continue
		}
		d := max(now-rt, 0)
		b := 0
		for b < len(latencyBoundsNs) && d > latencyBoundsNs[b] {
			b++
		}
		local[b]++
		n++
		sum += d
	}
	if n == 0 {
		return
	}
	h := &s.latency
	for b, v := range local {
		if v != 0 {
			h.buckets[b].Add(v)
		}
	}
	h.sumNs.Add(sum)
	h.count.Add(n)
}

// observeDeliveredRun records the receive -> delivered times of a run of n
// delivered events of which only the oldest and newest receive times are
// known (a request the delivery queue stored encoded): spread evenly
// between them. Unknown times (zero) record nothing.
func (s *destStats) observeDeliveredRun(n int, oldest, newest int64) {
	if n <= 0 || oldest == 0 {
		return
	}
	now := time.Now().UnixNano()
	lo, hi := max(now-newest, 0), max(now-oldest, 0)
	var local [len(latencyBounds) + 1]uint64
	var sum int64
	for i := range n {
		d := lo + int64(float64(hi-lo)*(float64(2*i+1)/float64(2*n)))
		b := 0
		for b < len(latencyBoundsNs) && d > latencyBoundsNs[b] {
			b++
		}
		local[b]++
		sum += d
	}
	h := &s.latency
	for b, v := range local {
		if v != 0 {
			h.buckets[b].Add(v)
		}
	}
	h.sumNs.Add(sum)
	h.count.Add(uint64(n))
}

// ledger is the relay's accounting. Stage by stage it balances:
//
//	received (inputs)   = routed + dropped{queue_full, invalid_json, rcvbuf_full, shutdown_unqueued, rate_limit} + queued   (the engine's Stats)
//	routed + copies + produced (route table)
//	                    = sum of in_d + dropped{unrouted, filtered} + reduced{step}
//	in_d + recovered_d  = delivered_d + dropped_d + pending_d
//
// where pending_d is what destination d accepted and has not delivered yet
// (on disk in spool mode always, in memory or on disk in on_failure; its
// delivery queue counts it exactly, and recovered_d, the backlog found on
// disk at startup, from the spool's record headers).
//
// The route table's line: reduced{step} counts the events a suppress or
// aggregate step absorbed (not dropped: a summary stands for them) and
// produced{step} the summaries those steps emitted, new events that then
// reach destinations or are dropped like any other; copies counts what
// routes add, a non-final route's copy of an event and each destination
// past the first that a route lists. With final routes to one destination
// each (the default config), copies is zero and routed + produced = what
// reached destinations + dropped after routing + reduced, so received =
// delivered + archived + spooled (pending) + dropped{reason} + reduced -
// produced once nothing is queued.
type ledger struct {
	mu      sync.Mutex
	eng     *engine.Engine // received, routed, queued, the inputs' drops
	inputs  []*inputStats
	dests   []*destStats
	dropped [32]atomic.Int64 // after routing, by index in relaykit.Reasons; last: other
	start   time.Time

	deadLettered     atomic.Int64 // lines written to the dead-letter file
	deadLetterErrors atomic.Int64 // writes to it that failed (the line is lost)

	// Reduction, by index in reduceSteps (last: other): events absorbed,
	// summaries emitted.
	reduced, produced [3]atomic.Int64
	// tables are the route tables whose copies count (see routeTable),
	// retiredCopies those of the tables reloads retired. Under mu.
	tables        []routeTable
	retiredCopies int64
}

func newLedger() *ledger { return &ledger{start: time.Now()} }

func (l *ledger) input(name, kind string) *inputStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &inputStats{name: name, kind: kind, in: l.eng.NewInput(name)}
	l.inputs = append(l.inputs, s)
	return s
}

func (l *ledger) dest(name, kind string) *destStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &destStats{name: name, kind: kind}
	s.healthy.Store(true)
	l.dests = append(l.dests, s)
	return s
}

func (l *ledger) drop(reason string, n int64) {
	i := slices.Index(relaykit.Reasons, reason)
	if i < 0 || i >= len(l.dropped)-1 {
		i = len(l.dropped) - 1
	}
	l.dropped[i].Add(n)
}

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

func (l *ledger) Snapshot() Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := Snapshot{Dropped: map[string]int64{}, Dest: map[string]DestSnapshot{}, Input: map[string]int64{},
		Reduced: map[string]int64{}, Produced: map[string]int64{}}
	// The engine first: an event it counted received is then routed,
	// queued or dropped by the time the rest is read.
	es := l.eng.Stats()
	s.Copies = l.copiesLocked()
	for i := range l.reduced {
		if v := l.reduced[i].Load(); v != 0 {
			s.Reduced[stepLabel(i)] = v
		}
		if v := l.produced[i].Load(); v != 0 {
			s.Produced[stepLabel(i)] = v
		}
	}
	for _, in := range es.Inputs {
		s.Input[in.Name] += in.Received
	}
	for _, in := range l.inputs {
		s.ParseErrors += in.parseErrors.Load()
		s.Truncated += in.truncated.Load()
		s.Invalid += in.invalid.Load()
	}
	s.Received, s.Routed, s.Queued = es.Received, es.Routed, es.Queued
	s.DeadLetterErrors = l.deadLetterErrors.Load()
	maps.Copy(s.Dropped, es.Dropped)
	for i := range l.dropped {
		if v := l.dropped[i].Load(); v != 0 {
			r := "other"
			if i < len(relaykit.Reasons) && i < len(l.dropped)-1 {
				r = relaykit.Reasons[i]
			}
			s.Dropped[r] += v
		}
	}
	for _, d := range l.dests {
		ds := d.snapshot()
		s.Dest[d.name] = ds
		if d.kind == "archive" {
			s.Archived += ds.Delivered
		} else {
			s.Delivered += ds.Delivered
		}
		s.Spooled += ds.Pending
	}
	return s
}

// snapshot reads the destination's counters and its queue's.
func (d *destStats) snapshot() DestSnapshot {
	ds := DestSnapshot{In: d.in.Load(), Delivered: d.delivered.Load(), Dropped: d.dropped.Load(), Healthy: d.healthy.Load()}
	if d.queue == nil {
		return ds
	}
	// Read the queue after the relay's own counters: its Pending then
	// never misses an event the hooks counted out meanwhile.
	q := d.queue.Stats()
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
