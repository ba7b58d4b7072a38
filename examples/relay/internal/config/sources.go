package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/relaykit/relaykit/sources"
)

// SourcesConfig is the sources section: per-source statistics, silent
// source detection and per-source rate limits (README "Per-source
// statistics"). Off unless Enabled. Zero values mean the defaults that
// default.yaml documents.
type SourcesConfig struct {
	// Enabled turns tracking on; everything below is ignored without it.
	Enabled bool `yaml:"enabled"`
	// MaxSources is the number of sources tracked at most (the least
	// recently seen is evicted beyond it). 0: 10,000.
	MaxSources int `yaml:"max_sources"`
	// SilentAfter is how long a source that sent may stay quiet before it
	// is reported silent. 0: 5m; negative: never.
	SilentAfter time.Duration `yaml:"silent_after"`
	// Expected lists sources (addresses, or host names for inputs keyed
	// by host) that count as silent until they first send.
	Expected []string `yaml:"expected"`
	// Overrides set silent_after or the rate limit per address, CIDR,
	// glob or regular expression ("~..."); the first match wins.
	Overrides []SourceOverride `yaml:"overrides"`
	// RateLimit is every source's rate limit (none when
	// events_per_second is 0) and what the inputs do with the excess.
	RateLimit SourceRateLimit `yaml:"rate_limit"`
	// Keys chooses per input what a source is: "address" (the sender's,
	// the default; behind a balancer with proxy_protocol, the one its
	// header names) or "host" (the event's host, for devices behind
	// another relay; syslog inputs only).
	Keys map[string]string `yaml:"keys"`
	// StateFile keeps the known sources across restarts. "": sources.state
	// in spool.dir.
	StateFile string `yaml:"state_file"`
}

// SourceLimit is a per-source rate limit: events_per_second sustained,
// burst at once (0: one second's worth).
type SourceLimit struct {
	EventsPerSecond float64 `yaml:"events_per_second"`
	Burst           int     `yaml:"burst"`
}

// SourceRateLimit is the default rate limit and its mode.
type SourceRateLimit struct {
	SourceLimit `yaml:",inline"`
	// Mode is pace (the default: a stream connection over its rate is not
	// read until it is within it; UDP, which cannot be paced, drops) or
	// drop (UDP, syslog TCP and JSON drop the excess, counted as
	// dropped{rate_limit}; HEC answers the request code 9 and RELP, which
	// cannot refuse, paces).
	Mode string `yaml:"mode"`
}

// SourceOverride sets silent_after or the rate limit of the sources Match
// selects. Zero values inherit; a negative silent_after means never
// silent, a negative events_per_second no limit.
type SourceOverride struct {
	Match       string        `yaml:"match"`
	SilentAfter time.Duration `yaml:"silent_after"`
	RateLimit   SourceLimit   `yaml:"rate_limit"`
}

// Source key kinds and rate-limit modes.
const (
	SourceKeyAddress = "address"
	SourceKeyHost    = "host"
	RateModePace     = "pace"
	RateModeDrop     = "drop"
)

// policy returns the tracker's policy.
func (s *SourcesConfig) Policy() sources.Policy {
	p := sources.Policy{
		SilentAfter: s.SilentAfter,
		RateLimit:   sources.Limit{EventsPerSecond: s.RateLimit.EventsPerSecond, Burst: s.RateLimit.Burst},
	}
	for _, e := range s.Expected {
		p.Expected = append(p.Expected, sources.ParseKey(e))
	}
	for _, o := range s.Overrides {
		p.Overrides = append(p.Overrides, sources.Override{
			Match: o.Match, SilentAfter: o.SilentAfter,
			RateLimit: sources.Limit{EventsPerSecond: o.RateLimit.EventsPerSecond, Burst: o.RateLimit.Burst},
		})
	}
	return p
}

// keyByHost reports whether the input named name keys its sources by the
// event's host.
func (s *SourcesConfig) KeyByHost(name string) bool { return s.Keys[name] == SourceKeyHost }

// validateSources fills the defaults of the sources section and checks
// it; the inputs must have been checked (their names are known).
func (c *Config) validateSources(ck *Checker) {
	s := &c.Sources
	if !s.Enabled {
		return
	}
	if ck.names[HealthInputName] {
		ck.Bad("sources", "an input is named %q, the name of the source health events' input", HealthInputName)
	}
	if s.MaxSources == 0 {
		s.MaxSources = sources.DefaultMaxSources
	}
	if s.MaxSources < 0 {
		ck.Bad("sources.max_sources", "must be positive")
	} else if s.MaxSources <= len(s.Expected) {
		ck.Bad("sources.max_sources", "%d must be larger than the %d expected sources", s.MaxSources, len(s.Expected))
	}
	if s.SilentAfter == 0 {
		s.SilentAfter = sources.DefaultSilentAfter
	}
	switch s.RateLimit.Mode {
	case "":
		s.RateLimit.Mode = RateModePace
	case RateModePace, RateModeDrop:
	default:
		ck.Bad("sources.rate_limit.mode", "%q is not pace or drop", s.RateLimit.Mode)
	}
	for i, e := range s.Expected {
		if e == "" {
			ck.Bad(fmt.Sprintf("sources.expected[%d]", i), "empty")
		}
	}
	if err := s.Policy().Validate(); err != nil {
		ck.Bad("sources", "%v", err)
	}
	// What each input offers as its sources' key (InputSection.SourceKeys):
	// syslog inputs either; the JSON input's events name their peer, and
	// RELP's, HEC's and OTLP's are counted per window or request, so their
	// key is the address; a Kafka record has no sender address.
	offers := map[string]InputSection{}
	var tracked, byAddress, byHost []string // kinds, for the messages
	for _, sec := range InputKinds() {
		switch k := sec.SourceKeys(); {
		case len(k) == 0:
			continue
		case len(k) == 1 && k[0] == SourceKeyAddress:
			byAddress = append(byAddress, sec.Key())
		case len(k) == 1 && k[0] == SourceKeyHost:
			byHost = append(byHost, sec.Key())
		}
		tracked = append(tracked, sec.Key())
	}
	for _, sec := range c.Inputs.Sections() {
		if len(sec.SourceKeys()) > 0 {
			offers[sec.InputName()] = sec
		}
	}
	for name, k := range s.Keys {
		field := "sources.keys." + name
		sec, ok := offers[name]
		switch {
		case k != SourceKeyAddress && k != SourceKeyHost:
			ck.Bad(field, "%q is not address or host", k)
		case !ok:
			ck.Bad(field, "no %s input named %q", typeList(tracked), name)
		case slices.Contains(sec.SourceKeys(), k):
		case k == SourceKeyHost:
			ck.Bad(field, "%s inputs are keyed by address only", andList(byAddress))
		default:
			ck.Bad(field, "%s inputs are keyed by host only (a record has no sender address)", andList(byHost))
		}
	}
	if s.StateFile == "" {
		s.StateFile = filepath.Join(c.Spool.Dir, "sources.state")
	}
}

// andList joins names as "a, b and c" (typeList: "a, b or c").
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// healthInputName is the engine input the source health events come
// through, so that they route like any other event.
const HealthInputName = "sources"
