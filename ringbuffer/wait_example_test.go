package ringbuffer_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/relaykit/relaykit/ringbuffer"
)

// The consumer loop of a worker: Wait parks while the ring is empty (no CPU
// used), then Drain takes everything ready into a reused slice, up to the
// batch size, with one cursor publish per drain.
func ExampleMPSC_Wait() {
	q, err := ringbuffer.NewMPSC[int](64)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	done := make(chan struct{})
	go func() { // a producer pushing a burst of 10, then closing
		defer close(done)
		vs := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
		if _, err := q.PushBatch(ctx, vs); err != nil {
			return
		}
		_ = q.Close()
	}()

	buf := make([]int, 0, 4) // batch size 4, allocated once
	total := 0
	for {
		if err := q.Wait(ctx); errors.Is(err, ringbuffer.ErrClosed) {
			break // closed and every accepted value delivered
		} else if err != nil {
			panic(err) // ctx ended
		}
		buf = q.Drain(buf[:0], cap(buf))
		total += len(buf)
	}
	<-done
	fmt.Println("received", total, "values; pushed", q.Stats().Pushed)
	// Output:
	// received 10 values; pushed 10
}
