package main

import (
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
)

// TestCoarseClock checks that the clock runs its ticker only while it is
// read often, stops it once reads stop, and stays close to real time in
// both states.
func TestCoarseClock(t *testing.T) {
	c := newCoarseClock(time.Millisecond, 20, 10*time.Millisecond)
	near := func() {
		t.Helper()
		d := time.Since(time.Unix(0, c.Nano()))
		assert.Less(t, d, 50*time.Millisecond, "clock behind by %v", d)
		assert.Greater(t, d, -time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // past wakeGap since the clock was made
	near()
	assert.False(t, c.running.Load(), "one read does not start the ticker")
	for range wakeReads - 1 {
		c.Nano()
	}
	assert.False(t, c.running.Load(), "nor do fewer than wakeReads quick reads")
	near() // the wakeReads-th quick read
	require.True(t, c.running.Load())
	assert.Equal(t, int64(1), c.wakes.Load())
	for range 20 { // busy: reads keep it running
		near()
		time.Sleep(2 * time.Millisecond)
	}
	assert.True(t, c.running.Load())
	assert.Equal(t, int64(1), c.wakes.Load(), "stayed awake while read")
	require.Eventually(t, func() bool { return !c.running.Load() }, 5*time.Second, time.Millisecond,
		"ticker stops after 20 ticks without a read")
	time.Sleep(20 * time.Millisecond)
	near() // asleep: a read is time.Now
	time.Sleep(20 * time.Millisecond)
	near() // reads further apart than wakeGap keep it asleep
	assert.False(t, c.running.Load())
}

// TestLatencyHistogram checks the buckets, count and sum the histogram
// reports for one batch, and that events without a receive time are
// skipped.
func TestLatencyHistogram(t *testing.T) {
	var s destStats
	now := time.Now().UnixNano()
	batch := []relaykit.Event{
		{ReceiveTime: now - int64(3*time.Second)},
		{ReceiveTime: now - int64(200*time.Millisecond)},
		{ReceiveTime: now - int64(200*time.Millisecond)},
		{}, // no receive time
	}
	s.observeDelivered(batch)
	s.observeDelivered(nil)
	var m dto.Metric
	require.NoError(t, s.latency.metric(descDestLatency, "hec").Write(&m))
	h := m.GetHistogram()
	assert.Equal(t, uint64(3), h.GetSampleCount())
	assert.InDelta(t, 3.4, h.GetSampleSum(), 0.2)
	cum := map[float64]uint64{}
	for _, b := range h.GetBucket() {
		cum[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	assert.Equal(t, uint64(0), cum[0.1])
	assert.Equal(t, uint64(2), cum[0.25])
	assert.Equal(t, uint64(2), cum[2.5])
	assert.Equal(t, uint64(3), cum[5])
}
