package ringbuffer_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/relaykit/relaykit/ringbuffer"
)

// Producers push with backpressure; one consumer pops until the ring is
// closed and drained. Close is called once every producer has returned, so
// nothing accepted is lost.
func Example() {
	q, err := ringbuffer.NewMPSC[string](8)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	var wg sync.WaitGroup
	for p := range 2 {
		wg.Go(func() {
			for i := range 3 {
				if err := q.Push(ctx, fmt.Sprintf("p%d-%d", p, i)); err != nil {
					return // ErrClosed or ctx.Err(): the value was not accepted
				}
			}
		})
	}
	go func() {
		wg.Wait()
		_ = q.Close()
	}()

	perProducer := map[byte][]string{}
	for {
		v, err := q.Pop(ctx)
		if errors.Is(err, ringbuffer.ErrClosed) {
			break
		}
		perProducer[v[1]] = append(perProducer[v[1]], v)
	}
	// Each producer's values arrive in the order it pushed them.
	fmt.Println(perProducer['0'])
	fmt.Println(perProducer['1'])
	// Output:
	// [p0-0 p0-1 p0-2]
	// [p1-0 p1-1 p1-2]
}

// The consumer drains in batches into a reused slice: one wait, one cursor
// publish and no allocation per batch.
func ExampleMPSC_PopBatch() {
	q, err := ringbuffer.NewMPSC[int](16)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	// A producer batch is claimed with one atomic operation.
	if _, err := q.PushBatch(ctx, []int{1, 2, 3, 4, 5}); err != nil {
		panic(err)
	}
	_ = q.Push(ctx, 6)
	_ = q.Close()

	buf := make([]int, 4)
	for {
		n, err := q.PopBatch(ctx, buf)
		if errors.Is(err, ringbuffer.ErrClosed) {
			fmt.Println("closed and drained")
			return
		}
		fmt.Println(buf[:n])
	}
	// Output:
	// [1 2 3 4]
	// [5 6]
	// closed and drained
}

// TryPush never blocks; Offer says why a value was refused, so a lossy
// producer (say, a UDP listener) can count drops by reason.
func ExampleMPSC_Offer() {
	q, _ := ringbuffer.NewMPSC[int](2)
	for i := range 3 {
		if err := q.Offer(i); err != nil {
			fmt.Println(i, err)
		}
	}
	_ = q.Close()
	fmt.Println(q.Offer(3))
	fmt.Println(q.Drain(nil, 0), q.Stats().RefusedFull)
	// Output:
	// 2 ringbuffer: full
	// ringbuffer: closed
	// [0 1] 1
}
