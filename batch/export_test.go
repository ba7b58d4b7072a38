package batch

import "time"

// SetClock replaces the cheap clock that stamps the first item of a batch.
// Tests in testing/synctest bubbles use the bubble's time.Now, since the
// go-timecache updater runs outside the bubble on real time.
func SetClock[T any](c *Collector[T], now func() int64) {
	c.now = now
}

// Slack returns the clock resolution the timer allows for.
func Slack[T any](c *Collector[T]) time.Duration { return c.slack }
