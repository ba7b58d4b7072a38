package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/batch"
)

// batchMaxEvents and batchMaxWait are the limits both implementations use:
// the seed relay's 1000 events or 100 ms.
const (
	batchMaxEvents = 1000
	batchMaxWait   = 100 * time.Millisecond
)

// batcher is what BenchmarkBatch measures: add one event (passed by pointer
// so that the harness copies it no more than the implementation does); end hands over
// what the calling goroutine still holds (only the chunking implementation
// holds anything); stop flushes everything and waits for it to be flushed.
type batcher interface {
	add(ctx context.Context, e *relaykit.Event) error
	stop() error
}

// chunkingBatcher is implemented by batchers whose producers keep local
// state; each adding goroutine gets its own producer.
type chunkingBatcher interface {
	producer() producer
}

type producer interface {
	add(ctx context.Context, e *relaykit.Event) error
	end(ctx context.Context) error
}

// addBatchChunk is how many events a producer of impl=collector-addbatch
// gathers before one AddBatch call, as a ring consumer draining in chunks
// would.
const addBatchChunk = 64

// collectorAddBatch feeds the collector with AddBatch, in chunks.
type collectorAddBatch struct{ *collectorBatcher }

func (ca collectorAddBatch) producer() producer {
	return &chunkProducer{c: ca.c, chunk: make([]relaykit.Event, 0, addBatchChunk)}
}

type chunkProducer struct {
	c     *batch.Collector[relaykit.Event]
	chunk []relaykit.Event
}

func (p *chunkProducer) add(ctx context.Context, e *relaykit.Event) error {
	p.chunk = append(p.chunk, *e)
	if len(p.chunk) < cap(p.chunk) {
		return nil
	}
	return p.end(ctx)
}

func (p *chunkProducer) end(ctx context.Context) error {
	_, err := p.c.AddBatch(ctx, p.chunk)
	clear(p.chunk)
	p.chunk = p.chunk[:0]
	return err
}

// directProducer adds each event at once.
type directProducer struct{ b batcher }

func (d directProducer) add(ctx context.Context, e *relaykit.Event) error { return d.b.add(ctx, e) }
func (d directProducer) end(context.Context) error                        { return nil }

func producerOf(b batcher) producer {
	if cb, ok := b.(chunkingBatcher); ok {
		return cb.producer()
	}
	return directProducer{b}
}

// collectorBatcher is batch.Collector run the way the relay runs it.
type collectorBatcher struct {
	c    *batch.Collector[relaykit.Event]
	done chan error
}

func newCollectorBatcher(flush func(context.Context, []relaykit.Event) error) (*collectorBatcher, error) {
	c, err := batch.NewCollector(batch.Config[relaykit.Event]{
		MaxEvents: batchMaxEvents,
		MaxWait:   batchMaxWait,
	}, flush)
	if err != nil {
		return nil, err
	}
	cb := &collectorBatcher{c: c, done: make(chan error, 1)}
	go func() { cb.done <- c.Run(context.Background()) }()
	return cb, nil
}

func (cb *collectorBatcher) add(ctx context.Context, e *relaykit.Event) error {
	return cb.c.Add(ctx, *e)
}

func (cb *collectorBatcher) stop() error {
	if err := cb.c.Close(context.Background()); err != nil {
		return err
	}
	return <-cb.done
}

// chanTickerBatcher is the common Go idiom: producers send on a buffered
// channel; one goroutine selects on it and on a time.Ticker, appends to a
// slice and flushes at batchMaxEvents items or on each tick.
type chanTickerBatcher struct {
	items chan relaykit.Event
	done  chan struct{}
}

func newChanTickerBatcher(flush func(context.Context, []relaykit.Event) error) *chanTickerBatcher {
	ct := &chanTickerBatcher{
		items: make(chan relaykit.Event, batchMaxEvents),
		done:  make(chan struct{}),
	}
	go func() {
		defer close(ct.done)
		ctx := context.Background()
		ticker := time.NewTicker(batchMaxWait)
		defer ticker.Stop()
		buf := make([]relaykit.Event, 0, batchMaxEvents)
		for {
			select {
			case e, ok := <-ct.items:
				if !ok {
					if len(buf) > 0 {
						_ = flush(ctx, buf)
					}
					return
				}
				buf = append(buf, e)
				if len(buf) == batchMaxEvents {
					_ = flush(ctx, buf)
					clear(buf)
					buf = buf[:0]
				}
			case <-ticker.C:
				if len(buf) > 0 {
					_ = flush(ctx, buf)
					clear(buf)
					buf = buf[:0]
				}
			}
		}
	}()
	return ct
}

