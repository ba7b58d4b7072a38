package pipeline

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/evfield"
)

// FlushAll, passed as now to [Reducer.Flush], [Pipeline.Flush] or
// [Router.Flush], ends every window: what a caller passes at shutdown and
// before it drops a router on reload. It is the largest int64.
const FlushAll int64 = math.MaxInt64

// flushPending, passed as now, ends no window: Flush then returns only
// the summaries already complete (keys evicted, windows an event closed).
// The router passes it after every batch.
const flushPending int64 = math.MinInt64

// DefaultMaxKeys is the number of keys a keyed step holds when its
// MaxKeys is zero.
const DefaultMaxKeys = 10000

// Reducer is a stateful [Function] that absorbs events into per-key state
// and emits summary events later: [Suppress] and [Aggregate].
//
// Apply returning keep=false means the event was absorbed (counted as
// reduced by a router, not dropped); keep=true lets it through.
//
// Flush appends to dst the summaries of every window that ended at or
// before now (nanoseconds since the Unix epoch; a window [s, s+w) ends at
// s+w), and always those already complete: of keys evicted to make room
// and of windows that an event of a later window closed. The steps of
// this package append them in the order of their ReceiveTime. Flush
// forgets the state of the windows it ends, so a key quiet for a whole
// window costs nothing and emits nothing. With now = [FlushAll] it ends
// every window.
// Flush returns the extended slice; it may reuse the buffers of the
// events in dst's spare capacity (dst[len(dst):cap(dst)]), as
// relaykit.Event.Reset would, so a caller must not pass spare capacity
// whose events are still in use. The summaries are owned by the caller.
//
// Summaries already complete wait in the step until the next Flush. A
// router calls Flush(dst, math.MinInt64) after every batch to collect
// them, which bounds what waits to what one batch can complete, so Flush
// must be cheap when there are none; outside a router, call Flush after
// each batch as well. Apply and Flush are safe for concurrent use by
// multiple goroutines.
//
// Windows are assigned from the event's ReceiveTime, never the wall
// clock: no step reads the time. Ending windows on time is the job of
// whoever runs the router: an engine.Engine whose Sink is the router (or
// a [Swapper]) calls [Router.Flush] every second with the current time
// and with [FlushAll] at shutdown (engine.Config.WindowTick); a program
// that routes batches itself calls Flush from a ticker. Without it a key's
// window ends only when an event of that key from a later window arrives,
// or when the key is evicted.
//
// A reducer's state belongs to one route: [NewRouter] refuses a reducer
// listed by two routes (a non-final route's copy of an event and the
// final route's own would count as repeats of each other).
type Reducer interface {
	Function
	Flush(dst []relaykit.Event, now int64) []relaykit.Event
}

// StepStats is a snapshot of a keyed step's state and counters.
type StepStats struct {
	// Keys is the number of keys held now.
	Keys int
	// Evicted is the number of keys evicted to make room for a new one
	// (MaxKeys reached). An evicted key's pending summary is emitted.
	Evicted uint64
	// Summaries is the number of summary events emitted (returned by
	// Flush or waiting in the step for the next Flush).
	Summaries uint64
	// KeyMisses is the number of events that lacked at least one of the
	// extracted fields named in the step's key (such a field reads as
	// empty). A key naming a field no event has, such as a misspelt
	// name, makes every event a miss and puts every event of a window
	// under one key.
	KeyMisses uint64
	// UnseenKeys lists the extracted fields of the key that no event has
	// carried so far, in key order; nil when every one was seen.
	UnseenKeys []string
}

