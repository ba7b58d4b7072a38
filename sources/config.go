package sources

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/relaykit/relaykit/clock"
)

// Defaults for the zero values of [Config] and [Policy].
const (
	// DefaultMaxSources is the number of keys tracked at most when
	// Config.MaxSources is zero.
	DefaultMaxSources = 10_000
	// DefaultResolution is the period of Run's ticker when
	// Config.Resolution is zero.
	DefaultResolution = time.Second
	// DefaultRateWindow is the time constant of the rate average when
	// Config.RateWindow is zero.
	DefaultRateWindow = 10 * time.Second
	// DefaultMaxTransitions is the number of transitions reported per tick
	// at most when Config.MaxTransitions is zero.
	DefaultMaxTransitions = 100
	// DefaultSaveInterval is the period of the state file's saves when
	// Config.SaveInterval is zero.
	DefaultSaveInterval = time.Minute
	// DefaultSilentAfter is the silence that makes a key silent when
	// Policy.SilentAfter is zero.
	DefaultSilentAfter = 5 * time.Minute
)

// MinEventsPerSecond is the lowest rate limit: one event per 1,000 s.
const MinEventsPerSecond = 0.001

// Errors returned by this package.
var (
	// ErrInvalidConfig wraps every error of [New] and [Tracker.SetPolicy]
	// about a bad [Config] or [Policy].
	ErrInvalidConfig = errors.New("sources: invalid config")
	// ErrRunning is returned by [Tracker.Run] when it is already running
	// and by [Tracker.Load] once Run (or Tick) has started.
	ErrRunning = errors.New("sources: tracker running")
	// ErrCorrupt is wrapped by the error of [Tracker.Load] for a state
	// file that is not one [Tracker.Save] wrote in full.
	ErrCorrupt = errors.New("sources: corrupt state file")
)

// Config configures a [Tracker]. The zero value is valid: 10,000 keys, a
// 1 s resolution, silence after 5 minutes, no rate limits, the tracker's
// own clock and no state file.
type Config struct {
	// MaxSources is the number of keys tracked at most. When a new key
	// arrives with MaxSources keys tracked, the least recently seen key
	// that is not expected is evicted (forgotten and counted in
	// Stats.Evictions). Zero means [DefaultMaxSources] (10,000). It must
	// be larger than the number of Policy.Expected keys.
	MaxSources int

	// Resolution is the period of [Tracker.Run]'s ticker: silence and
	// recovery are detected, rates updated and the limited state decided
	// once per Resolution. A key is reported silent between SilentAfter
	// and SilentAfter+Resolution (plus the clock's own resolution) after
	// its last event. Zero means [DefaultResolution] (1 s).
	Resolution time.Duration

	// RateWindow is the time constant of the exponentially weighted moving
	// average behind Source.Rate: each tick moves the rate towards the
	// tick's events per second by 1-exp(-Resolution/RateWindow), so a
	// step change is 63 % visible after RateWindow. Zero means
	// [DefaultRateWindow] (10 s).
	RateWindow time.Duration

	// MaxTransitions is the number of silent/active transitions reported
	// per tick at most. Keys past it keep their state until a later tick
	// reports them, so a mass silence (a network down, a burst of
	// one-off senders going quiet) becomes a bounded stream of reports,
	// none lost. Zero means [DefaultMaxTransitions] (100).
	MaxTransitions int

	// Clock stamps last seen and drives the rate limiters, read once per
	// call of the hot-path methods. Nil means [clock.Default].
	Clock *clock.Clock

	// StateFile, when set, is the path Run saves the known keys to every
	// SaveInterval and when it returns (see [Tracker.Save]). Loading it
	// at start is the caller's ([Tracker.Load]), so the caller can log a
	// missing or damaged file. Empty means no periodic saves.
	StateFile string
	// SaveInterval is the period of Run's saves of StateFile. Zero means
	// [DefaultSaveInterval] (1 minute).
	SaveInterval time.Duration

	// Policy holds the silence and rate-limit settings, replaceable while
	// the tracker runs with [Tracker.SetPolicy].
	Policy Policy

	// Hooks are optional callbacks; see [Hooks].
	Hooks Hooks
}

