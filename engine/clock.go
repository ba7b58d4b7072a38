package engine

import (
	"context"
	"sync/atomic"
	"time"
)

// Clock is a cheap clock for per-event time stamps: receive times, batch
// stamps, a storage writer's rotation checks. While it is read often and
// [Clock.Run] runs, a ticker refreshes a cached value every resolution and
// [Clock.Nano] is one atomic load. Once nobody has read it for 100 ticks
// the ticker stops, and reads call time.Now until 16 reads in a row each
// come within the resolution of the one before, which starts the ticker
// again (a few timers firing together do not). An idle process therefore
// has no timer waking it, unlike go-timecache's default cache, which ticks
// every 500 µs from import on (stop it with timecache.StopDefaultCache in a
// program that does not read it).
//
// Without Run, Nano reads time.Now every time: correct, not cheap. A
// [Engine] runs the clock it creates within its own Run; a Clock given in
// [Config].Clock is run by its owner. A Clock is safe for concurrent use.
type Clock struct {
	resolution time.Duration
	idleTicks  int
	wakeGap    int64 // ns

	now     atomic.Int64
	running atomic.Bool // the ticker refreshes now
	used    atomic.Bool // read since the last tick
	quick   atomic.Int32
	wake    chan struct{} // cap 1: a token asks Run to start the ticker
	wakes   atomic.Int64
	owned   atomic.Bool // Run is running
}

// wakeReads is the number of quick reads in a row that start the ticker.
const wakeReads = 16

// NewClock returns a clock with the given resolution. Zero means 1 ms.
func NewClock(resolution time.Duration) *Clock {
	if resolution <= 0 {
		resolution = time.Millisecond
	}
	c := &Clock{resolution: resolution, idleTicks: 100, wakeGap: int64(resolution), wake: make(chan struct{}, 1)}
	c.now.Store(time.Now().UnixNano())
	return c
}

// Nano returns the current time in nanoseconds since the Unix epoch,
// behind real time by at most the resolution while the ticker runs.
func (c *Clock) Nano() int64 {
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
	if c.quick.Add(1) >= wakeReads {
		c.quick.Store(0)
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	return n
}

// Time returns Nano as a time.Time (for storage.Config.Now and
// syslog.Config.Now).
func (c *Clock) Time() time.Time { return time.Unix(0, c.Nano()) }

// Wakes returns how many times the ticker was started, for tests and
// metrics.
func (c *Clock) Wakes() int64 { return c.wakes.Load() }

// Run runs the clock's ticker while the clock is read often, and sleeps,
// without a timer, while it is not, until ctx ends. It returns nil. Run
// may be called by one goroutine at a time; a second concurrent call
// returns at once.
func (c *Clock) Run(ctx context.Context) error {
	if !c.owned.CompareAndSwap(false, true) {
		return nil
	}
	defer c.owned.Store(false)
	defer c.running.Store(false)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.wake:
		}
		if !c.tick(ctx) {
			return nil
		}
	}
}

// tick refreshes the cached time until it has not been read for idleTicks
// ticks (it then reports true) or ctx ends (false).
func (c *Clock) tick(ctx context.Context) bool {
	c.now.Store(time.Now().UnixNano())
	c.used.Store(true)
	c.running.Store(true)
	c.wakes.Add(1)
	t := time.NewTicker(c.resolution)
	defer t.Stop()
	unused := 0
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		c.now.Store(time.Now().UnixNano())
		if c.used.Swap(false) {
			unused = 0
			continue
		}
		if unused++; unused >= c.idleTicks {
			c.running.Store(false)
			select { // a wake-up sent while it ran is stale
			case <-c.wake:
			default:
			}
			return true
		}
	}
}
