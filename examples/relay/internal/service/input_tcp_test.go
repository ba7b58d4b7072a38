package service

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/input"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type repeatReader byte

func (c repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

// dialFrom opens a TCP connection to addr from the loopback address src
// (any 127.0.0.0/8 address is local on Linux), closed at the end of the test.
func dialFrom(t testing.TB, src, addr string) *net.TCPConn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

// metricValue scrapes the relay's /metrics and returns the value of the
// sample with the given name and labels (pairs of name, value).
func metricValue(t testing.TB, tr *testRelay, name string, labels ...string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + tr.addr("metrics") + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
next:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if !strings.Contains(line, labels[i]+`="`+labels[i+1]+`"`) {
				continue next
			}
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		require.NoError(t, err, line)
		return v
	}
	t.Fatalf("metric %s%v not found", name, labels)
	return 0
}

// needFiles checks that the process may open n more descriptors, raising
// the soft RLIMIT_NOFILE to the hard limit if needed (Go does this at
// start-up too).
func needFiles(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	if lim.Cur < n {
		lim.Cur = min(lim.Max, n)
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	}
	require.GreaterOrEqual(t, lim.Cur, n, "RLIMIT_NOFILE hard limit %d: raise it (ulimit -n) to run this test", lim.Max)
}

// sendFrom sends one LF-terminated message from src and waits until the
// archive holds it, returning how long that took.
func sendAndWaitArchived(t *testing.T, tr *testRelay, src, msg string) time.Duration {
	t.Helper()
	before := tr.Ledger().Dest["archive"].Delivered
	start := time.Now()
	c := dialFrom(t, src, tr.addr("tcp"))
	_, err := fmt.Fprintf(c, "<13>1 - h app - - - %s\n", msg)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered > before }, "message archived")
	return time.Since(start)
}

// archivedMessages is the message of every archived record (read after
// the relay stopped: the archive is buffered).
func archivedMessages(t *testing.T, cfg config.Config) []string {
	t.Helper()
	var msgs []string
	for _, r := range archivedRecords(t, relaytest.ArchiveOf(cfg).Dir) {
		msgs = append(msgs, r.Message)
	}
	return msgs
}

// TestIdleConnectionsFromOneSource: 1,100 idle connections from one host
// (the shipped defaults: max_connections 1024, 64 per source) cannot lock
// anyone else out: the 65th and later are refused and counted, and a
// sender from another address is archived within 2 s.
func TestIdleConnectionsFromOneSource(t *testing.T) {
	needFiles(t, 2*1100+200)
	cfg := relaytest.TestConfig(t)
	tr := startRelay(t, cfg)
	ln := inputsOf[*input.StreamInput](tr.Relay)[0].Listener
	for range 1100 {
		dialFrom(t, "127.0.0.2", tr.addr("tcp"))
	}
	relaytest.WaitFor(t, 10*time.Second, func() bool { s := ln.Stats(); return s.Accepted+s.RefusedPerSource == 1100 }, "1100 connections accepted or refused")
	s := ln.Stats()
	assert.Equal(t, int64(64), s.Open)
	assert.Equal(t, int64(1100-64), s.RefusedPerSource)
	assert.Zero(t, s.Evicted)

	sendAndWaitArchived(t, tr, "127.0.0.3", "from another host")
	assert.Equal(t, float64(1100-64), metricValue(t, tr, "relay_input_connections_refused_total", "input", "tcp", "reason", "per_source"))
	checkBalanced(t, tr.stop(t))
	assert.Equal(t, []string{"from another host"}, archivedMessages(t, cfg))
}

