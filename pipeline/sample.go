package pipeline

import (
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/evfield"
)

// SampleConfig configures [NewSample]. The zero value keeps every event
// (and marks it sample_rate=1).
type SampleConfig struct {
	// N keeps one event in N: overall, or per key when Key is set. Zero
	// or 1 keeps every event. Unused when Dynamic is set.
	N int
	// Key names the values whose combination forms a sample group, as
	// for [SuppressConfig.Key]. Empty means one group for all events.
	Key []string
	// Dynamic derives each group's rate from its volume in the previous
	// window, as Cribl Stream's Dynamic Sampling does in its logarithmic
	// mode: see [NewSample].
	Dynamic bool
	// Window is how often dynamic rates are recomputed: the length of the
	// tumbling windows, aligned to the Unix epoch. Zero means 30 seconds.
	Window time.Duration
	// MinEvents is the least number of events a group must have had in
	// the previous window for a dynamic rate above 1. Zero means 30.
	MinEvents int
	// MaxRate caps the dynamic rate. Zero means no cap.
	MaxRate int
	// MaxKeys bounds the groups held at once (with Key or Dynamic). Zero
	// means [DefaultMaxKeys]. When it is reached, the least recently used
	// group is evicted (counted in [StepStats]) and starts afresh if it
	// comes back; there is nothing to emit.
	MaxKeys int
}

// Sampler is a [Function] named "sample" that keeps one event in a rate
// per group and drops the others; build it with [NewSample]. A router
// counts the events it drops as drops of the step "sample" (a filtering
// reason), like [Sample]'s.
//
// Every event it keeps gets the field sample_rate: the rate it was kept
// at, the number of input events it stands for, so that a count is
// scaled back with sum(sample_rate). An event that already has a
// numeric sample_rate (an earlier sampler kept it) gets the product.
//
// Within a group, the 1st, (rate+1)th, (2·rate+1)th... event is kept: a
// single-goroutine run is deterministic, and a group that sends fewer
// events than the rate still has its first one kept.
//
// Apply does not allocate for a group it holds and is safe for
// concurrent use.
type Sampler struct {
	n       int64
	dynamic bool
	keyed   bool
	minEv   int64
	maxRate int64
	seen    atomic.Int64 // overall mode
	t       table[sampleState]
	pick    picker
}

type sampleState struct {
	count int64 // events of the group (in the window, when dynamic)
	rate  int64 // the rate of the window (dynamic)
}

// NewSample returns a Sampler:
//
//   - N > 1, no Key: one event in N overall, counted across goroutines
//     with one atomic counter (as [Sample], plus sample_rate);
//   - N > 1 and Key: one event in N per group;
//   - Dynamic: per group and window, rate = 1 when the group had fewer
//     than MinEvents events in the previous window (or was not seen
//     then), else ⌈ln(previous count)⌉, capped at MaxRate: 30 events
//     give 4, 1 000 give 7, 1 000 000 give 14. A group's first window is
//     kept whole.
//
// It returns an error wrapping [ErrInvalidConfig] when a number is
// negative, when N > 1 is combined with Dynamic, or when Key lists more
// than [MaxKeyNames] names.
func NewSample(cfg SampleConfig) (*Sampler, error) {
	if cfg.N < 0 || cfg.MinEvents < 0 || cfg.MaxRate < 0 {
		return nil, fmt.Errorf("%w: sample: negative number in %+v", ErrInvalidConfig, cfg)
	}
	if err := validateKeyed("sample", cfg.Window, cfg.MaxKeys); err != nil {
		return nil, err
	}
	if cfg.Dynamic && cfg.N > 1 {
		return nil, fmt.Errorf("%w: sample: n %d with dynamic sampling", ErrInvalidConfig, cfg.N)
	}
	s := &Sampler{n: int64(max(cfg.N, 1)), dynamic: cfg.Dynamic, keyed: len(cfg.Key) > 0 || cfg.Dynamic,
		minEv: int64(cfg.MinEvents), maxRate: int64(cfg.MaxRate)}
	if s.minEv == 0 {
		s.minEv = 30
	}
	if s.keyed {
		w := time.Duration(0)
		if cfg.Dynamic {
			w = cfg.Window
			if w == 0 {
				w = 30 * time.Second
			}
		}
		var err error
		if s.pick, err = newPicker(cfg.Key); err != nil {
			return nil, fmt.Errorf("sample: key: %w", err)
		}
		s.t.init(cfg.Key, w, cfg.MaxKeys)
		s.t.reset = func(k *keyState[sampleState]) { k.st.count, k.st.rate = 0, 1 }
	}
	return s, nil
}

// Name returns "sample".
func (s *Sampler) Name() string { return "sample" }

// Apply reports whether e is kept, and marks a kept event with its rate.
func (s *Sampler) Apply(e *relaykit.Event) (bool, error) {
	var rate int64
	if !s.keyed {
		rate = s.n
		if (s.seen.Add(1)-1)%rate != 0 {
			return false, nil
		}
	} else {
		var pk picked
		vals, missing := s.pick.pick(e, &pk)
		h := s.t.hash(vals)
		sh := s.t.shardOf(h)
		sh.mu.Lock()
		if missing != 0 {
			sh.misses++
		}
		_, win := s.t.at(sh, e.ReceiveTime)
		k, fresh := s.t.lookup(sh, h, vals, win)
		st := &k.st
		rate = s.n
		if s.dynamic {
			if !fresh && win > k.win {
				prev := int64(0)
				if win == k.win+s.t.window {
					prev = st.count
				}
				st.rate, st.count = s.rateFor(prev), 0
				k.win = win
			}
			rate = st.rate
		}
		st.count++
		keep := (st.count-1)%rate == 0
		sh.mu.Unlock()
		if !keep {
			return false, nil
		}
	}
	markRate(e, rate)
	return true, nil
}

// markRate sets the sample_rate field of e to rate, times the rate
// already there if it is a positive integer.
func markRate(e *relaykit.Event, rate int64) {
	for i := range e.Fields {
		if string(e.Fields[i].Key) == FieldSampleRate {
			f := &e.Fields[i]
			if old, _, isInt, ok := parseNumber(f.Value); ok && isInt && old > 0 {
				rate *= old
			}
			f.Value = strconv.AppendInt(f.Value[:0], rate, 10)
			return
		}
	}
	f := evfield.Add(e, FieldSampleRate)
	f.Value = strconv.AppendInt(f.Value, rate, 10)
}

// rateFor is the dynamic rate for a window after one with prev events.
func (s *Sampler) rateFor(prev int64) int64 {
	if prev < s.minEv || prev < 2 {
		return 1
	}
	r := int64(math.Ceil(math.Log(float64(prev))))
	if s.maxRate > 0 {
		r = min(r, s.maxRate)
	}
	return max(r, 1)
}

// Stats returns the step's groups and evictions (zero without Key or
// Dynamic).
func (s *Sampler) Stats() StepStats {
	if !s.keyed {
		return StepStats{}
	}
	st := s.t.stats()
	st.UnseenKeys = s.pick.unseen()
	return st
}
