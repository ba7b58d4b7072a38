package forward_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
)

// syslogEvent returns event i of connection conn, with characters that
// need care in every part.
func syslogEvent(conn string, i int) relaykit.Event {
	var e relaykit.Event
	e.Time = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC).UnixNano() + int64(i)*1000
	e.Host = []byte("host-" + conn)
	e.Source = []byte("app")
	e.SetPriority(uint8(i%24), uint8(i%8))
	e.SetFieldString("pid", strconv.Itoa(i))
	e.SetFieldString("msgid", "ID"+strconv.Itoa(i%3))
	e.SetFieldString("user", `q"b\s]e`)
	e.Raw = fmt.Appendf(nil, "message %s %d üñí \"quotes\" [brackets] = %s", conn, i, strings.Repeat("x", i%50))
	return e
}

// syslogNGLine is the line syslog-ng's template writes for syslogEvent.
func syslogNGLine(conn string, i int, rfc3164 bool) string {
	e := syslogEvent(conn, i)
	if rfc3164 {
		return fmt.Sprintf("%d host-%s app %d   %s", e.Priority, conn, i, e.Raw)
	}
	return fmt.Sprintf(`%d host-%s app %d ID%d [relaykit@32473 user="q\"b\\s\]e"] %s`, e.Priority, conn, i, i%3, e.Raw)
}

func syslogCfg(network string, port int) forward.SyslogConfig {
	return forward.SyslogConfig{
		Network:        network,
		Address:        fmt.Sprintf("127.0.0.1:%d", port),
		ProcIDField:    "pid",
		MsgIDField:     "msgid",
		StructuredData: []string{"user"},
	}
}

func TestSyslogNGDelivery(t *testing.T) {
	ng := startSyslogNG(t)
	tests := []struct {
		name    string
		cfg     forward.SyslogConfig
		file    string
		batches int
		perWait bool // wait for each batch to arrive (udp: bounded receive buffer)
		rfc3164 bool
		offset  int // lines already in file from an earlier case
	}{
		{name: "tcp", cfg: syslogCfg("tcp", ng.tcpPort), file: "tcp.log", batches: 20},
		{name: "tls", cfg: func() forward.SyslogConfig {
			c := syslogCfg("tls", ng.tlsPort)
			c.TLS = &tls.Config{RootCAs: ng.caPool, Certificates: []tls.Certificate{clientCert(t)}}
			return c
		}(), file: "tls.log", batches: 20},
		{name: "tls-files", cfg: func() forward.SyslogConfig {
			c := syslogCfg("tls", ng.tlsPort)
			dir := t.TempDir()
			writeTestCert(t, dir+"/client.pem", dir+"/client-key.pem")
			c.TLS = buildTLS(t, forward.TLSConfig{CAFile: ng.dir + "/cert.pem", CertFile: dir + "/client.pem", KeyFile: dir + "/client-key.pem"})
			return c
		}(), file: "tls.log", batches: 4, offset: 20 * 50},
		{name: "udp", cfg: func() forward.SyslogConfig {
			c := syslogCfg("udp", ng.udpPort)
			c.SendBuffer = 1 << 20
			return c
		}(), file: "udp.log", batches: 10, perWait: true},
		{name: "rfc3164-lf", cfg: func() forward.SyslogConfig {
			c := syslogCfg("tcp", ng.bsdPort)
			c.Format = forward.SyslogRFC3164
			c.Framing = forward.SyslogNonTransparent
			return c
		}(), file: "bsd.log", batches: 20, rfc3164: true},
	}
	const perBatch = 50
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink, err := forward.NewSyslog(tt.cfg)
			require.NoError(t, err)
			defer sink.Close()
			batch := make([]relaykit.Event, perBatch)
			for b := range tt.batches {
				for i := range batch {
					batch[i] = syslogEvent(tt.name, b*perBatch+i)
				}
				require.NoError(t, sink.Send(t.Context(), batch))
				if tt.perWait {
					require.Len(t, ng.waitLines(tt.file, (b+1)*perBatch), (b+1)*perBatch)
				}
			}
			n := tt.batches * perBatch
			lines := ng.waitLines(tt.file, tt.offset+n)
			require.Len(t, lines, tt.offset+n)
			for i, line := range lines[tt.offset:] {
				assert.Equal(t, syslogNGLine(tt.name, i, tt.rfc3164), line, "line %d", i)
			}
			st := sink.Stats()
			assert.Equal(t, int64(n), st.Events)
			assert.Equal(t, int64(tt.batches), st.Batches)
			assert.Equal(t, int64(1), st.Dials)
			assert.Zero(t, st.Failed)
		})
	}
}

