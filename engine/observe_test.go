package engine_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
)

// observer records what an input shows it.
type observer struct {
	on    atomic.Bool
	asked atomic.Int64
	mu    sync.Mutex
	seen  []relaykit.Event
	calls int
}

func (o *observer) Active() bool { o.asked.Add(1); return o.on.Load() }

func (o *observer) Publish(b []relaykit.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls++
	for i := range b {
		o.seen = append(o.seen, b[i].Clone())
	}
}

// A producer shows each push's events, receive time set, to an active
// observer, once per push; an inactive one is only asked.
func TestInputObserver(t *testing.T) {
	e := newEngine(t, engine.Config{Sink: nop{}, Workers: 1, BatchMaxWait: time.Hour})
	start(t, e)
	in := e.NewInput("tcp")
	obs := &observer{}
	in.Observe(obs)
	p := in.NewProducer(0)
	defer p.Release()
	read := func(msgs ...string) {
		for _, m := range msgs {
			ev := p.Event()
			ev.Reset()
			ev.Raw = append(ev.Raw, m...)
		}
		require.NoError(t, p.Flush(t.Context()))
	}
	read("a", "b")
	assert.Equal(t, int64(1), obs.asked.Load())
	assert.Empty(t, obs.seen)

	obs.on.Store(true)
	read("c", "d")
	ev := p.Event()
	ev.Reset()
	ev.Raw = append(ev.Raw, "e"...)
	p.TryPush()
	require.Len(t, obs.seen, 3)
	assert.Equal(t, 2, obs.calls)
	for i, want := range []string{"c", "d", "e"} {
		assert.Equal(t, want, string(obs.seen[i].Raw))
		assert.NotZero(t, obs.seen[i].ReceiveTime, "stamped before it is shown")
	}
	require.NoError(t, p.Flush(t.Context())) // nothing pending: not asked
	assert.Equal(t, int64(3), obs.asked.Load())
}

// An inactive observer leaves a producer's path allocation-free (as
// TestProducerAllocs, with an observer).
func TestInputObserverAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	e := newEngine(t, engine.Config{Sink: nop{}, Workers: 1, BatchMaxWait: time.Hour})
	start(t, e)
	in := e.NewInput("tcp")
	obs := &observer{}
	in.Observe(obs)
	p := in.NewProducer(0)
	defer p.Release()
	msg := []byte("<13>1 2026-11-27T12:00:00Z host app - - - a message of some length, as syslog sends")
	read := func() {
		for range 100 {
			x := p.Event()
			x.Reset()
			x.Raw = append(x.Raw, msg...)
			if p.Full() {
				require.NoError(t, p.Push(t.Context()))
			}
		}
		require.NoError(t, p.Flush(t.Context()))
	}
	runtime.GC()
	runtime.GC()
	for range 500 {
		read()
	}
	assert.Zero(t, testing.AllocsPerRun(2000, read))
	assert.Positive(t, obs.asked.Load())
}
