package stream_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/testtool"

	"github.com/relaykit/relaykit/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// served runs a listener whose handler frames each connection and reports
// its frames and final error; it stops at the end of the test.
type served struct {
	ln     *stream.Listener
	frames chan string
	ends   chan error
	// reading takes the client address of a connection each time its
	// handler is about to ask for a frame (the first 100; later ones are
	// not kept).
	reading chan string
}

func serve(t *testing.T, cfg stream.Config) *served {
	t.Helper()
	s := &served{frames: make(chan string, 100), ends: make(chan error, 100), reading: make(chan string, 100)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ln, err := stream.New(loopback(cfg, func(c *stream.Conn) {
		f := stream.NewFramer(c, stream.FramerConfig{})
		for {
			select {
			case s.reading <- c.RemoteAddr().String():
			default:
			}
			b, _, err := f.Next()
			if err != nil {
				s.ends <- err
				return
			}
			s.frames <- string(b)
		}
	}))
	require.NoError(t, err)
	s.ln = ln
	go func() { done <- ln.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return s
}

// waitReading waits until the handler of the connection that c dialled is
// about to ask for a frame (the first 100 such moments of the listener).
func (s *served) waitReading(t *testing.T, c net.Conn) {
	t.Helper()
	for {
		select {
		case addr := <-s.reading:
			if addr == c.LocalAddr().String() {
				return
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the handler of %s never read", c.LocalAddr())
		}
	}
}

// closedByPeer waits until the listener closes c.
func closedByPeer(t *testing.T, c net.Conn) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err := c.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF)
}

func TestListenerLimits(t *testing.T) {
	s := serve(t, stream.Config{MaxConns: 3, MaxConnsPerSource: 2})
	a1 := testtool.Dial(t, "127.0.0.2", s.ln.Addr())
	a2 := testtool.Dial(t, "127.0.0.2", s.ln.Addr())
	a3 := testtool.Dial(t, "127.0.0.2", s.ln.Addr()) // a third from one source: refused
	closedByPeer(t, a3)
	assert.Equal(t, int64(1), s.ln.Stats().RefusedPerSource)

	// A connection is idle from its handler's latest read: a2's first
	// read, late on a loaded machine, could come after a1 and b1 have
	// sent, and make one of them the longest idle. Wait for it.
	s.waitReading(t, a2)
	b1 := testtool.Dial(t, "127.0.0.3", s.ln.Addr())
	// a1 and b1 send, so a2 is the longest idle when the listener is full.
	for _, c := range []net.Conn{a1, b1} {
		_, err := io.WriteString(c, "<13>x\n")
		require.NoError(t, err)
		<-s.frames
	}
	c1 := testtool.Dial(t, "127.0.0.4", s.ln.Addr())
	closedByPeer(t, a2)
	assert.ErrorIs(t, <-s.ends, stream.ErrEvicted)
	st := s.ln.Stats()
	assert.Equal(t, int64(1), st.Evicted)
	assert.Equal(t, int64(3), st.Open)
	// The newcomer is served.
	_, err := io.WriteString(c1, "<13>newcomer\n")
	require.NoError(t, err)
	assert.Equal(t, "<13>newcomer", <-s.frames)
}

func TestListenerRefuseWhenFull(t *testing.T) {
	s := serve(t, stream.Config{MaxConns: 1, RefuseWhenFull: true})
	a := testtool.Dial(t, "127.0.0.2", s.ln.Addr())
	require.Eventually(t, func() bool { return s.ln.Stats().Open == 1 }, 5*time.Second, time.Millisecond)
	b := testtool.Dial(t, "127.0.0.3", s.ln.Addr())
	closedByPeer(t, b)
	assert.Equal(t, int64(1), s.ln.Stats().RefusedFull)
	_, err := io.WriteString(a, "<13>still served\n")
	require.NoError(t, err)
	assert.Equal(t, "<13>still served", <-s.frames)
}

// A sender trickling a frame is cut at the frame deadline, although its
// reads are far more frequent than the idle timeout; a connection idle
// between frames is cut at the idle timeout. A sender on another
// connection is served meanwhile.
func TestListenerDeadlines(t *testing.T) {
	const frame, idle = 300 * time.Millisecond, 600 * time.Millisecond
	s := serve(t, stream.Config{FrameTimeout: frame, IdleTimeout: idle})

	trickle := testtool.Dial(t, "127.0.0.2", s.ln.Addr())
	start := time.Now()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if _, err := io.WriteString(trickle, "x"); err != nil {
				return
			}
			select {
			case <-time.After(20 * time.Millisecond): // the sender's pace
			case <-t.Context().Done():
				return
			}
			if time.Since(start) > 5*time.Second {
				return
			}
		}
	}()
	good := testtool.Dial(t, "127.0.0.3", s.ln.Addr())
	_, err := io.WriteString(good, "<13>good\n")
	require.NoError(t, err)
	assert.Equal(t, "<13>good", <-s.frames)

	assert.ErrorIs(t, <-s.ends, stream.ErrFrameTimeout)
	assert.GreaterOrEqual(t, time.Since(start), frame, "never cut before the frame deadline")
	wg.Wait()

	assert.ErrorIs(t, <-s.ends, stream.ErrIdleTimeout, "the good connection, idle after its frame")
	st := s.ln.Stats()
	assert.Equal(t, int64(1), st.CutFrameTimeout)
	assert.Equal(t, int64(1), st.CutIdle)
}

