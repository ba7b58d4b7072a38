package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/examples/relay/internal/api"
	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/dest"
	"github.com/relaykit/relaykit/examples/relay/internal/input"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"
	"github.com/relaykit/relaykit/examples/relay/internal/route"
	"github.com/relaykit/relaykit/sources"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/storage"
	"github.com/relaykit/relaykit/tap"
)

// Relay is the running service: inputs → engine (rings, collectors) →
// routes → destinations, with spool, dead letters, metrics and a ledger.
type Relay struct {
	cfg    config.Config
	log    *slog.Logger
	loc    *time.Location
	ledger *ledger.Ledger

	dests   map[string]*dest.Destination
	routes  *pipeline.Swapper
	enrich  *route.Enrichments
	eng     *engine.Engine
	inputs  []input.Input // built by the input registry (input.Kinds)
	metrics *api.Server
	dl      *ledger.DeadLetter
	dlw     io.Closer
	ready   atomic.Bool
	taps    tap.Registry // the tap points (api.go)

	// sources is the per-source tracker shared by the inputs; nil when
	// sources are off.
	sources *input.SourceTracker

	// StatsOut receives the -stats line every Config.StatsInterval. Nil
	// means os.Stderr. Set it before Run.
	StatsOut io.Writer
}

// NewRelay builds the relay and binds every listener, so the addresses are
// known (and port conflicts reported) before Run. On error everything
// opened so far is closed.
func NewRelay(cfg config.Config, log *slog.Logger) (_ *Relay, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	loc, err := time.LoadLocation(cfg.Timezone)
	if err != nil {
		return nil, fmt.Errorf("timezone: %w", err)
	}
	r := &Relay{cfg: cfg, log: log, loc: loc, ledger: ledger.New(), dests: map[string]*dest.Destination{}}
	defer func() {
		if err != nil {
			r.closeAll()
		}
	}()

	dlw, err := storage.NewWriter(storage.Config{Dir: cfg.DeadLetter.Dir, Layout: "deadletter-2006-01-02.jsonl", Location: loc, Clock: clk,
		BufferSize: -1}) // one write(2) per line: a failure is known at the line it loses
	if err != nil {
		return nil, fmt.Errorf("dead_letter.dir: %w", err)
	}
	r.dlw = dlw
	r.dl = ledger.NewDeadLetter(ledger.NewDeadLetterFile(dlw, r.ledger, log))

	for name, dc := range cfg.Destinations {
		d, err := dest.New(name, dc, dest.Env{Ledger: r.ledger, DeadLetter: r.dl, Taps: &r.taps, Spool: cfg.Spool, Loc: loc, Log: log})
		if err != nil {
			return nil, err
		}
		r.dests[name] = d
	}
	r.enrich = route.NewEnrichments(log)
	rt, err := route.NewRouter(cfg.Routes, r.routeDests(), r.enrich.Step, r.ledger, &r.taps)
	if err != nil {
		return nil, err
	}
	r.routes = pipeline.NewSwapper(rt)

	r.eng, err = engine.New(engine.Config{
		Sink:           windowedRoutes{r.routes, func() { r.ledger.CheckKeys(log) }},
		Workers:        cfg.Workers.Count,
		RingSize:       cfg.Workers.RingSize,
		BatchMaxEvents: cfg.Workers.BatchMaxEvents,
		BatchMaxBytes:  int(cfg.Workers.BatchMaxBytes),
		BatchMaxWait:   cfg.Workers.BatchMaxWait,
		Clock:          clk,
		WindowTick:     config.ReduceTick, // the engine ends the routes' reduction windows
		Logger:         log,
	})
	if err != nil {
		return nil, fmt.Errorf("workers: %w", err)
	}
	r.ledger.Engine = r.eng

	if cfg.Sources.Enabled {
		if r.sources, err = input.NewSourceTracker(cfg.Sources, r.ledger, log); err != nil {
			return nil, err
		}
	}
	r.inputs, err = input.New(&cfg.Inputs, input.Env{Ledger: r.ledger, Sources: r.sources, Taps: &r.taps, DeadLetter: r.dl,
		Loc: loc, Workers: r.eng.Workers(), Ready: r.healthy, TLSDir: cfg.AutoTLSDir(), Log: log})
	if err != nil {
		return nil, err
	}
	extra := []prometheus.Collector{r.destCollector(), input.Collector(r.inputs)}
	var apis map[string]http.Handler
	if r.sources != nil {
		extra = append(extra, r.sources)
		sh, err := sources.NewHandler(r.sources.Tracker, sources.HandlerConfig{}) // behind api.token (setupAPI)
		if err != nil {
			return nil, err
		}
		apis = map[string]http.Handler{"/api/sources": sh}
	}
	// Every /api/ path behind api.token; the tap when api.enabled (api.go).
	handlers, tapMetrics, err := r.setupAPI(apis)
	if err != nil {
		return nil, err
	}
	if tapMetrics != nil {
		extra = append(extra, tapMetrics)
	}
	r.metrics, err = api.NewServer(cfg.Metrics.Listen, r.healthy, handlers, append([]prometheus.Collector{r.ledger}, extra...)...)
	if err != nil {
		return nil, err
	}
	checkFileLimit(cfg, log)
	return r, nil
}

