package sources

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/relaykit/relaykit/clock"
)

// State flags of an entry (entry.state).
const (
	flagSilent  uint32 = 1 << iota // reported silent, not yet active again
	flagLimited                    // dropped or paced during the last tick
)

// entry is one key's statistics and limiter. A lookup's fields (hash and
// key) come first and the fields inputs write on every event right after
// them, so that a lookup and its event touch the fewest cache lines; the
// rest is written by Run once per tick, or never after creation.
type entry struct {
	hash uint64 // of key; immutable
	key  Key    // immutable

	// Written by inputs.
	lastSeen  atomic.Int64  // ns; 0 = never (an expected key, a Handle's before its first event)
	events    atomic.Uint64 // every event observed, dropped ones included
	bytes     atomic.Uint64
	tat       atomic.Int64           // GCRA theoretical arrival time, ns
	emission  atomic.Int64           // ns per event; 0 = no limit
	tolerance atomic.Int64           // burst * emission, ns
	dead      atomic.Bool            // evicted: a Handle must look its key up again
	expected  atomic.Bool            // pinned: never evicted
	input     atomic.Pointer[string] // the name of the input last seen on; nil = none

	// Written by inputs over their limit.
	dropped atomic.Uint64 // events refused by Allow
	paced   atomic.Uint64 // events over the limit that Pace made wait for
	pacedNs atomic.Int64  // sum of Pace's waits, ns

	// Written once by the first event.
	firstSeen atomic.Int64 // ns; 0 = never

	// Written by Run and SetPolicy, read by readers.
	silentAfter atomic.Int64  // ns; <= 0 = never silent
	watchFrom   atomic.Int64  // ns; when an expected key was added while Run runs
	rate        atomic.Uint64 // float64 bits, events per second
	state       atomic.Uint32 // flagSilent | flagLimited
	rateInit    bool          // tick-owned (below); here to fill state's word

	// Owned by ticks (under tickMu), and by Load before the first tick.
	prevEvents     uint64
	prevLimited    uint64 // dropped + paced at the last tick
	eventsAtSilent uint64 // events when reported silent
	silentLast     int64  // last seen when reported silent, ns; 0 = never
	silentRef      int64  // the time the silence was measured from, ns
}

// candidate is an eviction candidate: an entry and its last seen when the
// candidates were chosen.
type candidate struct {
	e        *entry
	lastSeen int64
}

// Tracker keeps per-source statistics, detects silent sources and applies
// per-source rate limits. See the package documentation.
//
// A Tracker is safe for concurrent use by multiple goroutines. A nil
// *Tracker tracks nothing: its hot-path methods do nothing and allow
// everything, so an input can hold one that is nil when tracking is off.
type Tracker struct {
	shards [nshards]shard

	cfg   Config
	k0    uint64 // hash keys, random
	k1    uint64
	clock *clock.Clock

	pol   atomic.Pointer[policy]
	polMu sync.Mutex // serialises SetPolicy

	count atomic.Int64 // keys tracked, expected ones included

	evictMu  sync.Mutex
	cands    []candidate // oldest first, from candIdx on
	candIdx  int
	scratch  []candidate
	nEvicted atomic.Uint64

	// Counters of evicted keys, so that totals survive evictions.
	evictedDropped atomic.Uint64
	evictedPaced   atomic.Uint64
	evictedPacedNs atomic.Int64

	running    atomic.Bool
	started    atomic.Bool
	watchStart atomic.Int64 // ns; when Run started
	nSilent    atomic.Int64
	nLimited   atomic.Int64
	toSilent   atomic.Uint64
	toActive   atomic.Uint64
	tickMu     sync.Mutex   // serialises ticks; guards the Run-owned fields
	pending    []Transition // under tickMu, reused
	lastTick   int64        // under tickMu

	saveMu sync.Mutex
}