// TestEvictionAtMaxConnections: idle connections from 17 hosts, 64 each
// (1,088 > max_connections 1024), then a sender from yet another host:
// each connection past the limit evicts the longest-idle one, the sender
// is archived within 2 s, and the evictions are counted.
func TestEvictionAtMaxConnections(t *testing.T) {
	needFiles(t, 2*1100+200)
	cfg := relaytest.TestConfig(t)
	tr := startRelay(t, cfg)
	ln := inputsOf[*input.StreamInput](tr.Relay)[0].Listener
	first := dialFrom(t, "127.0.0.10", tr.addr("tcp"))
	for i := range 17 {
		src := fmt.Sprintf("127.0.0.%d", 10+i)
		for j := range 64 {
			if i == 0 && j == 0 {
				continue
			}
			dialFrom(t, src, tr.addr("tcp"))
		}
	}
	relaytest.WaitFor(t, 10*time.Second, func() bool { return ln.Stats().Accepted == 17*64 }, "1088 connections accepted")
	s := ln.Stats()
	assert.Equal(t, int64(1024), s.Open)
	assert.Equal(t, int64(17*64-1024), s.Evicted)
	assert.Zero(t, s.RefusedPerSource)
	// The longest-idle connection, the first one, was among the evicted.
	require.NoError(t, first.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err := first.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF)

	sendAndWaitArchived(t, tr, "127.0.0.3", "after the eviction")
	assert.Equal(t, float64(17*64-1024+1), metricValue(t, tr, "relay_input_connections_evicted_total", "input", "tcp"))
	checkBalanced(t, tr.stop(t))
	assert.Equal(t, []string{"after the eviction"}, archivedMessages(t, cfg))
}

// TestSlowSendersCut runs the shipped deadlines (frame_timeout 30 s,
// handshake_timeout 10 s; about 32 s of wall time, so it is skipped under
// -short and runs in CI's go test -race pass only): a sender trickling one byte per second is cut within
// frame_timeout + 2 s, a TCP client that never starts the TLS handshake is
// cut after handshake_timeout, and meanwhile well-behaved senders on other
// connections (TCP and TLS) are archived at once.
func TestSlowSendersCut(t *testing.T) {
	t.Parallel() // waits out deadlines: overlaps with the other waiting tests
	if testing.Short() {
		t.Skip("runs the 30 s default frame timeout")
	}
	cfg := relaytest.TestConfig(t)
	cert, key := selfSigned(t)
	cfg.Inputs.SyslogTCP = append(cfg.Inputs.SyslogTCP, config.TCPInputConfig{Name: "tls", Listen: "127.0.0.1:0", TLS: &config.TLSConfig{CertFile: cert, KeyFile: key}})
	tr := startRelay(t, cfg)
	require.NoError(t, cfg.Validate())
	frameTimeout, handshakeTimeout := cfg.Inputs.SyslogTCP[0].FrameTimeout, cfg.Inputs.SyslogTCP[1].HandshakeTimeout
	require.Equal(t, 30*time.Second, frameTimeout, "the shipped default")
	require.Equal(t, 10*time.Second, handshakeTimeout, "the shipped default")

	// The trickler: one byte per second of a frame that never ends.
	trickle := dialFrom(t, "127.0.0.6", tr.addr("tcp"))
	start := time.Now()
	tricklerDone := make(chan time.Duration, 1)
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for range tick.C {
			if _, err := trickle.Write([]byte("x")); err != nil {
				break
			}
		}
		tricklerDone <- time.Since(start)
	}()
	_, err := trickle.Write([]byte("<13>"))
	require.NoError(t, err)
	// The silent TLS client: connects, never sends a ClientHello.
	silentStart := time.Now() // before the dial: the relay's deadline may start before it returns
	silent := dialFrom(t, "127.0.0.7", tr.addr("tls"))
	silentDone := make(chan time.Duration, 1)
	go func() {
		_ = silent.SetReadDeadline(time.Now().Add(time.Minute))
		_, _ = silent.Read(make([]byte, 1)) // returns when the relay closes it
		silentDone <- time.Since(silentStart)
	}()

	// Well-behaved senders are not delayed while both are held: each is
	// archived while the silent TLS client still waits for its handshake
	// deadline (a handshake done in the accept loop would hold them until
	// the silent one is cut).
	tlsConf := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // self-signed test certificate
	stillHeld := func(what string) {
		t.Helper()
		if len(silentDone) > 0 {
			t.Fatalf("%s archived only after the silent TLS client was cut", what)
		}
	}
	for i := range 5 {
		sendAndWaitArchived(t, tr, "127.0.0.3", fmt.Sprintf("good tcp %d", i))
		stillHeld("good tcp")
		before := tr.Ledger().Dest["archive"].Delivered
		tc, err := tls.Dial("tcp", tr.addr("tls"), tlsConf)
		require.NoError(t, err)
		_, err = fmt.Fprintf(tc, "<13>1 - h app - - - good tls %d\n", i)
		require.NoError(t, err)
		require.NoError(t, tc.Close())
		relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered > before }, "TLS message archived")
		stillHeld("good tls")
	}

	select {
	case d := <-silentDone:
		assert.GreaterOrEqual(t, d, handshakeTimeout-100*time.Millisecond)
	case <-time.After(handshakeTimeout + 5*time.Second):
		t.Fatal("silent TLS client not cut")
	}
	// The trickler's cut shows in its next write after the relay closed
	// the connection (a write succeeds into the socket buffer first), so
	// read: the relay's close ends the read at once.
	require.NoError(t, trickle.SetReadDeadline(time.Now().Add(frameTimeout+10*time.Second)))
	_, err = trickle.Read(make([]byte, 1))
	cutAfter := time.Since(start)
	require.Error(t, err)
	assert.GreaterOrEqual(t, cutAfter, frameTimeout-time.Second)
	assert.Less(t, cutAfter, frameTimeout+2*time.Second)
	<-tricklerDone

	ls := inputsOf[*input.StreamInput](tr.Relay)[0].Listener.Stats()
	assert.Equal(t, int64(1), ls.CutFrameTimeout)
	assert.Equal(t, int64(1), inputsOf[*input.StreamInput](tr.Relay)[1].Listener.Stats().CutHandshakeTimeout)
	assert.Equal(t, 1.0, metricValue(t, tr, "relay_input_connections_cut_total", "input", "tcp", "reason", "frame_timeout"))
	assert.Equal(t, 1.0, metricValue(t, tr, "relay_input_connections_cut_total", "input", "tls", "reason", "handshake_timeout"))
	assert.Equal(t, 1.0, metricValue(t, tr, "relay_input_incomplete_frames_total", "input", "tcp"))
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Equal(t, int64(10), s.Archived)
	assert.Len(t, archivedMessages(t, cfg), 10)
}

