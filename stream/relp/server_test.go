package relp_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaykit/relaykit/internal/testtool"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/relp"
)

// relpSink records the messages the RELP handler accepted; fail makes it
// refuse, block makes it wait for the test.
type relpSink struct {
	mu      sync.Mutex
	msgs    []string
	batches []int
	fail    error
	block   chan struct{}
	entered chan struct{}
}

func (k *relpSink) handle(ctx context.Context, _ *stream.Conn, batch []relp.Message) error {
	if k.entered != nil {
		k.entered <- struct{}{}
	}
	if k.block != nil {
		select {
		case <-k.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.fail != nil {
		return k.fail
	}
	for _, m := range batch {
		k.msgs = append(k.msgs, string(m.Data))
	}
	k.batches = append(k.batches, len(batch))
	return nil
}

func (k *relpSink) got() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.msgs...)
}

type relpServed struct {
	ln   *stream.Listener
	srv  *relp.Server
	sink *relpSink
	addr string
}

func serveRELP(t *testing.T, lcfg stream.Config, cfg relp.Config, sink *relpSink) *relpServed {
	t.Helper()
	cfg.Handler = sink.handle
	srv, err := relp.New(cfg)
	require.NoError(t, err)
	lcfg.Address, lcfg.Handler = "127.0.0.1:0", srv.ServeConn
	ln, err := stream.New(lcfg)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- ln.Serve(context.Background()) }()
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		require.NoError(t, ln.Close())
		require.NoError(t, <-done)
	})
	return &relpServed{ln: ln, srv: srv, sink: sink, addr: ln.Addr().String()}
}

// relpClient is a minimal RELP client speaking raw frames.
type relpClient struct {
	t    *testing.T
	c    net.Conn
	r    *bufio.Reader
	txnr int
	sent int // bytes written
}

func dialRELP(t *testing.T, addr string, tc *tls.Config) *relpClient {
	t.Helper()
	var c net.Conn
	var err error
	if tc != nil {
		c, err = tls.Dial("tcp", addr, tc)
	} else {
		c, err = net.Dial("tcp", addr)
	}
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return &relpClient{t: t, c: c, r: bufio.NewReader(c), txnr: 1}
}

func (rc *relpClient) raw(s string) {
	rc.t.Helper()
	n, err := io.WriteString(rc.c, s)
	rc.sent += n
	require.NoError(rc.t, err)
}

func (rc *relpClient) send(cmd, data string) int {
	rc.t.Helper()
	t := rc.txnr
	rc.txnr++
	if data == "" {
		rc.raw(fmt.Sprintf("%d %s 0\n", t, cmd))
	} else {
		rc.raw(fmt.Sprintf("%d %s %d %s\n", t, cmd, len(data), data))
	}
	return t
}

// read reads one frame from the server: txnr, command, data.
func (rc *relpClient) read() (int, string, string, error) {
	_ = rc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var txnr, n int
	var cmd string
	if _, err := fmt.Fscanf(rc.r, "%d %s %d", &txnr, &cmd, &n); err != nil {
		return 0, "", "", err
	}
	data := ""
	if n > 0 {
		b := make([]byte, n+1)
		if _, err := io.ReadFull(rc.r, b); err != nil {
			return 0, "", "", err
		}
		data = string(b[1:])
	}
	lf, err := rc.r.ReadByte()
	if err == nil && lf != '\n' {
		err = fmt.Errorf("trailer %q", lf)
	}
	return txnr, cmd, data, err
}

func (rc *relpClient) open() {
	rc.t.Helper()
	rc.send("open", "relp_version=0\nrelp_software=test,1,x\ncommands=syslog")
	txnr, cmd, data, err := rc.read()
	require.NoError(rc.t, err)
	require.Equal(rc.t, 1, txnr)
	require.Equal(rc.t, "rsp", cmd)
	require.True(rc.t, strings.HasPrefix(data, "200 OK\n"), data)
	require.Contains(rc.t, data, "relp_version=0")
	require.Contains(rc.t, data, "commands=syslog")
}

// closedByServer reads until the connection ends and returns the frames
// read on the way.
func (rc *relpClient) closedByServer() []string {
	rc.t.Helper()
	var frames []string
	for {
		txnr, cmd, data, err := rc.read()
		if err != nil {
			var ne net.Error
			require.False(rc.t, errors.As(err, &ne) && ne.Timeout(), "the server did not close the connection")
			return frames
		}
		frames = append(frames, fmt.Sprintf("%d %s %s", txnr, cmd, data))
	}
}

