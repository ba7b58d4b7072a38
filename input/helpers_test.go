package input_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/udp"
)

// recorder is a Sink that keeps a copy of every event it accepts, and can
// be told to refuse.
type recorder struct {
	mu     sync.Mutex
	events []relaykit.Event
	refuse atomic.Bool
}

var errRefused = errors.New("refused")

func (r *recorder) Send(_ context.Context, batch []relaykit.Event) error {
	if r.refuse.Load() {
		return errRefused
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range batch {
		r.events = append(r.events, batch[i].Clone())
	}
	return nil
}

func (r *recorder) all() []relaykit.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]relaykit.Event(nil), r.events...)
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// raws returns the messages of evs, in order.
func raws(evs []relaykit.Event) []string {
	out := make([]string, len(evs))
	for i := range evs {
		out[i] = string(evs[i].Raw)
	}
	return out
}

// running is an engine running until the test ends (or stop is called):
// Shutdown then routes what it holds.
type running struct {
	eng  *engine.Engine
	rec  *recorder
	done chan error
	once sync.Once
	err  error
}

func runEngine(t *testing.T) *running {
	t.Helper()
	rec := &recorder{}
	eng, err := engine.New(engine.Config{Sink: rec, Workers: 2, BatchMaxEvents: 100, BatchMaxWait: 5 * time.Millisecond})
	require.NoError(t, err)
	r := &running{eng: eng, rec: rec, done: make(chan error, 1)}
	go func() { r.done <- eng.Run(context.Background()) }()
	t.Cleanup(r.stop)
	return r
}

// stop shuts the engine down and waits for Run; it returns Shutdown's
// error.
func (r *running) stop() {
	r.once.Do(func() {
		r.err = r.eng.Shutdown(context.Background())
		<-r.done
	})
}

// wait waits until the sink holds n events.
func (r *running) wait(t *testing.T, n int) []relaykit.Event {
	t.Helper()
	require.Eventually(t, func() bool { return r.rec.len() >= n }, 10*time.Second, time.Millisecond, "want %d events, have %d", n, r.rec.len())
	return r.rec.all()
}

// serveStream serves h on a loopback stream listener until the returned
// stop is called (or the test ends); stop returns Serve's error.
func serveStream(t *testing.T, cfg stream.Config, h stream.Handler) (*stream.Listener, func() error) {
	t.Helper()
	cfg.Address, cfg.Handler = "127.0.0.1:0", h
	ln, err := stream.New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ln.Serve(ctx) }()
	var once sync.Once
	var serr error
	stop := func() error {
		once.Do(func() { cancel(); serr = <-done })
		return serr
	}
	t.Cleanup(func() { _ = stop() })
	return ln, stop
}

// serveUDP serves h on a loopback UDP listener until stop.
func serveUDP(t *testing.T, cfg udp.Config, h udp.Handler) (*udp.Listener, func() error) {
	t.Helper()
	cfg.Address, cfg.Handler = "127.0.0.1:0", h
	ln, err := udp.New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ln.Serve(ctx) }()
	var once sync.Once
	var serr error
	stop := func() error {
		once.Do(func() { cancel(); serr = <-done })
		return serr
	}
	t.Cleanup(func() { _ = stop() })
	return ln, stop
}

// dial connects to addr, closed at the end of the test.
func dial(t *testing.T, network string, addr net.Addr) net.Conn {
	t.Helper()
	c, err := net.Dial(network, addr.String())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}
