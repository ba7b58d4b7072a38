package configtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/dest"
	"github.com/relaykit/relaykit/examples/relay/internal/route"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/pipeline/pipelinetest"
)

// Report is the outcome of a config test suite.
type Report struct {
	Cases []CaseResult
}

// Failed returns the number of failed cases.
func (r Report) Failed() int {
	n := 0
	for _, c := range r.Cases {
		if !c.Passed() {
			n++
		}
	}
	return n
}

// CaseResult is the outcome of one case.
type CaseResult struct {
	Name, File string
	// Failures are the failed checks, each a header line followed by
	// indented detail lines; empty when the case passed.
	Failures []string
	// Notes say what happened on the way (a line the input refused, the
	// events a route dropped), shown with the failures.
	Notes []string
	// Received is the number of events each destination received.
	Received map[string]int
	Took     time.Duration
}

// Passed reports whether every check of the case held.
func (c CaseResult) Passed() bool { return len(c.Failures) == 0 }

// defaultTestTime is the receive time of a case's first event when its
// input gives none: fixed, so that rows and HEC events (their time
// members) and reduction windows are the same on every run.
var defaultTestTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// defaultTestSource is the sender's address when a case gives none
// (TEST-NET-1, RFC 5737).
const defaultTestSource = "192.0.2.1"

// RunTests runs suite against cfg (a validated config, as LoadConfig
// returns it) without opening a socket or sending anything: each case's
// input is parsed as the relay's input would parse it, routed by routes
// built from the same specs and steps, with every destination replaced by
// a recorder, and the Sentinel rows and HEC events are those the
// destinations' own encoders produce. It returns an error, and no report,
// for what makes the config untestable: a step that cannot be built (a
// missing GeoIP file), a lookup against memcached (it would query the
// servers), a destination whose encoder cannot be built.
func RunTests(cfg *config.Config, suite []TestCase) (Report, error) {
	tr, err := newTestRunner(cfg)
	if err != nil {
		return Report{}, err
	}
	defer tr.close()
	var rep Report
	for _, tc := range suite {
		rep.Cases = append(rep.Cases, tr.run(tc))
	}
	return rep, nil
}

// testRunner holds what the cases share: the config, the enrichment
// resources and the destinations' encoders.
type testRunner struct {
	cfg      *config.Config
	loc      *time.Location
	en       *route.Enrichments
	hec      map[string]*forward.HEC
	sentinel map[string]*forward.Sentinel
}

func newTestRunner(cfg *config.Config) (_ *testRunner, err error) {
	loc, err := time.LoadLocation(cfg.Timezone)
	if err != nil {
		return nil, fmt.Errorf("timezone: %w", err)
	}
	log := slog.New(slog.DiscardHandler)
	tr := &testRunner{cfg: cfg, loc: loc, en: route.NewEnrichments(log), hec: map[string]*forward.HEC{}, sentinel: map[string]*forward.Sentinel{}}
	defer func() {
		if err != nil {
			tr.close()
		}
	}()
	// The encoders of the destinations, built as the relay builds its
	// sinks; building one opens nothing (no connection, no token request).
	env := dest.SinkEnv{Loc: loc, Log: log}
	for _, name := range slices.Sorted(maps.Keys(cfg.Destinations)) {
		var s dest.Sink
		switch spec := cfg.Destinations[name].Spec.(type) {
		case *dest.HECDestination:
			s, err = dest.NewSink(spec, env, name)
			if err == nil {
				tr.hec[name] = s.(*forward.HEC)
			}
		case *dest.SentinelDestination:
			s, err = dest.NewSink(spec, env, name)
			if err == nil {
				tr.sentinel[name] = s.(*forward.Sentinel)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("destinations.%s: %w", name, err)
		}
	}
	// Every route's steps build (a case builds its own router, with fresh
	// reduction state).
	if _, err := tr.router(pipelinetest.NewHarness(), nil); err != nil {
		return nil, err
	}
	return tr, nil
}

func (tr *testRunner) close() {
	for _, h := range tr.hec {
		_ = h.Close()
	}
	for _, s := range tr.sentinel {
		_ = s.Close()
	}
	_ = tr.en.Close()
}

// step builds a route step as the relay does, refusing what would reach
// out of the process.
func (tr *testRunner) step(sc config.StepConfig) (pipeline.Function, error) {
	if sc.Type == "lookup" && len(sc.Memcached) > 0 {
		return nil, errors.New("lookup: memcached lookups would query the servers; relay test runs csv lookups only")
	}
	return tr.en.Step(sc)
}

// router builds the config's routes with h's recorders (by destination
// name) as the destinations, h's drop counter as the drop hook and onErr
// as the hook of the steps' errors (a parse step's no match: the event
// goes on).
func (tr *testRunner) router(h *pipelinetest.Harness, onErr func(route, step string, err error)) (*pipeline.Router, error) {
	specs, _, err := route.Specs(tr.cfg.Routes, tr.step, func(name string) (relaykit.Sink, bool) {
		if _, ok := tr.cfg.Destinations[name]; !ok {
			return nil, false
		}
		return h.Sink(name), true
	})
	if err != nil {
		return nil, err
	}
	return pipeline.NewRouter(specs, pipeline.Config{Hooks: pipeline.Hooks{OnDrop: h.OnDrop, OnFunctionError: onErr}})
}

// run runs one case: its events through a fresh route table of
// recorders (pipelinetest.Harness: every window ended after them), then
// its checks on what each destination received.
func (tr *testRunner) run(tc TestCase) (res CaseResult) {
	start := time.Now()
	res = CaseResult{Name: tc.Name, File: tc.File, Received: map[string]int{}}
	defer func() { res.Took = time.Since(start) }()
	fail := func(format string, args ...any) { res.Failures = append(res.Failures, fmt.Sprintf(format, args...)) }

	events, notes, err := tr.inputEvents(tc.Input)
	res.Notes = notes
	if err != nil {
		fail("input: %v", err)
		return res
	}
	h := pipelinetest.NewHarness()
	var stepErrs []string
	errCount := map[string]int{}
	rt, err := tr.router(h, func(route, step string, err error) {
		k := fmt.Sprintf("route %s, step %s: %v (the event went on)", route, step, err)
		if errCount[k]++; errCount[k] == 1 {
			stepErrs = append(stepErrs, k)
		}
	})
	if err != nil { // checked when the runner was built
		fail("routes: %v", err)
		return res
	}
	_ = h.Run(context.Background(), rt, events) // recorders never fail
	for _, k := range stepErrs {
		res.Notes = append(res.Notes, fmt.Sprintf("%d× %s", errCount[k], k))
	}
	drops, order := h.Drops()
	for _, k := range order {
		res.Notes = append(res.Notes, fmt.Sprintf("dropped %d: %s", drops[k], k))
	}
	got := h.Received()
	for name, evs := range got {
		res.Received[name] = len(evs)
	}
	for i, x := range tc.Expect {
		tr.check(&res, x, got, len(tc.Expect) > 1, i)
	}
	return res
}
