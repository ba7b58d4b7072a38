package pipeline_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
)

// benchEvents returns n firewall events of distinct keys (src varies),
// received in the same second.
func benchEvents(n int) []relaykit.Event {
	evs := make([]relaykit.Event, n)
	for i := range evs {
		evs[i] = rev(1_700_000_000*sec, "fw1", fmt.Sprintf("%%ASA-4-106023: Deny tcp src outside:203.0.%d.%d/4444 dst inside:10.0.0.5/22", i/256, i%256),
			"src", fmt.Sprintf("203.0.%d.%d", i/256, i%256), "dst", "10.0.0.5", "dpt", "22", "act", "deny", "bytes", "1200", "dur", "0.25")
	}
	return evs
}

// BenchmarkReduce measures one event through one reduction step, on one
// goroutine, with the key already held (the steady state). keys=1: the
// same key every time; keys=1000: a thousand keys in turn (the state no
// longer fits in the L1 cache). For samplers the event is kept one time
// in ten (and then gets its sample_rate field); the rest are dropped.
func BenchmarkReduce(b *testing.B) {
	mk := func(f pipeline.Function, err error) pipeline.Function {
		if err != nil {
			b.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		name string
		fn   func() pipeline.Function
		keys int
	}{
		{"step=suppress/case=suppressed/keys=1", func() pipeline.Function { return mk(pipeline.NewSuppress(pipeline.SuppressConfig{})) }, 1},
		{"step=suppress/case=suppressed/keys=1000", func() pipeline.Function { return mk(pipeline.NewSuppress(pipeline.SuppressConfig{})) }, 1000},
		{"step=suppress/case=suppressed-fieldkey/keys=1000", func() pipeline.Function {
			return mk(pipeline.NewSuppress(pipeline.SuppressConfig{Key: []string{"src", "dst", "dpt", "act"}}))
		}, 1000},
		{"step=sample/case=overall-1in10/keys=1", func() pipeline.Function { return mk(pipeline.NewSample(pipeline.SampleConfig{N: 10})) }, 1},
		{"step=sample/case=key-1in10/keys=1", func() pipeline.Function {
			return mk(pipeline.NewSample(pipeline.SampleConfig{N: 10, Key: []string{"host"}}))
		}, 1},
		{"step=sample/case=key-1in10/keys=1000", func() pipeline.Function {
			return mk(pipeline.NewSample(pipeline.SampleConfig{N: 10, Key: []string{"src"}}))
		}, 1000},
		{"step=sample/case=dynamic/keys=1000", func() pipeline.Function {
			return mk(pipeline.NewSample(pipeline.SampleConfig{Dynamic: true, Key: []string{"src"}}))
		}, 1000},
		{"step=aggregate/case=sum+max/keys=1", func() pipeline.Function {
			return mk(pipeline.NewAggregate(pipeline.AggregateConfig{Key: []string{"src", "dst", "dpt", "act"}, Sum: []string{"bytes"}, Max: []string{"dur"}}))
		}, 1},
		{"step=aggregate/case=sum+max/keys=1000", func() pipeline.Function {
			return mk(pipeline.NewAggregate(pipeline.AggregateConfig{Key: []string{"src", "dst", "dpt", "act"}, Sum: []string{"bytes"}, Max: []string{"dur"}}))
		}, 1000},
		{"step=aggregate/case=count/keys=1000", func() pipeline.Function {
			return mk(pipeline.NewAggregate(pipeline.AggregateConfig{Key: []string{"src"}}))
		}, 1000},
	} {
		b.Run(tc.name, func(b *testing.B) {
			f := tc.fn()
			evs := benchEvents(tc.keys)
			nf := len(evs[0].Fields)
			if strings.Contains(tc.name, "dynamic") {
				// 100 events per key in the previous window: the rate
				// now is ceil(ln 100) = 5.
				for i := range evs {
					e := evs[i]
					e.ReceiveTime -= int64(30 * time.Second)
					for range 100 {
						_, _ = f.Apply(&e)
						e.Fields = e.Fields[:nf]
					}
				}
			}
			for i := range evs { // hold every key before measuring
				_, _ = f.Apply(&evs[i])
				evs[i].Fields = evs[i].Fields[:nf]
			}
			if tc.keys == 1 && f.Name() == "sample" {
				// Sampling 1 in 10 of one key: cycle ten copies so the
				// sample_rate field is written and removed evenly.
				evs = append(evs, benchEvents(1)[0])
			}
			b.ReportAllocs()
			i, kept := 0, 0
			for b.Loop() {
				e := &evs[i]
				if k, _ := f.Apply(e); k {
					kept++
					e.Fields = e.Fields[:nf]
				}
				if i++; i == len(evs) {
					i = 0
				}
			}
			b.ReportMetric(float64(kept)/float64(b.N), "kept/op")
		})
	}
	b.Run("step=keep/case=3of6", func(b *testing.B) {
		f := pipeline.Keep("src", "dst", "bytes")
		src := benchEvents(1)[0]
		var e relaykit.Event
		src.CopyTo(&e)
		b.ReportAllocs()
		for b.Loop() {
			src.CopyTo(&e) // Keep removes fields: start from the full event
			_, _ = f.Apply(&e)
		}
	})
	b.Run("step=keep/case=copy-only", func(b *testing.B) {
		src := benchEvents(1)[0]
		var e relaykit.Event
		b.ReportAllocs()
		for b.Loop() {
			src.CopyTo(&e)
		}
	})
}

// BenchmarkReduceParallel measures contention: GOMAXPROCS goroutines
// apply one Suppress step (every event suppressed) or one keyed Sampler
// to events of a thousand keys, with the step's state in one shard (one
// mutex) or eight.
func BenchmarkReduceParallel(b *testing.B) {
	for _, shards := range []int{1, 8} {
		for _, step := range []string{"suppress", "sample"} {
			b.Run(fmt.Sprintf("step=%s/shards=%d", step, shards), func(b *testing.B) {
				restore := pipeline.SetShardCount(shards)
				var f pipeline.Function
				var err error
				if step == "suppress" {
					f, err = pipeline.NewSuppress(pipeline.SuppressConfig{})
				} else {
					f, err = pipeline.NewSample(pipeline.SampleConfig{N: 10, Key: []string{"src"}})
				}
				restore()
				if err != nil {
					b.Fatal(err)
				}
				for _, e := range benchEvents(1000) {
					_, _ = f.Apply(&e)
				}
				// One set of events per goroutine, made before measuring.
				sets := make(chan []relaykit.Event, runtime.GOMAXPROCS(0))
				for range cap(sets) {
					sets <- benchEvents(1000)
				}
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					evs := <-sets
					nf := len(evs[0].Fields)
					i := 0
					for pb.Next() {
						e := &evs[i]
						if k, _ := f.Apply(e); k {
							e.Fields = e.Fields[:nf]
						}
						if i++; i == len(evs) {
							i = 0
						}
					}
				})
			})
		}
	}
}