func TestSyslogNGRestart(t *testing.T) {
	ng := startSyslogNG(t)
	for _, tt := range []struct {
		name, file string
		cfg        forward.SyslogConfig
	}{
		{"tcp", "tcp.log", syslogCfg("tcp", ng.tcpPort)},
		{"tls", "tls.log", func() forward.SyslogConfig {
			c := syslogCfg("tls", ng.tlsPort)
			c.TLS = &tls.Config{RootCAs: ng.caPool}
			return c
		}()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sink, err := forward.NewSyslog(tt.cfg)
			require.NoError(t, err)
			defer sink.Close()
			// The sink makes one attempt per Send; a memory-only queue
			// retries until the receiver is back, blocking the caller.
			q, err := delivery.New(sink, delivery.Config{Mode: delivery.Memory})
			require.NoError(t, err)
			defer q.Close(t.Context())
			send := func(from, n int) error {
				batch := make([]relaykit.Event, n)
				for i := range batch {
					batch[i] = syslogEvent(tt.name, from+i)
				}
				return q.Send(t.Context(), batch)
			}
			require.NoError(t, send(0, 100))
			require.Len(t, ng.waitLines(tt.file, 100), 100)

			ng.stop()
			done := make(chan error, 1)
			go func() { done <- send(100, 100) }()
			require.Eventually(t, func() bool { return sink.Stats().DialErrors > 0 }, 10*time.Second, 5*time.Millisecond,
				"the sink should notice the receiver is gone and fail to reconnect")
			ng.start()
			require.NoError(t, <-done)
			require.NoError(t, send(200, 100))

			lines := ng.waitLines(tt.file, 300)
			require.Len(t, lines, 300)
			for i, line := range lines {
				assert.Equal(t, syslogNGLine(tt.name, i, false), line, "line %d", i)
			}
			st := sink.Stats()
			assert.Equal(t, int64(2), st.Dials)
			assert.Equal(t, int64(300), st.Events)
			assert.Positive(t, st.Failed, "attempts while the receiver was down")
			qs := q.Stats()
			assert.Equal(t, int64(300), qs.Delivered)
			assert.Positive(t, qs.Failures)
		})
	}
}

func TestSyslogTLSVerifiesByDefault(t *testing.T) {
	ng := startSyslogNG(t)
	var failures failureLog
	cfg := syslogCfg("tls", ng.tlsPort)
	sink, err := forward.NewSyslog(cfg)
	require.NoError(t, err)
	defer sink.Close()
	batch := []relaykit.Event{syslogEvent("x", 0), syslogEvent("x", 1)}
	err = failures.send(t, sink, batch)
	require.Error(t, err)
	require.Equal(t, 2, failures.count())
	var se *forward.SendError
	require.ErrorAs(t, err, &se)
	var uae x509.UnknownAuthorityError
	assert.ErrorAs(t, err, &uae)
	assert.Equal(t, []string{relaykit.ReasonSinkError, relaykit.ReasonSinkError}, failures.reasons)
	assert.Equal(t, int64(2), sink.Stats().Failed)
	assert.Equal(t, int64(0), sink.Stats().Events)
}