// Field names written by the reduction steps.
const (
	// FieldSuppressedCount is the number of events a [Suppress] summary
	// stands for.
	FieldSuppressedCount = "suppressed_count"
	// FieldCount is the number of events an [Aggregate] summary stands
	// for.
	FieldCount = "count"
	// FieldFirstSeen and FieldLastSeen are the ReceiveTimes of the first
	// and last event a summary stands for, formatted with [TimeLayout].
	FieldFirstSeen = "first_seen"
	// FieldLastSeen: see [FieldFirstSeen].
	FieldLastSeen = "last_seen"
	// FieldSampleRate is how many events a kept event stands for, written
	// by the samplers of [NewSample]: multiply by it to scale counts back.
	FieldSampleRate = "sample_rate"
)

// TimeLayout is the format of [FieldFirstSeen] and [FieldLastSeen]: RFC
// 3339 in UTC with nanoseconds, always nine digits, such as
// "2026-05-01T12:00:00.250000000Z".
const TimeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// keyState is one key's entry in a shard. Entries live in a slice and
// refer to each other by index, so freed entries (and the buffers their
// state holds) are reused.
type keyState[S any] struct {
	hash       uint64
	key        []byte // the key's values, each as a 4-byte length and the bytes
	win        int64  // start of the window the state belongs to
	prev, next int32  // LRU list (head: most recent); next is the free list too
	chain      int32  // next entry with the same hash
	st         S
}

// shard is one lock's worth of a table.
type shard[S any] struct {
	mu         sync.Mutex
	idx        map[uint64]int32
	ents       []keyState[S]
	free       int32
	head, tail int32
	live, max  int
	clock      int64 // latest time seen: a ReceiveTime, or a Flush's now
	closed     int64 // latest now passed to Flush (windows ending by then are closed)
	minWin     int64 // lower bound of the live entries' window starts
	ready      []relaykit.Event
	misses     uint64 // events without one of the key's extracted fields
	_          [128]byte
}

// table is the keyed, bounded, windowed state the reduction steps share:
// keys hashed with hash/maphash and compared on a hit, sharded by hash,
// each shard with its own mutex, its own least-recently-used list and an
// equal share of MaxKeys.
type table[S any] struct {
	sels   []selector
	seed   maphash.Seed
	window int64 // ns; 0: no windows
	shards []shard[S]
	shift  uint
	// summarize appends the summary of k's window, if it has one, to dst.
	summarize func(dst []relaykit.Event, k *keyState[S]) []relaykit.Event
	// reset prepares k's state for a new window or key.
	reset func(k *keyState[S])

	evicted   atomic.Uint64
	summaries atomic.Uint64
	pending   atomic.Int64 // events in the shards' ready lists
}

// shardCount is the number of shards for maxKeys keys: one per 1024 keys,
// a power of two, at most 8, so that small tables keep an exact LRU order.
var shardCount = func(maxKeys int) int {
	n := 1
	for n < 8 && n*2*1024 <= maxKeys {
		n *= 2
	}
	return n
}

func (t *table[S]) init(key []string, window time.Duration, maxKeys int) {
	for _, k := range key {
		t.sels = append(t.sels, newSelector(k))
	}
	t.seed = maphash.MakeSeed()
	t.window = int64(window)
	if maxKeys == 0 {
		maxKeys = DefaultMaxKeys
	}
	n := shardCount(maxKeys)
	t.shards = make([]shard[S], n)
	t.shift = uint(64 - bits.TrailingZeros(uint(n)))
	for i := range t.shards {
		sh := &t.shards[i]
		sh.idx = make(map[uint64]int32)
		sh.free, sh.head, sh.tail = -1, -1, -1
		sh.minWin = math.MaxInt64
		sh.closed = math.MinInt64
		// Shares sum to maxKeys: the first maxKeys%n shards get one more.
		sh.max = maxKeys / n
		if i < maxKeys%n {
			sh.max++
		}
	}
}

// validateKeyed checks the settings every keyed step shares.
func validateKeyed(step string, window time.Duration, maxKeys int) error {
	if window < 0 {
		return fmt.Errorf("%w: %s: negative window %v", ErrInvalidConfig, step, window)
	}
	if maxKeys < 0 {
		return fmt.Errorf("%w: %s: negative max keys %d", ErrInvalidConfig, step, maxKeys)
	}
	return nil
}

