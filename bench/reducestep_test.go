package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/bench/corpus"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/syslog"
)

// corpusEvents parses the first n lines of a corpus (seed 1), every event
// received at the first line's time, so that they fall in one window.
func corpusEvents(b *testing.B, kind corpus.Kind, n int) []relaykit.Event {
	g := corpus.New(kind, corpus.Config{Seed: 1})
	p := syslog.NewParser(syslog.Config{CEF: true, Location: time.UTC})
	evs := make([]relaykit.Event, n)
	var line []byte
	var t0 int64
	for i := range evs {
		var ns int64
		line, ns = g.Next(line[:0])
		if i == 0 {
			t0 = ns
		}
		evs[i].ReceiveTime = t0
		p.Parse(&evs[i], line)
	}
	return evs
}

// BenchmarkReduceCorpus measures one event of a generated corpus through
// one reduction step of the documented reduction config
// (reductionRoutes), in the steady state: 4,096 events of the corpus,
// parsed (firewall CEF: 14 fields; PAN-OS CEF: up to 45; daemons: 0-2),
// cycled, every key already held, all in one window. Parsing is done
// before the timer starts. events=4096 cycles all of them, about 12 MB of
// events for cef-vendors, so most reads of an event miss the caches:
// memory latency is most of that figure. events=256 cycles the first 256
// (one router batch), which stay in the caches, as an event just parsed
// does in a relay. suppress: every
// event of a known key is suppressed (the key is read from the event's
// fields); sample: one in ten per key [host, src] (the kept get
// sample_rate); aggregate: every event absorbed. One op is one event;
// compare with BenchmarkReduce in pipeline (100-byte events with six
// fields). cpu-ns/op is the process's CPU time per op, steadier than
// ns/op when other processes compete for the cores.
func BenchmarkReduceCorpus(b *testing.B) {
	type step struct {
		name string
		fn   func(corpus.Kind) (pipeline.Function, error)
	}
	steps := []step{
		{"suppress", func(k corpus.Kind) (pipeline.Function, error) {
			key := []string{"host", "src", "dst", "dpt"}
			if k == corpus.Daemons {
				key = []string{"host", "_raw"}
			}
			return pipeline.NewSuppress(pipeline.SuppressConfig{Key: key, Window: 30 * time.Second})
		}},
		{"sample-key", func(corpus.Kind) (pipeline.Function, error) {
			return pipeline.NewSample(pipeline.SampleConfig{N: 10, Key: []string{"host", "src"}})
		}},
		{"aggregate", func(corpus.Kind) (pipeline.Function, error) {
			return pipeline.NewAggregate(pipeline.AggregateConfig{
				Key:    []string{"host", "cef.device_vendor", "cef.device_product", "src", "dst", "dpt", "act"},
				Window: time.Minute, Sum: []string{"out", "in"}, MaxKeys: 100000,
			})
		}},
	}
	for _, kind := range corpus.Kinds {
		all := corpusEvents(b, kind, 4096)
		nf := make([]int, len(all))
		for i := range all {
			nf[i] = len(all[i].Fields)
		}
		for _, st := range steps {
			if st.name == "aggregate" && kind == corpus.Daemons {
				continue
			}
			for _, n := range []int{4096, 256} {
				evs := all[:n]
				b.Run(fmt.Sprintf("corpus=%s/step=%s/events=%d", kind, st.name, n), func(b *testing.B) {
					f, err := st.fn(kind)
					if err != nil {
						b.Fatal(err)
					}
					for i := range evs { // hold every key before measuring
						_, _ = f.Apply(&evs[i])
						evs[i].Fields = evs[i].Fields[:nf[i]]
					}
					b.ReportAllocs()
					cpu := startCPU()
					i, kept := 0, 0
					for b.Loop() {
						e := &evs[i]
						if k, _ := f.Apply(e); k {
							kept++
							e.Fields = e.Fields[:nf[i]]
						}
						if i++; i == len(evs) {
							i = 0
						}
					}
					cpu.report(b)
					b.ReportMetric(float64(kept)/float64(b.N), "kept/op")
				})
			}
		}
	}
}
