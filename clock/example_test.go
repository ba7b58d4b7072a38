package clock_test

import (
	"fmt"
	"time"

	"github.com/relaykit/relaykit/clock"
)

// A component reads the clock it was configured with, or the process's
// default: one atomic load per read while reads are frequent.
func Example() {
	var c *clock.Clock // a Config's Clock field left nil
	if c == nil {
		c = clock.Default()
	}
	received := c.Nano() // an event's receive time, unix ns
	fmt.Println(time.Since(time.Unix(0, received)) < time.Minute)
	// Output: true
}

// Tests give a component a fake clock and move it by hand: nothing ticks.
func ExampleNewFake() {
	c := clock.NewFake(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	start := c.Nano()
	c.Add(1500 * time.Millisecond)
	fmt.Println(time.Duration(c.Nano()-start), c.Now().UTC().Format(time.RFC3339))
	// Output: 1.5s 2026-11-28T12:00:01Z
}
