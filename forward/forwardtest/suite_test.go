package forwardtest_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward/forwardtest"
)

// memSink is the simplest correct Sink: it copies every message.
type memSink struct {
	mu   sync.Mutex
	msgs []string
}

func (m *memSink) Send(ctx context.Context, batch []relaykit.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range batch {
		m.msgs = append(m.msgs, string(batch[i].Raw))
	}
	return nil
}

func TestTestSinkAcceptsCorrectSink(t *testing.T) {
	forwardtest.TestSink(t, func(*testing.T) forwardtest.SinkHarness {
		s := &memSink{}
		return forwardtest.SinkHarness{Sink: s, Received: func(int) []string {
			s.mu.Lock()
			defer s.mu.Unlock()
			return slices.Clone(s.msgs)
		}}
	})
}
