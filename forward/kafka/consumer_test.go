package kafka_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/kafka"
)

func push(context.Context, uint64, []relaykit.Event) (kafka.Ack, error) { return nil, nil }

func TestNewConsumerInvalidConfig(t *testing.T) {
	ok := kafka.ConsumerConfig{Brokers: []string{"127.0.0.1:9092"}, Topics: []string{"logs"}, Group: "siem", Push: push}
	tests := []struct {
		name string
		mod  func(c *kafka.ConsumerConfig)
		want string
	}{
		{"no brokers", func(c *kafka.ConsumerConfig) { c.Brokers = nil }, "Brokers: at least one broker is required"},
		{"bad broker", func(c *kafka.ConsumerConfig) { c.Brokers = []string{"localhost"} }, "not host:port"},
		{"no topics", func(c *kafka.ConsumerConfig) { c.Topics = nil }, "Topics: at least one topic is required"},
		{"bad topic", func(c *kafka.ConsumerConfig) { c.Topics = []string{"logs", "a b"} }, `invalid topic "a b"`},
		{"no group", func(c *kafka.ConsumerConfig) { c.Group = "" }, "Group: required"},
		{"no push", func(c *kafka.ConsumerConfig) { c.Push = nil }, "Push: required"},
		{"encoding", func(c *kafka.ConsumerConfig) { c.Encoding = 7 }, "Encoding: unknown encoding"},
		{"negative", func(c *kafka.ConsumerConfig) { c.RevokeTimeout = -1 }, "must not be negative"},
		{"sasl", func(c *kafka.ConsumerConfig) { c.SASL = kafka.SASLConfig{Mechanism: "GSSAPI", User: "u"} }, "unknown SASL mechanism"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.mod(&cfg)
			c, err := kafka.NewConsumer(cfg)
			require.Error(t, err)
			assert.Nil(t, c)
			assert.ErrorIs(t, err, forward.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestConsumerLifetime covers what needs no broker (the address is a
// closed port): Serve ends with its context or Shutdown, runs once, and
// Close is idempotent, before and after Serve.
func TestConsumerLifetime(t *testing.T) {
	cfg := kafka.ConsumerConfig{Brokers: []string{"127.0.0.1:1"}, Topics: []string{"logs"}, Group: "siem", Push: push}

	c, err := kafka.NewConsumer(cfg)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "Close is idempotent")
	assert.ErrorIs(t, c.Serve(t.Context()), kafka.ErrClosed, "a closed consumer does not run")

	c, err = kafka.NewConsumer(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Serve(ctx) }()
	require.NoError(t, c.Commit(t.Context()), "nothing to commit")
	cancel()
	require.NoError(t, <-done)
	assert.ErrorIs(t, c.Serve(t.Context()), kafka.ErrClosed, "a consumer runs once")
	require.NoError(t, c.Close())
	assert.Equal(t, kafka.ConsumerStats{}, c.Stats())

	// Shutdown while Serve polls: Serve leaves the group and returns nil,
	// and so does Shutdown; before Serve, Serve then returns ErrClosed.
	c, err = kafka.NewConsumer(cfg)
	require.NoError(t, err)
	go func() { done <- c.Serve(context.Background()) }()
	require.NoError(t, c.Shutdown(t.Context()))
	if err := <-done; !errors.Is(err, kafka.ErrClosed) {
		require.NoError(t, err)
	}
	require.NoError(t, c.Shutdown(t.Context()), "Shutdown is idempotent")
	c, err = kafka.NewConsumer(cfg)
	require.NoError(t, err)
	require.NoError(t, c.Shutdown(t.Context()))
	assert.ErrorIs(t, c.Serve(t.Context()), kafka.ErrClosed)

	// Close while Serve polls (or before it began): Serve returns.
	c, err = kafka.NewConsumer(cfg)
	require.NoError(t, err)
	go func() { done <- c.Serve(t.Context()) }()
	require.NoError(t, c.Close())
	if err := <-done; !errors.Is(err, kafka.ErrClosed) {
		require.NoError(t, err)
	}
}

func TestDecodeJSON(t *testing.T) {
	e := relaykit.Event{Time: 1_795_420_800_123_456_789, Host: []byte("fw-1"), Raw: []byte("bad \xff byte")}
	e.SetPriority(4, 6)
	e.SetFieldString("src_ip", "192.0.2.7")
	var p fastjson.Parser
	var got relaykit.Event
	require.NoError(t, kafka.DecodeJSON(&p, kafka.AppendJSON(nil, &e), &got))
	assert.Equal(t, e, got)
	require.Error(t, kafka.DecodeJSON(&p, []byte("not json"), &got))
}