// New returns a Tracker configured by cfg, with its expected keys in place.
// The error wraps [ErrInvalidConfig] when cfg is invalid. It starts no
// goroutine: run [Tracker.Run] for silence detection, rates, the own clock
// and the state file's saves.
func New(cfg Config) (*Tracker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	pol, err := compilePolicy(cfg.Policy)
	if err != nil {
		return nil, err
	}
	if len(pol.expected) >= cfg.MaxSources {
		return nil, fmt.Errorf("%w: %d expected keys with MaxSources %d (it must be larger)", ErrInvalidConfig, len(pol.expected), cfg.MaxSources)
	}
	t := &Tracker{cfg: cfg, k0: rand.Uint64(), k1: rand.Uint64() | 1, clock: cfg.Clock}
	if t.clock == nil {
		t.clock = clock.Default()
	}
	for i := range t.shards {
		t.shards[i].init()
	}
	t.pol.Store(pol)
	t.addExpected(pol)
	return t, nil
}

// nowNano reads the clock.
func (t *Tracker) nowNano() int64 { return t.clock.Nano() }

// lookupAddr returns the entry of address a, creating it if needed.
func (t *Tracker) lookupAddr(a netip.Addr) *entry {
	a = a.Unmap()
	h := t.hashAddr(a)
	s := t.shardOf(h)
	if e := s.findAddr(h, a); e != nil {
		return e
	}
	return t.insert(s, h, &entry{key: Key{addr: a}})
}

// lookupHost returns the entry of host b, creating it if needed. It does
// not allocate for a known host.
func (t *Tracker) lookupHost(b []byte) *entry {
	if len(b) > MaxHostLen {
		b = b[:MaxHostLen]
	}
	h := t.hashHost(b)
	s := t.shardOf(h)
	if e := s.findHost(h, b); e != nil {
		return e
	}
	return t.insert(s, h, newHostEntry(b))
}

// lookup returns the entry of k, creating it if needed.
func (t *Tracker) lookup(k Key) *entry {
	h := t.hashKey(k)
	s := t.shardOf(h)
	if e := s.find(h, k); e != nil {
		return e
	}
	return t.insert(s, h, newKeyEntry(k))
}

// get returns the entry of k, or nil.
func (t *Tracker) get(k Key) *entry {
	h := t.hashKey(k)
	return t.shardOf(h).find(h, k)
}

// newKeyEntry returns a fresh entry for k: a host key's text is copied
// (as newHostEntry does).
func newKeyEntry(k Key) *entry {
	if k.isHost {
		return newHostEntry(k.host)
	}
	return &entry{key: k}
}

// inlineHost is the longest host kept in its entry's allocation.
const inlineHost = 32

// hostEntry is an entry whose host key's text is in the same allocation,
// just before it: a lookup's comparison of the text then reads memory
// next to the entry's hash (and saves the text's own allocation).
type hostEntry struct {
	text [inlineHost]byte
	e    entry
}

// newHostEntry returns a fresh entry for the host key of text b (cut to
// MaxHostLen by the caller), holding a copy of b: in the entry's own
// allocation when it is short (inlineHost bytes), else as a string.
// The key's string then points into the allocation, which no one writes
// again, and which a Source's Key keeps alive (a few hundred bytes).
func newHostEntry[T string | []byte](b T) *entry {
	if len(b) > inlineHost || len(b) == 0 {
		return &entry{key: Key{host: string(b), isHost: true}}
	}
	he := &hostEntry{}
	n := copy(he.text[:], b)
	he.e.key = Key{host: unsafe.String(&he.text[0], n), isHost: true}
	return &he.e
}

// newEntry fills e, a fresh entry, with its hash and its policy.
func (t *Tracker) newEntry(e *entry, h uint64, pol *policy) *entry {
	e.hash = h
	t.applyPolicy(e, pol)
	return e
}

// applyPolicy sets e's silence threshold, limit and expected flag from pol.
func (t *Tracker) applyPolicy(e *entry, pol *policy) {
	sa, lim := pol.resolve(e.key)
	e.silentAfter.Store(sa)
	e.tolerance.Store(lim.tolerance)
	e.emission.Store(lim.emission)
	_, exp := pol.expected[e.key]
	e.expected.Store(exp)
}

// insert adds e, a fresh entry of hash h's key, to s, evicting the least
// recently seen key when the table is full, and returns it (or the entry
// another goroutine added first).
func (t *Tracker) insert(s *shard, h uint64, e *entry) *entry {
	t.newEntry(e, h, t.pol.Load())
	t.reserve()
	s.mu.Lock()
	if old := s.find(h, e.key); old != nil {
		s.mu.Unlock()
		t.count.Add(-1)
		return old
	}
	s.put(e)
	s.mu.Unlock()
	return e
}

