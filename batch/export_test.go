package batch

import "time"

// Slack returns the clock resolution the timer allows for.
func Slack[T any](c *Collector[T]) time.Duration { return c.slack }