// MaxKeyNames is the most names a reduction step's Key may list.
const MaxKeyNames = 16

// picked holds an event's key values; it lives on the stack of Apply.
type picked [MaxKeyNames][]byte

// hintWays is the number of positions remembered per extracted field
// name: enough for a route fed by a few devices or products whose events
// put the name at different places.
const hintWays = 4

// hintMinFields is the number of fields up to which an event's fields are
// read in one pass without hints: a pass over so few costs less than
// looking at the hinted indices and ruling out earlier duplicates.
const hintMinFields = 8

// hintSets is the number of hint words per name, chosen by the event's
// number of fields; a power of two.
const hintSets = 16

// picker reads the values of a list of names from an event; a missing
// value reads as empty, and of several fields with the same name the
// first counts, as with [relaykit.Event.Field].
//
// In an event of more than [hintMinFields] fields, extracted fields are
// found by position hints first: for each name and number of fields
// (modulo [hintSets]), the last [hintWays] indices in Fields where it was
// found. Events of one device or product keep their fields in one order,
// and the number of fields mostly tells the products of a mixed stream
// apart. When every name is at a hinted index, only the fields before the
// last of them whose name has the length of a key name are compared, to
// rule out an earlier field of the same name. Otherwise the fields are
// read in a single pass, and the hints of the names found learn their
// indices. Hints are atomic words: a picker is used by concurrent Apply
// calls, and a stale or lost hint costs only that pass.
type picker struct {
	sels   []selector
	fields []int // indices into sels of the extracted-field names
	match  nameMatcher
	// hints[j*hintSets+len(Fields)%hintSets] holds up to hintWays
	// indices+1 of the field named match.names[j], 16 bits each, the most
	// recent in the low bits; 0 is an empty way.
	hints []atomic.Uint64
	// lens has bit min(n, 63) set for the length n of each field name.
	lens uint64
	// seen has bit j set once an event carried extracted field j (a
	// pointer: a picker is built by value).
	seen *atomic.Uint32
}

// nameMatcher tells extracted field names apart by length and first
// eight bytes, compared as one word, before comparing any further bytes.
type nameMatcher struct {
	names []string
	pre   []uint64
}

func (m *nameMatcher) add(name string) {
	m.names = append(m.names, name)
	m.pre = append(m.pre, prefix8(name))
}

// is reports whether key, whose keyPrefix8 is kp, is name j.
func (m *nameMatcher) is(j int, key []byte, kp uint64) bool {
	return kp == m.pre[j] && len(key) == len(m.names[j]) && (len(key) <= 8 || string(key[8:]) == m.names[j][8:])
}

// prefix8 returns the first eight bytes of name (fewer: zero-padded) as
// a little-endian word.
func prefix8(name string) uint64 {
	var x uint64
	for i := min(len(name), 8) - 1; i >= 0; i-- {
		x = x<<8 | uint64(name[i])
	}
	return x
}

// keyPrefix8 is prefix8 of a field key. A key shorter than eight bytes
// whose buffer has room is read as one word and masked.
func keyPrefix8(b []byte) uint64 {
	if cap(b) >= 8 {
		x := binary.LittleEndian.Uint64(b[:8:8])
		if len(b) < 8 {
			x &= 1<<(8*uint(len(b))) - 1
		}
		return x
	}
	var x uint64
	for i := len(b) - 1; i >= 0; i-- {
		x = x<<8 | uint64(b[i])
	}
	return x
}

// lenBit is the bit of lens for a name or key of length n.
func lenBit(n int) uint64 { return 1 << min(uint(n), 63) }

