package main

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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
	waitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered > before }, "message archived")
	return time.Since(start)
}

// archivedMessages is the message of every archived record (read after
// the relay stopped: the archive is buffered).
func archivedMessages(t *testing.T, cfg Config) []string {
	t.Helper()
	var msgs []string
	for _, r := range archivedRecords(t, cfg.Destinations["archive"].Dir) {
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
	cfg := testConfig(t)
	tr := startRelay(t, cfg)
	ln := tr.streams[0].ln
	for range 1100 {
		dialFrom(t, "127.0.0.2", tr.addr("tcp"))
	}
	waitFor(t, 10*time.Second, func() bool { s := ln.Stats(); return s.Accepted+s.RefusedPerSource == 1100 }, "1100 connections accepted or refused")
	s := ln.Stats()
	assert.Equal(t, int64(64), s.Open)
	assert.Equal(t, int64(1100-64), s.RefusedPerSource)
	assert.Zero(t, s.Evicted)

	took := sendAndWaitArchived(t, tr, "127.0.0.3", "from another host")
	assert.Less(t, took, 2*time.Second)
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
	cfg := testConfig(t)
	tr := startRelay(t, cfg)
	ln := tr.streams[0].ln
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
	waitFor(t, 10*time.Second, func() bool { return ln.Stats().Accepted == 17*64 }, "1088 connections accepted")
	s := ln.Stats()
	assert.Equal(t, int64(1024), s.Open)
	assert.Equal(t, int64(17*64-1024), s.Evicted)
	assert.Zero(t, s.RefusedPerSource)
	// The longest-idle connection, the first one, was among the evicted.
	require.NoError(t, first.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err := first.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF)

	took := sendAndWaitArchived(t, tr, "127.0.0.3", "after the eviction")
	assert.Less(t, took, 2*time.Second)
	assert.Equal(t, float64(17*64-1024+1), metricValue(t, tr, "relay_input_connections_evicted_total", "input", "tcp"))
	checkBalanced(t, tr.stop(t))
	assert.Equal(t, []string{"after the eviction"}, archivedMessages(t, cfg))
}

// TestSlowSendersCut runs the shipped deadlines (frame_timeout 30 s,
// handshake_timeout 10 s; about 32 s of wall time, so it is skipped under
// -short): a sender trickling one byte per second is cut within
// frame_timeout + 2 s, a TCP client that never starts the TLS handshake is
// cut after handshake_timeout, and meanwhile well-behaved senders on other
// connections (TCP and TLS) are archived at once.
func TestSlowSendersCut(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the 30 s default frame timeout")
	}
	cfg := testConfig(t)
	cert, key := selfSigned(t)
	cfg.Inputs.SyslogTCP = append(cfg.Inputs.SyslogTCP, TCPInputConfig{Name: "tls", Listen: "127.0.0.1:0", TLS: &TLSConfig{CertFile: cert, KeyFile: key}})
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
	silent := dialFrom(t, "127.0.0.7", tr.addr("tls"))
	silentStart := time.Now()
	silentDone := make(chan time.Duration, 1)
	go func() {
		_ = silent.SetReadDeadline(time.Now().Add(time.Minute))
		_, _ = silent.Read(make([]byte, 1)) // returns when the relay closes it
		silentDone <- time.Since(silentStart)
	}()

	// Well-behaved senders are not delayed while both are held.
	tlsConf := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // self-signed test certificate
	for i := range 5 {
		took := sendAndWaitArchived(t, tr, "127.0.0.3", fmt.Sprintf("good tcp %d", i))
		assert.Less(t, took, 2*time.Second)
		before := tr.Ledger().Dest["archive"].Delivered
		begin := time.Now()
		tc, err := tls.Dial("tcp", tr.addr("tls"), tlsConf)
		require.NoError(t, err)
		_, err = fmt.Fprintf(tc, "<13>1 - h app - - - good tls %d\n", i)
		require.NoError(t, err)
		require.NoError(t, tc.Close())
		waitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered > before }, "TLS message archived")
		assert.Less(t, time.Since(begin), 2*time.Second)
	}

	select {
	case d := <-silentDone:
		assert.GreaterOrEqual(t, d, handshakeTimeout-100*time.Millisecond)
		assert.Less(t, d, handshakeTimeout+2*time.Second)
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

	ls := tr.streams[0].ln.Stats()
	assert.Equal(t, int64(1), ls.CutFrameTimeout)
	assert.Equal(t, int64(1), tr.streams[1].ln.Stats().CutHandshakeTimeout)
	assert.Equal(t, 1.0, metricValue(t, tr, "relay_input_connections_cut_total", "input", "tcp", "reason", "frame_timeout"))
	assert.Equal(t, 1.0, metricValue(t, tr, "relay_input_connections_cut_total", "input", "tls", "reason", "handshake_timeout"))
	assert.Equal(t, 1.0, metricValue(t, tr, "relay_input_incomplete_frames_total", "input", "tcp"))
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Equal(t, int64(10), s.Archived)
	assert.Len(t, archivedMessages(t, cfg), 10)
}

