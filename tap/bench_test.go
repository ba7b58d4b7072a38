package tap_test

import (
	"testing"

	"github.com/relaykit/relaykit/tap"
)

// BenchmarkPublish measures Publish of a batch of 100 events: with no
// subscription; with one sampling 1 in 100 whose reader keeps up (the
// benchmark takes the one observation of each batch after Publish, so the
// copy and the hand-off are always measured, never the cheaper drop);
// with one whose filter matches nothing; and with one that never reads.
// One op is one batch; ns/event is the cost per event.
func BenchmarkPublish(b *testing.B) {
	const batchSize = 100
	cases := []struct {
		name string
		cfg  *tap.SubscribeConfig
	}{
		{name: "subscribers=none"},
		{name: "sample=100", cfg: &tap.SubscribeConfig{Sample: 100, Buffer: 16}},
		{name: "filter=nomatch", cfg: &tap.SubscribeConfig{Filter: "segfault"}},
		{name: "stuck", cfg: &tap.SubscribeConfig{Buffer: 16}},
	}
	for _, bc := range cases {
		b.Run("batch=100/"+bc.name, func(b *testing.B) {
			p := tap.NewPoint("input:bench")
			batch := events(batchSize)
			var sub *tap.Subscription
			if bc.cfg != nil {
				var err error
				if sub, err = p.Subscribe(*bc.cfg); err != nil {
					b.Fatal(err)
				}
			}
			read := bc.name == "sample=100"
			b.ReportAllocs()
			for b.Loop() {
				p.Publish(batch)
				if read {
					<-sub.C()
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batchSize), "ns/event")
			if sub == nil {
				return
			}
			st := sub.Stats()
			_ = sub.Close()
			total := uint64(b.N * batchSize)
			switch bc.name {
			case "sample=100":
				if st.Matched != total || st.Delivered != uint64(b.N) || st.Dropped != 0 {
					b.Fatalf("stats %+v, published %d", st, total)
				}
			case "filter=nomatch":
				if st.Matched != 0 {
					b.Fatalf("stats %+v", st)
				}
			case "stuck":
				if st.Matched != total || st.Delivered != 16 || st.Dropped != total-16 {
					b.Fatalf("stats %+v, published %d", st, total)
				}
			}
		})
	}
}
