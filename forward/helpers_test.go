package forward_test

import (
	"crypto/tls"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
)

// failures collects what Sends reported undelivered in their
// *relaykit.BatchError, event by event.
type failures struct {
	mu       sync.Mutex
	byReason map[string][]string      // reason -> messages (Event.Raw)
	events   []relaykit.Event         // clones, in report order
	reasons  []string                 // reason of each of events
	runs     []relaykit.FailedRange   // every run reported
	messages []string                 // Err.Error() of each run
	perm     map[string]bool          // message -> reported permanent
	after    map[string][]int64       // message -> RetryAfter (ns) of each report
	batches  [][]relaykit.FailedRange // runs per Send
}

// add records the events of batch that err reports undelivered and returns
// err. A non-nil err that is not (and does not wrap) a BatchError fails the
// test: the sinks report every failure in terms of events.
func (f *failures) add(t testing.TB, batch []relaykit.Event, err error) error {
	t.Helper()
	if err == nil {
		return nil
	}
	var be *relaykit.BatchError
	require.True(t, errors.As(err, &be), "Send's error is not a *relaykit.BatchError: %v", err)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byReason == nil {
		f.byReason, f.perm, f.after = map[string][]string{}, map[string]bool{}, map[string][]int64{}
	}
	last := -1
	for _, r := range be.Failed {
		require.Less(t, last, r.From, "runs ascending, not overlapping")
		require.Less(t, r.From, r.To)
		require.LessOrEqual(t, r.To, len(batch))
		last = r.To - 1
		var se *forward.SendError
		if assert.ErrorAs(t, r.Err, &se, "a run's cause is a *forward.SendError") && r.Reason != relaykit.ReasonShutdown {
			assert.Equal(t, !r.Permanent, se.Retryable, "SendError.Retryable agrees with Permanent")
			assert.Equal(t, r.RetryAfter, se.RetryAfter, "the run's RetryAfter is its SendError's")
		}
		if r.Permanent {
			assert.Zero(t, r.RetryAfter, "no RetryAfter on a permanent run")
		}
		f.runs = append(f.runs, r)
		if r.Err != nil {
			f.messages = append(f.messages, r.Err.Error())
		}
		for i := r.From; i < r.To; i++ {
			m := string(batch[i].Raw)
			f.byReason[r.Reason] = append(f.byReason[r.Reason], m)
			f.events = append(f.events, batch[i].Clone())
			f.reasons = append(f.reasons, r.Reason)
			f.perm[m] = r.Permanent
			f.after[m] = append(f.after[m], int64(r.RetryAfter))
		}
	}
	f.batches = append(f.batches, slices.Clone(be.Failed))
	return err
}

// get returns reason -> messages.
func (f *failures) get() map[string][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string][]string, len(f.byReason))
	for k, v := range f.byReason {
		out[k] = slices.Clone(v)
	}
	return out
}

// count returns the number of events reported.
func (f *failures) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.events)
}

// failureLog is the name the Sentinel and syslog tests use.
type failureLog = failures

// send sends batch through s and records what it reports undelivered.
func (f *failures) send(t testing.TB, s relaykit.Sink, batch []relaykit.Event) error {
	t.Helper()
	return f.add(t, batch, s.Send(t.Context(), batch))
}

// buildTLS returns the *tls.Config c describes.
func buildTLS(t testing.TB, c forward.TLSConfig) *tls.Config {
	t.Helper()
	tc, err := c.Build()
	require.NoError(t, err)
	return tc
}
