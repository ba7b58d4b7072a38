package bench

// Ring benchmarks: ringbuffer.MPSC against a buffered channel and three
// peer libraries, one producer (SPSC) and 2, 4, 8 producers (MPSC), one
// consumer, a 64-byte struct payload moved by value.
//
// One op is one item delivered. The benchmark goroutine paces the
// producers: every chunk of b.Loop iterations it grants a chunk of items to
// whichever producer asks next, over an unbuffered channel, so the loop
// cannot run ahead of the producers by more than one chunk per producer.
// The consumer checks every item: per-producer sequence numbers must arrive
// in order with no gap or duplicate, and the total must equal b.N. Each
// producer ends with an end marker; the consumer stops after the last one.
//
// Peers, all at a capacity of 1024 slots:
//
//   - chan: a buffered Go channel of payload values.
//   - boreaslite: github.com/agilira/argus v1.1.0 BoreasLite with
//     OptimizationLargeBatch and its own RunProcessor. BoreasLite refuses a
//     write on a full ring after it has taken a sequence number, and its
//     consumer then stalls for good at that hole. It is driven losslessly:
//     a producer takes a ticket from an in-flight counter before writing,
//     the processor returns it, and at most capacity-64 tickets (64 is its
//     largest processing batch, whose cursor it publishes only at the end)
//     are out, so a write can never find the ring full. Any refused write
//     fails the run. Its slot type is fixed (FileChangeEvent, 128 bytes);
//     the 64-byte payload is copied into it.
//   - workiva: github.com/Workiva/go-datastructures v1.1.7 queue.RingBuffer
//     (Put/Get). It stores interface{} values, so each 64-byte payload is
//     boxed: one allocation per item, which is part of its cost.
//   - disruptor: github.com/smarty/go-disruptor v0.5.0, Reserve(1)/Commit and
//     one handler. Its default wait strategy sleeps (time.Sleep) when idle or
//     full, which costs tens of µs per item here; it runs with a yielding
//     strategy instead (runtime.Gosched in Gate, Idle and Reserve), like the
//     LMAX YieldingWaitStrategy.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/Workiva/go-datastructures/queue"
	"github.com/agilira/argus"
	disruptor "github.com/smarty/go-disruptor"

	"github.com/relaykit/relaykit/ringbuffer"
)

const (
	ringCapacity = 1024
	ringBatch    = 64   // PushBatch / PopBatch size of impl=ring-batch
	grantChunk   = 1024 // items granted to a producer at a time
)

// payload is the 64-byte value moved through every implementation.
type payload struct {
	producer uint32
	end      uint32 // 1 on a producer's end marker
	seq      uint64
	body     [48]byte
}

// checker verifies what a consumer receives. It is used by one consumer
// goroutine at a time; done is closed after the last end marker.
type checker struct {
	b     *testing.B
	next  []uint64
	total uint64
	ends  int
	err   error
	done  chan struct{}
}

func newChecker(producers int) *checker {
	return &checker{next: make([]uint64, producers), done: make(chan struct{})}
}

// add checks one item and reports whether the consumer should stop.
func (c *checker) add(v *payload) bool {
	if v.end != 0 {
		c.ends++
		if c.ends == len(c.next) {
			close(c.done)
			return true
		}
		return false
	}
	if c.err == nil && v.seq != c.next[v.producer] {
		c.err = fmt.Errorf("producer %d: got seq %d, want %d", v.producer, v.seq, c.next[v.producer])
	}
	c.next[v.producer] = v.seq + 1
	c.total++
	return false
}

// ringImpl is one implementation under test.
type ringImpl interface {
	// producer returns the push side for producer p; push must not lose
	// an item (it waits for space), flush sends what a batching producer
	// still holds.
	producer(p int) ringProducer
	// start launches the consumer, which feeds every item to c until c
	// says stop.
	start(c *checker)
	// stop waits for the consumer and releases resources; it returns an
	// error if the implementation misbehaved.
	stop() error
}

type ringProducer interface {
	push(v *payload)
	flush()
}

var ringImpls = []struct {
	name string
	make func(producers int) ringImpl
}{
	{"ring", func(int) ringImpl { return newRingImpl(false) }},
	{"ring-batch", func(int) ringImpl { return newRingImpl(true) }},
	{"chan", func(int) ringImpl { return &chanImpl{ch: make(chan payload, ringCapacity)} }},
	{"boreaslite", func(int) ringImpl { return &boreasImpl{} }},
	{"workiva", func(int) ringImpl { return &workivaImpl{q: queue.NewRingBuffer(ringCapacity)} }},
	{"disruptor", func(p int) ringImpl { return &disruptorImpl{writers: p} }},
}

func BenchmarkRingSPSC(b *testing.B) {
	for _, im := range ringImpls {
		b.Run("impl="+im.name, func(b *testing.B) { runRing(b, 1, im.make(1)) })
	}
}

func BenchmarkRingMPSC(b *testing.B) {
	for _, producers := range []int{2, 4, 8} {
		b.Run(fmt.Sprintf("producers=%d", producers), func(b *testing.B) {
			for _, im := range ringImpls {
				b.Run("impl="+im.name, func(b *testing.B) { runRing(b, producers, im.make(producers)) })
			}
		})
	}
}

