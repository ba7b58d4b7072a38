package udp

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSocket stands in for the UDP socket inside a synctest bubble (whose
// clock advances only when every goroutine waits on something of the
// bubble's, which a real socket is not). Reads return what the test puts
// in reads, honouring the read deadline and Close as net.UDPConn does.
type fakeSocket struct {
	reads chan fakeRead
	// flood makes every read return a datagram after a millisecond: a
	// sender that never stops.
	flood atomic.Bool

	mu       sync.Mutex
	deadline time.Time
	changed  chan struct{} // closed when the deadline changes or the socket closes
	closed   bool
	calls    []time.Time // when each read started
}

type fakeRead struct {
	data string
	err  error
}

func newFakeSocket() *fakeSocket {
	return &fakeSocket{reads: make(chan fakeRead, 1000), changed: make(chan struct{})}
}

func (f *fakeSocket) LocalAddr() net.Addr { return &net.UDPAddr{} }

func (f *fakeSocket) SetReadDeadline(t time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deadline = t
	close(f.changed)
	f.changed = make(chan struct{})
	return nil
}

func (f *fakeSocket) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	close(f.changed)
	f.changed = make(chan struct{})
	return nil
}

func (f *fakeSocket) newReader(int, int) batchReader { return &fakeReader{f: f} }
func (f *fakeSocket) countsDrops() bool              { return false }
func (f *fakeSocket) kernelDrops() (uint32, bool)    { return 0, false }

func (f *fakeSocket) readTimes() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.calls...)
}

type fakeReader struct {
	f   *fakeSocket
	buf [64]byte
}

func (r *fakeReader) read(dgs []Datagram, nonblocking bool) (int, uint32, bool, error) {
	f := r.f
	f.mu.Lock()
	f.calls = append(f.calls, time.Now())
	f.mu.Unlock()
	for {
		f.mu.Lock()
		dl, changed, closed := f.deadline, f.changed, f.closed
		f.mu.Unlock()
		if closed {
			return 0, 0, false, net.ErrClosed
		}
		if !dl.IsZero() && !time.Now().Before(dl) {
			return 0, 0, false, os.ErrDeadlineExceeded
		}
		if f.flood.Load() {
			time.Sleep(time.Millisecond)
			return r.deliver(dgs, fakeRead{data: "flood"})
		}
		if nonblocking {
			select {
			case rd := <-f.reads:
				return r.deliver(dgs, rd)
			default:
				return 0, 0, false, errEmpty
			}
		}
		var timeout <-chan time.Time
		var t *time.Timer
		if !dl.IsZero() {
			t = time.NewTimer(time.Until(dl))
			timeout = t.C
		}
		select {
		case rd := <-f.reads:
			if t != nil {
				t.Stop()
			}
			return r.deliver(dgs, rd)
		case <-changed:
		case <-timeout:
		}
		if t != nil {
			t.Stop()
		}
	}
}

func (r *fakeReader) deliver(dgs []Datagram, rd fakeRead) (int, uint32, bool, error) {
	if rd.err != nil {
		return 0, 0, false, rd.err
	}
	n := copy(r.buf[:], rd.data)
	dgs[0] = Datagram{Data: r.buf[:n]}
	return 1, 0, false, nil
}

// syncLog is a log destination safe for concurrent writes.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fakeListener returns a listener on a fake socket.
func fakeListener(t *testing.T, cfg Config) (*Listener, *fakeSocket) {
	t.Helper()
	cfg.Address, cfg.Handler = "fake", func(int, []Datagram) {}
	require.NoError(t, cfg.fill())
	f := newFakeSocket()
	return newListener(f, cfg, cfg.Logger.With("input", cfg.Name)), f
}

// serveWith runs l.Serve with h in place of the Config's handler.
func serveWith(ctx context.Context, l *Listener, h Handler) error {
	l.cfg.Handler = h
	return l.Serve(ctx)
}

// counter is a handler that keeps the payloads it was given.
type counter struct {
	mu  sync.Mutex
	got []string
}

func (c *counter) handle(_ int, batch []Datagram) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range batch {
		c.got = append(c.got, string(d.Data))
	}
}

func (c *counter) payloads() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.got...)
}