// A session pipelines syslog frames: each is answered 200 OK, in order,
// after the handler accepted it; close is answered; every byte is
// accounted for.
func TestRELPSession(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", useTLS), func(t *testing.T) {
			var lcfg stream.Config
			var tc *tls.Config
			if useTLS {
				lcfg.TLS = &tls.Config{Certificates: []tls.Certificate{testtool.SelfSigned(t)}, MinVersion: tls.VersionTLS12}
				tc = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // self-signed test certificate
			}
			s := serveRELP(t, lcfg, relp.Config{Window: 16}, &relpSink{})
			rc := dialRELP(t, s.addr, tc)
			rc.open()
			const n = 100
			var want []string
			for i := range n {
				msg := fmt.Sprintf("<13>1 - host app - - - message %d", i)
				want = append(want, msg)
				rc.send("syslog", msg)
			}
			rc.send("syslog", "") // an empty message is a frame too
			want = append(want, "")
			for i := range n + 1 {
				txnr, cmd, data, err := rc.read()
				require.NoError(t, err)
				assert.Equal(t, i+2, txnr)
				assert.Equal(t, "rsp", cmd)
				assert.Equal(t, "200 OK", data)
			}
			closeTxnr := rc.send("close", "")
			txnr, cmd, data, err := rc.read()
			require.NoError(t, err)
			assert.Equal(t, closeTxnr, txnr)
			assert.Equal(t, "rsp 200 OK", cmd+" "+data)
			rc.closedByServer()
			assert.Equal(t, want, s.sink.got())
			for _, b := range s.sink.batches {
				assert.LessOrEqual(t, b, 16, "window")
			}
			require.Eventually(t, func() bool { return s.srv.Stats().Open == 0 }, 5*time.Second, time.Millisecond)
			st := s.srv.Stats()
			assert.Equal(t, int64(n+1), st.Frames)
			assert.Equal(t, int64(n+1), st.Acked)
			assert.Equal(t, int64(rc.sent), st.MessageBytes+st.OverheadBytes+st.DiscardedBytes+st.IncompleteBytes)
			assert.Zero(t, st.DiscardedBytes+st.IncompleteBytes)
		})
	}
}

// Bad peers each cost only their own session, with a clear error and a
// counter, while a good session is served meanwhile.
func TestRELPBadPeers(t *testing.T) {
	var mu sync.Mutex
	ends := map[netip.Addr]error{}
	endc := make(chan struct{}, 16)
	sink := &relpSink{}
	s := serveRELP(t, stream.Config{FrameTimeout: 300 * time.Millisecond, IdleTimeout: time.Minute},
		relp.Config{MaxDataBytes: 1024, Hooks: relp.Hooks{
			OnSessionEnd: func(src netip.Addr, _ int64, err error) {
				mu.Lock()
				ends[src] = err
				mu.Unlock()
				endc <- struct{}{}
			},
		}}, sink)
	const openFrame = "1 open 30 relp_version=0\ncommands=syslog\n"
	for i, tc := range []struct {
		name string
		send string
		want error
	}{
		{"short length", openFrame + "2 syslog 3 hello\n", relp.ErrProtocol},
		{"long length", openFrame + "2 syslog 40 hello\n3 syslog 5 world\n", stream.ErrFrameTimeout},
		{"bad command", openFrame + "2 frobnicate 0\n", relp.ErrProtocol},
		{"rsp from a client", openFrame + "2 rsp 6 200 OK\n", relp.ErrProtocol},
		{"too large", openFrame + "2 syslog 5000 x", relp.ErrTooLarge},
		{"never completes", openFrame + "2 syslog 10 abc", stream.ErrFrameTimeout},
		{"syslog before open", "1 syslog 5 hello\n", relp.ErrProtocol},
		{"txnr out of sequence", openFrame + "7 syslog 5 hello\n", relp.ErrProtocol},
		{"not RELP", "GET / HTTP/1.1\r\n\r\n", relp.ErrProtocol},
		{"no syslog offered", "1 open 14 relp_version=0\n", relp.ErrProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := fmt.Sprintf("127.0.0.%d", 10+i)
			c := testtool.Dial(t, src, s.ln.Addr())
			good := dialRELP(t, s.addr, nil)
			good.open()
			_, err := io.WriteString(c, tc.send)
			require.NoError(t, err)
			// The good session is served while the bad one is cut.
			good.send("syslog", "good "+tc.name)
			_, cmd, data, err := good.read()
			require.NoError(t, err)
			assert.Equal(t, "rsp 200 OK", cmd+" "+data)
			rc := &relpClient{t: t, c: c, r: bufio.NewReader(c)}
			frames := rc.closedByServer()
			for _, f := range frames {
				assert.NotRegexp(t, `^([2-9]|\d\d+) rsp 200`, f, "nothing but the open of the bad session is acknowledged")
			}
			for {
				<-endc
				mu.Lock()
				err, ok := ends[netip.MustParseAddr(src)]
				mu.Unlock()
				if ok {
					assert.ErrorIs(t, err, tc.want)
					break
				}
			}
		})
	}
	require.Eventually(t, func() bool { return s.srv.Stats().Open == 0 }, 5*time.Second, time.Millisecond)
	st := s.srv.Stats()
	assert.Equal(t, s.ln.Stats().BytesRead, st.MessageBytes+st.OverheadBytes+st.DiscardedBytes+st.IncompleteBytes,
		"every byte read is accounted for")
	assert.Equal(t, int64(7), st.ProtocolErrors)
	assert.Equal(t, int64(1), st.TooLarge)
	assert.Equal(t, int64(2), st.IncompleteFrames)
	assert.Equal(t, int64(2), s.ln.Stats().CutFrameTimeout)
	for _, m := range sink.got() {
		assert.True(t, strings.HasPrefix(m, "good "), "only good messages were accepted: %q", m)
	}
}

