package clock

import (
	"sync/atomic"
	"time"
)

// States of a Clock.
const (
	stateIdle   int32 = iota // reads call time.Now; quick reads start the ticker
	stateUnread              // the ticker refreshes now; not read since the last tick
	stateRead                // the ticker refreshes now; read since the last tick
	stateFake                // now is set by the caller ([Clock.Set], [Clock.Add])
)

// wakeReads is the number of reads in a row, each within the resolution
// of the one before, that start the ticker.
const wakeReads = 16

// idleTicks is the number of resolutions without a read after which the
// ticker stops.
const idleTicks = 100

// DefaultResolution is the resolution of [Default] and of [New] given
// zero.
const DefaultResolution = time.Millisecond

// Clock is a coarse clock for per-event time stamps: receive times, batch
// and window ends, rotation checks, rate limits. While it is read often a
// ticker goroutine refreshes a cached value every resolution and
// [Clock.Nano] is an atomic load; once nobody has read it for 100 ticks the
// goroutine exits, and reads call time.Now until 16 reads in a row each
// come within the resolution of the one before, which starts it again. A
// process that does not read the clock therefore runs no goroutine and no
// timer for it, and a Clock is never frozen: there is nothing to stop.
//
// A Clock is safe for concurrent use by multiple goroutines. Its zero value
// is not usable; use [New], [NewFake] or [Default].
type Clock struct {
	resolution time.Duration

	now   atomic.Int64 // ns since the Unix epoch: the cached time, or the last read
	state atomic.Int32
	quick atomic.Int32 // reads in a row within the resolution, while idle
	wakes atomic.Int64
}

var def = New(DefaultResolution)

// Default returns the process's clock (1 ms resolution), the one every
// relaykit package reads when its Config leaves the Clock nil. It starts
// ticking on the first burst of reads and stops when unread.
func Default() *Clock { return def }

// New returns a clock with the given resolution, the most its reads lag
// behind real time while its ticker runs (plus the scheduling delay of
// the ticker's goroutine). Zero means [DefaultResolution]. It starts no
// goroutine until it is read often.
func New(resolution time.Duration) *Clock {
	if resolution <= 0 {
		resolution = DefaultResolution
	}
	c := &Clock{resolution: resolution}
	c.now.Store(time.Now().UnixNano())
	return c
}

// NewFake returns a clock that reads t until [Clock.Set] or [Clock.Add]
// moves it: for tests. It never starts a goroutine.
func NewFake(t time.Time) *Clock {
	c := &Clock{resolution: DefaultResolution}
	c.now.Store(t.UnixNano())
	c.state.Store(stateFake)
	return c
}

// Nano returns the current time in nanoseconds since the Unix epoch.
func (c *Clock) Nano() int64 {
	if c.state.Load() == stateRead {
		return c.now.Load()
	}
	return c.slow()
}

// Now returns [Clock.Nano] as a time.Time (no monotonic reading).
func (c *Clock) Now() time.Time { return time.Unix(0, c.Nano()) }

// Resolution returns the clock's resolution.
func (c *Clock) Resolution() time.Duration { return c.resolution }

// Wakes returns how many times the ticker was started, for tests and
// metrics.
func (c *Clock) Wakes() int64 { return c.wakes.Load() }

// Ticking reports whether the clock's ticker goroutine is running.
func (c *Clock) Ticking() bool {
	s := c.state.Load()
	return s == stateRead || s == stateUnread
}

// Set moves a fake clock to t. It panics on a clock not made by [NewFake].
func (c *Clock) Set(t time.Time) {
	c.mustFake()
	c.now.Store(t.UnixNano())
}

// Add moves a fake clock by d. It panics on a clock not made by [NewFake].
func (c *Clock) Add(d time.Duration) {
	c.mustFake()
	c.now.Add(int64(d))
}

func (c *Clock) mustFake() {
	if c.state.Load() != stateFake {
		panic("clock: Set or Add on a clock not made by NewFake")
	}
}

// slow reads the time without the ticker: time.Now, or a fake clock's
// value. Reads that come in a burst start the ticker.
func (c *Clock) slow() int64 {
	switch c.state.Load() {
	case stateFake:
		return c.now.Load()
	case stateUnread: // the first read since the last tick
		// A CAS, not a store: the ticker may have just gone idle.
		if c.state.CompareAndSwap(stateUnread, stateRead) {
			return c.now.Load()
		}
	}
	n := time.Now().UnixNano()
	if d := n - c.advance(n); d >= int64(c.resolution) || d <= -steppedBack {
		c.quick.Store(0)
		return n
	}
	if c.quick.Add(1) >= wakeReads {
		c.quick.Store(0)
		if c.state.CompareAndSwap(stateIdle, stateRead) {
			c.advance(time.Now().UnixNano())
			c.wakes.Add(1)
			go c.tick()
		}
	}
	return n
}

// steppedBack is how far behind the cached time a time.Now must be for
// the clock to follow it back: the wall clock was stepped back, or the
// read is in a synctest bubble, whose fake time starts in 2000. A time
// less far behind is a read's or a tick's that lost a race (a goroutine
// preempted between its time.Now and its store), and is not stored.
const steppedBack = int64(time.Second)

// advance stores n as the cached time unless a later time is there
// already (a read's time.Now that lost the race with a tick, or a tick
// its goroutine stored late), and returns the time it found: the cached
// time does not go back, so neither do a goroutine's reads, unless n is
// steppedBack or more behind it.
func (c *Clock) advance(n int64) (prev int64) {
	for {
		prev = c.now.Load()
		if n <= prev && prev-n < steppedBack || c.now.CompareAndSwap(prev, n) {
			return prev
		}
	}
}

// tick refreshes the cached time every resolution until it has not been
// read for idleTicks resolutions of wall time (ticks a busy machine delays
// or drops count too), then returns the clock to idle.
func (c *Clock) tick() {
	t := time.NewTicker(c.resolution)
	defer t.Stop()
	idle := int64(idleTicks) * int64(c.resolution)
	lastRead := time.Now().UnixNano()
	for range t.C {
		now := time.Now().UnixNano()
		c.advance(now)
		if c.state.CompareAndSwap(stateRead, stateUnread) {
			lastRead = now
			continue
		}
		// A reader may mark the clock read between these two steps: the
		// CAS then fails and the ticker goes on.
		if now-lastRead >= idle && c.state.CompareAndSwap(stateUnread, stateIdle) {
			return
		}
	}
}
