package batch

import "time"

// SetNow replaces the clock reads of c (the first-item stamp, and the
// time Run arms the timer at), for a test that must tell them apart.
func SetNow[T any](c *Collector[T], now func() int64) { c.now = now }

// Slack returns the clock resolution the timer allows for.
func Slack[T any](c *Collector[T]) time.Duration { return c.slack }