// A handler that fails closes the session without an answer for its
// batch (the client sends it again); one that blocks stops the answers
// rather than dropping anything.
func TestRELPHandlerFailsOrBlocks(t *testing.T) {
	sink := &relpSink{block: make(chan struct{}), entered: make(chan struct{}, 4)}
	s := serveRELP(t, stream.Config{}, relp.Config{}, sink)
	rc := dialRELP(t, s.addr, nil)
	rc.open()
	rc.send("syslog", "one")
	<-sink.entered
	// Blocked: no answer arrives.
	_ = rc.c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	_, err := rc.r.ReadByte()
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "no answer while the handler blocks: %v", err)
	sink.mu.Lock()
	sink.fail = errors.New("spool full")
	sink.mu.Unlock()
	close(sink.block)
	frames := rc.closedByServer()
	assert.Equal(t, []string{"0 serverclose "}, frames, "a hint, no answer")
	require.Eventually(t, func() bool { return s.srv.Stats().Open == 0 }, 5*time.Second, time.Millisecond)
	st := s.srv.Stats()
	assert.Equal(t, int64(1), st.HandlerErrors)
	assert.Equal(t, int64(1), st.Unacknowledged)
	assert.Zero(t, st.Acked)
	assert.Equal(t, int64(1), st.ServerCloses)
}

// At shutdown the frames already read are handed over and answered, then
// the session gets the serverclose hint.
func TestRELPShutdown(t *testing.T) {
	sink := &relpSink{}
	srv, err := relp.New(relp.Config{Handler: sink.handle})
	require.NoError(t, err)
	ln, err := stream.New(stream.Config{Address: "127.0.0.1:0", Handler: srv.ServeConn})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- ln.Serve(ctx) }()
	rc := dialRELP(t, ln.Addr().String(), nil)
	rc.open()
	rc.send("syslog", "before shutdown")
	_, _, data, err := rc.read()
	require.NoError(t, err)
	require.Equal(t, "200 OK", data)
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, []string{"0 serverclose "}, rc.closedByServer())
	assert.Equal(t, []string{"before shutdown"}, sink.got())
}

func TestRELPInvalidConfig(t *testing.T) {
	for field, cfg := range map[string]relp.Config{
		"Handler":      {},
		"Window":       {Handler: (&relpSink{}).handle, Window: -1},
		"MaxDataBytes": {Handler: (&relpSink{}).handle, MaxDataBytes: -1},
	} {
		for _, err := range []error{cfg.Validate(), func() error { _, err := relp.New(cfg); return err }()} {
			require.ErrorIs(t, err, stream.ErrInvalidConfig, field)
			var fe *relaykit.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, field, fe.Field)
		}
	}
}

// Frames the handler accepted whose answer cannot be written (the client
// reset the connection meanwhile) are counted: they are the duplicates
// the client's resend will make.
func TestRELPAcceptedUnanswered(t *testing.T) {
	sink := &relpSink{block: make(chan struct{}), entered: make(chan struct{}, 4)}
	s := serveRELP(t, stream.Config{}, relp.Config{}, sink)
	rc := dialRELP(t, s.addr, nil)
	rc.open()
	rc.raw("2 syslog 1 a\n3 syslog 1 b\n4 syslog 1 c\n")
	<-sink.entered
	require.NoError(t, rc.c.(*net.TCPConn).SetLinger(0))
	require.NoError(t, rc.c.Close()) // a reset
	close(sink.block)
	require.Eventually(t, func() bool { return s.srv.Stats().Open == 0 }, 5*time.Second, time.Millisecond)
	st := s.srv.Stats()
	assert.Equal(t, int64(3), st.Frames)
	assert.Equal(t, int64(3), st.AcceptedUnanswered+st.Acked, "every accepted frame is answered or counted")
	assert.Positive(t, st.AcceptedUnanswered, "the answer to a reset connection fails")
}
