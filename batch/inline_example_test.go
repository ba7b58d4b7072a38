package batch_test

import (
	"context"
	"fmt"
	"time"

	"github.com/relaykit/relaykit/batch"
)

// With InlineFlush the goroutine that fills a batch flushes it before its
// Add returns, while the items are still in its processor's cache, and no
// flushing goroutine is woken. Run is still needed for MaxWait: its timer
// cuts a batch that stopped filling and flushes it on Run's goroutine.
func ExampleConfig_inlineFlush() {
	c, err := batch.NewCollector(batch.Config[int]{MaxEvents: 3, MaxWait: time.Minute, InlineFlush: true},
		func(_ context.Context, b []int) error {
			fmt.Println("flush", b) // on the adder's goroutine, or Run's or Close's caller's
			return nil
		})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()

	for i := 1; i <= 4; i++ {
		if err := c.Add(ctx, i); err != nil {
			panic(err)
		}
		if i == 3 {
			fmt.Println("Add(3) returned") // after its flush
		}
	}
	if err := c.Close(ctx); err != nil { // flushes the open batch on this goroutine
		panic(err)
	}
	if err := <-done; err != nil {
		panic(err)
	}
	// Output:
	// flush [1 2 3]
	// Add(3) returned
	// flush [4]
}
