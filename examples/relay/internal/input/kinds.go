package input

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"
	"github.com/relaykit/relaykit/examples/relay/internal/metrics"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relaykit/relaykit/tap"
)

// inputEnv is what an input is built with: the parts of the service it
// reports to and shares, never the service itself.
type Env struct {
	Ledger     *ledger.Ledger     // its counters and its engine input (ledger.input)
	Sources    *SourceTracker     // the per-source tracker; nil when sources are off
	Taps       *tap.Registry      // its tap point, input:NAME
	DeadLetter *ledger.DeadLetter // what it cannot accept (JSON lines, Kafka records)
	Loc        *time.Location     // the timezone of timestamps without one
	Workers    int                // the engine's workers
	Ready      func() error       // the relay's health (HEC's health endpoint)
	TLSDir     string             // where tls: {auto: true} keeps its certificate (config.AutoTLSDir)
	Log        *slog.Logger
}

// input is a built input of any kind, with the one lifecycle every kind
// has: bound (its listeners, if any, are open) when its constructor
// returns; Run serves; Close releases an input that never ran.
type Input interface {
	// Run serves until ctx ends, then stops taking in and finishes what
	// it took in until hard (the shutdown deadline) ends; the engine's
	// workers run until every input returned.
	Run(ctx, hard context.Context) error
	// Close releases what the constructor opened, for an input that
	// never ran (Run releases it otherwise).
	Close() error
	// Addrs reports the bound address of each of its listeners, by
	// listener name (the input's, or NAME/http and NAME/grpc).
	Addrs(add func(listener string, a net.Addr))
	// Collect sends its own metrics, those of its kind's tables.
	Collect(ch chan<- prometheus.Metric)
}

// inputKind is one entry of the input registry: a kind of input by its
// key under inputs:, built from its config section (an InputSection of
// its key) and an environment.
type Kind struct {
	Key string
	// build makes the input of sec; nil, nil for a section that is off
	// (the generator at rate 0).
	Build func(sec config.InputSection, env Env) (Input, error)
	// tables are the kind's own metrics (its inputs' Collect), for the
	// registry's Describe.
	Tables []metrics.Describer
	// test is how `relay test` reads a case's lines for an input of the
	// kind: syslog, json or hec, with the most of a line it takes (0: no
	// limit); nil when relay test cannot read it.
	Test func(sec config.InputSection) (parse string, maxLine int)
}

// inputKinds is the input registry: every kind of input the config
// format knows (InputsConfig's fields), in its order. TestInputRegistry
// fails when a kind is missing here or anywhere that lists inputs.
var Kinds = []Kind{
	{Key: "syslog_udp", Build: typed(newUDPInput),
		Test: func(sec config.InputSection) (string, int) {
			return "syslog", int(sec.(*config.UDPInputConfig).MaxMessageSize)
		}},
	{Key: "syslog_tcp", Build: typed(newSyslogTCPInput),
		Test: func(sec config.InputSection) (string, int) {
			return "syslog", int(sec.(*config.TCPInputConfig).MaxMessageSize)
		}},
	{Key: "json_tcp", Build: typed(newJSONInput),
		Test: func(sec config.InputSection) (string, int) {
			return "json", int(sec.(*config.JSONInputConfig).MaxLineSize)
		}},
	{Key: "kafka", Build: typed(newKafkaInput), Tables: []metrics.Describer{kafkaTable}},
	{Key: "relp", Build: typed(newRELPInput), Tables: []metrics.Describer{relpTable, ackTable},
		Test: func(config.InputSection) (string, int) { return "syslog", 0 }},
	{Key: "hec", Build: typed(newHECInput), Tables: []metrics.Describer{hecTable, ackTable},
		Test: func(config.InputSection) (string, int) { return "hec", 0 }},
	{Key: "otlp", Build: typed(newOTLPInput), Tables: []metrics.Describer{otlpTable}},
	{Key: "generator", Build: typed(newGenerator)},
}

// typed adapts a kind's constructor to its section type.
func typed[S config.InputSection, I Input](f func(S, Env) (I, error)) func(config.InputSection, Env) (Input, error) {
	return func(sec config.InputSection, env Env) (Input, error) {
		in, err := f(sec.(S), env)
		if err != nil {
			return nil, err
		}
		if any(in) == nil {
			return nil, nil
		}
		return in, nil
	}
}

// inputKindOf returns the registry's entry for key.
func KindOf(key string) (*Kind, bool) {
	for i := range Kinds {
		if Kinds[i].Key == key {
			return &Kinds[i], true
		}
	}
	return nil, false
}

// newInputs builds every input of cfg, in the order of its sections; on
// error it closes those it built.
func New(cfg *config.InputsConfig, env Env) ([]Input, error) {
	var ins []Input
	for _, sec := range cfg.Sections() {
		k, ok := KindOf(sec.Key())
		if !ok {
			return closeInputs(ins), fmt.Errorf("inputs.%s: no such kind of input", sec.Key())
		}
		in, err := k.Build(sec, env)
		if err != nil {
			return closeInputs(ins), err
		}
		if in != nil {
			ins = append(ins, in)
		}
	}
	return ins, nil
}

// closeInputs closes ins (inputs that never ran) and returns nil.
func closeInputs(ins []Input) []Input {
	var errs []error
	for _, in := range ins {
		errs = append(errs, in.Close())
	}
	_ = errors.Join(errs...) // nothing to report them to: the build failed
	return nil
}

// inputCollector exports the inputs' own metrics: every kind's tables
// described (a registry takes each description once), every input
// collected.
type Collector []Input

func (c Collector) Describe(ch chan<- *prometheus.Desc) {
	var tables []metrics.Describer
	for _, k := range Kinds {
		tables = append(tables, k.Tables...)
	}
	metrics.DescribeAll(ch, tables...)
}

func (c Collector) Collect(ch chan<- prometheus.Metric) {
	for _, in := range c {
		in.Collect(ch)
	}
}
