package service

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/input"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hecClientFrom is an HTTP client whose connections come from the
// loopback address src (TLS: the test's self-signed certificate).
func hecClientFrom(t *testing.T, src string) *http.Client {
	t.Helper()
	tr := &http.Transport{
		DialContext:     (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}).DialContext,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed test certificate
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// hecSendAndArchived posts one event through cl to url and returns how
// long until it was answered Success; an answer means archived, which it
// checks.
func hecSendAndArchived(t *testing.T, tr *testRelay, cl *http.Client, url, msg string) time.Duration {
	t.Helper()
	before := tr.Ledger().Dest["archive"].Delivered
	start := time.Now()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/services/collector/event", strings.NewReader(fmt.Sprintf(`{"event":%q}`, msg)))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Splunk "+testHECToken)
	resp, err := cl.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	assert.Equal(t, before+1, tr.Ledger().Dest["archive"].Delivered, "answered once archived")
	return took
}

// hecRequestHead is the head of an HEC request whose body is n bytes long.
func hecRequestHead(n int) string {
	return fmt.Sprintf("POST /services/collector/event HTTP/1.1\r\nHost: relay\r\nAuthorization: Splunk %s\r\nContent-Length: %d\r\n\r\n", testHECToken, n)
}

// TestHECIdleConnectionsFromOneSource: 1,100 idle connections from one
// host to the HEC input (the shipped defaults: max_connections 1024, 64
// per source) cannot lock anyone else out: the 65th and later are refused
// and counted, and a sender from another address is answered (and so
// archived) while they stay open.
func TestHECIdleConnectionsFromOneSource(t *testing.T) {
	needFiles(t, 2*1100+200)
	cfg := relaytest.TestConfig(t)
	hecInputConfig(&cfg)
	tr := startRelay(t, cfg) // validates cfg.Inputs in place (a shared slice): the defaults are filled in
	require.Equal(t, 1024, cfg.Inputs.HEC[0].MaxConnections, "the shipped default")
	require.Equal(t, 64, cfg.Inputs.HEC[0].MaxConnectionsPerSource, "the shipped default")
	ln := inputsOf[*input.HECInput](tr.Relay)[0].Listener
	for range 1100 {
		dialFrom(t, "127.0.0.2", tr.addr("hec"))
	}
	relaytest.WaitFor(t, 10*time.Second, func() bool { s := ln.Stats(); return s.Accepted+s.RefusedPerSource == 1100 }, "1100 connections accepted or refused")
	s := ln.Stats()
	assert.Equal(t, int64(64), s.Open)
	assert.Equal(t, int64(1100-64), s.RefusedPerSource)
	assert.Zero(t, s.Evicted)
	assert.Equal(t, 64.0, metricValue(t, tr, "relay_input_connections", "input", "hec"))

	hecSendAndArchived(t, tr, hecClientFrom(t, "127.0.0.3"), "http://"+tr.addr("hec"), "from another host")
	assert.Equal(t, float64(1100-64), metricValue(t, tr, "relay_input_connections_refused_total", "input", "hec", "reason", "per_source"))
	st := tr.stop(t)
	checkBalanced(t, st)
	assert.Equal(t, int64(1), st.Input["hec"])
	assert.Equal(t, []string{"from another host"}, archivedMessages(t, cfg))
}

