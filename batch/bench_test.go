package batch_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/batch"
	"github.com/relaykit/relaykit/ringbuffer"
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

// BenchmarkPump measures moving one item (one op) from a ringbuffer.MPSC
// through a collector to a flush function that checks it: with Pump, and
// with the loop a caller would write by hand (PopBatch, AddBatch, Run). A
// producer pushes b.N items and the benchmark waits for the last flush.
// item=int is the bare cost; item=event moves relaykit.Event values (with
// byte slices, so the ring clears popped slots) as an agent does.
func BenchmarkPump(b *testing.B) {
	b.Run("item=int", func(b *testing.B) {
		benchPump(b, func(int) int { return 1 }, func(v int) int64 { return int64(v) })
	})
	msg := []byte("<34>1 2026-01-02T03:04:05Z web-1 sshd 42 - - Failed password for root")
	b.Run("item=event", func(b *testing.B) {
		benchPump(b, func(int) relaykit.Event { return relaykit.Event{Raw: msg} },
			func(e relaykit.Event) int64 { return int64(len(e.Raw) / len(msg)) })
	})
}

func benchPump[T any](b *testing.B, mk func(i int) T, check func(T) int64) {
	impls := []struct {
		name  string
		start func(ctx context.Context, c *batch.Collector[T], q *ringbuffer.MPSC[T]) func() error
	}{
		{"pump", func(ctx context.Context, c *batch.Collector[T], q *ringbuffer.MPSC[T]) func() error {
			done := make(chan error, 1)
			go func() { done <- c.Pump(ctx, q) }()
			return func() error { return <-done }
		}},
		{"handloop", func(ctx context.Context, c *batch.Collector[T], q *ringbuffer.MPSC[T]) func() error {
			done := make(chan error, 2)
			runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
			go func() { done <- c.Run(runCtx) }()
			go func() {
				buf := make([]T, 256)
				for {
					n, err := q.PopBatch(context.Background(), buf)
					if _, aerr := c.AddBatch(ctx, buf[:n]); aerr != nil {
						done <- aerr
						return
					}
					clear(buf[:n])
					if err != nil {
						break
					}
				}
				done <- c.Close(context.Background())
				stopRun()
			}()
			return func() error { return errors.Join(<-done, <-done) }
		}},
	}
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			q, err := ringbuffer.NewMPSC[T](4096)
			if err != nil {
				b.Fatal(err)
			}
			var flushed, sum atomic.Int64
			c, err := batch.NewCollector(batch.Config[T]{MaxEvents: 256, MaxWait: time.Millisecond},
				func(_ context.Context, items []T) error {
					s := int64(0)
					for _, v := range items {
						s += check(v)
					}
					sum.Add(s)
					flushed.Add(int64(len(items)))
					return nil
				})
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			wait := impl.start(ctx, c, q)
			b.ReportAllocs()
			n := int64(0)
			for b.Loop() {
				if err := q.Push(ctx, mk(int(n))); err != nil {
					b.Fatal(err)
				}
				n++
			}
			_ = q.Close()
			if err := wait(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if flushed.Load() != n || sum.Load() != n {
				b.Fatalf("flushed %d items (sum %d) of %d", flushed.Load(), sum.Load(), n)
			}
		})
	}
}