// TestStreamLossesCounted: on one LF-framed connection, a message with a
// NUL inside (kept whole), empty frames, an oversized frame (cut, rest
// discarded) and a frame broken off by a reset: each shows up in the metric
// the README names, every byte read is accounted for, and the ledger
// balances.
func TestStreamLossesCounted(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	tr := startRelay(t, cfg)
	ln := inputsOf[*input.StreamInput](tr.Relay)[0].Listener
	const maxMsg = 64 << 10
	oversized := "<13>" + strings.Repeat("z", 70000)
	partial := "<13>1 - h app - - - broken off by a reset"
	var sent int64
	c := dialFrom(t, "127.0.0.8", tr.addr("tcp"))
	write := func(s string) {
		t.Helper()
		_, err := io.WriteString(c, s)
		require.NoError(t, err)
		sent += int64(len(s))
	}
	write("<13>1 - h app - - - ok one\n")
	write("<13>1 - h app - - - with\x00nul inside\n")
	write("\n\r\n")
	write(oversized + "\n")
	write(partial)
	// Reset only once the relay has read everything: a reset discards what
	// the kernel still holds unread, which no process could count.
	relaytest.WaitFor(t, 10*time.Second, func() bool { return ln.Stats().BytesRead == sent }, "relay read every byte sent")
	require.NoError(t, c.SetLinger(0))
	require.NoError(t, c.Close())
	relaytest.WaitFor(t, 10*time.Second, func() bool { return ln.Stats().Open == 0 }, "connection closed")

	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == 3 }, "3 events archived")
	m := func(name string) float64 { return metricValue(t, tr, name, "input", "tcp") }
	assert.Equal(t, 1.0, m("relay_input_nul_frames_total"))
	assert.Equal(t, 2.0, m("relay_input_empty_frames_total"))
	assert.Equal(t, 1.0, m("relay_input_truncated_total"))
	assert.Equal(t, float64(len(oversized)-maxMsg), m("relay_input_discarded_bytes_total"))
	assert.Equal(t, 1.0, m("relay_input_incomplete_frames_total"))
	assert.Equal(t, float64(len(partial)), m("relay_input_incomplete_bytes_total"))
	// Bytes: read = message bytes + overhead (here the LF of the 3 frames
	// and the 3 bytes of the empty frames) + discarded + incomplete.
	read := m("relay_input_read_bytes_total")
	assert.Equal(t, float64(sent), read)
	assert.Equal(t, read, m("relay_input_received_bytes_total")+3+3+m("relay_input_discarded_bytes_total")+m("relay_input_incomplete_bytes_total"))

	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Equal(t, int64(3), s.Received)
	assert.Equal(t, int64(1), s.Truncated)
	msgs := archivedMessages(t, cfg)
	require.Len(t, msgs, 3)
	assert.Equal(t, "ok one", msgs[0])
	// The RFC 5424 parser refuses a NUL: the event is forwarded raw
	// (counted as a parse error), whole.
	assert.Equal(t, "<13>1 - h app - - - with\x00nul inside", msgs[1], "NUL kept inside the message")
	assert.Len(t, msgs[2], maxMsg-4, "cut at max_message_size, PRI parsed off")
}

