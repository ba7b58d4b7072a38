package batch_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/relaykit/relaykit/batch"
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
