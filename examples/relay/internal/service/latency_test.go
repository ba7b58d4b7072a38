package service

import (
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/ledger"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
)

// TestLatencyHistogram checks the buckets, count and sum the histogram
// reports for one batch, and that events without a receive time are
// skipped.
func TestLatencyHistogram(t *testing.T) {
	var s ledger.DestStats
	now := time.Now().UnixNano()
	batch := []relaykit.Event{
		{ReceiveTime: now - int64(3*time.Second)},
		{ReceiveTime: now - int64(200*time.Millisecond)},
		{ReceiveTime: now - int64(200*time.Millisecond)},
		{}, // no receive time
	}
	s.ObserveDelivered(batch)
	s.ObserveDelivered(nil)
	var m dto.Metric
	require.NoError(t, s.Latency.Metric(ledger.DescDestLatency, "hec").Write(&m))
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