func newPicker(names []string) (picker, error) {
	var p picker
	if len(names) > MaxKeyNames {
		return p, fmt.Errorf("%w: %d key names, more than %d", ErrInvalidConfig, len(names), MaxKeyNames)
	}
	for _, n := range names {
		s := newSelector(n)
		if s.kind == selField {
			p.fields = append(p.fields, len(p.sels))
			p.match.add(s.key)
			p.lens |= lenBit(len(s.key))
		}
		p.sels = append(p.sels, s)
	}
	p.hints = make([]atomic.Uint64, len(p.fields)*hintSets)
	p.seen = new(atomic.Uint32)
	return p, nil
}

// pick returns the key values of e, stored in out.
//
// missing has bit j set when extracted field j (p.fields[j]) was not found.
func (p *picker) pick(e *relaykit.Event, out *picked) (vals [][]byte, missing uint32) {
	vals, _, missing = p.pickHinted(e, out)
	if len(p.fields) > 0 {
		all := uint32(1)<<len(p.fields) - 1
		if found := all &^ missing; p.seen.Load()&found != found {
			p.seen.Or(found)
		}
	}
	return vals, missing
}

// unseen returns the extracted field names no picked event carried.
func (p *picker) unseen() []string {
	seen := p.seen.Load()
	var out []string
	for j, i := range p.fields {
		if seen&(1<<j) == 0 {
			out = append(out, p.sels[i].key)
		}
	}
	return out
}

// pickHinted is pick, and reports whether the hints alone found every
// extracted name.
func (p *picker) pickHinted(e *relaykit.Event, out *picked) ([][]byte, bool, uint32) {
	vals := out[:len(p.sels)]
	if len(p.fields) == 0 {
		for i := range p.sels {
			vals[i] = p.sels[i].get(e)
		}
		return vals, false, 0
	}
	for i := range p.sels {
		if p.sels[i].kind != selField {
			vals[i] = p.sels[i].get(e)
		} else {
			vals[i] = nil
		}
	}
	if len(e.Fields) <= hintMinFields {
		return vals, false, p.walk(e, vals, nil)
	}
	var at [MaxKeyNames]int32 // index in e.Fields of name j; -1: not found
	if p.hinted(e, vals, &at) {
		return vals, true, 0
	}
	return vals, false, p.walk(e, vals, &at)
}

// hinted looks each extracted name up at its hinted indices. When all are
// found there, it rules out earlier fields of the same names, sets vals
// and reports true. Otherwise it reports false, with at[j] the hinted
// index of name j or -1, and vals of extracted names unset.
func (p *picker) hinted(e *relaykit.Event, vals [][]byte, at *[MaxKeyNames]int32) bool {
	fs := e.Fields
	set := len(fs) & (hintSets - 1)
	last := -1
	hit := true
	for j := range p.fields {
		at[j] = -1
		for h := p.hints[j*hintSets+set].Load(); h != 0; h >>= 16 {
			fi := int(h&0xffff) - 1
			if fi < 0 || fi >= len(fs) {
				continue
			}
			if k := fs[fi].Key; p.match.is(j, k, keyPrefix8(k)) {
				at[j] = int32(fi)
				last = max(last, fi)
				break
			}
		}
		if at[j] < 0 {
			hit = false
		}
	}
	if !hit {
		return false
	}
	// A hinted index holds the name, but an earlier field may too (the
	// first wins): compare the fields before the last hinted index whose
	// length is that of a key name.
	for fi := 0; fi < last; fi++ {
		k := fs[fi].Key
		if p.lens&lenBit(len(k)) == 0 {
			continue
		}
		kp := keyPrefix8(k)
		for j := range p.fields {
			if int(at[j]) > fi && p.match.is(j, k, kp) {
				at[j] = int32(fi)
			}
		}
	}
	for j, i := range p.fields {
		vals[i] = fs[at[j]].Value
	}
	return true
}