func runRing(b *testing.B, producers int, im ringImpl) {
	b.ReportAllocs()
	c := newChecker(producers)
	c.b = b
	im.start(c)

	grants := make(chan int)
	var wg sync.WaitGroup
	for p := range producers {
		pr := im.producer(p)
		wg.Go(func() {
			v := payload{producer: uint32(p)}
			for i := range v.body {
				v.body[i] = byte(p + i)
			}
			for n := range grants {
				for range n {
					pr.push(&v)
					v.seq++
				}
			}
			v.end = 1
			pr.push(&v)
			pr.flush()
		})
	}

	granted := 0
	for b.Loop() {
		granted++
		if granted == grantChunk {
			grants <- granted
			granted = 0
		}
	}
	// Time the tail too: the items granted last are still in flight.
	b.StartTimer()
	if granted > 0 {
		grants <- granted
	}
	close(grants)
	wg.Wait()
	<-c.done
	b.StopTimer()
	if err := im.stop(); err != nil {
		b.Fatal(err)
	}
	if c.err != nil {
		b.Fatal(c.err)
	}
	if c.total != uint64(b.N) {
		b.Fatalf("delivered %d items, want %d", c.total, b.N)
	}
}

// ---- relaykit ringbuffer ----

type ringImplT struct {
	b     *testing.B
	q     *ringbuffer.MPSC[payload]
	batch bool
	wg    sync.WaitGroup
	err   error
}

func newRingImpl(batch bool) *ringImplT {
	q, err := ringbuffer.NewMPSC[payload](ringCapacity)
	if err != nil {
		panic(err)
	}
	return &ringImplT{q: q, batch: batch}
}

func (r *ringImplT) producer(int) ringProducer {
	if r.batch {
		return &ringBatchProducer{q: r.q, buf: make([]payload, 0, ringBatch)}
	}
	return ringProducerT{r.q}
}

func (r *ringImplT) start(c *checker) {
	r.b = c.b
	ctx := context.Background()
	r.wg.Go(func() {
		if r.batch {
			buf := make([]payload, ringBatch)
			for {
				n, err := r.q.PopBatch(ctx, buf)
				if err != nil {
					r.err = err
					return
				}
				for i := range buf[:n] {
					if c.add(&buf[i]) {
						return
					}
				}
			}
		}
		for {
			v, err := r.q.Pop(ctx)
			if err != nil {
				r.err = err
				return
			}
			if c.add(&v) {
				return
			}
		}
	})
}

func (r *ringImplT) stop() error {
	r.wg.Wait()
	if r.err != nil {
		return r.err
	}
	if err := r.q.Close(); err != nil {
		return err
	}
	if st := r.q.Stats(); st.Popped > 0 {
		r.b.ReportMetric(float64(st.ConsumerParks)/float64(st.Popped), "cparks/item")
		r.b.ReportMetric(float64(st.ProducerParks)/float64(st.Popped), "pparks/item")
	}
	if _, err := r.q.Pop(context.Background()); !errors.Is(err, ringbuffer.ErrClosed) {
		return fmt.Errorf("ring: Pop after Close and drain: %v, want ErrClosed", err)
	}
	return nil
}

type ringProducerT struct{ q *ringbuffer.MPSC[payload] }

func (p ringProducerT) push(v *payload) {
	if err := p.q.Push(context.Background(), *v); err != nil {
		panic(err)
	}
}

func (p ringProducerT) flush() {}

// ringBatchProducer is written on every item; the padding keeps two
// producers' structs off a shared cache line.
type ringBatchProducer struct {
	_   [128]byte
	q   *ringbuffer.MPSC[payload]
	buf []payload
	_   [128]byte
}

func (p *ringBatchProducer) push(v *payload) {
	p.buf = append(p.buf, *v)
	if len(p.buf) == ringBatch {
		p.flush()
	}
}

func (p *ringBatchProducer) flush() {
	if len(p.buf) == 0 {
		return
	}
	if _, err := p.q.PushBatch(context.Background(), p.buf); err != nil {
		panic(err)
	}
	p.buf = p.buf[:0]
}

// ---- buffered channel ----

type chanImpl struct {
	ch chan payload
	wg sync.WaitGroup
}

func (ci *chanImpl) producer(int) ringProducer { return chanProducer{ci.ch} }

func (ci *chanImpl) start(c *checker) {
	ci.wg.Go(func() {
		for v := range ci.ch {
			if c.add(&v) {
				return
			}
		}
	})
}

func (ci *chanImpl) stop() error {
	ci.wg.Wait()
	close(ci.ch)
	return nil
}

type chanProducer struct{ ch chan payload }

func (p chanProducer) push(v *payload) { p.ch <- *v }
func (p chanProducer) flush()          {}

// ---- BoreasLite (agilira/argus v1.1.0) ----

// boreasTickets is the most items in flight: BoreasLite's LargeBatch
// processor handles up to 64 items before publishing its reader cursor.
const boreasTickets = ringCapacity - 64

