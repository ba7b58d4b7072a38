package clock_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/clock"
)

func TestUnreadClockRunsNoTicker(t *testing.T) {
	c := clock.New(0)
	assert.Equal(t, clock.DefaultResolution, c.Resolution())
	before := time.Now().UnixNano()
	n := c.Nano()
	after := time.Now().UnixNano()
	assert.GreaterOrEqual(t, n, before)
	assert.LessOrEqual(t, n, after)
	assert.False(t, c.Ticking(), "one read starts nothing")
	assert.Zero(t, c.Wakes())
}

// TestTicksWhileReadAndSleepsWhenUnread follows the clock through a burst
// of reads, the ticker it starts, and the ticker's end once unread, in a
// synctest bubble: time moves only when every goroutine of the bubble is
// blocked, so the reads of a burst all come within the resolution.
func TestTicksWhileReadAndSleepsWhenUnread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.New(time.Millisecond)
		for range 15 {
			c.Nano()
		}
		assert.False(t, c.Ticking(), "15 quick reads are not a burst")
		c.Nano()
		require.True(t, c.Ticking(), "the 16th quick read starts the ticker")
		assert.EqualValues(t, 1, c.Wakes())

		// While read, the cached time follows the ticks.
		for range 50 {
			time.Sleep(10 * time.Millisecond)
			synctest.Wait() // the tick due now has run
			assert.Equal(t, time.Now().UnixNano(), c.Nano(), "read just after a tick: the tick's time")
			assert.True(t, c.Ticking())
		}
		// Unread for 100 ticks: the ticker ends.
		time.Sleep(99 * time.Millisecond)
		synctest.Wait()
		assert.True(t, c.Ticking(), "99 ticks unread: still ticking")
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		assert.False(t, c.Ticking(), "100 ticks unread: stopped")

		// Idle, a read is time.Now, and a new burst wakes it again.
		time.Sleep(time.Hour)
		assert.Equal(t, time.Now().UnixNano(), c.Nano())
		for range 16 {
			c.Nano()
		}
		assert.True(t, c.Ticking())
		assert.EqualValues(t, 2, c.Wakes())
		time.Sleep(time.Second) // lets the ticker end before the bubble does
	})
}

// TestSpacedReadsStayIdle: reads further apart than the resolution never
// start the ticker, however many there are.
func TestSpacedReadsStayIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.New(time.Millisecond)
		for range 1000 {
			c.Nano()
			time.Sleep(time.Millisecond)
		}
		assert.False(t, c.Ticking())
		assert.Zero(t, c.Wakes())
	})
}

func TestFake(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	c := clock.NewFake(t0)
	for range 100 {
		assert.Equal(t, t0.UnixNano(), c.Nano())
	}
	assert.False(t, c.Ticking(), "a fake clock never ticks")
	c.Add(1500 * time.Millisecond)
	assert.True(t, c.Now().Equal(t0.Add(1500*time.Millisecond)))
	c.Set(t0.Add(time.Hour))
	assert.Equal(t, t0.Add(time.Hour).UnixNano(), c.Nano())
	assert.Panics(t, func() { clock.New(0).Set(t0) })
	assert.Panics(t, func() { clock.Default().Add(time.Second) })
}

// TestConcurrentReadersNeverGoBack: many goroutines reading while the
// ticker starts and stops see a clock that never moves back by more than
// one resolution, and never freezes.
func TestConcurrentReadersNeverGoBack(t *testing.T) {
	c := clock.New(time.Millisecond)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			last := c.Nano()
			for range 200_000 {
				n := c.Nano()
				if n < last {
					t.Errorf("clock went back %v", time.Duration(last-n))
					return
				}
				last = n
			}
		})
	}
	wg.Wait()
	// Whatever state the readers left it in, the clock is never frozen:
	// reads reach a time taken after they stopped. (How soon depends on
	// the ticker goroutine's scheduling; on a busy machine that is
	// milliseconds, so the deadline is generous.)
	start := time.Now().UnixNano()
	require.Eventually(t, func() bool { return c.Nano() >= start }, 10*time.Second, time.Millisecond, "the clock froze")
}

func TestDefault(t *testing.T) {
	require.Same(t, clock.Default(), clock.Default())
	assert.Equal(t, time.Millisecond, clock.Default().Resolution())
}