// Hooks are optional callbacks. Each nil hook is skipped. They run on
// Run's goroutine (or Tick's caller), in order, between ticks: a slow hook
// delays the next tick, never an input.
type Hooks struct {
	// OnTransition is called for each key that became silent or active
	// again, in key order within a tick. tr is a value; keep it as long as
	// needed. It must not call Tick.
	OnTransition func(tr Transition)
	// OnSaveError is called when one of Run's saves of Config.StateFile
	// fails. The previous file, if any, is intact.
	OnSaveError func(err error)
}

// Policy is the part of the configuration that [Tracker.SetPolicy] can
// replace while the tracker runs: silence thresholds, expected keys and
// rate limits. The zero value means silence after 5 minutes, no expected
// keys and no rate limits.
type Policy struct {
	// SilentAfter is how long a key that has sent before may stay quiet
	// before it is reported silent. Zero means [DefaultSilentAfter]
	// (5 minutes); negative means never (no silence detection, except
	// where an override sets a threshold).
	SilentAfter time.Duration

	// Expected lists keys that are watched before they first send: from
	// the start of Run (or the SetPolicy that added them), such a key has
	// SilentAfter (its own, overrides applied) to send before it is
	// reported silent, with a zero Transition.LastSeen. Until then its
	// state is [StateWaiting]. Expected keys are never evicted. A key
	// must be of the kind the input looks up: the address key of a
	// sender, or the host key of an event's host (see [ParseKey]).
	Expected []Key

	// RateLimit is every key's rate limit unless an override sets one.
	// The zero Limit means no limit.
	RateLimit Limit

	// Overrides set SilentAfter or RateLimit for the keys they match.
	// Each setting is resolved on its own: the first override in order
	// that matches the key and sets it wins, otherwise the default
	// above applies. Settings are resolved once per key, when it is
	// first seen (and again for every key on SetPolicy), at a cost of
	// O(len(Overrides)).
	Overrides []Override
}

// Limit is a rate limit: a generic cell rate algorithm (GCRA, the
// token bucket's equivalent in one timestamp) that lets a key send Burst
// events at once and EventsPerSecond on average.
type Limit struct {
	// EventsPerSecond is the sustained rate allowed, from
	// [MinEventsPerSecond] to 1e9. Zero means no limit
	// (in an [Override]: inherit the default); negative means no limit
	// (in an Override: none for the keys it matches, whatever the
	// default).
	EventsPerSecond float64
	// Burst is the number of events allowed at once after a pause, at
	// least 1. Zero means one second's worth: ceil(EventsPerSecond).
	Burst int
}

// Override sets the silence threshold or the rate limit of the keys its
// Match selects.
type Override struct {
	// Match selects keys, in one of these forms:
	//
	//	"192.0.2.7", "2001:db8::1"   one address (its address key, and a host key with that text)
	//	"192.0.2.0/24"               a CIDR prefix: the addresses in it, as above
	//	"fw-*.corp.example"          a glob (path.Match syntax) on the key's text
	//	"~^fw-[0-9]+\\.corp$"        a regular expression (RE2, after the "~") on the key's text
	//
	// The key's text is the host of a host key and the address's text
	// (as [netip.Addr.String]) of an address key. A glob without
	// metacharacters matches that one text exactly. Matching is
	// case-sensitive; use "~(?i)..." for host names of mixed case.
	Match string
	// SilentAfter replaces Policy.SilentAfter for the keys matched. Zero
	// means inherit; negative means never silent.
	SilentAfter time.Duration
	// RateLimit replaces Policy.RateLimit for the keys matched. The zero
	// Limit means inherit; a negative EventsPerSecond means no limit.
	RateLimit Limit
}

// Validate reports whether p is valid, as [Tracker.SetPolicy] checks it.
// Errors wrap [ErrInvalidConfig].
func (p Policy) Validate() error {
	_, err := compilePolicy(p)
	return err
}

