package sources

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// State is a key's state.
type State uint8

// States of a key. In a [Query], StateAny selects every state.
const (
	// StateAny is no state: in a Query, it selects keys in every state.
	StateAny State = iota
	// StateActive: the key sends, within its rate limit.
	StateActive
	// StateSilent: the key sent before (or is expected) and has been quiet
	// for longer than its SilentAfter. It is active again at its next
	// event (detected at the next tick).
	StateSilent
	// StateLimited: the key sends, and its rate limit dropped or paced
	// some of its events during the last tick.
	StateLimited
	// StateWaiting: the key has not sent an event yet: an expected key
	// within its first SilentAfter, or a key an input took a Handle for.
	StateWaiting
)

// String returns "active", "silent", "limited", "waiting", or "any".
func (s State) String() string {
	switch s {
	case StateActive:
		return "active"
	case StateSilent:
		return "silent"
	case StateLimited:
		return "limited"
	case StateWaiting:
		return "waiting"
	case StateAny:
		return "any"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// ParseState returns the State named s (as [State.String] names it; "" is
// StateAny) and whether s named one.
func ParseState(s string) (State, bool) {
	for st := StateAny; st <= StateWaiting; st++ {
		if s == st.String() {
			return st, true
		}
	}
	return StateAny, s == ""
}

// stateOf derives e's State from its flags and last seen.
func stateOf(e *entry) State {
	st := e.state.Load()
	switch {
	case st&flagSilent != 0:
		return StateSilent
	case e.lastSeen.Load() == 0:
		return StateWaiting
	case st&flagLimited != 0:
		return StateLimited
	}
	return StateActive
}

// Transition reports that a key became silent or active again.
type Transition struct {
	// Key is the source.
	Key Key
	// State is StateSilent or StateActive.
	State State
	// At is when the transition was detected: the tick's time.
	At time.Time
	// LastSeen is the source's last event before its silence; the zero
	// Time for an expected key that never sent. It is the same in the
	// silent transition and the active one that ends it.
	LastSeen time.Time
	// SilentFor is, for StateSilent, how long the source has been quiet:
	// At - LastSeen (for an expected key that never sent, since it was
	// first watched). For StateActive, how long the silence lasted: from
	// LastSeen to the latest event seen at the tick that noticed the
	// source sending again (within one Resolution of its first).
	SilentFor time.Duration
	// EventsBefore is the number of events the source had sent (since it
	// was first tracked, restored counts included) when it fell silent.
	EventsBefore uint64
	// Expected reports whether the key is in Policy.Expected.
	Expected bool
}

// Run detects silence and recovery, updates rates and the limited state
// once per Config.Resolution, and saves Config.StateFile every
// Config.SaveInterval and when it returns. It blocks until ctx ends, then
// returns nil, or the error of the final save (also given to
// Hooks.OnSaveError). It returns [ErrRunning] if the tracker is already
// running. Hooks are called on Run's goroutine.
//
// Time for silence starts when Run first starts: a key loaded from a
// state file, or an expected key, has SilentAfter from then to send before
// it is reported silent (a restart gives every sender time to reconnect),
// and is then reported with its true last seen and silence.
func (t *Tracker) Run(ctx context.Context) error {
	if !t.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer t.running.Store(false)
	t.startWatch()

	ticker := time.NewTicker(t.cfg.Resolution)
	defer ticker.Stop()
	var saveC <-chan time.Time
	if t.cfg.StateFile != "" {
		s := time.NewTicker(t.cfg.SaveInterval)
		defer s.Stop()
		saveC = s.C
	}
	for {
		select {
		case <-ctx.Done():
			if t.cfg.StateFile == "" {
				return nil
			}
			return t.runSave()
		case <-ticker.C:
			t.Tick()
		case <-saveC:
			_ = t.runSave() // reported to the hook
		}
	}
}

// startWatch starts the time for silence, at the first Run or Tick.
func (t *Tracker) startWatch() {
	t.tickMu.Lock()
	defer t.tickMu.Unlock()
	if t.started.Load() {
		return
	}
	now := t.nowNano()
	t.watchStart.Store(now)
	t.lastTick = now
	t.started.Store(true)
}

// Tick does one tick of Run's work now: it decides silence and recovery,
// updates rates and the limited state, and calls OnTransition for the
// transitions found. Run calls it every Resolution; a program that drives
// its own timers (or a test with a manual clock) may call it instead of
// running Run. The first Tick, like the first Run, starts the time for
// silence. Tick is safe to call concurrently with Run: ticks are
// serialised.
func (t *Tracker) Tick() {
	t.startWatch()
	t.tickMu.Lock()
	defer t.tickMu.Unlock()
	t.tick(t.nowNano())
}

// runSave saves the state file and reports a failure to the hook.
func (t *Tracker) runSave() error {
	err := t.Save(t.cfg.StateFile)
	if err != nil && t.cfg.Hooks.OnSaveError != nil {
		t.cfg.Hooks.OnSaveError(err)
	}
	return err
}

// ticker is the state of one tick.
type tickState struct {
	now, start int64
	secs       float64 // since the last tick
	alpha      float64 // EWMA weight of this tick
	budget     int     // transitions left
	silent     int64
	limited    int64
}

// tick visits every key once: rates, limited state, silence and recovery;
// then reports the transitions. The caller holds tickMu.
func (t *Tracker) tick(now int64) {
	dt := now - t.lastTick
	if dt <= 0 {
		dt = int64(t.cfg.Resolution)
	}
	t.lastTick = now
	ts := tickState{
		now:    now,
		start:  t.watchStart.Load(),
		secs:   float64(dt) / 1e9,
		alpha:  -math.Expm1(-float64(dt) / float64(t.cfg.RateWindow)),
		budget: t.cfg.MaxTransitions,
	}
	clear(t.pending)
	t.pending = t.pending[:0]
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		tab := s.tab.Load()
		for j := range tab.slots {
			if e := tab.slots[j].Load(); e != nil && e != tombstone {
				t.visit(e, &ts)
			}
		}
		s.mu.Unlock()
	}
	t.nSilent.Store(ts.silent)
	t.nLimited.Store(ts.limited)
	if h := t.cfg.Hooks.OnTransition; h != nil {
		slices.SortFunc(t.pending, func(a, b Transition) int { return a.Key.Compare(b.Key) })
		for i := range t.pending {
			h(t.pending[i])
		}
	}
}

// visit updates one key at a tick.
func (t *Tracker) visit(e *entry, ts *tickState) {
	// Events first, then last seen: observe stores last seen before it
	// adds the events, so an event counted here has its time visible
	// below, and an event not counted here shows as new events at the
	// next tick.
	ev := e.events.Load()
	last := e.lastSeen.Load()

	inst := float64(ev-e.prevEvents) / ts.secs
	e.prevEvents = ev
	r := inst
	if e.rateInit {
		r = math.Float64frombits(e.rate.Load())
		r += ts.alpha * (inst - r)
	}
	e.rateInit = e.rateInit || last != 0
	e.rate.Store(math.Float64bits(r))

	st := e.state.Load()
	next := st &^ flagLimited
	if lim := e.dropped.Load() + e.paced.Load(); lim != e.prevLimited {
		next |= flagLimited
		e.prevLimited = lim
	}

	if st&flagSilent != 0 {
		if ev != e.eventsAtSilent && ts.budget > 0 {
			ts.budget--
			next &^= flagSilent
			t.toActive.Add(1)
			t.pending = append(t.pending, Transition{
				Key:          e.key,
				State:        StateActive,
				At:           time.Unix(0, ts.now).UTC(),
				LastSeen:     timeOf(e.silentLast),
				SilentFor:    time.Duration(max(0, last-e.silentRef)),
				EventsBefore: e.eventsAtSilent,
				Expected:     e.expected.Load(),
			})
		}
	} else if sa := e.silentAfter.Load(); sa > 0 && (last != 0 || e.expected.Load()) {
		ref := max(last, ts.start, e.watchFrom.Load())
		if ts.now-ref > sa && ts.budget > 0 {
			ts.budget--
			next |= flagSilent
			e.eventsAtSilent = ev
			e.silentLast = last
			e.silentRef = last
			if last == 0 {
				e.silentRef = ref
			}
			t.toSilent.Add(1)
			t.pending = append(t.pending, Transition{
				Key:          e.key,
				State:        StateSilent,
				At:           time.Unix(0, ts.now).UTC(),
				LastSeen:     timeOf(last),
				SilentFor:    time.Duration(ts.now - e.silentRef),
				EventsBefore: ev,
				Expected:     e.expected.Load(),
			})
		}
	}
	if next != st {
		e.state.Store(next)
	}
	if next&flagSilent != 0 {
		ts.silent++
	} else if next&flagLimited != 0 {
		ts.limited++
	}
}

// timeOf returns ns as a UTC time; the zero Time for 0.
func timeOf(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// SetPolicy replaces the silence and rate-limit settings while the
// tracker runs (a configuration reload). Every key's settings are resolved
// again; limiter state is kept. Keys newly expected are added (evicting
// others if the table is full) and have SilentAfter from now to send;
// keys no longer expected become ordinary keys, and those that never sent
// are removed. The error wraps [ErrInvalidConfig] and leaves the policy
// unchanged. Its cost is O(keys × len(Overrides)).
func (t *Tracker) SetPolicy(p Policy) error {
	pol, err := compilePolicy(p)
	if err != nil {
		return err
	}
	if len(pol.expected) >= t.cfg.MaxSources {
		return fmt.Errorf("%w: %d expected keys with MaxSources %d (it must be larger)", ErrInvalidConfig, len(pol.expected), t.cfg.MaxSources)
	}
	t.polMu.Lock()
	defer t.polMu.Unlock()
	old := t.pol.Swap(pol)
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		s.each(func(e *entry) { t.applyPolicy(e, pol) })
		s.mu.Unlock()
	}
	t.addExpected(pol)
	t.evictMu.Lock() // remove's rule
	defer t.evictMu.Unlock()
	for k := range old.expected {
		if _, still := pol.expected[k]; still {
			continue
		}
		e := t.get(k)
		if e != nil && e.lastSeen.Load() == 0 && !e.expected.Load() {
			t.remove(e, false)
		}
	}
	return nil
}

// addExpected makes sure every expected key of pol has an entry, stamping
// the new ones with the time they started to be watched if Run has
// started.
func (t *Tracker) addExpected(pol *policy) {
	var now int64
	if t.started.Load() {
		now = t.nowNano()
	}
	for k := range pol.expected {
		e := t.get(k)
		if e != nil {
			continue
		}
		e = t.lookup(k)
		if e.lastSeen.Load() == 0 {
			e.watchFrom.CompareAndSwap(0, now)
		}
	}
}
