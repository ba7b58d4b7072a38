package ledger

import (
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	libinput "github.com/relaykit/relaykit/input"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/storage"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/tlscert"
	"github.com/relaykit/relaykit/stream/udp"
)

// Drop reasons the relay counts itself (metric labels); the inputs' own
// (queue_full, rcvbuf_full, invalid_json, shutdown_unqueued, rate_limit) are counted by
// the engine.
const (
	DropUnrouted     = relaykit.ReasonUnrouted     // no route matched
	DropFiltered     = relaykit.ReasonFiltered     // a pipeline step dropped it (drop, sample)
	DropSpoolFull    = relaykit.ReasonSpoolFull    // the destination's spool was full (policy drop_newest)
	DropSpoolOldest  = relaykit.ReasonSpoolOldest  // spooled, then discarded for room (policy drop_oldest)
	DropSpoolCorrupt = relaykit.ReasonSpoolCorrupt // destroyed on disk: a damaged spool record or a missing segment
	DropRejected     = relaykit.ReasonRejected     // destination refused it as bad data (dead-lettered)
	DropSinkError    = relaykit.ReasonSinkError    // a sink the router could not hand it to
	DropShutdown     = relaykit.ReasonShutdown     // the shutdown deadline came before a destination accepted it

	// The inputs' reasons, counted by the engine.
	DropQueueFull   = relaykit.ReasonQueueFull        // UDP datagram arrived while the worker ring was full
	DropInvalidJSON = relaykit.ReasonInvalidJSON      // JSON line (or Kafka record) failed validation (dead-lettered)
	DropRcvbuf      = relaykit.ReasonRcvbufFull       // the kernel dropped a UDP datagram: the socket buffer (read_buffer) was full
	DropUnqueued    = relaykit.ReasonShutdownUnqueued // read, but the shutdown deadline came before the engine took it
	DropRateLimit   = relaykit.ReasonRateLimit        // over its source's rate limit (sources.rate_limit)
)

// dropReasons are the labels of relay_dropped_events_total: every reason
// of relaykit's, the engine's and the relay's.
var dropReasons = relaykit.Reasons

// InputStats counts one input. Fields are updated with atomics by the
// input's goroutines.
type InputStats struct {
	Name, Kind  string
	In          *engine.Input // received events and the input's drops
	Bytes       atomic.Int64
	ParseErrors atomic.Int64 // forwarded raw with FlagParseError
	Truncated   atomic.Int64 // frames cut at the max message size
	Invalid     atomic.Int64 // JSON lines that failed validation
	// kernelDropped counts UDP datagrams the kernel dropped at the input's
	// socket (SO_RXQ_OVFL); they are in received and dropped{rcvbuf_full}.
	KernelDropped atomic.Int64

	// udp is a UDP input's listener: its reads, read errors and kernel
	// drops.
	UDP *udp.Listener

	// Stream inputs (syslog TCP/TLS, JSON lines, RELP, HEC, OTLP): the
	// listener's connection counters, the framers' byte accounting, and
	// the budget of their read buffers.
	Listener *stream.Listener
	Framing  stream.Counters
	Buffers  *stream.ReadBudget
	// Also is a second listener whose counters add to Listener's (an
	// OTLP input's gRPC listener beside its HTTP one); see ListenerStats.
	Also *stream.Listener
	// Proxy is the listeners' PROXY protocol mode (proxy_protocol).
	Proxy stream.ProxyMode
	// Certs is a TLS input's certificate store: its fingerprint, expiry
	// and reloads (the status page, the metrics, SIGHUP).
	Certs *tlscert.Store
	// Lib, when set, is the counters of the library input
	// (github.com/relaykit/relaykit/input) the input is made of (syslog
	// UDP, TCP/TLS and JSON lines): they stand for Bytes, ParseErrors,
	// Truncated, Invalid and Framing. See Counts.
	Lib func() libinput.Stats
	// frames and reads say which of the stream tables the input's
	// metrics export beyond the listener's (metrics.go): its bytes read
	// and frame accounting (not HEC's: no frames, relay_hec_body_bytes_total
	// counts its bodies), and its framers' reads (syslog TCP/TLS, JSON
	// and OTLP; RELP sessions read their own frames).
	Frames, Reads bool
}

// Counts returns the input's counters in the library input's shape
// (libinput.Stats): the library input's own when it has one (Lib), those
// the relay's input counted otherwise.
func (s *InputStats) Counts() libinput.Stats {
	if s.Lib != nil {
		return s.Lib()
	}
	f := &s.Framing
	return libinput.Stats{
		Bytes: s.Bytes.Load(), ParseErrors: s.ParseErrors.Load(), Truncated: s.Truncated.Load(), Invalid: s.Invalid.Load(),
		Framing: libinput.FramingStats{
			Reads: f.Reads.Load(), DiscardedBytes: f.DiscardedBytes.Load(), IncompleteFrames: f.IncompleteFrames.Load(),
			IncompleteBytes: f.IncompleteBytes.Load(), EmptyFrames: f.EmptyFrames.Load(), NULFrames: f.NULFrames.Load(),
			FramingErrors: f.FramingErrors.Load(),
		},
	}
}

