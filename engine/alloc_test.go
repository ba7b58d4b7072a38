package engine_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
)

// nop is a Sink that does nothing.
type nop struct{}

func (nop) Send(context.Context, []relaykit.Event) error { return nil }

// Once warm, moving an event from a producer to the Sink allocates
// nothing: the events' buffers come back from routed batches (a read of
// 100 frames per run, here, with batches of 1000 routed inline). The
// recycling goes through sync.Pool, so the claim is an average: now and
// then a slab of events is new (a pool's per-processor slot holds one, and
// a collection empties the pools).
func TestProducerAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	e := newEngine(t, engine.Config{Sink: nop{}, Workers: 1, BatchMaxWait: time.Hour})
	start(t, e)
	in := e.NewInput("tcp")
	p := in.NewProducer(0)
	defer p.Release()
	msg := []byte("<13>1 2026-11-27T12:00:00Z host app - - - a message of some length, as syslog sends")
	read := func() {
		for range 100 {
			x := p.Event()
			x.Reset()
			x.Host = append(x.Host, "10.0.0.1"...)
			x.Raw = append(x.Raw, msg...)
			if p.Full() {
				require.NoError(t, p.Push(t.Context()))
			}
		}
		require.NoError(t, p.Flush(t.Context()))
	}
	// A collection empties the pools (sync.Pool): have the garbage of
	// earlier tests collected now, not while counting.
	runtime.GC()
	runtime.GC()
	for range 500 { // until the pools hold what a batch's round trip needs
		read()
	}
	// Averaged over 200,000 events: a slab (256 events) stranded in another
	// processor's private pool slot costs a new one now and then.
	assert.Zero(t, testing.AllocsPerRun(2000, read))
}