// readFrame reads one octet-counted frame from br.
func readFrame(br *bufio.Reader) (string, error) {
	lenStr, err := br.ReadString(' ')
	if err != nil {
		return "", err
	}
	n, err := strconv.Atoi(strings.TrimSuffix(lenStr, " "))
	if err != nil {
		return "", err
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(br, buf); err != nil {
		return "", err
	}
	return string(buf), nil
}

// readFrames reads octet-counted frames from r until EOF or an error.
func readFrames(r io.Reader) []string {
	br := bufio.NewReaderSize(r, 1<<20)
	var frames []string
	for {
		f, err := readFrame(br)
		if err != nil {
			return frames
		}
		frames = append(frames, f)
	}
}

// bigSyslogBatch returns n events of about 400 bytes: a batch the kernel
// cannot take in one go.
func bigSyslogBatch(n int) []relaykit.Event {
	batch := make([]relaykit.Event, n)
	for i := range batch {
		batch[i] = relaykit.Event{Time: 1, Host: []byte("h"), Raw: fmt.Appendf(nil, "%08d %s", i, strings.Repeat("y", 380))}
	}
	return batch
}

// TestSyslogWriteErrorReportsWholeBatch: a write that fails on the
// connection the Send opened ends the attempt: the whole batch is reported
// retryable, and the next Send writes it whole on a new connection.
func TestSyslogWriteErrorReportsWholeBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("sends a 12 MB batch twice")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	second := make(chan []string, 1)
	go func() {
		// First connection: read a little, then reset it mid-batch.
		c, err := l.Accept()
		if err != nil {
			return
		}
		_, _ = io.ReadFull(c, make([]byte, 1000))
		_ = c.(*net.TCPConn).SetLinger(0)
		_ = c.Close()
		// Second connection: read everything until the sink closes.
		c, err = l.Accept()
		if err != nil {
			return
		}
		second <- readFrames(c)
		_ = c.Close()
	}()
	sink, err := forward.NewSyslog(forward.SyslogConfig{Address: l.Addr().String()})
	require.NoError(t, err)
	const n = 30_000
	batch := bigSyslogBatch(n)
	var failures failureLog
	err = failures.send(t, sink, batch)
	require.Error(t, err)
	assert.Equal(t, n, failures.count(), "the whole batch is reported")
	assert.Equal(t, relaykit.ReasonSinkError, failures.reasons[0])
	assert.False(t, failures.perm[string(batch[0].Raw)], "retryable")
	st := sink.Stats()
	assert.Equal(t, int64(1), st.Dials, "one dial per attempt")
	assert.Equal(t, int64(1), st.WriteErrors)

	require.NoError(t, sink.Send(t.Context(), batch), "the next attempt")
	require.NoError(t, sink.Close())
	frames := <-second
	require.Len(t, frames, n, "the whole batch is written on the new connection")
	for i, f := range frames {
		if !assert.Contains(t, f, fmt.Sprintf(" %08d ", i)) {
			break
		}
	}
	st = sink.Stats()
	assert.Equal(t, int64(2), st.Dials)
	assert.Equal(t, int64(n), st.Events)
	assert.Equal(t, int64(n), st.Failed)
}

// TestSyslogStaleConnectionRedialedOnce: a write that fails on a
// connection an earlier Send left open (the receiver went away between
// the two, unnoticed) is not the attempt's failure: the Send dials once and
// writes the batch on the new connection.
func TestSyslogStaleConnectionRedialedOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("sends a 12 MB batch")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	closed := make(chan struct{})
	second := make(chan []string, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		// Read the first batch, leave a byte pending for the sink (so its
		// check before writing finds the connection alive), and go away.
		br := bufio.NewReader(c)
		_, _ = readFrame(br)
		_, _ = c.Write([]byte("x"))
		_ = c.Close()
		close(closed)
		c, err = l.Accept()
		if err != nil {
			return
		}
		second <- readFrames(c)
		_ = c.Close()
	}()
	sink, err := forward.NewSyslog(forward.SyslogConfig{Address: l.Addr().String()})
	require.NoError(t, err)
	require.NoError(t, sink.Send(t.Context(), []relaykit.Event{{Time: 1, Raw: []byte("first")}}))
	<-closed
	const n = 30_000
	require.NoError(t, sink.Send(t.Context(), bigSyslogBatch(n)))
	require.NoError(t, sink.Close())
	frames := <-second
	require.Len(t, frames, n, "the batch is written on the new connection")
	st := sink.Stats()
	assert.Equal(t, int64(2), st.Dials)
	assert.Equal(t, int64(1), st.WriteErrors)
	assert.Zero(t, st.Failed)
}

func TestSyslogFraming(t *testing.T) {
	for _, tt := range []struct {
		name    string
		framing forward.SyslogFraming
	}{{"octet-counting", forward.SyslogOctetCounting}, {"non-transparent", forward.SyslogNonTransparent}} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer l.Close()
			got := make(chan []byte, 1)
			go func() {
				c, err := l.Accept()
				if err != nil {
					got <- nil
					return
				}
				b, _ := io.ReadAll(c)
				got <- b
			}()
			sink, err := forward.NewSyslog(forward.SyslogConfig{Address: l.Addr().String(), Framing: tt.framing,
				Hostname: "h", MaxMessageSize: 500})
			require.NoError(t, err)
			batch := []relaykit.Event{
				{Raw: []byte("one\ntwo")},
				{Raw: []byte(strings.Repeat("z", 1000))},
			}
			require.NoError(t, sink.Send(t.Context(), batch))
			require.NoError(t, sink.Close())
			b := <-got
			long := "<13>1 - h - - - - " + strings.Repeat("z", 500-len("<13>1 - h - - - - "))
			if tt.framing == forward.SyslogOctetCounting {
				assert.Equal(t, "25 <13>1 - h - - - - one\ntwo500 "+long, string(b))
			} else {
				assert.Equal(t, "<13>1 - h - - - - one two\n"+long+"\n", string(b))
			}
			assert.Equal(t, int64(1), sink.Stats().Truncated)
		})
	}
}

