package batch_test

import (
	"context"
	"fmt"
	"time"

	"github.com/relaykit/relaykit/batch"
)

// A queue consumer hands over what it drained in one call: AddBatch takes
// the collector's lock once per chunk instead of once per item, and the
// chunk's items stay together, in order.
func ExampleCollector_AddBatch() {
	c, err := batch.NewCollector(batch.Config[int]{MaxEvents: 4, MaxWait: time.Minute},
		func(_ context.Context, b []int) error {
			fmt.Println("flush", b) // b is valid only until this returns
			return nil
		})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()

	drained := []int{1, 2, 3, 4, 5, 6} // e.g. from ringbuffer.MPSC.Drain
	n, err := c.AddBatch(ctx, drained)
	if err != nil {
		panic(err) // ctx ended while waiting for a free buffer, or ErrClosed
	}

	if err := c.Close(ctx); err != nil { // flushes the open batch
		panic(err)
	}
	if err := <-done; err != nil {
		panic(err)
	}
	fmt.Println("added", n)
	// Output:
	// flush [1 2 3 4]
	// flush [5 6]
	// added 6
}