func (ct *chanTickerBatcher) add(ctx context.Context, e *relaykit.Event) error {
	select {
	case ct.items <- *e:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (ct *chanTickerBatcher) stop() error {
	close(ct.items)
	<-ct.done
	return nil
}

// benchEvent is a typical syslog event; the benchmarks copy its header (the
// Event struct) into the batch, as the relay does.
func benchEvent() relaykit.Event {
	var e relaykit.Event
	e.Host = append(e.Host, "web-1.example.net"...)
	e.Source = append(e.Source, "sshd"...)
	e.SourceType = append(e.SourceType, "syslog"...)
	e.Raw = append(e.Raw, "Failed password for invalid user admin from 192.0.2.7 port 52113 ssh2"...)
	e.ReceiveTime = 1_700_000_000_000_000_000
	return e
}

// BenchmarkBatch measures adding one event (one op) to a batcher cutting
// batches of 1000 events or 100 ms, with 1 and 4 adding goroutines, and
// checks that every added event was flushed. impl=collector calls Add per
// event, impl=chan-ticker sends each event on a channel, and
// impl=collector-addbatch hands the collector chunks of 64 events with
// AddBatch, as a ring consumer draining in chunks does.
func BenchmarkBatch(b *testing.B) {
	impls := []struct {
		name string
		make func(flush func(context.Context, []relaykit.Event) error) (batcher, error)
	}{
		{"collector", func(f func(context.Context, []relaykit.Event) error) (batcher, error) {
			return newCollectorBatcher(f)
		}},
		{"chan-ticker", func(f func(context.Context, []relaykit.Event) error) (batcher, error) {
			return newChanTickerBatcher(f), nil
		}},
		{"collector-addbatch", func(f func(context.Context, []relaykit.Event) error) (batcher, error) {
			cb, err := newCollectorBatcher(f)
			return collectorAddBatch{cb}, err
		}},
	}
	for _, adders := range []int{1, 4} {
		for _, impl := range impls {
			b.Run(fmt.Sprintf("adders=%d/impl=%s", adders, impl.name), func(b *testing.B) {
				// Each event carries its producer (Time) and its sequence
				// number within that producer (ReceiveTime); the flush
				// function checks per-producer order and counts. Flushes
				// never overlap (one flusher), so last needs no lock.
				var flushed atomic.Int64
				var outOfOrder atomic.Int64
				last := make([]int64, 64)
				bt, err := impl.make(func(_ context.Context, batch []relaykit.Event) error {
					for i := range batch {
						e := &batch[i]
						if e.ReceiveTime <= last[e.Time] {
							outOfOrder.Add(1)
						}
						last[e.Time] = e.ReceiveTime
					}
					flushed.Add(int64(len(batch)))
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				ev := benchEvent()
				ctx := context.Background()
				var added atomic.Int64
				b.ReportAllocs()
				if adders == 1 {
					p := producerOf(bt)
					n := int64(0)
					for b.Loop() {
						n++
						ev.ReceiveTime = n
						if err := p.add(ctx, &ev); err != nil {
							b.Fatal(err)
						}
					}
					if err := p.end(ctx); err != nil {
						b.Fatal(err)
					}
					added.Store(n)
				} else {
					// RunParallel starts parallelism*GOMAXPROCS goroutines:
					// exactly `adders` with -cpu 1, 2 or 4.
					b.SetParallelism(max(1, adders/runtime.GOMAXPROCS(0)))
					var mu sync.Mutex
					var firstErr error
					var producers atomic.Int64
					b.RunParallel(func(pb *testing.PB) {
						p := producerOf(bt)
						ev := ev
						ev.Time = producers.Add(1) // 1..adders
						n := int64(0)
						var err error
						for pb.Next() {
							n++
							ev.ReceiveTime = n
							if err = p.add(ctx, &ev); err != nil {
								break
							}
						}
						if err == nil {
							err = p.end(ctx)
						}
						if err != nil {
							mu.Lock()
							firstErr = err
							mu.Unlock()
							return
						}
						added.Add(n)
					})
					if firstErr != nil {
						b.Fatal(firstErr)
					}
				}
				b.StopTimer()
				if err := bt.stop(); err != nil {
					b.Fatal(err)
				}
				if got, want := flushed.Load(), added.Load(); got != want {
					b.Fatalf("flushed %d events, added %d", got, want)
				}
				if n := outOfOrder.Load(); n > 0 {
					b.Fatalf("%d events out of per-producer order", n)
				}
			})
		}
	}
}