type boreasImpl struct {
	b        *argus.BoreasLite
	inflight atomic.Int64
	refused  atomic.Int64
	wg       sync.WaitGroup
}

func (bi *boreasImpl) producer(int) ringProducer { return boreasProducer{bi} }

func (bi *boreasImpl) start(c *checker) {
	stopped := false
	bi.b = argus.NewBoreasLite(ringCapacity, argus.OptimizationLargeBatch, func(e *argus.FileChangeEvent) {
		bi.inflight.Add(-1)
		if stopped {
			return
		}
		var v payload
		v.producer = uint32(e.ModTime)
		v.end = uint32(e.ModTime >> 32)
		v.seq = uint64(e.Size)
		copy(v.body[:], e.Path[:48])
		stopped = c.add(&v)
	})
	bi.wg.Go(bi.b.RunProcessor)
}

func (bi *boreasImpl) stop() error {
	bi.b.Stop()
	bi.wg.Wait()
	if n := bi.refused.Load(); n > 0 {
		return fmt.Errorf("boreaslite: %d writes refused; the run is invalid", n)
	}
	return nil
}

type boreasProducer struct{ bi *boreasImpl }

func (p boreasProducer) push(v *payload) {
	bi := p.bi
	for {
		n := bi.inflight.Load()
		if n < boreasTickets && bi.inflight.CompareAndSwap(n, n+1) {
			break
		}
		if n >= boreasTickets {
			runtime.Gosched()
		}
	}
	e := argus.FileChangeEvent{
		ModTime: int64(v.producer) | int64(v.end)<<32,
		Size:    int64(v.seq),
	}
	copy(e.Path[:], v.body[:])
	if !bi.b.WriteFileEvent(&e) {
		bi.refused.Add(1)
	}
}

func (p boreasProducer) flush() {}

// ---- Workiva go-datastructures v1.1.7 queue.RingBuffer ----

type workivaImpl struct {
	q   *queue.RingBuffer
	wg  sync.WaitGroup
	err error
}

func (wi *workivaImpl) producer(int) ringProducer { return workivaProducer{wi.q} }

func (wi *workivaImpl) start(c *checker) {
	wi.wg.Go(func() {
		for {
			x, err := wi.q.Get()
			if err != nil {
				wi.err = err
				return
			}
			v := x.(payload)
			if c.add(&v) {
				return
			}
		}
	})
}

func (wi *workivaImpl) stop() error {
	wi.wg.Wait()
	wi.q.Dispose()
	return wi.err
}

type workivaProducer struct{ q *queue.RingBuffer }

func (p workivaProducer) push(v *payload) {
	if err := p.q.Put(*v); err != nil {
		panic(err)
	}
}

func (p workivaProducer) flush() {}

// ---- smarty/go-disruptor v0.5.0 ----

// yieldingWait is a wait strategy that yields the processor instead of
// sleeping (the default sleeps, which costs tens of µs per item here).
type yieldingWait struct{}

func (yieldingWait) Gate(int64)    { runtime.Gosched() }
func (yieldingWait) Idle(int64)    { runtime.Gosched() }
func (yieldingWait) Reserve(int64) { runtime.Gosched() }

type disruptorImpl struct {
	writers int
	d       disruptor.Disruptor
	ring    [ringCapacity]payload
	wg      sync.WaitGroup
}

type disruptorHandler struct {
	di      *disruptorImpl
	c       *checker
	stopped bool
}

func (h *disruptorHandler) Handle(lower, upper int64) {
	for s := lower; s <= upper && !h.stopped; s++ {
		h.stopped = h.c.add(&h.di.ring[s&(ringCapacity-1)])
	}
}

func (di *disruptorImpl) producer(int) ringProducer { return disruptorProducer{di} }

func (di *disruptorImpl) start(c *checker) {
	d, err := disruptor.New(
		disruptor.Options.BufferCapacity(ringCapacity),
		disruptor.Options.WriterCount(uint8(di.writers)),
		disruptor.Options.WaitStrategy(yieldingWait{}),
		disruptor.Options.NewHandlerGroup(&disruptorHandler{di: di, c: c}),
	)
	if err != nil {
		panic(err)
	}
	di.d = d
	di.wg.Go(d.Listen)
}

func (di *disruptorImpl) stop() error {
	err := di.d.Close()
	di.wg.Wait()
	return err
}

type disruptorProducer struct{ di *disruptorImpl }

func (p disruptorProducer) push(v *payload) {
	seq := p.di.d.Reserve(1)
	if seq < 0 {
		panic(fmt.Sprintf("disruptor: Reserve: %d", seq))
	}
	p.di.ring[seq&(ringCapacity-1)] = *v
	p.di.d.Commit(seq, seq)
}

func (p disruptorProducer) flush() {}

// The payload is exactly 64 bytes: either array length below is negative
// otherwise, which does not compile.
var (
	_ [unsafe.Sizeof(payload{}) - 64]byte
	_ [64 - unsafe.Sizeof(payload{})]byte
)