// reserve takes one slot of the table, evicting a key if it is full.
func (t *Tracker) reserve() {
	for {
		n := t.count.Load()
		if n < int64(t.cfg.MaxSources) {
			if t.count.CompareAndSwap(n, n+1) {
				return
			}
			continue
		}
		if t.evictOne() {
			return // the evicted key's slot is ours
		}
		runtime.Gosched() // only expected keys left: someone is removing keys

	}
}

// evictOne removes the least recently seen key that is not expected, and
// keeps its slot for the caller (count unchanged). It reports false when
// there was nothing to evict, which the expected-key limit makes possible
// only while keys are being removed by someone else.
//
// Candidates are the oldest few keys of a scan of the whole table, taken
// in order of their last seen then; one seen again since the scan is
// skipped (it is no longer among the oldest). Keys added since the scan
// are newer than every candidate. So the key evicted is the least recently
// seen of all, to within the clock's resolution, at O(MaxSources/k) per
// eviction for a scan every k evictions.
func (t *Tracker) evictOne() bool {
	t.evictMu.Lock()
	defer t.evictMu.Unlock()
	for scans := 0; scans < 2; scans++ {
		for t.candIdx < len(t.cands) {
			c := t.cands[t.candIdx]
			t.cands[t.candIdx] = candidate{}
			t.candIdx++
			e := c.e
			if e.dead.Load() || e.expected.Load() {
				continue
			}
			if scans == 0 && e.lastSeen.Load() != c.lastSeen {
				continue // seen since the scan
			}
			if t.remove(e, true) {
				return true
			}
		}
		t.scan()
	}
	return false
}

// scan fills t.cands with the oldest keys that are not expected, oldest
// first. The caller holds evictMu.
func (t *Tracker) scan() {
	all := t.scratch[:0]
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		s.each(func(e *entry) {
			if !e.expected.Load() {
				all = append(all, candidate{e: e, lastSeen: e.lastSeen.Load()})
			}
		})
		s.mu.Unlock()
	}
	k := max(16, t.cfg.MaxSources/4)
	byLastSeen := func(a, b candidate) int {
		switch {
		case a.lastSeen < b.lastSeen:
			return -1
		case a.lastSeen > b.lastSeen:
			return 1
		}
		return 0
	}
	if len(all) > k {
		selectSmallest(all, k)
		all = all[:k]
	}
	slices.SortFunc(all, byLastSeen)
	t.cands = append(t.cands[:0], all...)
	t.candIdx = 0
	clear(all)
	t.scratch = all[:0]
}