func TestSyslogUDPTruncation(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer pc.Close()
	sink, err := forward.NewSyslog(forward.SyslogConfig{Network: "udp", Address: pc.LocalAddr().String(),
		Hostname: "h", MaxMessageSize: 480, SendBuffer: 1 << 20})
	require.NoError(t, err)
	defer sink.Close()
	batch := []relaykit.Event{{Raw: []byte(strings.Repeat("a", 1000))}, {Raw: []byte("short")}}
	require.NoError(t, sink.Send(t.Context(), batch))
	buf := make([]byte, 2000)
	require.NoError(t, pc.SetReadDeadline(time.Now().Add(10*time.Second)))
	n, _, err := pc.ReadFrom(buf)
	require.NoError(t, err)
	assert.Equal(t, 480, n)
	assert.Equal(t, "<13>1 - h - - - - aaa", string(buf[:21]))
	n, _, err = pc.ReadFrom(buf)
	require.NoError(t, err)
	assert.Equal(t, "<13>1 - h - - - - short", string(buf[:n]))
	st := sink.Stats()
	assert.Equal(t, int64(1), st.Truncated)
	assert.Equal(t, int64(2), st.Events)
	assert.Equal(t, int64(480+23), st.Bytes)
}

func TestSyslogDialFails(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t)) // nothing listens
	batch := []relaykit.Event{{Raw: []byte("a")}, {Raw: []byte("b")}, {Raw: []byte("c")}}
	sink, err := forward.NewSyslog(forward.SyslogConfig{Address: addr})
	require.NoError(t, err)
	defer sink.Close()
	var failures failureLog
	err = failures.send(t, sink, batch)
	var se *forward.SendError
	require.ErrorAs(t, err, &se)
	assert.True(t, se.Retryable)
	assert.Equal(t, "syslog", se.Destination)
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)
	require.Equal(t, []relaykit.FailedRange{{From: 0, To: 3, Reason: relaykit.ReasonSinkError, Err: se}}, failures.runs)
	st := sink.Stats()
	assert.Equal(t, int64(1), st.DialErrors, "one dial per attempt")
	assert.Equal(t, int64(3), st.Failed)
}

func TestSyslogShutdown(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t))
	t.Run("context canceled", func(t *testing.T) {
		var failures failureLog
		sink, err := forward.NewSyslog(forward.SyslogConfig{Address: addr})
		require.NoError(t, err)
		defer sink.Close()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		b := []relaykit.Event{{Raw: []byte("a")}}
		err = failures.add(t, b, sink.Send(ctx, b))
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, []string{relaykit.ReasonShutdown}, failures.reasons)
	})
	t.Run("closed", func(t *testing.T) {
		var failures failureLog
		sink, err := forward.NewSyslog(forward.SyslogConfig{Address: addr})
		require.NoError(t, err)
		require.NoError(t, sink.Close())
		require.NoError(t, sink.Close(), "Close is idempotent")
		err = failures.send(t, sink, []relaykit.Event{{Raw: []byte("a")}})
		assert.ErrorIs(t, err, forward.ErrSyslogClosed)
		assert.Equal(t, []string{relaykit.ReasonShutdown}, failures.reasons)
	})
}

func TestNewSyslogInvalid(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  forward.SyslogConfig
	}{
		{"no address", forward.SyslogConfig{}},
		{"bad network", forward.SyslogConfig{Network: "sctp", Address: "127.0.0.1:1"}},
		{"bad format", forward.SyslogConfig{Address: "127.0.0.1:1", Format: 7}},
		{"bad framing", forward.SyslogConfig{Address: "127.0.0.1:1", Framing: 7}},
		{"priority", forward.SyslogConfig{Address: "127.0.0.1:1", DefaultPriority: 192}},
		{"small max", forward.SyslogConfig{Address: "127.0.0.1:1", MaxMessageSize: 100}},
		{"udp max", forward.SyslogConfig{Network: "udp", Address: "127.0.0.1:1", MaxMessageSize: 70000}},
		{"sd name", forward.SyslogConfig{Address: "127.0.0.1:1", StructuredData: []string{"a=b"}}},
		{"sd duplicate", forward.SyslogConfig{Address: "127.0.0.1:1", StructuredData: []string{"a", "a"}}},
		{"sd id", forward.SyslogConfig{Address: "127.0.0.1:1", StructuredData: []string{"a"}, SDID: "x@y"}},
		{"negative", forward.SyslogConfig{Address: "127.0.0.1:1", DialTimeout: -1}},
		{"tls without network tls", forward.SyslogConfig{Network: "tcp", Address: "127.0.0.1:1", TLS: &tls.Config{MinVersion: tls.VersionTLS13}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := forward.NewSyslog(tt.cfg)
			assert.Nil(t, s)
			assert.ErrorIs(t, err, forward.ErrInvalidConfig)
		})
	}
}

