package engine_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/relaykit/relaykit/engine"
)

// The clock's ticker runs only while the clock is read often: it starts
// after 16 quick reads, keeps running while read, and stops 100 ticks
// after the last read; the time it gives stays within the resolution of
// real time in both states.
func TestClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := engine.NewClock(time.Millisecond)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		near := func() {
			t.Helper()
			d := time.Since(time.Unix(0, c.Nano()))
			assert.LessOrEqual(t, d, time.Millisecond, "clock behind by %v", d)
			assert.GreaterOrEqual(t, d, time.Duration(0))
		}
		time.Sleep(10 * time.Millisecond)
		near() // one read: time.Now
		synctest.Wait()
		assert.Zero(t, c.Wakes(), "one read does not start the ticker")
		for range 16 { // quick reads: the bubble's clock stands still
			c.Nano()
		}
		synctest.Wait()
		assert.Equal(t, int64(1), c.Wakes(), "16 quick reads start it")
		for range 50 { // busy: reads keep it running
			near()
			time.Sleep(2 * time.Millisecond)
		}
		assert.Equal(t, int64(1), c.Wakes(), "it stayed awake while read")
		time.Sleep(200 * time.Millisecond) // 100 ticks without a read: asleep
		synctest.Wait()
		near()
		time.Sleep(20 * time.Millisecond)
		near() // reads further apart than the resolution keep it asleep
		synctest.Wait()
		assert.Equal(t, int64(1), c.Wakes())
		for range 16 {
			c.Nano()
		}
		synctest.Wait()
		assert.Equal(t, int64(2), c.Wakes(), "and it wakes again")
		cancel()
		assert.NoError(t, <-done)
	})
}