func TestListenerHandshakeTimeout(t *testing.T) {
	cert := testtool.SelfSigned(t)
	s := serve(t, stream.Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, HandshakeTimeout: 200 * time.Millisecond})
	// The clock starts before the dial: the listener may accept, and start
	// the handshake deadline, before Dial returns.
	start := time.Now()
	silent := testtool.Dial(t, "127.0.0.2", s.ln.Addr())

	tc, err := tls.Dial("tcp", s.ln.Addr().String(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // self-signed test certificate
	require.NoError(t, err)
	defer tc.Close()
	_, err = io.WriteString(tc, "<13>over tls\n")
	require.NoError(t, err)
	assert.Equal(t, "<13>over tls", <-s.frames)

	closedByPeer(t, silent)
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond)
	require.Eventually(t, func() bool { return s.ln.Stats().CutHandshakeTimeout == 1 }, 5*time.Second, time.Millisecond)
}

// Shutdown hands over the frames already read, ends every read with
// ErrClosed and waits for the handlers.
func TestListenerShutdown(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var got []string
	var end error
	done := make(chan error, 1)
	read := make(chan struct{})
	ln, err := stream.New(loopback(stream.Config{}, func(c *stream.Conn) {
		f := stream.NewFramer(c, stream.FramerConfig{})
		for {
			b, _, err := f.Next()
			if err != nil {
				end = err
				return
			}
			got = append(got, string(b))
			if len(got) == 1 {
				close(read)
			}
		}
	}))
	require.NoError(t, err)
	go func() { done <- ln.Serve(ctx) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	const sent = "<13>a\n<13>b\n<13>partial"
	_, err = io.WriteString(c, sent)
	require.NoError(t, err)
	<-read
	require.Eventually(t, func() bool { return ln.Stats().BytesRead == int64(len(sent)) }, 5*time.Second, time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, []string{"<13>a", "<13>b"}, got)
	assert.ErrorIs(t, end, stream.ErrClosed)
	assert.Zero(t, ln.Stats().Open)
}

// A bad Config is refused by New and by Validate with an error naming the
// field.
func TestListenerInvalidConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg   stream.Config
		field string
	}{
		{stream.Config{Address: "127.0.0.1:0", MaxConns: -1}, "MaxConns"},
		{stream.Config{Address: "127.0.0.1:0", MaxConnsPerSource: -1}, "MaxConnsPerSource"},
		{stream.Config{Address: "127.0.0.1:0", HandshakeTimeout: -1}, "HandshakeTimeout"},
		{stream.Config{Address: "127.0.0.1:0", Network: "udp"}, "Network"},
		{stream.Config{}, "Address"},
		{stream.Config{Address: "127.0.0.1:0", ProxyProtocol: stream.ProxyOptional}, "ProxyAllowed"},
	} {
		t.Run(tc.field, func(t *testing.T) {
			for _, err := range []error{tc.cfg.Validate(), func() error { _, err := stream.New(tc.cfg); return err }()} {
				require.ErrorIs(t, err, stream.ErrInvalidConfig)
				var fe *relaykit.FieldError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, tc.field, fe.Field)
				assert.Contains(t, err.Error(), "stream: invalid config: "+tc.field+": ")
			}
		})
	}
	assert.NoError(t, stream.Config{Address: ":514"}.Validate(), "Validate opens nothing")
}

