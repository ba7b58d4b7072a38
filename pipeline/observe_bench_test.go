package pipeline_test

import (
	"context"
	"testing"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/tap"
)

// BenchmarkRouteObserver measures Route of a batch of 256 events over two
// routes (a non-final copy of the sshd lines, a final catch-all) with tap
// points as their observers: none configured; points with no
// subscription (one atomic load per route per batch); a subscription
// sampling 1 in 100 at each point, its reader keeping up (drained after
// each batch); and a subscription that never reads. One op is one batch.
func BenchmarkRouteObserver(b *testing.B) {
	const n = 256
	batch := make([]relaykit.Event, n)
	for i := range batch {
		raw := "Accepted publickey for deploy from 198.51.100.4 port 40022 ssh2"
		if i%4 == 0 {
			raw = "sshd[2211]: Failed password for invalid user admin from 203.0.113.45 port 52113 ssh2"
		}
		batch[i] = relaykit.Event{Host: []byte("host-12"), SourceType: []byte("syslog"), Raw: []byte(raw)}
	}
	for _, tc := range []struct {
		name     string
		observed bool
		cfg      *tap.SubscribeConfig
	}{
		{name: "observer=none"},
		{name: "subscribers=none", observed: true},
		{name: "sample=100", observed: true, cfg: &tap.SubscribeConfig{Sample: 100, Buffer: 64}},
		{name: "stuck", observed: true, cfg: &tap.SubscribeConfig{Buffer: 16}},
	} {
		b.Run("batch=256/"+tc.name, func(b *testing.B) {
			sink := &nopSink{}
			routes := []pipeline.Route{
				{Name: "sshd", Filter: `Failed password`, Sinks: []relaykit.Sink{sink}},
				{Name: "all", Final: true, Sinks: []relaykit.Sink{sink}},
			}
			var subs []*tap.Subscription
			if tc.observed {
				for i := range routes {
					p := tap.NewPoint("route:" + routes[i].Name)
					routes[i].Observer = p
					if tc.cfg != nil {
						s, err := p.Subscribe(*tc.cfg)
						if err != nil {
							b.Fatal(err)
						}
						subs = append(subs, s)
					}
				}
			}
			r, err := pipeline.NewRouter(routes, pipeline.Config{})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			read := tc.name == "sample=100"
			b.ReportAllocs()
			for b.Loop() {
				if err := r.Route(ctx, batch); err != nil {
					b.Fatal(err)
				}
				if read {
					for _, s := range subs {
						for len(s.C()) > 0 {
							<-s.C()
						}
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
			for _, s := range subs {
				_ = s.Close()
			}
		})
	}
}