// TestReadErrorBackoff: after each read error in a row the reader waits
// 5 ms, doubling up to 1 s; the episode is logged once when it starts and
// once when a read succeeds, and the next episode starts from 5 ms again.
func TestReadErrorBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log syncLog
		l, f := fakeListener(t, Config{Name: "syslog", Logger: slog.New(slog.NewTextHandler(&log, nil))})
		refused := os.NewSyscallError("recvmmsg", syscall.ECONNREFUSED)
		for range 10 {
			f.reads <- fakeRead{err: refused}
		}
		f.reads <- fakeRead{data: "after"}
		var c counter
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- serveWith(ctx, l, c.handle) }()
		time.Sleep(10 * time.Second) // the backoffs take 3.275 s
		synctest.Wait()

		calls := f.readTimes()
		require.Len(t, calls, 12, "10 errors, the datagram, the read waiting now")
		var gaps []time.Duration
		for i := 1; i < len(calls); i++ {
			gaps = append(gaps, calls[i].Sub(calls[i-1]))
		}
		ms := time.Millisecond
		assert.Equal(t, []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 640 * ms, time.Second, time.Second, 0}, gaps)
		assert.Equal(t, []string{"after"}, c.payloads())
		s := l.Stats()
		assert.Equal(t, int64(10), s.ReadErrors)
		assert.False(t, s.ReadFailing)
		out := log.String()
		assert.Equal(t, 1, strings.Count(out, "UDP read failed"), out)
		assert.Contains(t, out, "connection refused")
		assert.Contains(t, out, "input=syslog")
		assert.Contains(t, out, "read_errors=10")
		assert.Equal(t, 1, strings.Count(out, "UDP reads succeed again"))

		// A second episode starts from the shortest wait.
		f.reads <- fakeRead{err: refused}
		synctest.Wait()
		assert.True(t, l.Stats().ReadFailing)
		before := len(f.readTimes())
		time.Sleep(5 * ms)
		synctest.Wait()
		assert.Len(t, f.readTimes(), before+1, "read again after 5 ms")
		assert.Equal(t, 2, strings.Count(log.String(), "UDP read failed"))

		cancel()
		require.NoError(t, <-done)
	})
}

// TestStopDuringBackoff: the end of Serve's context, or Close, ends a
// backoff at once.
func TestStopDuringBackoff(t *testing.T) {
	for _, viaClose := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			l, f := fakeListener(t, Config{})
			for range 20 { // into the 1 s waits
				f.reads <- fakeRead{err: errors.New("ENOMEM")}
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- serveWith(ctx, l, func(int, []Datagram) {}) }()
			time.Sleep(3 * time.Second)
			synctest.Wait()
			start := time.Now()
			if viaClose {
				require.NoError(t, l.Close())
			} else {
				cancel()
			}
			require.NoError(t, <-done)
			assert.Zero(t, time.Since(start), "no wait for the backoff")
		})
	}
}

// TestDrain: when the context ends, every reader drains what the socket
// holds and Serve returns as soon as it is empty; a sender that never
// stops is read for DrainTime and no longer.
func TestDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, f := fakeListener(t, Config{Readers: 3, DrainTime: 300 * time.Millisecond})
		var c counter
		gate := make(chan struct{})
		var blocked atomic.Bool
		h := func(r int, b []Datagram) {
			if blocked.CompareAndSwap(false, true) {
				<-gate // one reader busy when the context ends
			}
			c.handle(r, b)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- serveWith(ctx, l, h) }()
		f.reads <- fakeRead{data: "busy"}
		synctest.Wait() // the two other readers wait in read
		cancel()
		synctest.Wait() // and stop waiting: they wait for the busy one
		for _, m := range []string{"h1", "h2", "h3"} {
			f.reads <- fakeRead{data: m}
		}
		start := time.Now()
		close(gate)
		require.NoError(t, <-done)
		assert.Zero(t, time.Since(start), "the drain ends when the socket is empty")
		assert.ElementsMatch(t, []string{"busy", "h1", "h2", "h3"}, c.payloads())
	})

	synctest.Test(t, func(t *testing.T) {
		l, f := fakeListener(t, Config{DrainTime: 300 * time.Millisecond})
		var n atomic.Int64
		f.flood.Store(true)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- serveWith(ctx, l, func(_ int, b []Datagram) { n.Add(int64(len(b))) }) }()
		time.Sleep(10 * time.Millisecond)
		cancel()
		start := time.Now()
		require.NoError(t, <-done)
		took := time.Since(start)
		assert.GreaterOrEqual(t, took, 300*time.Millisecond)
		assert.Less(t, took, 302*time.Millisecond, "the drain stops at DrainTime")
		assert.InDelta(t, 310, n.Load(), 3)
		f.mu.Lock()
		assert.True(t, f.closed)
		f.mu.Unlock()
	})
}
