package engine_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/pipeline"
)

// rawSink records the raw messages and suppressed_count of what it gets.
type rawSink struct {
	mu  sync.Mutex
	got []string
}

func (s *rawSink) Send(_ context.Context, batch []relaykit.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range batch {
		n, _ := batch[i].Field("suppressed_count")
		s.got = append(s.got, string(batch[i].Raw)+"|"+string(n))
	}
	return nil
}

func (s *rawSink) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// TestEngineEndsWindows: an engine whose Sink is a router with a suppress
// step ends the step's windows on its own ticker, so a quiet key's
// summary arrives when its window ends without the importer running a
// ticker; at shutdown, the windows still open end and their summaries
// are sent before Run returns.
func TestEngineEndsWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &rawSink{}
		sup, err := pipeline.NewSuppress(pipeline.SuppressConfig{Window: 10 * time.Second})
		require.NoError(t, err)
		router, err := pipeline.NewRouter([]pipeline.Route{
			{Name: "all", Final: true, Pipeline: pipeline.NewPipeline(sup), Sinks: []relaykit.Sink{sink}},
		}, pipeline.Config{})
		require.NoError(t, err)
		e := newEngine(t, engine.Config{Sink: router, Workers: 1, Clock: clock.New(time.Millisecond)})
		done := make(chan error, 1)
		go func() { done <- e.Run(context.Background()) }()
		in := e.NewInput("test")

		// Start at a window's beginning: windows align to the epoch.
		time.Sleep(time.Until(time.Now().Truncate(10 * time.Second).Add(10 * time.Second)))
		for range 5 {
			require.NoError(t, in.PushWait(t.Context(), 0, []relaykit.Event{{Host: []byte("h"), Raw: []byte("repeat")}}))
		}
		assert.Equal(t, []string{"repeat|"}, sink.all(), "the first passes, four are absorbed")
		time.Sleep(10*time.Second + time.Second) // the window's end, and one tick
		synctest.Wait()
		assert.Equal(t, []string{"repeat|", "repeat|4"}, sink.all(), "the summary left at the window's end")

		// A window still open at shutdown ends then.
		for range 3 {
			require.NoError(t, in.PushWait(t.Context(), 0, []relaykit.Event{{Host: []byte("h"), Raw: []byte("again")}}))
		}
		require.NoError(t, e.Shutdown(t.Context()))
		require.NoError(t, <-done)
		assert.Equal(t, []string{"repeat|", "repeat|4", "again|", "again|2"}, sink.all())
	})
}

// TestEngineWindowTickOff: a negative WindowTick leaves the windows to the
// caller.
func TestEngineWindowTickOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &rawSink{}
		sup, err := pipeline.NewSuppress(pipeline.SuppressConfig{Window: 10 * time.Second})
		require.NoError(t, err)
		router, err := pipeline.NewRouter([]pipeline.Route{
			{Name: "all", Final: true, Pipeline: pipeline.NewPipeline(sup), Sinks: []relaykit.Sink{sink}},
		}, pipeline.Config{})
		require.NoError(t, err)
		e := newEngine(t, engine.Config{Sink: router, Workers: 1, Clock: clock.New(time.Millisecond), WindowTick: -1})
		done := make(chan error, 1)
		go func() { done <- e.Run(context.Background()) }()
		in := e.NewInput("test")
		for range 3 {
			require.NoError(t, in.PushWait(t.Context(), 0, []relaykit.Event{{Host: []byte("h"), Raw: []byte("x")}}))
		}
		time.Sleep(time.Minute)
		require.NoError(t, e.Shutdown(t.Context()))
		require.NoError(t, <-done)
		assert.Equal(t, []string{"x|"}, sink.all(), "no summary: the caller ends windows")
		assert.NoError(t, router.Flush(context.Background(), pipeline.FlushAll))
		assert.Equal(t, []string{"x|", "x|2"}, sink.all())
	})
}