// walk reads the extracted names in one pass over e's fields and, unless
// at is nil, teaches the hints of the names found at an index not hinted
// (at[j] differs). It returns the names not found, bit j for name j.
func (p *picker) walk(e *relaykit.Event, vals [][]byte, at *[MaxKeyNames]int32) (missing uint32) {
	var pos [MaxKeyNames]int32
	for j := range p.fields {
		pos[j] = -1
	}
	left := len(p.fields)
	for fi := range e.Fields {
		f := &e.Fields[fi]
		if p.lens&lenBit(len(f.Key)) == 0 {
			continue
		}
		kp := keyPrefix8(f.Key)
		for j := range p.fields {
			if pos[j] >= 0 || !p.match.is(j, f.Key, kp) {
				continue
			}
			pos[j] = int32(fi)
			left--
		}
		if left == 0 {
			break
		}
	}
	for j, i := range p.fields {
		fi := pos[j]
		if fi < 0 {
			missing |= 1 << j
			continue
		}
		vals[i] = e.Fields[fi].Value
		if at != nil && fi != at[j] && fi < 0xffff {
			p.learn(&p.hints[j*hintSets+len(e.Fields)&(hintSets-1)], int(fi))
		}
	}
	return missing
}

// learn makes index fi the most recent way of hint word w, dropping the
// oldest. Concurrent learners may overwrite each other: a lost hint costs
// a walk later.
func (p *picker) learn(w *atomic.Uint64, fi int) {
	h := w.Load()
	v := uint64(fi + 1)
	// Keep the other ways, minus fi if it is among them.
	var rest uint64
	n := 0
	for ; h != 0 && n < hintWays-1; h >>= 16 {
		if w := h & 0xffff; w != v {
			rest |= w << (16 * uint(n))
			n++
		}
	}
	w.Store(rest<<16 | v)
}

// hash returns the hash of the key values vals.
func (t *table[S]) hash(vals [][]byte) uint64 {
	if len(vals) == 1 {
		return maphash.Bytes(t.seed, vals[0])
	}
	h := uint64(len(vals))
	for _, v := range vals {
		h = bits.RotateLeft64(h, 29) ^ maphash.Bytes(t.seed, v)
		h *= 0x9e3779b97f4a7c15
	}
	return h
}

// shardOf returns the shard for hash h.
func (t *table[S]) shardOf(h uint64) *shard[S] {
	if len(t.shards) == 1 {
		return &t.shards[0]
	}
	return &t.shards[h>>t.shift]
}

// equalKey reports whether key holds exactly the key values vals.
func equalKey(key []byte, vals [][]byte) bool {
	for _, v := range vals {
		if len(key) < 4+len(v) || int(binary.LittleEndian.Uint32(key)) != len(v) || string(key[4:4+len(v)]) != string(v) {
			return false
		}
		key = key[4+len(v):]
	}
	return len(key) == 0
}

// appendKey appends the key values vals in the stored form.
func appendKey(dst []byte, vals [][]byte) []byte {
	for _, v := range vals {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v)))
		dst = append(dst, v...)
	}
	return dst
}

// keyValue returns the i-th value of a stored key.
func keyValue(key []byte, i int) []byte {
	for {
		n := int(binary.LittleEndian.Uint32(key))
		if i == 0 {
			return key[4 : 4+n]
		}
		key = key[4+n:]
		i--
	}
}

// at returns the time to record for an event received at rt (rt itself,
// or the shard's clock when rt is zero) and the start of the window the
// event counts in: the window holding that time or, when that window was
// already ended by a Flush, the window holding the Flush's now.
func (t *table[S]) at(sh *shard[S], rt int64) (tm, win int64) {
	if rt == 0 {
		rt = sh.clock
	} else if rt > sh.clock {
		sh.clock = rt
	}
	if t.window == 0 {
		return rt, 0
	}
	win = windowStart(rt, t.window)
	if sh.closed != math.MinInt64 && win <= sh.closed-t.window {
		win = windowStart(sh.closed, t.window)
	}
	return rt, win
}

