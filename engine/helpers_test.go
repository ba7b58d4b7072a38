package engine_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
)

// recorder is a Sink that keeps a copy of what it is sent (host and raw of
// each event) and can be told to block or fail.
type recorder struct {
	mu      sync.Mutex
	batches [][]string
	events  int
	// before, when set, runs at the start of every Send; an error fails
	// the batch.
	before func(ctx context.Context, batch []relaykit.Event) error
	// sent is signalled (non-blocking) after every Send.
	sent chan struct{}
}

func newRecorder() *recorder { return &recorder{sent: make(chan struct{}, 1)} }

func (r *recorder) Send(ctx context.Context, batch []relaykit.Event) error {
	if r.before != nil {
		if err := r.before(ctx, batch); err != nil {
			return err
		}
	}
	b := make([]string, len(batch))
	for i := range batch {
		b[i] = string(batch[i].Host) + " " + string(batch[i].Raw)
	}
	r.mu.Lock()
	r.batches = append(r.batches, b)
	r.events += len(batch)
	r.mu.Unlock()
	select {
	case r.sent <- struct{}{}:
	default:
	}
	return nil
}

// all returns every event received, in arrival order.
func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, b := range r.batches {
		out = append(out, b...)
	}
	return out
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.events
}

// start runs e until the test ends (Shutdown at cleanup, if not done).
// The channel returned gets Run's error once.
func start(t *testing.T, e *engine.Engine) <-chan error {
	t.Helper()
	done, ended := make(chan error, 1), make(chan struct{})
	go func() {
		done <- e.Run(context.Background())
		close(ended)
	}()
	t.Cleanup(func() {
		_ = e.Shutdown(context.Background())
		<-ended
	})
	return done
}

func newEngine(t *testing.T, cfg engine.Config) *engine.Engine {
	t.Helper()
	e, err := engine.New(cfg)
	require.NoError(t, err)
	return e
}

// ev returns an event with host h and raw message "n".
func ev(h string, n int) relaykit.Event {
	return relaykit.Event{Host: []byte(h), Raw: []byte(strconv.Itoa(n))}
}

var errRefused = errors.New("refused")

// balanced checks the engine's ledger.
func balanced(t *testing.T, s engine.Stats) {
	t.Helper()
	var dropped int64
	for _, n := range s.Dropped {
		dropped += n
	}
	require.Equal(t, s.Received, s.Routed+s.Queued+dropped, "received = routed + queued + dropped: %+v", s)
}
