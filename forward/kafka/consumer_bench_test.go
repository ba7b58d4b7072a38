package kafka_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward/kafka"
)

// fetched returns one partition's fetch of n records, JSON values of
// syslog-like events.
func fetched(n int) kgo.FetchTopicPartition {
	p := kgo.FetchTopicPartition{Topic: "syslog", FetchPartition: kgo.FetchPartition{Partition: 3, HighWatermark: int64(n)}}
	for i := range n {
		e := relaykit.Event{Time: 1_795_420_800_000_000_000 + int64(i), Host: []byte("fw-1.example.com"), Source: []byte("sshd"),
			SourceType: []byte("syslog"), Raw: fmt.Appendf(nil, "Accepted password for root from 192.0.2.7 port %d ssh2", i)}
		e.SetPriority(4, 6)
		e.SetFieldString("procid", "4242")
		e.SetFieldString("msgid", "LOGIN")
		p.Records = append(p.Records, &kgo.Record{Topic: "syslog", Partition: 3, Offset: int64(i), Value: kafka.AppendJSON(nil, &e)})
	}
	return p
}

// countingPush is a Push that counts the events it is given and returns
// a finished Ack.
type countingPush struct{ events int }

func (c *countingPush) push(_ context.Context, _ uint64, evs []relaykit.Event) (kafka.Ack, error) {
	c.events += len(evs)
	return nil, nil
}

func newBenchConsumer(t testing.TB, push kafka.PushFunc) *kafka.Consumer {
	c, err := kafka.NewConsumer(kafka.ConsumerConfig{Brokers: []string{"127.0.0.1:1"}, Topics: []string{"syslog"}, Group: "g", Push: push})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestConsumerTakeNoAlloc: once warm, decoding and pushing a partition's
// records allocates nothing per record (the Push here returns a nil Ack;
// an engine's Mark costs one allocation per Push of up to 256 events).
func TestConsumerTakeNoAlloc(t *testing.T) {
	var cp countingPush
	c := newBenchConsumer(t, cp.push)
	p := fetched(1000)
	require.NoError(t, c.Take(t.Context(), p))
	c.Settle() // as a commit does: the list of marks is reused
	// AllocsPerRun counts the whole process's allocations, and the
	// client's own goroutines (dialling the unreachable broker) allocate
	// now and then: the least of three measurements is Take's.
	allocs := math.Inf(1)
	for range 3 {
		allocs = min(allocs, testing.AllocsPerRun(20, func() {
			if err := c.Take(context.Background(), p); err != nil {
				panic(err)
			}
			c.Settle()
		}))
	}
	assert.Equal(t, 64*1000, cp.events, "one Take before, and three times one warm-up and 20 runs")
	assert.Equal(t, int64(64*1000), c.Stats().Records)
	if !raceEnabled {
		assert.Zero(t, allocs)
	}
}

// BenchmarkConsumerTake: one op is one record decoded and pushed.
func BenchmarkConsumerTake(b *testing.B) {
	var cp countingPush
	c := newBenchConsumer(b, cp.push)
	p := fetched(1000)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n%1000 == 0 {
			if err := c.Take(context.Background(), p); err != nil {
				b.Fatal(err)
			}
		}
		if n%1000 == 999 {
			c.Settle()
		}
		n++
	}
}