// windowStart returns the start of the window of length w holding t.
func windowStart(t, w int64) int64 {
	m := t % w
	if m < 0 {
		m += w
	}
	return t - m
}

// find returns the index of the entry of key vals in sh, or -1.
func (t *table[S]) find(sh *shard[S], h uint64, vals [][]byte) int32 {
	i, ok := sh.idx[h]
	if !ok {
		return -1
	}
	for ; i >= 0; i = sh.ents[i].chain {
		if equalKey(sh.ents[i].key, vals) {
			return i
		}
	}
	return -1
}

// lookup returns the entry of key vals (hash h) in sh, creating it (and evicting the least
// recently used key if the shard is full) when it is missing, and moves it
// to the front of the LRU list. fresh reports a new entry, whose state the
// caller initialises; reset has been applied to it. The pointer is valid
// until the shard's entries change (the next lookup).
func (t *table[S]) lookup(sh *shard[S], h uint64, vals [][]byte, win int64) (k *keyState[S], fresh bool) {
	if i := t.find(sh, h, vals); i >= 0 {
		if sh.head != i {
			sh.unlink(i)
			sh.pushFront(i)
		}
		return &sh.ents[i], false
	}
	if sh.live >= sh.max {
		t.evict(sh)
	}
	var i int32
	if sh.free >= 0 {
		i = sh.free
		sh.free = sh.ents[i].next
	} else {
		sh.ents = append(sh.ents, keyState[S]{})
		i = int32(len(sh.ents) - 1)
	}
	k = &sh.ents[i]
	k.hash = h
	k.key = appendKey(k.key[:0], vals)
	k.win = win
	k.chain = -1
	if head, ok := sh.idx[h]; ok {
		k.chain = head
	}
	sh.idx[h] = i
	sh.pushFront(i)
	sh.live++
	sh.minWin = min(sh.minWin, win)
	if t.reset != nil {
		t.reset(k)
	}
	return k, true
}

// roll moves k to window win, which is later than its own: the summary
// of k's window, if any, waits for the next Flush.
func (t *table[S]) roll(sh *shard[S], k *keyState[S], win int64) {
	t.park(sh, k)
	k.win = win
	if t.reset != nil {
		t.reset(k)
	}
}

// park puts the summary of k's window, if any, in the shard's ready list.
func (t *table[S]) park(sh *shard[S], k *keyState[S]) {
	if t.summarize == nil {
		return
	}
	n := len(sh.ready)
	sh.ready = t.summarize(sh.ready, k)
	if d := len(sh.ready) - n; d > 0 {
		t.summaries.Add(uint64(d))
		t.pending.Add(int64(d))
	}
}

// evict removes the least recently used key of sh, parking its summary.
func (t *table[S]) evict(sh *shard[S]) {
	i := sh.tail
	if i < 0 {
		return
	}
	t.park(sh, &sh.ents[i])
	sh.remove(i)
	t.evicted.Add(1)
}

// flush implements Reducer.Flush over all shards.
func (t *table[S]) flush(dst []relaykit.Event, now int64) []relaykit.Event {
	if now == flushPending && t.pending.Load() == 0 {
		return dst
	}
	start := len(dst)
	for si := range t.shards {
		sh := &t.shards[si]
		sh.mu.Lock()
		if n := len(sh.ready); n > 0 {
			for j := range sh.ready {
				var slot *relaykit.Event
				dst, slot = nextSlot(dst)
				*slot, sh.ready[j] = sh.ready[j], *slot
			}
			sh.ready = sh.ready[:0]
			t.pending.Add(-int64(n))
		}
		if now != flushPending && t.window > 0 {
			if now != FlushAll {
				sh.closed = max(sh.closed, now)
				sh.clock = max(sh.clock, now)
			}
			if sh.live > 0 && (now == FlushAll || sh.minWin <= now-t.window) {
				dst = t.endWindows(sh, dst, now)
			}
		}
		sh.mu.Unlock()
	}
	// Shards are visited in a fixed order but keys fall into them by a
	// seeded hash: order the summaries by time instead.
	slices.SortStableFunc(dst[start:], func(a, b relaykit.Event) int {
		return cmp.Compare(a.ReceiveTime, b.ReceiveTime)
	})
	return dst
}