// BenchmarkRouteReduce measures a batch of 256 events through a router
// whose one route suppresses them (all but the first of each of 8 hosts
// are absorbed) or aggregates them; one op is one event, the router's
// per-batch work (and its summary collection) included.
func BenchmarkRouteReduce(b *testing.B) {
	for _, step := range []string{"suppress", "aggregate"} {
		b.Run("step="+step, func(b *testing.B) {
			var f pipeline.Function
			var err error
			if step == "suppress" {
				f, err = pipeline.NewSuppress(pipeline.SuppressConfig{Key: []string{"host"}, Window: time.Hour})
			} else {
				f, err = pipeline.NewAggregate(pipeline.AggregateConfig{Key: []string{"host"}, Window: time.Hour, Sum: []string{"bytes"}})
			}
			if err != nil {
				b.Fatal(err)
			}
			sink := &nopSink{}
			r, err := pipeline.NewRouter([]pipeline.Route{{Name: "r", Final: true, Pipeline: pipeline.NewPipeline(f), Sinks: []relaykit.Sink{sink}}}, pipeline.Config{})
			if err != nil {
				b.Fatal(err)
			}
			batch := benchEvents(256)
			for i := range batch {
				batch[i].Host = fmt.Appendf(batch[i].Host[:0], "fw%d", i%8)
			}
			ctx := context.Background()
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if n%len(batch) == 0 {
					if err := r.Route(ctx, batch); err != nil {
						b.Fatal(err)
					}
				}
				n++
			}
		})
	}
}
