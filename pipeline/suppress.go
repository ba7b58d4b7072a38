package pipeline

import (
	"fmt"
	"time"

	"github.com/relaykit/relaykit"
)

// SuppressConfig configures [NewSuppress]. The zero value lets the first
// event of each host and message through every 30 seconds.
type SuppressConfig struct {
	// Key names the values whose combination identifies repeats: the raw
	// message ([FieldRaw], "_raw"), [FieldHost], [FieldSource],
	// [FieldSourceType], [FieldIndex], or extracted fields (a missing field
	// reads as empty). Empty means host and raw message: the same message
	// from the same host.
	Key []string
	// Allow is how many events per key and window pass. Zero means 1.
	Allow int
	// Window is the length of the tumbling windows, aligned to the Unix
	// epoch (a 30s window starts at :00 and :30 of each minute). Zero
	// means 30 seconds.
	Window time.Duration
	// MaxKeys bounds the keys held at once. Zero means [DefaultMaxKeys].
	// See [NewSuppress] for what happens when it is reached.
	MaxKeys int
}

// Suppress is a [Reducer] named "suppress" that lets the first Allow
// events per key and window through and absorbs the rest; build it with
// [NewSuppress]. It is rsyslog's "last message repeated N times" and the
// OpenTelemetry Collector's log deduplication, per key.
//
// When a window in which a key absorbed events ends, [Suppress.Flush]
// returns one summary event for that key: a copy of the key's first event
// of the window (metadata, raw message, fields, times) with three fields
// set:
//
//   - suppressed_count: how many events were absorbed, so that the
//     events let through plus suppressed_count is the key's input;
//   - first_seen, last_seen: the ReceiveTimes of the first and last
//     absorbed events, formatted with [TimeLayout] (RFC 3339, UTC,
//     nanoseconds).
//
// A key that absorbed nothing emits nothing.
//
// # Windows and keys
//
// An event belongs to the window holding its ReceiveTime (an event with a
// zero ReceiveTime: the latest time the step knows, from other events or
// from Flush). An event exactly at a window's end belongs to the next
// window. An event whose window a Flush already ended (it was late)
// counts in the window holding the time of that Flush; an event older
// than its key's current window counts in the current window.
//
// Keys are hashed with hash/maphash and compared byte for byte on a hit.
// At most MaxKeys keys are held, in up to 8 shards (one per 1024 keys,
// each with its own lock and an equal share of MaxKeys); when a shard is
// full, its least recently used key is evicted: its summary, if any, is
// emitted at the next Flush, the eviction is counted ([StepStats]), and
// the key starts afresh if it comes back (its next Allow events pass).
//
// Once warm, Apply does not allocate for a key it holds, nor when a new
// key reuses a forgotten key's buffers. It is safe for concurrent use.
type Suppress struct {
	t     table[suppressState]
	pick  picker
	allow int64
}

type suppressState struct {
	seen        int64 // events of the window
	suppressed  int64
	first, last int64          // ReceiveTimes of the absorbed events
	ev          relaykit.Event // the window's first event
}

// NewSuppress returns a Suppress step. It returns an error wrapping
// [ErrInvalidConfig] when a number is negative or Key lists more than
// [MaxKeyNames] names.
func NewSuppress(cfg SuppressConfig) (*Suppress, error) {
	if cfg.Allow < 0 {
		return nil, fmt.Errorf("%w: suppress: negative allow %d", ErrInvalidConfig, cfg.Allow)
	}
	if err := validateKeyed("suppress", cfg.Window, cfg.MaxKeys); err != nil {
		return nil, err
	}
	if len(cfg.Key) == 0 {
		cfg.Key = []string{FieldHost, FieldRaw}
	}
	if cfg.Allow == 0 {
		cfg.Allow = 1
	}
	if cfg.Window == 0 {
		cfg.Window = 30 * time.Second
	}
	s := &Suppress{allow: int64(cfg.Allow)}
	var err error
	if s.pick, err = newPicker(cfg.Key); err != nil {
		return nil, fmt.Errorf("suppress: key: %w", err)
	}
	s.t.init(cfg.Key, cfg.Window, cfg.MaxKeys)
	s.t.summarize = s.summarize
	s.t.reset = func(k *keyState[suppressState]) {
		k.st.seen, k.st.suppressed, k.st.first, k.st.last = 0, 0, 0, 0
	}
	return s, nil
}

// Name returns "suppress".
func (s *Suppress) Name() string { return "suppress" }

// Apply counts e against its key's window and reports whether it is one
// of the first Allow events (kept) or absorbed.
func (s *Suppress) Apply(e *relaykit.Event) (bool, error) {
	var pk picked
	vals, missing := s.pick.pick(e, &pk)
	h := s.t.hash(vals)
	sh := s.t.shardOf(h)
	sh.mu.Lock()
	if missing != 0 {
		sh.misses++
	}
	tm, win := s.t.at(sh, e.ReceiveTime)
	k, fresh := s.t.lookup(sh, h, vals, win)
	if !fresh && win > k.win {
		s.t.roll(sh, k, win)
	}
	st := &k.st
	st.seen++
	if st.seen <= s.allow {
		if st.seen == 1 {
			e.CopyTo(&st.ev)
		}
		sh.mu.Unlock()
		return true, nil
	}
	st.suppressed++
	if st.suppressed == 1 {
		st.first, st.last = tm, tm
	} else {
		st.first, st.last = min(st.first, tm), max(st.last, tm)
	}
	sh.mu.Unlock()
	return false, nil
}

// summarize appends k's summary if it absorbed anything; the stored first
// event moves into dst (its buffers swapped with the slot's).
func (s *Suppress) summarize(dst []relaykit.Event, k *keyState[suppressState]) []relaykit.Event {
	st := &k.st
	if st.suppressed == 0 {
		return dst
	}
	dst, slot := nextSlot(dst)
	*slot, st.ev = st.ev, *slot
	setInt(slot, FieldSuppressedCount, st.suppressed)
	setTime(slot, FieldFirstSeen, st.first)
	setTime(slot, FieldLastSeen, st.last)
	st.suppressed = 0
	return dst
}

// Flush appends the summaries of the windows ended at or before now; see
// [Reducer].
func (s *Suppress) Flush(dst []relaykit.Event, now int64) []relaykit.Event {
	return s.t.flush(dst, now)
}

// Stats returns the step's keys and counters.
func (s *Suppress) Stats() StepStats {
	st := s.t.stats()
	st.UnseenKeys = s.pick.unseen()
	return st
}

var _ Reducer = (*Suppress)(nil)