// endWindows emits and forgets every entry of sh whose window ended at or
// before now, least recently used first.
func (t *table[S]) endWindows(sh *shard[S], dst []relaykit.Event, now int64) []relaykit.Event {
	lo := int64(math.MaxInt64)
	// Least recently used first: roughly the order the keys went quiet.
	for i := sh.tail; i >= 0; {
		k := &sh.ents[i]
		next := k.prev
		if now == FlushAll || k.win <= now-t.window {
			n := len(dst)
			dst = t.summarize(dst, k)
			t.summaries.Add(uint64(len(dst) - n))
			sh.remove(i)
		} else {
			lo = min(lo, k.win)
		}
		i = next
	}
	sh.minWin = lo
	return dst
}

// stats returns the table's snapshot.
func (t *table[S]) stats() StepStats {
	st := StepStats{Evicted: t.evicted.Load(), Summaries: t.summaries.Load()}
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.Lock()
		st.Keys += sh.live
		st.KeyMisses += sh.misses
		sh.mu.Unlock()
	}
	return st
}

func (sh *shard[S]) pushFront(i int32) {
	k := &sh.ents[i]
	k.prev, k.next = -1, sh.head
	if sh.head >= 0 {
		sh.ents[sh.head].prev = i
	}
	sh.head = i
	if sh.tail < 0 {
		sh.tail = i
	}
}

func (sh *shard[S]) unlink(i int32) {
	k := &sh.ents[i]
	if k.prev >= 0 {
		sh.ents[k.prev].next = k.next
	} else {
		sh.head = k.next
	}
	if k.next >= 0 {
		sh.ents[k.next].prev = k.prev
	} else {
		sh.tail = k.prev
	}
	k.prev, k.next = -1, -1
}

// remove forgets entry i: out of the index, the LRU list, onto the free
// list (its buffers kept for the next key).
func (sh *shard[S]) remove(i int32) {
	k := &sh.ents[i]
	head := sh.idx[k.hash]
	if head == i {
		if k.chain >= 0 {
			sh.idx[k.hash] = k.chain
		} else {
			delete(sh.idx, k.hash)
		}
	} else {
		for j := head; j >= 0; j = sh.ents[j].chain {
			if sh.ents[j].chain == i {
				sh.ents[j].chain = k.chain
				break
			}
		}
	}
	sh.unlink(i)
	k.next = sh.free
	sh.free = i
	sh.live--
	if sh.live == 0 {
		sh.minWin = math.MaxInt64
	}
}

// nextSlot extends dst by one event, reusing the buffers of the event in
// its spare capacity, and returns the emptied event.
func nextSlot(dst []relaykit.Event) ([]relaykit.Event, *relaykit.Event) {
	n := len(dst)
	if n < cap(dst) {
		dst = dst[:n+1]
	} else {
		dst = append(dst, relaykit.Event{})
	}
	e := &dst[n]
	e.Reset()
	return dst, e
}

// setInt sets field key of e to n in decimal.
func setInt(e *relaykit.Event, key string, n int64) {
	f := evfield.SlotString(e, key)
	f.Value = strconv.AppendInt(f.Value, n, 10)
}

// setTime sets field key of e to ns formatted with TimeLayout.
func setTime(e *relaykit.Event, key string, ns int64) {
	f := evfield.SlotString(e, key)
	f.Value = appendTime(f.Value, ns)
}

func appendTime(dst []byte, ns int64) []byte {
	return time.Unix(0, ns).UTC().AppendFormat(dst, TimeLayout)
}