// ListenerStats returns the counters of the input's listeners, summed;
// false for an input without one.
func (s *InputStats) ListenerStats() (stream.Stats, bool) {
	if s.Listener == nil {
		return stream.Stats{}, false
	}
	st := s.Listener.Stats()
	if s.Also != nil {
		b := s.Also.Stats()
		sv, bv := reflect.ValueOf(&st).Elem(), reflect.ValueOf(b)
		for i := range sv.NumField() {
			if f := sv.Field(i); f.Kind() == reflect.Int64 {
				f.SetInt(f.Int() + bv.Field(i).Int())
			}
		}
		st.AcceptFailing = st.AcceptFailing || b.AcceptFailing
	}
	return st, true
}

// DestStats counts one destination. A network destination's queue keeps
// the rest (backlog, memory, spool damage): see DestSnapshot.
type DestStats struct {
	Name, Kind string
	In         atomic.Int64 // events the router handed to the destination
	Delivered  atomic.Int64 // accepted by the destination (or written, for archives)
	Dropped    atomic.Int64 // lost with a reason counted in the ledger
	healthy    atomic.Bool  // archive: the last write succeeded
	Queue      *delivery.Queue
	Spooled    bool             // its queue has a spool (not the archive's)
	Archive    *storage.Archive // archives: its write counts
	Latency    latencyHist      // receive -> delivered
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
func (s *DestStats) ObserveDelivered(batch []relaykit.Event) {
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
	h := &s.Latency
	for b, v := range local {
		if v != 0 {
			h.buckets[b].Add(v)
		}
	}
	h.sumNs.Add(sum)
	h.count.Add(n)
}

// ObserveDeliveredRun records the receive -> delivered times of a run of n
// delivered events of which only the oldest and newest receive times are
// known (a request the delivery queue stored encoded): spread evenly
// between them. Unknown times (zero) record nothing.
func (s *DestStats) ObserveDeliveredRun(n int, oldest, newest int64) {
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
	h := &s.Latency
	for b, v := range local {
		if v != 0 {
			h.buckets[b].Add(v)
		}
	}
	h.sumNs.Add(sum)
	h.count.Add(uint64(n))
}

// Ledger is the relay's accounting. Stage by stage it balances:
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
type Ledger struct {
	mu      sync.Mutex
	Engine  *engine.Engine // received, routed, queued, the inputs' drops
	inputs  []*InputStats
	dests   []*DestStats
	dropped counts // after routing, by reason (dropReasons, and other)
	Start   time.Time

	deadLettered     atomic.Int64 // lines written to the dead-letter file
	deadLetterErrors atomic.Int64 // writes to it that failed (the line is lost)

	// Reduction, by step (reduceSteps, and other): events absorbed,
	// summaries emitted.
	reduced, produced counts
	// tables are the route tables whose copies count (see routeTable),
	// retiredCopies those of the tables reloads retired. Under mu.
	tables        []routeTable
	retiredCopies int64
}

func New() *Ledger {
	return &Ledger{Start: time.Now(), dropped: newCounts(dropReasons), reduced: newCounts(reduceSteps), produced: newCounts(reduceSteps)}
}

// counts are counters by label, fixed when made: names, and "other" for
// any other label. Made once, read and added to without a lock.
type counts map[string]*atomic.Int64

func newCounts(names []string) counts {
	c := counts{"other": new(atomic.Int64)}
	for _, n := range names {
		c[n] = new(atomic.Int64)
	}
	return c
}

// add counts n under label, or under other.
func (c counts) add(label string, n int64) {
	v, ok := c[label]
	if !ok {
		v = c["other"]
	}
	v.Add(n)
}

// nonZero returns the counts that are not zero, by label.
func (c counts) nonZero() map[string]int64 {
	m := map[string]int64{}
	for k, v := range c {
		if n := v.Load(); n != 0 {
			m[k] = n
		}
	}
	return m
}

func (l *Ledger) Input(name, kind string) *InputStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &InputStats{Name: name, Kind: kind, In: l.Engine.NewInput(name)}
	l.inputs = append(l.inputs, s)
	return s
}

// Inputs returns the inputs' counters, in the order they were added.
func (l *Ledger) Inputs() []*InputStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.inputs)
}

// Dests returns the destinations' counters, in the order they were added.
func (l *Ledger) Dests() []*DestStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.dests)
}

func (l *Ledger) Dest(name, kind string) *DestStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &DestStats{Name: name, Kind: kind}
	s.healthy.Store(true)
	l.dests = append(l.dests, s)
	return s
}

func (l *Ledger) Drop(reason string, n int64) { l.dropped.add(reason, n) }

// clk is relaykit's process clock (clock.Default): the dead-letter
// writer's time.
var clk = clock.Default()