// TestFramingFault: one odd frame never merges or hides the frames after
// it. On one connection, valid and invalid messages are mixed, for each
// framing: octet-counted frames whose MSG does not start with '<' (the
// fault that used to switch the connection to LF framing and glue every
// later frame into one event), an LF inside a message, a message that
// starts with digits, a bad octet-count header; and on an LF-framed
// connection lines that look like octet-count headers. Every frame becomes
// exactly one event, in order.
func TestFramingFault(t *testing.T) {
	octet := func(msgs ...string) string {
		var b strings.Builder
		for _, m := range msgs {
			fmt.Fprintf(&b, "%d %s", len(m), m)
		}
		return b.String()
	}
	var msgs, want []string
	for i := range 5 {
		batch := []string{
			fmt.Sprintf("<13>1 - h app - - - valid %d", i),
			fmt.Sprintf("no PRI %d", i),
			fmt.Sprintf("<13>1 - h app - - - LF\ninside %d", i),
			fmt.Sprintf("123 starts with digits %d", i),
			fmt.Sprintf("<13>Nov 22 10:00:00 h app: bsd %d", i),
		}
		msgs = append(msgs, batch...)
		want = append(want, fmt.Sprintf("valid %d", i), fmt.Sprintf("no PRI %d", i), fmt.Sprintf("LF\ninside %d", i),
			fmt.Sprintf("123 starts with digits %d", i), fmt.Sprintf("bsd %d", i))
	}
	// A bad header in the middle: the frame is read up to the next LF
	// (flagged, counted), octet counting resumes after it.
	octetStream := octet(msgs[:10]...) + "oops not a header\n" + octet(msgs[10:]...)
	octetWant := append(append(append([]string{}, want[:10]...), "oops not a header"), want[10:]...)

	lfLines := []string{
		"<13>1 - h app - - - first",
		"5 <13>looks like a header",
		"no PRI",
		"12345 digits",
		"<13>1 - h app - - - crlf\r",
		"<13>1 - h app - - - last",
	}
	lfWant := []string{"first", "5 <13>looks like a header", "no PRI", "12345 digits", "crlf", "last"}

	for _, tt := range []struct {
		name     string
		data     string
		want     []string
		framingE float64
	}{
		{"octet counting", octetStream, octetWant, 1},
		{"LF", strings.Join(lfLines, "\n") + "\n", lfWant, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := relaytest.TestConfig(t)
			tr := startRelay(t, cfg)
			relaytest.Send(t, "tcp", tr.addr("tcp"), []byte(tt.data))
			relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == int64(len(tt.want)) }, "every frame archived")
			assert.Equal(t, tt.framingE, metricValue(t, tr, "relay_input_framing_errors_total", "input", "tcp"))
			s := tr.stop(t)
			checkBalanced(t, s)
			assert.Equal(t, int64(len(tt.want)), s.Received)
			got := archivedMessages(t, cfg)
			require.Len(t, got, len(tt.want))
			for i, w := range tt.want {
				assert.Contains(t, got[i], w, "event %d", i)
			}
		})
	}
}

// TestFramingFaultLogger: the real util-linux logger sends a file of odd
// lines (lines that look like octet-count headers, lines without text
// beyond digits, leading spaces) on one connection, with octet counting and
// with LF framing: one event per line, none merged.
func TestFramingFaultLogger(t *testing.T) {
	relaytest.NeedTool(t, "logger")
	lines := []string{
		"plain message",
		"12 <13>looks like a frame",
		"5 abcde",
		"99999999999 huge count",
		"<not a pri> angle brackets",
		"   leading spaces",
		"trailing spaces   ",
		"x",
	}
	var all []string
	for i := range 29 {
		all = append(all, fmt.Sprintf("%s %d", lines[i%len(lines)], i))
	}
	file := filepath.Join(t.TempDir(), "lines.txt")
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(all, "\n")+"\n"), 0o600))
	for _, framing := range [][]string{{"--octet-count"}, nil} {
		t.Run(fmt.Sprintf("%v", framing), func(t *testing.T) {
			cfg := relaytest.TestConfig(t)
			tr := startRelay(t, cfg)
			args := append([]string{"-n", "127.0.0.1", "-P", tr.port("tcp"), "-T", "--rfc5424", "-t", "app", "-f", file}, framing...)
			runTool(t, "logger", args...)
			relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == int64(len(all)) }, "29 events archived")
			s := tr.stop(t)
			checkBalanced(t, s)
			assert.Equal(t, int64(len(all)), s.Received, "one event per line")
			assert.Zero(t, s.ParseErrors)
			got := archivedMessages(t, cfg)
			require.Len(t, got, len(all))
			for i, w := range all {
				assert.Equal(t, strings.TrimRight(w, " "), strings.TrimRight(got[i], " "), "event %d", i)
			}
		})
	}
}