// Serve needs a Handler; a listener without one serves only through its
// NetListener.
func TestListenerServeWithoutHandler(t *testing.T) {
	ln, err := stream.New(loopback(stream.Config{}, nil))
	require.NoError(t, err)
	defer ln.Close()
	err = ln.Serve(t.Context())
	var fe *relaykit.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "Handler", fe.Field)
}

// A Config.Listener is used instead of opening Address, and the Listener
// owns it.
func TestListenerAdopts(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	frames := make(chan string, 1)
	ln, err := stream.New(stream.Config{Listener: raw, Handler: func(c *stream.Conn) {
		if b, _, err := stream.NewFramer(c, stream.FramerConfig{}).Next(); err == nil {
			frames <- string(b)
		}
	}})
	require.NoError(t, err)
	assert.Equal(t, raw.Addr(), ln.Addr())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- ln.Serve(ctx) }()
	c, err := net.Dial("tcp", raw.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "<13>adopted\n")
	require.NoError(t, err)
	assert.Equal(t, "<13>adopted", <-frames)
	cancel()
	require.NoError(t, <-done)
	_, err = raw.Accept()
	assert.ErrorIs(t, err, net.ErrClosed, "closed with the Listener")
}

// A connection's Context ends when the listener ends its reads (here its
// shutdown) while its handler is busy elsewhere, and not before.
func TestConnContext(t *testing.T) {
	waiting := make(chan context.Context, 1)
	ended := make(chan struct{})
	ln, err := stream.New(loopback(stream.Config{}, func(c *stream.Conn) {
		waiting <- c.Context()
		<-c.Context().Done() // as a paced connection waits
		close(ended)
	}))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- ln.Serve(ctx) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	cctx := <-waiting
	assert.NoError(t, cctx.Err())
	cancel()
	<-ended
	require.NoError(t, <-done)
	assert.ErrorIs(t, cctx.Err(), context.Canceled)
}

// A connection whose handler is busy (here blocked, as under backpressure)
// is not idle: it is never evicted, the newcomer is refused instead.
func TestListenerBusyNotEvicted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	busy, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	ln, err := stream.New(loopback(stream.Config{MaxConns: 1}, func(c *stream.Conn) {
		f := stream.NewFramer(c, stream.FramerConfig{})
		if _, _, err := f.Next(); err == nil {
			close(busy)
			<-release
		}
	}))
	require.NoError(t, err)
	go func() { done <- ln.Serve(ctx) }()
	a := testtool.Dial(t, "127.0.0.2", ln.Addr())
	_, err = io.WriteString(a, "<13>x\n")
	require.NoError(t, err)
	<-busy
	b := testtool.Dial(t, "127.0.0.3", ln.Addr())
	closedByPeer(t, b)
	st := ln.Stats()
	assert.Equal(t, int64(1), st.RefusedFull)
	assert.Zero(t, st.Evicted)
	close(release)
	cancel()
	require.NoError(t, <-done)
}
