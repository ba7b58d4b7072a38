package main

import (
	"sync/atomic"
	"time"
)

// coarseClock is the relay's cheap clock: receive times, batch stamps and
// the storage writers' rotation checks read it instead of calling
// time.Now per event. While it is read often, a ticker refreshes a cached
// value every resolution; once nobody has read it for idleTicks ticks the
// ticker goroutine exits, and reads call time.Now until wakeReads reads
// in a row each come within wakeGap of the one before, which starts the
// ticker again (a few timers firing together, such as the storage
// writers' flush ticks, do not). An idle
// relay therefore has no timer waking it (go-timecache's default cache,
// which the relay stops at start, wakes the process every 500 µs for
// ever).
//
// The ticker goroutine owns nothing and stops on its own at most
// resolution*idleTicks after the last read. Safe for concurrent use.
type coarseClock struct {
	resolution time.Duration
	idleTicks  int
	wakeGap    int64 // ns

	now     atomic.Int64
	running atomic.Bool
	used    atomic.Bool
	quick   atomic.Int32 // reads in a row within wakeGap while asleep
	wakes   atomic.Int64 // times the ticker was started, for tests
}

// wakeReads is the number of quick reads in a row that wake the ticker.
const wakeReads = 16

// clock is the process's coarse clock: 1 ms resolution, asleep after
// 100 ms without reads, awake after wakeReads reads less than 1 ms apart.
var clock = newCoarseClock(time.Millisecond, 100, time.Millisecond)

func newCoarseClock(resolution time.Duration, idleTicks int, wakeGap time.Duration) *coarseClock {
	c := &coarseClock{resolution: resolution, idleTicks: idleTicks, wakeGap: int64(wakeGap)}
	c.now.Store(time.Now().UnixNano())
	return c
}

// Nano returns the current time in ns since the Unix epoch, behind real
// time by at most the resolution.
func (c *coarseClock) Nano() int64 {
	if c.running.Load() {
		if !c.used.Load() {
			c.used.Store(true)
		}
		return c.now.Load()
	}
	n := time.Now().UnixNano()
	if prev := c.now.Swap(n); n-prev >= c.wakeGap {
		c.quick.Store(0)
		return n
	}
	if c.quick.Add(1) >= wakeReads && c.running.CompareAndSwap(false, true) {
		c.quick.Store(0)
		c.wakes.Add(1)
		c.used.Store(true)
		go c.tick()
	}
	return n
}

// Time returns Nano as a time.Time, for storage.Config.Now.
func (c *coarseClock) Time() time.Time { return time.Unix(0, c.Nano()) }

// tick refreshes the cached time until it has not been read for
// idleTicks ticks.
func (c *coarseClock) tick() {
	t := time.NewTicker(c.resolution)
	defer t.Stop()
	unused := 0
	for range t.C {
		c.now.Store(time.Now().UnixNano())
		if c.used.Swap(false) {
			unused = 0
			continue
		}
		if unused++; unused >= c.idleTicks {
			c.running.Store(false)
			return
		}
	}
}