// TestIdleConnectionsReadBuffers: connections that sent a line and went
// quiet hold 4 KiB of read buffer each (the shipped
// defaults); the buffers go back when they close.
func TestIdleConnectionsReadBuffers(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	tr := startRelay(t, cfg)
	const n = 50
	var conns []*net.TCPConn
	for i := range n {
		c := dialFrom(t, fmt.Sprintf("127.0.3.%d", 1+i), tr.addr("tcp"))
		_, err := fmt.Fprintf(c, "<13>1 - h app - - - quiet sender %d\n", i)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == n }, "one line from each")
	assert.Equal(t, float64(n*4096), metricValue(t, tr, "relay_input_read_buffer_bytes", "input", "tcp"))
	assert.GreaterOrEqual(t, metricValue(t, tr, "relay_input_reads_total", "input", "tcp"), float64(n))
	for _, c := range conns {
		require.NoError(t, c.Close())
	}
	relaytest.WaitFor(t, 10*time.Second, func() bool { return inputsOf[*input.StreamInput](tr.Relay)[0].Listener.Stats().Open == 0 }, "connections closed")
	assert.Zero(t, metricValue(t, tr, "relay_input_read_buffer_bytes", "input", "tcp"))
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Equal(t, int64(n), s.Archived)
}

// TestStreamEventsWithinMaxWait: a stream input drains its worker's ring
// itself only once a batch's worth waits there, and wakes the worker only
// when it is idle; events short of a batch, pushed while the worker is
// parked armed (it was woken by the first ones), must still be archived
// within batch_max_wait, by the worker's own deadline, and so must a
// trickle that keeps the open batch from filling.
func TestStreamEventsWithinMaxWait(t *testing.T) {
	const wait = 300 * time.Millisecond
	cfg := relaytest.TestConfig(t)
	cfg.Workers.Count = 1
	cfg.Workers.BatchMaxWait = wait
	tr := startRelay(t, cfg)
	c, err := net.Dial("tcp", tr.addr("tcp"))
	require.NoError(t, err)
	defer c.Close()
	send := func(from, n int) {
		var b strings.Builder
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&b, "<13>1 - host app - - - message %d\n", i)
		}
		_, err := c.Write([]byte(b.String()))
		require.NoError(t, err)
	}
	archivedBy := func(n int64, within time.Duration, what string) {
		t.Helper()
		relaytest.WaitFor(t, within, func() bool { return tr.Ledger().Dest["archive"].Delivered >= n }, what)
	}

	send(0, 10)
	relaytest.WaitFor(t, 5*time.Second, func() bool { return tr.Ledger().Input["tcp"] == 10 }, "first events received")
	start := time.Now()
	send(10, 10) // the worker took the first ones and sleeps armed: not woken for these
	relaytest.WaitFor(t, 5*time.Second, func() bool { return tr.Ledger().Input["tcp"] == 20 }, "second events received")
	// Nothing else comes that could flush them: archived at all, they were
	// cut by the worker's batch_max_wait deadline.
	archivedBy(20, 30*time.Second, "events short of a batch archived by batch_max_wait")
	assert.GreaterOrEqual(t, time.Since(start), wait/2, "not before the deadline (the clock's resolution aside)")

	// A trickle, one event every tenth of batch_max_wait: each batch is
	// archived within batch_max_wait of its first event.
	for i := range 20 {
		send(20+i, 1)
		time.Sleep(wait / 10) // the pace of the sender, not synchronisation
	}
	archivedBy(40, 30*time.Second, "a trickle archived by batch_max_wait")
	assert.Equal(t, int64(40), tr.stop(t).Archived)
}
