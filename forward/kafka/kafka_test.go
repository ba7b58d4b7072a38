package kafka_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/kafka"
)

func TestNewInvalidConfig(t *testing.T) {
	ok := kafka.Config{Brokers: []string{"127.0.0.1:9092"}, Topic: "logs"}
	tests := []struct {
		name string
		mod  func(c *kafka.Config)
		want string
	}{
		{"no brokers", func(c *kafka.Config) { c.Brokers = nil }, "Brokers: at least one broker is required"},
		{"bad broker", func(c *kafka.Config) { c.Brokers = []string{"localhost"} }, "not host:port"},
		{"no topic", func(c *kafka.Config) { c.Topic = "" }, "Topic: required (or TopicField)"},
		{"bad topic", func(c *kafka.Config) { c.Topic = "a b" }, "invalid topic"},
		{"key field", func(c *kafka.Config) { c.Key = kafka.KeyField }, "KeyField: required"},
		{"acks", func(c *kafka.Config) { c.Acks = kafka.AcksLeader }, "needs DisableIdempotence"},
		{"compression", func(c *kafka.Config) { c.Compression = 99 }, "Compression: unknown compression"},
		{"encoding", func(c *kafka.Config) { c.Encoding = 9 }, "Encoding: unknown encoding"},
		{"negative", func(c *kafka.Config) { c.MaxRecordBytes = -1 }, "must not be negative"},
		{"sasl", func(c *kafka.Config) { c.SASL = kafka.SASLConfig{Mechanism: "GSSAPI", User: "u"} }, "unknown SASL mechanism"},
		{"sasl user", func(c *kafka.Config) { c.SASL = kafka.SASLConfig{Mechanism: kafka.SASLScramSHA256, Password: "p"} }, "needs a user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.mod(&cfg)
			s, err := kafka.New(cfg)
			require.Error(t, err)
			assert.Nil(t, s)
			assert.ErrorIs(t, err, forward.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	s, err := kafka.New(ok)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close is idempotent")
}

// TestSendWithoutBroker covers what never reaches a broker: empty batches,
// an ended context, and events over MaxRecordBytes or without a topic.
// The broker address is a closed port; nothing is produced.
func TestSendWithoutBroker(t *testing.T) {
	s, err := kafka.New(kafka.Config{Brokers: []string{"127.0.0.1:1"}, TopicField: "topic", MaxRecordBytes: 64})
	require.NoError(t, err)
	defer s.Close()

	require.NoError(t, s.Send(t.Context(), nil))
	evs := make([]relaykit.Event, 3)
	evs[0].Raw = make([]byte, 100)
	evs[0].SetFieldString("topic", "logs")
	evs[1].Raw = []byte("no topic")
	evs[2].Raw = []byte("bad topic")
	evs[2].SetFieldString("topic", "../etc")
	err = s.Send(t.Context(), evs)
	var be *relaykit.BatchError
	require.ErrorAs(t, err, &be)
	require.Len(t, be.Failed, 2)
	assert.Equal(t, relaykit.FailedRange{From: 0, To: 1, Permanent: true, Reason: relaykit.ReasonTooLarge, Err: be.Failed[0].Err}, be.Failed[0])
	assert.Equal(t, relaykit.FailedRange{From: 1, To: 3, Permanent: true, Reason: relaykit.ReasonRejected, Err: be.Failed[1].Err}, be.Failed[1])

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = s.Send(ctx, evs[:1])
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorAs(t, err, &be)
	assert.Equal(t, []relaykit.FailedRange{{From: 0, To: 1, Reason: relaykit.ReasonShutdown, Err: be.Failed[0].Err}}, be.Failed,
		"retryable: the context ended, the destination refused nothing")
	assert.Equal(t, kafka.Stats{EventsFailed: 4, TooLarge: 1, Batches: 2}, s.Stats())
}

func TestAppendJSONNoAlloc(t *testing.T) {
	e := relaykit.Event{Time: 1_700_000_000_123_456_789, Host: []byte("h"), Raw: []byte("m \"q\"")}
	e.SetFieldString("k", "v")
	buf := make([]byte, 0, 512)
	allocs := testing.AllocsPerRun(100, func() { buf = kafka.AppendJSON(buf[:0], &e) })
	assert.Equal(t, `{"time":"2023-11-14T22:13:20.123456789Z","host":"h","message":"m \"q\"","fields":{"k":"v"}}`, string(buf))
	if !raceEnabled {
		assert.Zero(t, allocs)
	}
}

// A Sink reuses its per-call buffers across batches of any size: the
// record, value and header buffers grow together even where the allocator
// rounds their capacities differently (a batch of 460 events after one of
// 453 once ran past the value buffer). Events without a topic fail before
// producing, so no broker is needed.
func TestSendBatchSizes(t *testing.T) {
	s, err := kafka.New(kafka.Config{Brokers: []string{"127.0.0.1:1"}, TopicField: "topic"})
	require.NoError(t, err)
	defer s.Close()
	evs := make([]relaykit.Event, 2048)
	for i := range evs {
		evs[i].Raw = []byte("no topic")
	}
	failed := int64(0)
	for n := 1; n <= len(evs); n += 1 + n/16 {
		err := s.Send(t.Context(), evs[:n])
		var be *relaykit.BatchError
		require.ErrorAs(t, err, &be, "batch of %d", n)
		require.Equal(t, []relaykit.FailedRange{{From: 0, To: n, Permanent: true, Reason: relaykit.ReasonRejected, Err: be.Failed[0].Err}}, be.Failed)
		failed += int64(n)
	}
	assert.Equal(t, failed, s.Stats().EventsFailed)
}