// selectSmallest reorders c so that its k candidates with the smallest
// lastSeen come first (in no particular order): quickselect, O(len(c)).
func selectSmallest(c []candidate, k int) {
	lo, hi := 0, len(c)-1
	for lo < hi {
		p := c[lo+(hi-lo)/2].lastSeen
		i, j := lo, hi
		for i <= j {
			for c[i].lastSeen < p {
				i++
			}
			for c[j].lastSeen > p {
				j--
			}
			if i <= j {
				c[i], c[j] = c[j], c[i]
				i++
				j--
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}

// remove deletes e from the table if it is still there, marks it dead and
// folds its limit counters into the tracker's; the caller holds evictMu.
// An eviction keeps the slot
// for the caller (count unchanged) and is counted; otherwise the slot is
// freed.
func (t *Tracker) remove(e *entry, evict bool) bool {
	s := t.shardOf(e.hash)
	s.mu.Lock()
	if !s.del(e) {
		s.mu.Unlock()
		return false
	}
	e.dead.Store(true)
	s.mu.Unlock()
	if evict {
		t.nEvicted.Add(1)
	} else {
		t.count.Add(-1)
	}
	t.evictedDropped.Add(e.dropped.Load())
	t.evictedPaced.Add(e.paced.Load())
	t.evictedPacedNs.Add(e.pacedNs.Load())
	return true
}

// observe counts events and bytes for e at time now. Last seen is stored
// before the events are added, so that Run, which reads events first,
// never sees an event without its time (see Run's silence check).
func observe(e *entry, now int64, events, bytes int, in *string) {
	if in != nil && e.input.Load() != in {
		e.input.Store(in)
	}
	if last := e.lastSeen.Load(); last < now {
		if storeMax(&e.lastSeen, now) == 0 {
			e.firstSeen.CompareAndSwap(0, now)
		}
	}
	e.events.Add(uint64(events))
	e.bytes.Add(uint64(bytes))
}

// allow charges up to events events to e's limiter in drop mode and
// returns how many were allowed, counting the rest as dropped.
func allow(e *entry, now int64, events int) int {
	em := e.emission.Load()
	if em == 0 || events <= 0 {
		return events
	}
	tol := e.tolerance.Load()
	for {
		old := e.tat.Load()
		tat := max(old, now)
		k := int64(events)
		if tat+k*em-now > tol {
			// Not all fit: as many as the tolerance leaves room for.
			k = 0
			if room := now + tol - tat; room >= em {
				k = min(room/em, int64(events))
			}
			if k == 0 {
				e.dropped.Add(uint64(events))
				return 0
			}
		}
		if e.tat.CompareAndSwap(old, tat+k*em) {
			if k < int64(events) {
				e.dropped.Add(uint64(int64(events) - k))
			}
			return int(k)
		}
	}
}

// pace charges events events to e's limiter in pace mode and returns how
// long the caller must wait before reading again.
func pace(e *entry, now int64, events int) time.Duration {
	em := e.emission.Load()
	if em == 0 || events <= 0 {
		return 0
	}
	tol := e.tolerance.Load()
	for {
		old := e.tat.Load()
		tat := max(old, now) + int64(events)*em
		if e.tat.CompareAndSwap(old, tat) {
			wait := tat - now - tol
			if wait <= 0 {
				return 0
			}
			e.paced.Add(uint64(min(int64(events), (wait+em-1)/em)))
			e.pacedNs.Add(wait)
			return time.Duration(wait)
		}
	}
}

// ObserveAddr counts events events of bytes bytes (in total) from the
// sender at address a: one lookup, then the counts. It is the per-datagram
// call of an input where each datagram may come from another sender; an
// input that reads one sender per connection keeps a [Handle] instead.
// events and bytes must not be negative.
func (t *Tracker) ObserveAddr(a netip.Addr, events, bytes int) {
	Input{t: t}.ObserveAddr(a, events, bytes)
}

// AllowAddr is [Tracker.ObserveAddr] followed by the sender's rate limit
// in drop mode: it returns how many of the events (the first ones) may be
// passed on; the caller drops the rest and counts them with reason
// relaykit.ReasonRateLimit, as the tracker does per key
// (Source.Dropped). Without a limit it returns events.
func (t *Tracker) AllowAddr(a netip.Addr, events, bytes int) int {
	return Input{t: t}.AllowAddr(a, events, bytes)
}

// ObserveHost is [Tracker.ObserveAddr] for the host key host (an event's
// host). It does not allocate for a known host; host is not retained.
func (t *Tracker) ObserveHost(host []byte, events, bytes int) {
	Input{t: t}.ObserveHost(host, events, bytes)
}

// AllowHost is [Tracker.AllowAddr] for the host key host.
func (t *Tracker) AllowHost(host []byte, events, bytes int) int {
	return Input{t: t}.AllowHost(host, events, bytes)
}

// Addr returns a Handle for the sender at address a, creating its entry
// (it counts as seen only once events are observed).
func (t *Tracker) Addr(a netip.Addr) Handle { return Input{t: t}.Addr(a) }

// Host returns a Handle for the host key host; host is not retained.
func (t *Tracker) Host(host []byte) Handle { return Input{t: t}.Host(host) }

// Input is the Tracker as seen by one input: its methods are the
// Tracker's, and they also record the input's name as the key's latest
// input ([Source].Input). It lets all inputs share one Tracker (so that an
// expected source is known whichever input it comes through) and still
// say where each source was last seen, for the cost of one load and
// compare per event. The zero Input, and an Input of a nil Tracker, does
// nothing and allows everything. Input is a small value, safe to copy and
// to use from concurrent goroutines.
type Input struct {
	t    *Tracker
	name *string
}

// Input returns the Tracker as seen by the input named name. Take it once
// per input, not per event (each call allocates the name's pointer).
func (t *Tracker) Input(name string) Input {
	if t == nil {
		return Input{}
	}
	return Input{t: t, name: &name}
}

// ObserveAddr is [Tracker.ObserveAddr], recording the input.
func (in Input) ObserveAddr(a netip.Addr, events, bytes int) {
	if t := in.t; t != nil {
		observe(t.lookupAddr(a), t.nowNano(), events, bytes, in.name)
	}
}

// AllowAddr is [Tracker.AllowAddr], recording the input.
func (in Input) AllowAddr(a netip.Addr, events, bytes int) int {
	t := in.t
	if t == nil {
		return events
	}
	e := t.lookupAddr(a)
	now := t.nowNano()
	observe(e, now, events, bytes, in.name)
	return allow(e, now, events)
}

// ObserveHost is [Tracker.ObserveHost], recording the input.
func (in Input) ObserveHost(host []byte, events, bytes int) {
	if t := in.t; t != nil {
		observe(t.lookupHost(host), t.nowNano(), events, bytes, in.name)
	}
}

// AllowHost is [Tracker.AllowHost], recording the input.
func (in Input) AllowHost(host []byte, events, bytes int) int {
	t := in.t
	if t == nil {
		return events
	}
	e := t.lookupHost(host)
	now := t.nowNano()
	observe(e, now, events, bytes, in.name)
	return allow(e, now, events)
}

// Addr is [Tracker.Addr]; the Handle records the input.
func (in Input) Addr(a netip.Addr) Handle {
	if in.t == nil {
		return Handle{}
	}
	return Handle{t: in.t, e: in.t.lookupAddr(a), in: in.name}
}

// Host is [Tracker.Host]; the Handle records the input.
func (in Input) Host(host []byte) Handle {
	if in.t == nil {
		return Handle{}
	}
	return Handle{t: in.t, e: in.t.lookupHost(host), in: in.name}
}

// Handle is an input's reference to one key's entry, kept for as long as
// the key stays the same (a stream connection has one sender address), so
// that each event costs a few atomic operations and no lookup. The zero
// Handle, and a Handle of a nil Tracker, does nothing and allows
// everything.
//
// A Handle must not be used from concurrent goroutines (each goroutine
// takes its own; any number of Handles may share a key). If its key is
// evicted, the next call looks it up again and the key starts afresh.
type Handle struct {
	t  *Tracker
	e  *entry
	in *string // the input's name, nil for none
}

// Key returns the Handle's key; the zero Key for the zero Handle.
func (h *Handle) Key() Key {
	if h.e == nil {
		return Key{}
	}
	return h.e.key
}

// entry returns the handle's live entry, nil for the zero Handle.
func (h *Handle) entry() *entry {
	e := h.e
	if e != nil && e.dead.Load() {
		e = h.t.lookup(e.key)
		h.e = e
	}
	return e
}

// Observe counts events events of bytes bytes (in total). events and
// bytes must not be negative.
func (h *Handle) Observe(events, bytes int) {
	if e := h.entry(); e != nil {
		observe(e, h.t.nowNano(), events, bytes, h.in)
	}
}

// Allow is [Handle.Observe] followed by the key's rate limit in drop
// mode: it returns how many of the events (the first ones) may be passed
// on; see [Tracker.AllowAddr].
func (h *Handle) Allow(events, bytes int) int {
	e := h.entry()
	if e == nil {
		return events
	}
	now := h.t.nowNano()
	observe(e, now, events, bytes, h.in)
	return allow(e, now, events)
}

// Pace is [Handle.Observe] followed by the key's rate limit in pace mode:
// the events are passed on (none is dropped), and Pace returns how long
// the caller must wait before its next read so that the key's rate falls
// to its limit: zero while the key is within its rate and burst. A stream
// input stops reading the connection for that long, which holds back the
// one sender (TCP flow control does the rest) and nobody else. The wait
// grows with the events charged: a read of n events at r events/s is
// worth n/r seconds. Without a limit it returns 0.
func (h *Handle) Pace(events, bytes int) time.Duration {
	e := h.entry()
	if e == nil {
		return 0
	}
	now := h.t.nowNano()
	observe(e, now, events, bytes, h.in)
	return pace(e, now, events)
}

// storeMax stores v in a unless a holds more, and returns the value it
// replaced (or found, if not smaller).
func storeMax(a *atomic.Int64, v int64) int64 {
	for {
		old := a.Load()
		if old >= v || a.CompareAndSwap(old, v) {
			return old
		}
	}
}
