package ringbuffer_test

import (
	"context"
	"sync"
	"testing"

	"github.com/relaykit/relaykit/ringbuffer"
)

// payload64 is a 64-byte value, the size used by the bench module.
type payload64 struct {
	seq uint64
	_   [56]byte
}

// BenchmarkUncontended measures the instruction cost of a push and a pop on
// one goroutine: no cache line moves between cores.
func BenchmarkUncontended(b *testing.B) {
	b.Run("TryPush+TryPop", func(b *testing.B) {
		q, _ := ringbuffer.NewMPSC[payload64](1024)
		b.ReportAllocs()
		var v payload64
		for b.Loop() {
			v.seq++
			q.TryPush(v)
			q.TryPop()
		}
	})
	b.Run("chan-send+receive", func(b *testing.B) {
		ch := make(chan payload64, 1024)
		b.ReportAllocs()
		var v payload64
		for b.Loop() {
			v.seq++
			ch <- v
			<-ch
		}
	})
	b.Run("TryPushBatch+Drain/64", func(b *testing.B) {
		q, _ := ringbuffer.NewMPSC[payload64](1024)
		b.ReportAllocs()
		in := make([]payload64, 64)
		out := make([]payload64, 0, 64)
		i := 0
		for b.Loop() {
			// One op is one item: a batch every 64 iterations.
			if i++; i == 64 {
				_, _ = q.TryPushBatch(in)
				out = q.Drain(out[:0], 64)
				i = 0
			}
		}
	})
}

// BenchmarkSPSC moves items from one producer goroutine to the consumer
// (the benchmark goroutine): one op is one item received.
func BenchmarkSPSC(b *testing.B) {
	b.Run("Push/Pop", func(b *testing.B) {
		q, _ := ringbuffer.NewMPSC[payload64](1024)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() {
			var v payload64
			for q.Push(ctx, v) == nil {
				v.seq++
			}
		})
		b.ReportAllocs()
		var want uint64
		for b.Loop() {
			v, err := q.Pop(ctx)
			if err != nil || v.seq != want {
				b.Fatalf("got %d (%v), want %d", v.seq, err, want)
			}
			want++
		}
		_ = q.Close()
		cancel()
		wg.Wait()
	})
	b.Run("PushBatch/PopBatch/64", func(b *testing.B) {
		q, _ := ringbuffer.NewMPSC[payload64](1024)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() {
			in := make([]payload64, 64)
			var seq uint64
			for {
				for i := range in {
					in[i].seq = seq
					seq++
				}
				if _, err := q.PushBatch(ctx, in); err != nil {
					return
				}
			}
		})
		b.ReportAllocs()
		buf := make([]payload64, 64)
		var n, i int
		var want uint64
		for b.Loop() {
			if i == n {
				var err error
				if n, err = q.PopBatch(ctx, buf); err != nil {
					b.Fatal(err)
				}
				i = 0
			}
			if buf[i].seq != want {
				b.Fatalf("got %d, want %d", buf[i].seq, want)
			}
			i++
			want++
		}
		_ = q.Close()
		cancel()
		wg.Wait()
	})
}
