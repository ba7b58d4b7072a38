package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relaykit/relaykit/tap"
)

// inputEnv is what an input is built with: the parts of the service it
// reports to and shares, never the service itself.
type inputEnv struct {
	ledger  *Ledger        // its counters and its engine input (ledger.input)
	sources *sourceTracker // the per-source tracker; nil when sources are off
	taps    *tap.Registry  // its tap point, input:NAME
	dl      *deadLetter    // what it cannot accept (JSON lines, Kafka records)
	loc     *time.Location // the timezone of timestamps without one
	workers int            // the engine's workers
	ready   func() error   // the relay's health (HEC's health endpoint)
	log     *slog.Logger
}

// input is a built input of any kind, with the one lifecycle every kind
// has: bound (its listeners, if any, are open) when its constructor
// returns; Run serves; Close releases an input that never ran.
type input interface {
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
type inputKind struct {
	key string
	// build makes the input of sec; nil, nil for a section that is off
	// (the generator at rate 0).
	build func(sec InputSection, env inputEnv) (input, error)
	// tables are the kind's own metrics (its inputs' Collect), for the
	// registry's Describe.
	tables []describer
	// test is how `relay test` reads a case's lines for an input of the
	// kind: syslog, json or hec, with the most of a line it takes (0: no
	// limit); nil when relay test cannot read it.
	test func(sec InputSection) (parse string, maxLine int)
}

// inputKinds is the input registry: every kind of input the config
// format knows (InputsConfig's fields), in its order. TestInputRegistry
// fails when a kind is missing here or anywhere that lists inputs.
var inputKinds = []inputKind{
	{key: "syslog_udp", build: typed(newUDPInput),
		test: func(sec InputSection) (string, int) { return "syslog", int(sec.(*UDPInputConfig).MaxMessageSize) }},
	{key: "syslog_tcp", build: typed(newSyslogTCPInput),
		test: func(sec InputSection) (string, int) { return "syslog", int(sec.(*TCPInputConfig).MaxMessageSize) }},
	{key: "json_tcp", build: typed(newJSONInput),
		test: func(sec InputSection) (string, int) { return "json", int(sec.(*JSONInputConfig).MaxLineSize) }},
	{key: "kafka", build: typed(newKafkaInput), tables: []describer{kafkaTable}},
	{key: "relp", build: typed(newRELPInput), tables: []describer{relpTable, ackTable},
		test: func(InputSection) (string, int) { return "syslog", 0 }},
	{key: "hec", build: typed(newHECInput), tables: []describer{hecTable, ackTable},
		test: func(InputSection) (string, int) { return "hec", 0 }},
	{key: "otlp", build: typed(newOTLPInput), tables: []describer{otlpTable}},
	{key: "generator", build: typed(newGenerator)},
}

// typed adapts a kind's constructor to its section type.
func typed[S InputSection, I input](f func(S, inputEnv) (I, error)) func(InputSection, inputEnv) (input, error) {
	return func(sec InputSection, env inputEnv) (input, error) {
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
func inputKindOf(key string) (*inputKind, bool) {
	for i := range inputKinds {
		if inputKinds[i].key == key {
			return &inputKinds[i], true
		}
	}
	return nil, false
}

// newInputs builds every input of cfg, in the order of its sections; on
// error it closes those it built.
func newInputs(cfg *InputsConfig, env inputEnv) ([]input, error) {
	var ins []input
	for _, sec := range cfg.Sections() {
		k, ok := inputKindOf(sec.Key())
		if !ok {
			return closeInputs(ins), fmt.Errorf("inputs.%s: no such kind of input", sec.Key())
		}
		in, err := k.build(sec, env)
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
func closeInputs(ins []input) []input {
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
type inputCollector []input

func (c inputCollector) Describe(ch chan<- *prometheus.Desc) {
	var tables []describer
	for _, k := range inputKinds {
		tables = append(tables, k.tables...)
	}
	describeAll(ch, tables...)
}

func (c inputCollector) Collect(ch chan<- prometheus.Metric) {
	for _, in := range c {
		in.Collect(ch)
	}
}
