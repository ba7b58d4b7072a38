package input

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"
	"github.com/relaykit/relaykit/examples/relay/internal/metrics"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/sources"
)

// healthSource is the Source of the source health events.
const healthSource = "relay"

// sourceTracker is the relay's one sources.Tracker, shared by every
// input: the health events it pushes when a source falls silent or sends
// again, its metrics and GET /api/sources.
type SourceTracker struct {
	Config  config.SourcesConfig
	Tracker *sources.Tracker
	health  *ledger.InputStats // the "sources" input
	log     *slog.Logger
	// push is Run's: the health events' pushes give up when it ends. Set
	// before tr.Run, read by the hooks on Run's goroutine.
	push context.Context
}

// newSourceTracker builds the tracker of cfg (enabled) and restores the
// state file: a missing or damaged one is logged and ignored.
func NewSourceTracker(cfg config.SourcesConfig, l *ledger.Ledger, log *slog.Logger) (*SourceTracker, error) {
	s := &SourceTracker{Config: cfg, log: log, health: l.Input(config.HealthInputName, "sources")}
	if err := os.MkdirAll(filepath.Dir(cfg.StateFile), 0o750); err != nil {
		return nil, fmt.Errorf("sources.state_file: %w", err)
	}
	tr, err := sources.New(sources.Config{
		MaxSources: cfg.MaxSources,
		Clock:      clk,
		StateFile:  cfg.StateFile,
		Policy:     cfg.Policy(),
		Hooks: sources.Hooks{
			OnTransition: s.transition,
			OnSaveError: func(err error) {
				log.Warn("sources: state file not saved", "file", cfg.StateFile, "err", err)
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("sources: %w", err)
	}
	s.Tracker = tr
	switch n, err := tr.Load(cfg.StateFile); {
	case errors.Is(err, fs.ErrNotExist):
		log.Info("sources: no state file, starting with no known sources", "file", cfg.StateFile)
	case err != nil:
		log.Warn("sources: state file ignored", "file", cfg.StateFile, "err", err)
	default:
		log.Info("sources: known sources restored", "file", cfg.StateFile, "sources", n)
	}
	return s, nil
}

// Run runs the tracker's timers until ctx ends, then saves the state
// file. The health events of transitions are pushed with push, which may
// outlive ctx: a transition under way when ctx ends still reaches the
// engine.
func (s *SourceTracker) Run(ctx, push context.Context) error {
	s.push = push
	return s.Tracker.Run(ctx)
}

// transition reports one transition: a log line, and a health event
// pushed through the "sources" input (the metrics read the tracker's
// counters).
func (s *SourceTracker) transition(tr sources.Transition) {
	key := tr.Key.String()
	src, _ := s.Tracker.Source(tr.Key)
	if tr.State == sources.StateSilent {
		lastSeen := "never"
		if !tr.LastSeen.IsZero() {
			lastSeen = tr.LastSeen.UTC().Format(time.RFC3339)
		}
		s.log.Warn("source silent", "source", key, "input", src.Input, "last_seen", lastSeen,
			"silent_for", tr.SilentFor.Round(time.Second), "events_before", tr.EventsBefore, "expected", tr.Expected)
	} else {
		s.log.Info("source active again", "source", key, "input", src.Input, "silent_for", tr.SilentFor.Round(time.Second))
	}
	var ev relaykit.Event
	tr.FillEvent(&ev)
	ev.Source = append(ev.Source, healthSource...)
	if src.Input != "" {
		ev.SetFieldString("source_input", src.Input)
	}
	if err := s.health.In.Push(s.push, 0, &ev); err != nil {
		// After the engine shut down (the relay is stopping): the state
		// file keeps the source's state, the next run reports it.
		s.log.Warn("source health event not delivered", "source", key, "state", tr.State.String(), "err", err)
	}
}

// input returns the tracker as seen by the input named name.
func (s *SourceTracker) input(name string) sources.Input {
	if s == nil {
		return sources.Input{}
	}
	return s.Tracker.Input(name)
}

// drops reports whether stream inputs drop (rather than pace) the events
// over a source's limit.
func (s *SourceTracker) drops() bool {
	return s != nil && s.Config.RateLimit.Mode == config.RateModeDrop
}

// streamConn returns the tracker as seen by one stream connection from
// src (sources.Conn: charged per read, paced before the next), or nil
// when tracking is off.
func (s *SourceTracker) StreamConn(input string, src netip.Addr) *sources.Conn {
	if s == nil {
		return nil
	}
	return s.Tracker.Input(input).Conn(src, sources.ConnConfig{ByHost: s.Config.KeyByHost(input), Drop: s.drops()})
}

// Metrics of the tracker. No label names a source except the top limited
// ones (at most topLimited).
var (
	descSourcesTracked  = prometheus.NewDesc("relay_sources_tracked", "Sources tracked now (at most sources.max_sources), expected ones included.", nil, nil)
	descSourcesSilent   = prometheus.NewDesc("relay_sources_silent", "Sources silent now: they sent before (or are expected) and have been quiet longer than their silent_after.", nil, nil)
	descSourcesLimited  = prometheus.NewDesc("relay_sources_limited", "Sources whose rate limit dropped or paced events in the last second.", nil, nil)
	descSourceTrans     = prometheus.NewDesc("relay_source_transitions_total", "Sources that became silent or active again, by the state they entered.", []string{"state"}, nil)
	descSourceEvictions = prometheus.NewDesc("relay_sources_evictions_total", "Sources forgotten to make room at sources.max_sources (the least recently seen).", nil, nil)
	descSourceLimitedEv = prometheus.NewDesc("relay_sources_rate_limited_events_total", "Events over their source's rate limit, by mode: drop (dropped, in relay_dropped_events_total{reason=\"rate_limit\"} too) or pace (delivered, the connection held back).", []string{"mode"}, nil)
	descSourcePacedFor  = prometheus.NewDesc("relay_sources_paced_seconds_total", "Time stream connections were held back by their source's rate limit.", nil, nil)
	descSourceTop       = prometheus.NewDesc("relay_source_limited_events", "Events over the rate limit of the most limited sources (the top 10, dropped plus paced).", []string{"source", "input"}, nil)
)

// topLimited is the number of sources relay_source_limited_events names.
const topLimited = 10

// sourcesTable exports sources.Stats.
var sourcesTable = metrics.Table[sources.Stats]{
	metrics.Gauge(descSourcesTracked, func(s *sources.Stats) int64 { return int64(s.Keys) }),
	metrics.Gauge(descSourcesSilent, func(s *sources.Stats) int64 { return int64(s.Silent) }),
	metrics.Gauge(descSourcesLimited, func(s *sources.Stats) int64 { return int64(s.Limited) }),
	metrics.Counter(descSourceTrans, func(s *sources.Stats) int64 { return int64(s.ToSilent) }, "silent"),
	metrics.Counter(descSourceTrans, func(s *sources.Stats) int64 { return int64(s.ToActive) }, "active"),
	metrics.Counter(descSourceEvictions, func(s *sources.Stats) int64 { return int64(s.Evictions) }),
	metrics.Counter(descSourceLimitedEv, func(s *sources.Stats) int64 { return int64(s.Dropped) }, config.RateModeDrop),
	metrics.Counter(descSourceLimitedEv, func(s *sources.Stats) int64 { return int64(s.Paced) }, config.RateModePace),
	{Desc: descSourcePacedFor, Type: prometheus.CounterValue, Value: func(s *sources.Stats) float64 { return s.PacedFor.Seconds() }},
}

// topLimitedTable exports the most limited sources, by source and
// input.
var topLimitedTable = metrics.Table[[]sources.Source]{
	{Desc: descSourceTop, Type: prometheus.GaugeValue, Each: func(list *[]sources.Source, emit func(float64, ...string)) {
		for _, src := range *list {
			emit(float64(src.Limited()), src.Key.String(), src.Input)
		}
	}},
}

// Describe implements prometheus.Collector.
func (s *SourceTracker) Describe(ch chan<- *prometheus.Desc) {
	metrics.DescribeAll(ch, sourcesTable, topLimitedTable)
}

// Collect implements prometheus.Collector.
func (s *SourceTracker) Collect(ch chan<- prometheus.Metric) {
	st := s.Tracker.Stats()
	sourcesTable.Collect(ch, &st)
	top := s.Tracker.Sources(nil, sources.Query{By: sources.ByLimited, Top: topLimited})
	topLimitedTable.Collect(ch, &top)
}
