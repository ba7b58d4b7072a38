package batch_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relaykit/relaykit/batch"
)

// BenchmarkAdd measures one Add (one op = one item) with a flush function
// that only counts, single goroutine and parallel, with and without a Size
// function and hooks.
func BenchmarkAdd(b *testing.B) {
	cases := []struct {
		name string
		cfg  batch.Config[int]
	}{
		{"plain", batch.Config[int]{}},
		{"size+hooks", batch.Config[int]{
			Size: func(v int) int { return 100 + v&63 },
			Hooks: batch.Hooks[int]{
				OnFlush:      func(batch.Reason, int, int, time.Duration) {},
				OnFlushError: func([]int, error) {},
			},
		}},
	}
	for _, tc := range cases {
		for _, par := range []bool{false, true} {
			name := tc.name + "/serial"
			if par {
				name = tc.name + "/parallel"
			}
			b.Run(name, func(b *testing.B) {
				var flushed atomic.Int64
				c, err := batch.NewCollector(tc.cfg, func(_ context.Context, items []int) error {
					flushed.Add(int64(len(items)))
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				done := make(chan error, 1)
				go func() { done <- c.Run(ctx) }()
				b.ReportAllocs()
				if par {
					b.RunParallel(func(pb *testing.PB) {
						for i := 0; pb.Next(); i++ {
							if err := c.Add(ctx, i); err != nil {
								b.Error(err)
								return
							}
						}
					})
				} else {
					for i := 0; b.Loop(); i++ {
						if err := c.Add(ctx, i); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.StopTimer()
				if err := c.Close(ctx); err != nil {
					b.Fatal(err)
				}
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				if s := c.Stats(); int64(s.Items) != flushed.Load() {
					b.Fatalf("flushed %d of %d items", flushed.Load(), s.Items)
				}
			})
		}
	}
}
