package batch_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/relaykit/relaykit/batch"
	"github.com/relaykit/relaykit/ringbuffer"
)

// A collector feeding a Sink-like function: batches of at most three lines
// or 16 bytes, flushed in order by one flusher, the rest flushed on Close.
func Example() {
	// send stands for a Sink's Send: it must not keep the batch.
	send := func(_ context.Context, lines []string) error {
		fmt.Printf("send %d: %s\n", len(lines), strings.Join(lines, " "))
		return nil
	}

	c, err := batch.NewCollector(batch.Config[string]{
		MaxEvents: 3,
		MaxBytes:  16,
		Size:      func(s string) int { return len(s) },
		MaxWait:   time.Minute,
		Hooks: batch.Hooks[string]{
			OnFlushError: func(lines []string, err error) {
				fmt.Println("spill", len(lines), "lines:", err)
			},
		},
	}, send)
	if err != nil {
		panic(err)
	}

	ctx := context.Background()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()

	for _, line := range []string{"a", "b", "c", "dddddddd", "eeeeeeee", "f", "a-very-long-line-alone", "g"} {
		if err := c.Add(ctx, line); err != nil {
			panic(err)
		}
	}
	shutdown, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Close(shutdown); err != nil {
		panic(err)
	}
	if err := <-done; err != nil {
		panic(err)
	}

	s := c.Stats()
	fmt.Printf("items=%d flushed=%d batches: size=%d bytes=%d close=%d\n",
		s.Items, s.FlushedItems, s.Batches.Size, s.Batches.Bytes, s.Batches.Close)
	fmt.Println(errors.Is(c.Add(ctx, "late"), batch.ErrClosed))
	// Output:
	// send 3: a b c
	// send 2: dddddddd eeeeeeee
	// send 1: f
	// send 1: a-very-long-line-alone
	// send 1: g
	// items=8 flushed=8 batches: size=1 bytes=3 close=1
	// true
}

// Run under a context that ends at shutdown: the open batch is flushed on
// the way out, and a batch the destination refused is handed to
// OnFlushError, here "spilled" to a slice, rather than lost.
func ExampleCollector_Run() {
	var spilled []int
	c, err := batch.NewCollector(batch.Config[int]{
		MaxEvents:    4,
		DrainTimeout: 10 * time.Second,
		Hooks: batch.Hooks[int]{
			// The batch is only valid during the call: copy it.
			OnFlushError: func(b []int, _ error) { spilled = append(spilled, b...) },
		},
	}, func(_ context.Context, b []int) error {
		if b[0] == 4 {
			return errors.New("destination down")
		}
		fmt.Println("delivered", b)
		return nil
	})
	if err != nil {
		panic(err)
	}

	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()

	n, err := c.AddBatch(ctx, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	if err != nil {
		panic(err)
	}
	stop() // shutdown: Run flushes {8 9} and returns
	fmt.Println("added", n, "run:", <-done)

	s := c.Stats()
	fmt.Println("spilled", spilled)
	fmt.Printf("in=%d flushed=%d failed=%d\n", s.Items, s.FlushedItems, s.FailedItems)
	// Output:
	// delivered [0 1 2 3]
	// delivered [8 9]
	// added 10 run: <nil>
	// spilled [4 5 6 7]
	// in=10 flushed=6 failed=4
}

// A ring fed by several producers, pumped into a collector: the shutdown
// (here the end of ctx) closes the ring, moves what it holds into the
// collector and flushes the last batch, so nothing the ring accepted is
// lost.
func ExampleCollector_Pump() {
	ring, err := ringbuffer.NewMPSC[string](1024)
	if err != nil {
		panic(err)
	}
	var mu sync.Mutex
	var got []string
	c, err := batch.NewCollector(batch.Config[string]{MaxEvents: 100, MaxWait: time.Minute},
		func(_ context.Context, lines []string) error {
			mu.Lock()
			got = append(got, lines...) // the batch is reused: copy it
			mu.Unlock()
			return nil
		})
	if err != nil {
		panic(err)
	}

	ctx, shutdown := context.WithCancel(context.Background())
	pumped := make(chan error, 1)
	go func() { pumped <- c.Pump(ctx, ring) }()

	var producers sync.WaitGroup
	for p := range 3 {
		producers.Go(func() {
			for i := range 50 {
				if err := ring.Push(ctx, fmt.Sprintf("p%d-%d", p, i)); err != nil {
					panic(err)
				}
			}
		})
	}
	producers.Wait()
	shutdown() // e.g. on SIGTERM, after the inputs stopped
	if err := <-pumped; err != nil {
		panic(err)
	}
	fmt.Println(len(got), "lines flushed; ring closed:", ring.Closed())
	fmt.Println(errors.Is(ring.Push(context.Background(), "late"), ringbuffer.ErrClosed))
	// Output:
	// 150 lines flushed; ring closed: true
	// true
}