// syslogReceiver is a Go TCP receiver of octet-counted RFC 5424 messages
// that keeps each message's MSG part.
type syslogReceiver struct {
	l      net.Listener
	mu     sync.Mutex
	msgs   []string
	notify chan struct{}
	wg     sync.WaitGroup
}

func newSyslogReceiver(t *testing.T) *syslogReceiver {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &syslogReceiver{l: l, notify: make(chan struct{}, 1)}
	r.wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r.wg.Go(func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					f, err := readFrame(br)
					if err != nil {
						return
					}
					// <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG
					parts := strings.SplitN(f, " ", 8)
					r.mu.Lock()
					r.msgs = append(r.msgs, parts[len(parts)-1])
					r.mu.Unlock()
					select {
					case r.notify <- struct{}{}:
					default:
					}
				}
			})
		}
	})
	t.Cleanup(func() { _ = l.Close(); r.wg.Wait() })
	return r
}

// received waits up to 10 s for want messages and returns what arrived.
func (r *syslogReceiver) received(want int) []string {
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		n := len(r.msgs)
		r.mu.Unlock()
		if n >= want {
			break
		}
		select {
		case <-r.notify:
		case <-deadline.C:
			return r.snapshot()
		}
	}
	return r.snapshot()
}

func (r *syslogReceiver) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

func TestSyslogConformance(t *testing.T) {
	forwardtest.TestSink(t, func(t *testing.T) forwardtest.SinkHarness {
		r := newSyslogReceiver(t)
		s, err := forward.NewSyslog(forward.SyslogConfig{Address: r.l.Addr().String()})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return forwardtest.SinkHarness{Sink: s, Received: r.received}
	})
}

func TestSyslogContextCutsBlockedWrite(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			accepted <- c // never read: the sink's write blocks once buffers fill
		}
	}()
	var failures failureLog
	sink, err := forward.NewSyslog(forward.SyslogConfig{Address: l.Addr().String(), WriteTimeout: time.Hour})
	require.NoError(t, err)
	defer sink.Close()
	batch := make([]relaykit.Event, 30_000)
	for i := range batch {
		batch[i] = relaykit.Event{Raw: []byte(strings.Repeat("w", 400))}
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- sink.Send(ctx, batch) }()
	c := <-accepted
	defer c.Close()
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, failures.add(t, batch, err), context.Canceled)
	case <-time.After(30 * time.Second):
		t.Fatal("Send did not return after its context ended")
	}
	assert.Equal(t, len(batch), failures.count())
	assert.Equal(t, relaykit.ReasonShutdown, failures.reasons[0])
}

func TestSyslogUDP6(t *testing.T) {
	pc, err := net.ListenPacket("udp6", "[::1]:0")
	if err != nil {
		t.Skip("no IPv6 loopback:", err)
	}
	defer pc.Close()
	require.NoError(t, pc.(*net.UDPConn).SetReadBuffer(4<<20))
	sink, err := forward.NewSyslog(forward.SyslogConfig{Network: "udp6", Address: pc.LocalAddr().String(), Hostname: "h"})
	require.NoError(t, err)
	defer sink.Close()
	batch := make([]relaykit.Event, 300) // more than one sendmmsg chunk
	for i := range batch {
		batch[i].Raw = []byte(strconv.Itoa(i))
	}
	require.NoError(t, sink.Send(t.Context(), batch))
	buf := make([]byte, 2048)
	for i := range batch {
		require.NoError(t, pc.SetReadDeadline(time.Now().Add(10*time.Second)))
		n, _, err := pc.ReadFrom(buf)
		require.NoError(t, err, "datagram %d", i)
		require.Equal(t, "<13>1 - h - - - - "+strconv.Itoa(i), string(buf[:n]))
	}
	assert.Equal(t, int64(300), sink.Stats().Events)
}