// withDefaults returns a copy of cfg with defaults filled, or an error
// wrapping ErrInvalidConfig. The Policy is checked by compilePolicy.
func (cfg Config) withDefaults() (Config, error) {
	switch {
	case cfg.MaxSources < 0:
		return cfg, fmt.Errorf("%w: MaxSources %d is negative", ErrInvalidConfig, cfg.MaxSources)
	case cfg.Resolution < 0:
		return cfg, fmt.Errorf("%w: Resolution %v is negative", ErrInvalidConfig, cfg.Resolution)
	case cfg.RateWindow < 0:
		return cfg, fmt.Errorf("%w: RateWindow %v is negative", ErrInvalidConfig, cfg.RateWindow)
	case cfg.MaxTransitions < 0:
		return cfg, fmt.Errorf("%w: MaxTransitions %d is negative", ErrInvalidConfig, cfg.MaxTransitions)
	case cfg.SaveInterval < 0:
		return cfg, fmt.Errorf("%w: SaveInterval %v is negative", ErrInvalidConfig, cfg.SaveInterval)
	}
	if cfg.MaxSources == 0 {
		cfg.MaxSources = DefaultMaxSources
	}
	if cfg.Resolution == 0 {
		cfg.Resolution = DefaultResolution
	}
	if cfg.RateWindow == 0 {
		cfg.RateWindow = DefaultRateWindow
	}
	if cfg.MaxTransitions == 0 {
		cfg.MaxTransitions = DefaultMaxTransitions
	}
	if cfg.SaveInterval == 0 {
		cfg.SaveInterval = DefaultSaveInterval
	}
	return cfg, nil
}

// limitParams is a compiled Limit: the GCRA emission interval and burst
// tolerance, in ns. emission 0 means no limit.
type limitParams struct {
	emission  int64
	tolerance int64
}

// compileLimit turns a valid Limit with EventsPerSecond > 0 into its GCRA
// parameters.
func compileLimit(l Limit) limitParams {
	burst := int64(l.Burst)
	if burst == 0 {
		burst = max(1, int64(math.Ceil(l.EventsPerSecond)))
	}
	em := int64(math.Round(1e9 / l.EventsPerSecond))
	em = max(em, 1)
	return limitParams{emission: em, tolerance: burst * em}
}

func checkLimit(l Limit, where string) error {
	switch {
	case math.IsNaN(l.EventsPerSecond) || math.IsInf(l.EventsPerSecond, 0):
		return fmt.Errorf("%w: %sRateLimit.EventsPerSecond %v is not a number", ErrInvalidConfig, where, l.EventsPerSecond)
	case l.Burst < 0:
		return fmt.Errorf("%w: %sRateLimit.Burst %d is negative", ErrInvalidConfig, where, l.Burst)
	case l.EventsPerSecond > 0 && l.EventsPerSecond < MinEventsPerSecond:
		return fmt.Errorf("%w: %sRateLimit.EventsPerSecond %v is below %v", ErrInvalidConfig, where, l.EventsPerSecond, MinEventsPerSecond)
	case l.EventsPerSecond > 0 && 1e9/l.EventsPerSecond < 1:
		return fmt.Errorf("%w: %sRateLimit.EventsPerSecond %v exceeds 1e9", ErrInvalidConfig, where, l.EventsPerSecond)
	case l.EventsPerSecond > 0 && float64(max(l.Burst, 1))*1e9/l.EventsPerSecond > math.MaxInt64/4:
		return fmt.Errorf("%w: %sRateLimit.Burst %d at %v events/s is too long a burst", ErrInvalidConfig, where, l.Burst, l.EventsPerSecond)
	}
	return nil
}

// override is a compiled Override.
type override struct {
	prefix netip.Prefix   // valid for an address or CIDR match
	glob   string         // non-empty for a glob match
	re     *regexp.Regexp // non-nil for a regexp match

	silentAfter int64 // ns; 0 inherit, <0 never
	limitSet    bool
	limit       limitParams // emission 0 with limitSet: no limit
}

