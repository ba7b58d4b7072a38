package forwardtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
)

// SinkHarness is a Sink under test and a view of its destination, returned
// by the newSink function given to [TestSink].
type SinkHarness struct {
	// Sink is the sink under test.
	Sink relaykit.Sink
	// Received returns the messages ([relaykit.Event.Raw], as the
	// destination stored them) received so far, in arrival order,
	// duplicates included. It may wait (briefly, for asynchronous
	// receivers) until at least want messages arrived; it must not wait
	// forever.
	Received func(want int) []string
}

// TestSink runs a conformance suite against a Sink: it must deliver every
// event of a batch exactly once, accept empty batches, not retain the batch
// after Send returns, honour a cancelled context, be safe for concurrent
// Send calls, and deliver batches larger than one request. newSink is
// called once per subtest and must return a sink talking to a fresh,
// empty destination. Messages are printable ASCII without newlines.
func TestSink(t *testing.T, newSink func(t *testing.T) SinkHarness) {
	t.Helper()
	t.Run("EmptyBatch", func(t *testing.T) {
		h := newSink(t)
		require.NoError(t, h.Sink.Send(t.Context(), nil))
		require.NoError(t, h.Sink.Send(t.Context(), []relaykit.Event{}))
		assert.Empty(t, h.Received(0))
	})
	t.Run("DeliversEveryEventOnce", func(t *testing.T) {
		h := newSink(t)
		batch, want := makeBatch("once", 0, 100, 40)
		require.NoError(t, h.Sink.Send(t.Context(), batch))
		assertSameMessages(t, want, h.Received(len(want)))
	})
	t.Run("DoesNotRetainBatch", func(t *testing.T) {
		h := newSink(t)
		batch, want := makeBatch("retain", 0, 20, 40)
		require.NoError(t, h.Sink.Send(t.Context(), batch))
		for i := range batch {
			for j := range batch[i].Raw {
				batch[i].Raw[j] = 'X'
			}
		}
		batch2, want2 := makeBatch("retain", 20, 20, 40)
		require.NoError(t, h.Sink.Send(t.Context(), batch2))
		assertSameMessages(t, append(want, want2...), h.Received(len(want)+len(want2)))
	})
	t.Run("CancelledContext", func(t *testing.T) {
		h := newSink(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		batch, _ := makeBatch("cancel", 0, 5, 20)
		err := h.Sink.Send(ctx, batch)
		require.Error(t, err)
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Run("ConcurrentSends", func(t *testing.T) {
		h := newSink(t)
		const senders, per = 4, 25
		var wg sync.WaitGroup
		var all []string
		errs := make([]error, senders)
		for g := range senders {
			batch, want := makeBatch(fmt.Sprintf("conc%d", g), 0, per, 40)
			all = append(all, want...)
			wg.Go(func() { errs[g] = h.Sink.Send(t.Context(), batch) })
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		assertSameMessages(t, all, h.Received(len(all)))
	})
	t.Run("LargeBatch", func(t *testing.T) {
		if testing.Short() {
			t.Skip("large batch skipped in -short mode")
		}
		h := newSink(t)
		// 1.5 MB of messages: more than one request of the 1 MiB default.
		batch, want := makeBatch("large", 0, 2500, 600)
		require.NoError(t, h.Sink.Send(t.Context(), batch))
		assertSameMessages(t, want, h.Received(len(want)))
	})
}

// makeBatch returns n events with unique messages of about size bytes.
func makeBatch(tag string, from, n, size int) ([]relaykit.Event, []string) {
	batch := make([]relaykit.Event, n)
	want := make([]string, n)
	for i := range batch {
		msg := fmt.Sprintf("forwardtest %s %06d ", tag, from+i)
		if pad := size - len(msg); pad > 0 {
			msg += strings.Repeat("abcdefghij"[i%10:i%10+1], pad)
		}
		e := &batch[i]
		e.ReceiveTime = 1_700_000_000_000_000_000 + int64(from+i)*1_000_000
		e.Host = []byte("host-1")
		e.Source = []byte("forwardtest")
		e.Raw = []byte(msg)
		e.SetFieldString("seq", fmt.Sprint(from+i))
		want[i] = msg
	}
	return batch, want
}

func assertSameMessages(t *testing.T, want, got []string) {
	t.Helper()
	w, g := slices.Clone(want), slices.Clone(got)
	slices.Sort(w)
	slices.Sort(g)
	if !assert.Equal(t, len(w), len(g), "number of messages received") {
		return
	}
	assert.Equal(t, w, g, "messages received (sorted)")
}
