package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Take runs the consumer's handling of one fetched partition (decode,
// dead-letter, push, mark) without a broker, for benchmarks.
func (c *Consumer) Take(ctx context.Context, p kgo.FetchTopicPartition) error { return c.take(ctx, p) }

// Settle moves every partition's finished marks to ready, as a commit
// does before its request.
func (c *Consumer) Settle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for tp, st := range c.parts {
		c.advance(tp, st)
	}
}