func (r *Relay) healthy() error {
	if !r.ready.Load() {
		return errors.New("starting or stopping")
	}
	return nil
}

// Run serves until ctx ends, then shuts down: stop accepting, drain rings
// and collectors, flush destinations within ShutdownTimeout (what cannot be
// delivered is spooled), close everything. It returns nil after a clean
// shutdown.
func (r *Relay) Run(ctx context.Context) error {
	var errMu sync.Mutex
	var errs []error
	keep := func(err error) {
		if err != nil {
			errMu.Lock()
			errs = append(errs, err)
			errMu.Unlock()
		}
	}
	inCtx, stopInputs := context.WithCancel(ctx)
	defer stopInputs()
	// hard ends ShutdownTimeout after the inputs stop (ctx ended or an input
	// failed): the budget for draining.
	hard, cancelHard := context.WithCancel(context.Background())
	defer cancelHard()
	stopHard := context.AfterFunc(inCtx, func() {
		t := time.AfterFunc(r.cfg.ShutdownTimeout, cancelHard)
		context.AfterFunc(hard, func() { t.Stop() })
	})
	defer stopHard()

	// Background: metrics, replay, stats. They stop after the drain.
	bgCtx, stopBG := context.WithCancel(context.Background())
	var bg sync.WaitGroup
	bg.Go(func() { keep(r.metrics.Run(bgCtx)) })
	// Destination senders: they send until their queue is closed, after
	// the workers are done (see below).
	sendCtx, stopSenders := context.WithCancel(context.Background())
	defer stopSenders()
	var senders sync.WaitGroup
	for _, d := range r.dests {
		if d.Queue != nil {
			senders.Go(func() { _ = d.Queue.Run(sendCtx) })
		}
	}
	if r.cfg.StatsInterval > 0 {
		bg.Go(func() {
			out := r.StatsOut
			if out == nil {
				out = os.Stderr
			}
			statsLoop(inCtx, r.ledger, r.cfg.StatsInterval, func(s string) { fmt.Fprintln(out, s) })
		})
	}

	bg.Go(func() { r.enrich.Run(bgCtx) })
	// Silence, rates and the state file's saves, until the inputs have
	// returned; the final save then. A failed save is logged by the
	// tracker's hook and does not fail the relay.
	srcCtx, stopSources := context.WithCancel(context.Background())
	defer stopSources()
	srcDone := make(chan struct{})
	if r.sources != nil {
		go func() { defer close(srcDone); _ = r.sources.Run(srcCtx, hard) }()
	} else {
		close(srcDone)
	}

	// The engine's context is the shutdown deadline: waits inside it give
	// up then, and what it still holds is routed late (spooled).
	engDone := make(chan error, 1)
	go func() { engDone <- r.eng.Run(hard) }()
	// Every input the same way; the acknowledging ones finish what they
	// took in before they return: the rings stay open and the workers run
	// until then.
	var inputs sync.WaitGroup
	for _, in := range r.inputs {
		inputs.Go(func() {
			if err := in.Run(inCtx, hard); err != nil {
				keep(err)
				stopInputs()
			}
		})
	}
	r.logListeners()
	r.logCertificates()
	r.ready.Store(true)
	r.log.Info("relay started", "inputs", len(r.inputs), "workers", r.eng.Workers(), "destinations", len(r.dests))

	<-inCtx.Done()
	r.ready.Store(false)
	r.log.Info("relay stopping: inputs closed, draining", "timeout", r.cfg.ShutdownTimeout)
	inputs.Wait()
	// The tracker stops before the engine: every transition's health
	// event reaches an open engine, and none comes after it closed.
	stopSources()
	<-srcDone
	// The engine routes what it holds, then ends every reduction window
	// still open (its summaries routed before the queues close).
	keep(r.eng.Shutdown(hard))
	keep(<-engDone)
	// Every batch is with the destinations: each queue delivers what it
	// holds while its destination is healthy, its spool included, until
	// the deadline; what is left stays on disk for the next run.
	var closing sync.WaitGroup
	for _, d := range r.dests {
		if d.Queue != nil {
			closing.Go(func() {
				if err := d.Queue.Close(hard); err != nil {
					r.log.Error("destination stopped with events lost", "destination", d.Name(), "err", err)
				}
			})
		}
	}
	closing.Wait()
	stopSenders()
	senders.Wait()
	r.closeTaps()
	stopBG()
	bg.Wait()
	keep(r.closeAll())
	s := r.ledger.Snapshot()
	r.log.Info("relay stopped", "ledger", s.String())
	return errors.Join(errs...)
}

// logListeners logs the address each listener is bound to, one line each
// ("listening", listener, address; an OTLP input's listeners are
// NAME/http and NAME/grpc): with port 0 in the config, the kernel's
// choice.
func (r *Relay) logListeners() {
	addrs := r.Addrs()
	for _, name := range slices.Sorted(maps.Keys(addrs)) {
		r.log.Info("listening", "listener", name, "address", addrs[name].String())
	}
}

// clk is relaykit's process clock (clock.Default), the one the library's
// packages read: the dead-letter file's rotation.
var clk = clock.Default()