// TestHECEvictionKeepsRequestsInFlight: the oldest connection has a
// request in flight (its body half sent), the next is kept alive after a
// request; then idle connections from 17 hosts, 64 each, overflow
// max_connections 1024. Each newcomer evicts the longest-idle connection:
// the kept-alive one goes, the request in flight stays and is answered
// and archived once its body is complete, and a sender from another host
// is answered within 2 s.
func TestHECEvictionKeepsRequestsInFlight(t *testing.T) {
	needFiles(t, 2*1100+200)
	cfg := relaytest.TestConfig(t)
	hecInputConfig(&cfg)
	tr := startRelay(t, cfg)
	ln := inputsOf[*input.HECInput](tr.Relay)[0].Listener

	body := []byte(`{"event":"in flight one"}{"event":"in flight two"}`)
	inFlight := dialFrom(t, "127.0.0.10", tr.addr("hec"))
	_, err := io.WriteString(inFlight, hecRequestHead(len(body))+string(body[:20]))
	require.NoError(t, err)
	kept := dialFrom(t, "127.0.0.11", tr.addr("hec"))
	keptBr := bufio.NewReader(kept)
	kb := []byte(`{"event":"kept alive"}`)
	_, err = io.WriteString(kept, hecRequestHead(len(kb))+string(kb))
	require.NoError(t, err)
	resp, err := http.ReadResponse(keptBr, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	for i := range 17 {
		for range 64 {
			dialFrom(t, fmt.Sprintf("127.0.0.%d", 20+i), tr.addr("hec"))
		}
	}
	const total = 2 + 17*64
	relaytest.WaitFor(t, 10*time.Second, func() bool { return ln.Stats().Accepted == total }, "every connection accepted")
	s := ln.Stats()
	assert.Equal(t, int64(1024), s.Open)
	assert.Equal(t, int64(total-1024), s.Evicted)
	assert.Zero(t, s.RefusedPerSource+s.RefusedFull)
	// The kept-alive connection, idle longest, was evicted.
	require.NoError(t, kept.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = keptBr.ReadByte()
	assert.ErrorIs(t, err, io.EOF)

	// The request in flight was not: its body completes and it is answered.
	_, err = inFlight.Write(body[20:])
	require.NoError(t, err)
	require.NoError(t, inFlight.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err = http.ReadResponse(bufio.NewReader(inFlight), nil)
	require.NoError(t, err)
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.JSONEq(t, `{"text":"Success","code":0}`, string(answer))

	hecSendAndArchived(t, tr, hecClientFrom(t, "127.0.0.3"), "http://"+tr.addr("hec"), "after the eviction")
	assert.Equal(t, float64(total-1024+1), metricValue(t, tr, "relay_input_connections_evicted_total", "input", "hec"))
	st := tr.stop(t)
	checkBalanced(t, st)
	assert.Equal(t, int64(4), st.Input["hec"])
	assert.ElementsMatch(t, []string{"kept alive", "in flight one", "in flight two", "after the eviction"}, archivedMessages(t, cfg))
}

// TestHECSlowSendersCut runs the shipped deadlines (handshake_timeout
// 10 s, the 10 s header timeout, body_timeout 30 s; about 32 s of wall
// time, so it is skipped under -short and runs in CI's go test -race pass
// only): a TLS client that never starts the handshake is cut after
// handshake_timeout, a sender trickling its request headers one byte a
// second after 10 s, one trickling its body after body_timeout (answered
// 408), and meanwhile well-behaved senders (HTTP and HTTPS) are answered
// and archived at once. Nothing of the slow body is taken in.
func TestHECSlowSendersCut(t *testing.T) {
	t.Parallel() // waits out deadlines: overlaps with the other waiting tests
	if testing.Short() {
		t.Skip("runs the 30 s default body timeout")
	}
	cfg := relaytest.TestConfig(t)
	cert, key := selfSigned(t)
	hecInputConfig(&cfg)
	cfg.Inputs.HEC = append(cfg.Inputs.HEC, config.HECInputConfig{Name: "hecs", Listen: "127.0.0.1:0", TLS: &config.TLSConfig{CertFile: cert, KeyFile: key},
		Tokens: []config.HECTokenConfig{{Name: "app", Token: testHECToken}}})
	tr := startRelay(t, cfg) // fills the defaults in cfg.Inputs.HEC
	handshakeTimeout, bodyTimeout := cfg.Inputs.HEC[1].HandshakeTimeout, cfg.Inputs.HEC[0].BodyTimeout
	require.Equal(t, 10*time.Second, handshakeTimeout, "the shipped default")
	require.Equal(t, 30*time.Second, bodyTimeout, "the shipped default")
	require.Equal(t, 10*time.Second, cfg.Inputs.HEC[0].HeaderTimeout, "the shipped default")

	type cut struct {
		took   time.Duration
		answer string
	}
	// readAll reads what the relay sends on c until it closes it.
	readAll := func(c net.Conn, start time.Time, done chan<- cut) {
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		b, _ := io.ReadAll(c)
		done <- cut{time.Since(start), string(b)}
	}
	// trickle writes one byte a second until the relay closes c (a write
	// fails once the relay's close has reached the client).
	var tricklers sync.WaitGroup
	trickle := func(c net.Conn) {
		tricklers.Go(func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for range tick.C {
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
			}
		})
	}
	// The silent TLS client: connects, never sends a ClientHello.
	silent := dialFrom(t, "127.0.0.7", tr.addr("hecs"))
	silentDone := make(chan cut, 1)
	go readAll(silent, time.Now(), silentDone)
	// The header trickler: a request line, then a header that never ends.
	headers := dialFrom(t, "127.0.0.6", tr.addr("hec"))
	headersStart := time.Now()
	_, err := io.WriteString(headers, "POST /services/collector/event HTTP/1.1\r\nHost: relay\r\nX-Slow: ")
	require.NoError(t, err)
	headersDone := make(chan cut, 1)
	go readAll(headers, headersStart, headersDone)
	trickle(headers)
	// The body trickler: a whole head, then the body byte by byte.
	slowBody := dialFrom(t, "127.0.0.8", tr.addr("hec"))
	bodyStart := time.Now()
	_, err = io.WriteString(slowBody, hecRequestHead(1000)+`{"event":"`)
	require.NoError(t, err)
	bodyDone := make(chan cut, 1)
	go readAll(slowBody, bodyStart, bodyDone)
	trickle(slowBody)

	// Well-behaved senders are not delayed while all three are held.
	plain, secure := hecClientFrom(t, "127.0.0.3"), hecClientFrom(t, "127.0.0.3")
	for i := range 5 {
		assert.Less(t, hecSendAndArchived(t, tr, plain, "http://"+tr.addr("hec"), fmt.Sprintf("good http %d", i)), 2*time.Second)
		assert.Less(t, hecSendAndArchived(t, tr, secure, "https://"+tr.addr("hecs"), fmt.Sprintf("good https %d", i)), 2*time.Second)
	}

	within := func(what string, ch chan cut, d time.Duration) cut {
		t.Helper()
		select {
		case c := <-ch:
			assert.GreaterOrEqual(t, c.took, d-time.Second, what)
			assert.Less(t, c.took, d+2*time.Second, what)
			return c
		case <-time.After(d + 10*time.Second):
			t.Fatalf("%s not cut", what)
			return cut{}
		}
	}
	c := within("silent TLS client", silentDone, handshakeTimeout)
	assert.Empty(t, c.answer)
	within("header trickler", headersDone, cfg.Inputs.HEC[0].HeaderTimeout)
	c = within("body trickler", bodyDone, bodyTimeout)
	assert.True(t, strings.HasPrefix(c.answer, "HTTP/1.1 408 "), "%q", c.answer)

	assert.Equal(t, 1.0, metricValue(t, tr, "relay_input_connections_cut_total", "input", "hecs", "reason", "handshake_timeout"))
	assert.Equal(t, 2.0, metricValue(t, tr, "relay_input_connections_cut_total", "input", "hec", "reason", "frame_timeout"), "the slow head and the slow body")
	assert.Equal(t, 1.0, metricValue(t, tr, "relay_hec_errors_total", "input", "hec", "reason", "body_timeout"))
	assert.Zero(t, metricValue(t, tr, "relay_input_connections_cut_total", "input", "hec", "reason", "idle"))
	tricklers.Wait()
	relaytest.WaitFor(t, 5*time.Second, func() bool {
		return inputsOf[*input.HECInput](tr.Relay)[0].Listener.Stats().Open+inputsOf[*input.HECInput](tr.Relay)[1].Listener.Stats().Open <= 2
	}, "the cut connections' slots given back")
	st := tr.stop(t)
	checkBalanced(t, st)
	assert.Equal(t, int64(10), st.Input["hec"]+st.Input["hecs"])
	msgs := archivedMessages(t, cfg)
	assert.Len(t, msgs, 10)
	for _, m := range msgs {
		assert.True(t, strings.HasPrefix(m, "good "), "%q archived", m)
	}
}

// TestHECHeaderTimeoutConfigured: header_timeout bounds what a sender owes
// for a request's line and headers. With 500 ms, a client that sends half
// a head is cut after it, another that sends nothing at all too, and a
// well-behaved sender on the same input is answered meanwhile.
func TestHECHeaderTimeoutConfigured(t *testing.T) {
	const headerTimeout = 500 * time.Millisecond
	cfg := relaytest.TestConfig(t)
	hecInputConfig(&cfg)
	cfg.Inputs.HEC[0].HeaderTimeout = headerTimeout
	tr := startRelay(t, cfg)
	require.Equal(t, headerTimeout, cfg.Inputs.HEC[0].HeaderTimeout)

	// closedAfter reads c until the relay closes it and reports how long
	// that took from start.
	closedAfter := func(c net.Conn, start time.Time) <-chan time.Duration {
		done := make(chan time.Duration, 1)
		go func() {
			_ = c.SetReadDeadline(time.Now().Add(time.Minute))
			_, _ = io.Copy(io.Discard, c)
			done <- time.Since(start)
		}()
		return done
	}
	// Each clock starts before the dial: the relay's deadline may start
	// before it returns.
	halfStart := time.Now()
	half := dialFrom(t, "127.0.0.6", tr.addr("hec"))
	_, err := io.WriteString(half, "POST /services/collector/event HTTP/1.1\r\nHost: relay\r\n")
	require.NoError(t, err)
	halfDone := closedAfter(half, halfStart)
	silentStart := time.Now()
	silent := dialFrom(t, "127.0.0.7", tr.addr("hec"))
	silentDone := closedAfter(silent, silentStart)

	client := hecClientFrom(t, "127.0.0.3")
	hecSendAndArchived(t, tr, client, "http://"+tr.addr("hec"), "good")
	for what, ch := range map[string]<-chan time.Duration{"half a head": halfDone, "nothing sent": silentDone} {
		select {
		case <-ch:
			t.Errorf("%s: cut before the good sender was answered: the good sender waited for its deadline", what)
		default:
		}
	}

	for what, ch := range map[string]<-chan time.Duration{"half a head": halfDone, "nothing sent": silentDone} {
		select {
		case took := <-ch:
			assert.GreaterOrEqual(t, took, headerTimeout-100*time.Millisecond, what)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not cut within 10 s of a %v header_timeout", what, headerTimeout)
		}
	}
	st := tr.stop(t)
	checkBalanced(t, st)
	assert.Equal(t, []string{"good"}, archivedMessages(t, cfg))
}
