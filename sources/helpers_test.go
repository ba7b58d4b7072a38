package sources_test

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/sources"
)

// t0 is the manual clocks' start: 2026-05-01T10:00:00Z.
var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

// manualClock is a clock a test advances by hand.
type manualClock struct{ c *clock.Clock }

func newManualClock() *manualClock { return &manualClock{clock.NewFake(t0)} }

func (m *manualClock) Now() int64                { return m.c.Nano() }
func (m *manualClock) Advance(d time.Duration)   { m.c.Add(d) }
func (m *manualClock) Time() time.Time           { return m.c.Now().UTC() }
func (m *manualClock) Since(t time.Time) float64 { return m.Time().Sub(t).Seconds() }

// recorder collects transitions from the OnTransition hook.
type recorder struct {
	mu  sync.Mutex
	trs []sources.Transition
}

func (r *recorder) hook(tr sources.Transition) {
	r.mu.Lock()
	r.trs = append(r.trs, tr)
	r.mu.Unlock()
}

// take returns the transitions recorded since the last take.
func (r *recorder) take() []sources.Transition {
	r.mu.Lock()
	defer r.mu.Unlock()
	trs := r.trs
	r.trs = nil
	return trs
}

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

// addrN returns the n-th address of 10.0.0.0/8 (n < 2^24).
func addrN(n int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, byte(n >> 16), byte(n >> 8), byte(n)})
}

func newTracker(t *testing.T, cfg sources.Config) *sources.Tracker {
	t.Helper()
	tr, err := sources.New(cfg)
	require.NoError(t, err)
	return tr
}

func source(t *testing.T, tr *sources.Tracker, k sources.Key) sources.Source {
	t.Helper()
	s, ok := tr.Source(k)
	require.True(t, ok, "key %v not tracked", k)
	return s
}

// newRunCtx returns a context for Run that the test cancels (and that is
// canceled at its end).
func newRunCtx(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithCancel(t.Context())
}
