package delivery_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
)

// countSink is a destination that reads every event and takes the batch.
type countSink struct{ bytes int }

func (c *countSink) Send(_ context.Context, batch []relaykit.Event) error {
	for i := range batch {
		c.bytes += len(batch[i].Raw)
	}
	return nil
}

// benchBatch is a batch of 500 events of ~200 bytes, as a relay worker
// hands a destination.
func benchBatch() []relaykit.Event {
	b := batchOf(0, 500)
	for i := range b {
		b[i].Raw = append(b[i].Raw, " <134>1 2026-11-23T10:00:00.000Z web-1 nginx 1234 - - GET /index.html HTTP/1.1 200 512 \"-\" \"Mozilla/5.0 (X11; Linux x86_64)\" request_time=0.004 upstream=10.0.0.7:8080 cache=MISS"...)
		b[i].SetFieldString("sd.origin.ip", "10.0.0.7")
	}
	return b
}

// cpuTime is the process's CPU time (all threads): unlike wall time, it
// does not grow when other processes compete for the cores.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkQueue compares the healthy path of a Queue, in each mode, with
// calling the destination directly. One op is one event (batches of 500);
// the Queue's sender runs on its own goroutine, as in a relay, and the
// figure includes draining everything at the end. cpu-ns/op is the
// process's CPU time per event: Send, the sender, the spool's writes.
func BenchmarkQueue(b *testing.B) {
	batch := benchBatch()
	b.Run("impl=direct", func(b *testing.B) {
		b.ReportAllocs()
		d := &countSink{}
		cpu0 := cpuTime()
		for n := 0; n < b.N; n += len(batch) {
			_ = d.Send(b.Context(), batch)
		}
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	})
	for _, mode := range []delivery.Mode{delivery.WriteAhead, delivery.OnFailure, delivery.Memory} {
		b.Run("impl="+mode.String(), func(b *testing.B) {
			b.ReportAllocs()
			dir := b.TempDir()
			if mode == delivery.Memory {
				dir = "" // Send delivers on the benchmark's goroutine
			}
			q, err := delivery.New(&countSink{}, delivery.Config{Dir: dir, Mode: mode})
			require.NoError(b, err)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- q.Run(ctx) }()
			b.ResetTimer()
			cpu0 := cpuTime()
			for n := 0; n < b.N; n += len(batch) {
				if err := q.Send(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			stop, cancelStop := context.WithTimeout(ctx, time.Minute)
			require.NoError(b, q.Close(stop))
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			cancelStop()
			cancel()
			<-done
		})
	}
}