// policy is a compiled Policy.
type policy struct {
	src         Policy
	silentAfter int64 // ns; <0 never
	limit       limitParams
	overrides   []override
	expected    map[Key]struct{}
}

func compilePolicy(p Policy) (*policy, error) {
	if err := checkLimit(p.RateLimit, ""); err != nil {
		return nil, err
	}
	c := &policy{src: p, silentAfter: int64(p.SilentAfter)}
	if p.SilentAfter == 0 {
		c.silentAfter = int64(DefaultSilentAfter)
	}
	if p.RateLimit.EventsPerSecond > 0 {
		c.limit = compileLimit(p.RateLimit)
	}
	for i, o := range p.Overrides {
		where := fmt.Sprintf("Overrides[%d] (%q): ", i, o.Match)
		if err := checkLimit(o.RateLimit, where); err != nil {
			return nil, err
		}
		co := override{silentAfter: int64(o.SilentAfter)}
		switch eps := o.RateLimit.EventsPerSecond; {
		case eps > 0:
			co.limitSet, co.limit = true, compileLimit(o.RateLimit)
		case eps < 0:
			co.limitSet = true
		}
		if co.silentAfter == 0 && !co.limitSet {
			return nil, fmt.Errorf("%w: %ssets neither SilentAfter nor RateLimit", ErrInvalidConfig, where)
		}
		m := o.Match
		switch {
		case m == "":
			return nil, fmt.Errorf("%w: Overrides[%d]: empty Match", ErrInvalidConfig, i)
		case strings.HasPrefix(m, "~"):
			re, err := regexp.Compile(m[1:])
			if err != nil {
				return nil, fmt.Errorf("%w: %s%w", ErrInvalidConfig, where, err)
			}
			co.re = re
		default:
			if a, err := netip.ParseAddr(m); err == nil {
				a = a.Unmap()
				co.prefix = netip.PrefixFrom(a, a.BitLen())
			} else if pf, err := netip.ParsePrefix(m); err == nil {
				co.prefix = pf.Masked()
			} else if _, err := path.Match(m, ""); err != nil {
				return nil, fmt.Errorf("%w: %sbad glob: %w", ErrInvalidConfig, where, err)
			} else {
				co.glob = m
			}
		}
		c.overrides = append(c.overrides, co)
	}
	c.expected = make(map[Key]struct{}, len(p.Expected))
	for i, k := range p.Expected {
		if !k.IsValid() {
			return nil, fmt.Errorf("%w: Expected[%d] is the zero Key", ErrInvalidConfig, i)
		}
		c.expected[k] = struct{}{}
	}
	return c, nil
}

// resolve returns the silence threshold and rate limit of k.
func (p *policy) resolve(k Key) (silentAfter int64, lim limitParams) {
	silentAfter = p.silentAfter
	lim = p.limit
	if len(p.overrides) == 0 {
		return silentAfter, lim
	}
	var (
		text     string // the key's text, computed once when needed
		haveText bool
		addr     netip.Addr // the key's address, parsed once for a host key
		haveAddr bool
	)
	if a, ok := k.Addr(); ok {
		addr, haveAddr = a, true
	} else if a, err := netip.ParseAddr(k.host); err == nil {
		addr, haveAddr = a.Unmap(), true
	}
	silentSet, limitSet := false, false
	for i := range p.overrides {
		o := &p.overrides[i]
		if (silentSet || o.silentAfter == 0) && (limitSet || !o.limitSet) {
			continue
		}
		var match bool
		if o.prefix.IsValid() {
			match = haveAddr && o.prefix.Contains(addr)
		} else {
			if !haveText {
				text, haveText = k.String(), true
			}
			if o.re != nil {
				match = o.re.MatchString(text)
			} else {
				match, _ = path.Match(o.glob, text)
			}
		}
		if !match {
			continue
		}
		if !silentSet && o.silentAfter != 0 {
			silentAfter, silentSet = o.silentAfter, true
		}
		if !limitSet && o.limitSet {
			lim, limitSet = o.limit, true
		}
		if silentSet && limitSet {
			break
		}
	}
	return silentAfter, lim
}
