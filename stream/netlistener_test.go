package stream_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/relaykit/relaykit/internal/testtool"

	"github.com/relaykit/relaykit/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// httpServed is an http.Server on a stream listener's NetListener, its
// ConnState hook marking idle and busy connections as streamhttp.ConnState
// does.
type httpServed struct {
	ln    *stream.Listener
	nl    *stream.NetListener
	srv   *http.Server
	idle  chan net.Conn // each connection marked idle (kept alive after a request)
	serve chan error
}

func serveHTTP(t *testing.T, cfg stream.Config, h http.Handler, srvCfg func(*http.Server)) *httpServed {
	t.Helper()
	ln, err := stream.New(loopback(cfg, nil))
	require.NoError(t, err)
	s := &httpServed{ln: ln, nl: ln.NetListener(), idle: make(chan net.Conn, 100), serve: make(chan error, 1)}
	s.srv = &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0), ConnState: func(c net.Conn, st http.ConnState) {
		switch st {
		case http.StateIdle:
			s.nl.SetIdle(c, true)
			select {
			case s.idle <- c:
			default:
			}
		case http.StateActive, http.StateHijacked:
			s.nl.SetIdle(c, false)
		}
	}}
	if srvCfg != nil {
		srvCfg(s.srv)
	}
	go func() { s.serve <- s.srv.Serve(s.nl) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if s.srv.Shutdown(ctx) != nil {
			_ = s.srv.Close()
		}
		err := <-s.serve
		assert.True(t, errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed), "%v", err)
		_ = ln.Close()
	})
	return s
}

// exchange sends a request on c and reads its response.
func exchange(t *testing.T, c net.Conn, br *bufio.Reader, path, body string) *http.Response {
	t.Helper()
	_, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: relay\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// raiseFileLimit lets the process open n more descriptors (up to the hard
// limit, as Go itself raises the soft one at start).
func raiseFileLimit(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	if lim.Cur < n {
		lim.Cur = min(lim.Max, n)
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	}
	require.GreaterOrEqual(t, lim.Cur, n, "RLIMIT_NOFILE hard limit %d: raise it (ulimit -n) to run this test", lim.Max)
}

// 1,100 idle connections from one address to an http.Server on the
// default limits: 64 are open, the rest refused and counted, and a client
// from another address is answered at once. Once the 64 are closed their
// slots are free again.
func TestNetListenerPerSource(t *testing.T) {
	raiseFileLimit(t, 2*1100+200)
	s := serveHTTP(t, stream.Config{Name: "http"}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}), nil)
	conns := make([]net.Conn, 0, 1100)
	for range 1100 {
		conns = append(conns, testtool.Dial(t, "127.0.0.2", s.nl.Addr()))
	}
	require.Eventually(t, func() bool { st := s.ln.Stats(); return st.Accepted+st.RefusedPerSource == 1100 }, 10*time.Second, time.Millisecond)
	st := s.ln.Stats()
	assert.Equal(t, int64(64), st.Open)
	assert.Equal(t, int64(1100-64), st.RefusedPerSource)
	assert.Zero(t, st.Evicted)

	// Served while the 64 connections from 127.0.0.2 stay open and silent.
	other := testtool.Dial(t, "127.0.0.3", s.nl.Addr())
	require.NoError(t, other.SetDeadline(time.Now().Add(30*time.Second))) // a failure, not a hang
	resp := exchange(t, other, bufio.NewReader(other), "/", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	for _, c := range conns {
		c.Close()
	}
	require.Eventually(t, func() bool { return s.ln.Stats().Open == 1 }, 10*time.Second, time.Millisecond, "the closed connections' slots given back")
	again := testtool.Dial(t, "127.0.0.2", s.nl.Addr())
	resp = exchange(t, again, bufio.NewReader(again), "/", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, int64(1100-64), s.ln.Stats().RefusedPerSource)
}

// At MaxConns a newcomer evicts the longest-idle kept-alive connection,
// never the older one whose request is in flight; when every connection
// has a request in flight, the newcomer is refused. The requests in
// flight are answered.
func TestNetListenerEvictsIdleOnly(t *testing.T) {
	release := make(chan struct{})
	inFlight := make(chan struct{}, 10)
	s := serveHTTP(t, stream.Config{MaxConns: 3}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			inFlight <- struct{}{}
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	}), nil)
	type client struct {
		c  net.Conn
		br *bufio.Reader
	}
	open := func(src string) client {
		c := testtool.Dial(t, src, s.nl.Addr())
		return client{c, bufio.NewReader(c)}
	}
	slow := func(cl client) chan *http.Response {
		ch := make(chan *http.Response, 1)
		_, err := io.WriteString(cl.c, "POST /slow HTTP/1.1\r\nHost: relay\r\nContent-Length: 0\r\n\r\n")
		require.NoError(t, err)
		go func() {
			resp, err := http.ReadResponse(cl.br, nil)
			if err != nil {
				close(ch)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ch <- resp
		}()
		<-inFlight
		return ch
	}
	// The oldest connection has a request in flight.
	a := open("127.0.0.2")
	aResp := slow(a)
	// Then one kept alive after a request: idle from its answer on.
	b := open("127.0.0.3")
	assert.Equal(t, http.StatusOK, exchange(t, b.c, b.br, "/", "").StatusCode)
	<-s.idle
	// Then a new one that has sent nothing yet: idle since it came.
	c := open("127.0.0.4")
	require.Eventually(t, func() bool { return s.ln.Stats().Open == 3 }, 5*time.Second, time.Millisecond)

	d := open("127.0.0.5")
	closedByPeer(t, b.c)
	st := s.ln.Stats()
	assert.Equal(t, int64(1), st.Evicted)
	assert.Equal(t, int64(3), st.Open)

	// Every connection busy: the newcomer is refused.
	cResp, dResp := slow(c), slow(d)
	e := open("127.0.0.6")
	closedByPeer(t, e.c)
	st = s.ln.Stats()
	assert.Equal(t, int64(1), st.RefusedFull)
	assert.Equal(t, int64(1), st.Evicted)

	close(release)
	for _, ch := range []chan *http.Response{aResp, cResp, dResp} {
		resp, ok := <-ch
		if assert.True(t, ok, "request in flight answered") {
			assert.Equal(t, http.StatusOK, resp.StatusCode)
		}
	}
}

// Without the ConnState hook a connection is busy from its first byte: a
// newcomer at MaxConns evicts one that never sent anything, not the older
// one whose request is in flight.
func TestNetListenerWithoutConnState(t *testing.T) {
	release, inFlight := make(chan struct{}), make(chan struct{})
	s := serveHTTP(t, stream.Config{MaxConns: 2}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(inFlight)
		<-release
	}), func(srv *http.Server) { srv.ConnState = nil })
	a := testtool.Dial(t, "127.0.0.2", s.nl.Addr())
	_, err := io.WriteString(a, "POST / HTTP/1.1\r\nHost: relay\r\nContent-Length: 0\r\n\r\n")
	require.NoError(t, err)
	<-inFlight
	b := testtool.Dial(t, "127.0.0.3", s.nl.Addr())
	require.Eventually(t, func() bool { return s.ln.Stats().Open == 2 }, 5*time.Second, time.Millisecond)
	testtool.Dial(t, "127.0.0.4", s.nl.Addr())
	closedByPeer(t, b)
	close(release)
	resp, err := http.ReadResponse(bufio.NewReader(a), nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, int64(1), s.ln.Stats().Evicted)
}

// A TLS client that never starts the handshake is cut at HandshakeTimeout
// although the server sets no deadline of its own; one slower than the
// server's own handshake timeout (its ReadHeaderTimeout) but within
// HandshakeTimeout is served; a plain HTTP client gets net/http's 400. The
// handler sees Request.TLS.
func TestNetListenerHandshakeTimeout(t *testing.T) {
	const handshake = 2 * time.Second
	cert := testtool.SelfSigned(t)
	s := serveHTTP(t, stream.Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, HandshakeTimeout: handshake},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.TLS != nil && r.TLS.HandshakeComplete {
				_, _ = io.WriteString(w, "tls")
			}
		}), func(srv *http.Server) { srv.ReadHeaderTimeout = 200 * time.Millisecond })
	start := time.Now()
	silent := testtool.Dial(t, "127.0.0.2", s.nl.Addr())

	slow := testtool.Dial(t, "127.0.0.3", s.nl.Addr())
	time.Sleep(500 * time.Millisecond)                            // the slow client's pace: past the server's 200 ms, well within the listener's 2 s
	tc := tls.Client(slow, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // self-signed test certificate
	require.NoError(t, tc.Handshake())
	br := bufio.NewReader(tc)
	_, err := io.WriteString(tc, "GET / HTTP/1.1\r\nHost: relay\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "tls", string(body), "Request.TLS filled in")

	plain := testtool.Dial(t, "127.0.0.4", s.nl.Addr())
	_, err = io.WriteString(plain, "GET / HTTP/1.1\r\nHost: relay\r\n\r\n")
	require.NoError(t, err)
	require.NoError(t, plain.SetReadDeadline(time.Now().Add(5*time.Second)))
	answer, _ := io.ReadAll(plain)
	assert.Contains(t, string(answer), "400 Bad Request")

	closedByPeer(t, silent)
	assert.GreaterOrEqual(t, time.Since(start), handshake, "never cut before the handshake deadline")
	// The server's goroutine may close the connection (giving its slot
	// back) before the handshake goroutine, which saw the same timeout,
	// has counted it: wait for both.
	require.Eventually(t, func() bool { st := s.ln.Stats(); return st.Open == 1 && st.CutHandshakeTimeout >= 1 },
		5*time.Second, time.Millisecond, "the cut connection counted and its slot given back")
	st := s.ln.Stats()
	assert.Equal(t, int64(1), st.CutHandshakeTimeout)
	assert.Equal(t, int64(1), st.HandshakeErrors, "the plain HTTP client")
	assert.Zero(t, st.CutIdle+st.CutFrameTimeout)
}

// Reads cut by the server's deadlines are counted by what the sender
// owed: nothing (a silent connection, a kept-alive one past IdleTimeout:
// idle) or the rest of a request (its headers past ReadHeaderTimeout, its
// body past a handler's deadline: frame timeout). Requests that end
// normally, their background reads interrupted by net/http, count nothing.
func TestNetListenerCuts(t *testing.T) {
	const header, idle, body = 500 * time.Millisecond, time.Second, 500 * time.Millisecond
	s := serveHTTP(t, stream.Config{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/body" {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(body))
		}
		if _, err := io.ReadAll(r.Body); err != nil {
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusRequestTimeout)
			return
		}
		time.Sleep(10 * time.Millisecond) // net/http reads in the background meanwhile
		_, _ = io.WriteString(w, "ok")
	}), func(srv *http.Server) { srv.ReadHeaderTimeout, srv.IdleTimeout = header, idle })

	silent := testtool.Dial(t, "127.0.0.2", s.nl.Addr())
	headers := testtool.Dial(t, "127.0.0.3", s.nl.Addr())
	_, err := io.WriteString(headers, "POST / HTTP/1.1\r\nHost: re")
	require.NoError(t, err)
	trickle := testtool.Dial(t, "127.0.0.4", s.nl.Addr())
	_, err = io.WriteString(trickle, "POST /body HTTP/1.1\r\nHost: relay\r\nContent-Length: 100\r\n\r\nx")
	require.NoError(t, err)
	kept := testtool.Dial(t, "127.0.0.5", s.nl.Addr())
	kbr := bufio.NewReader(kept)
	for range 3 {
		assert.Equal(t, http.StatusOK, exchange(t, kept, kbr, "/", "some body").StatusCode)
	}

	closedByPeer(t, silent)
	closedByPeer(t, headers)
	require.NoError(t, trickle.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(trickle), nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	closedByPeer(t, kept)
	require.Eventually(t, func() bool { return s.ln.Stats().Open == 0 }, 5*time.Second, time.Millisecond)
	st := s.ln.Stats()
	assert.Equal(t, int64(2), st.CutIdle, "the silent connection and the kept-alive one")
	assert.Equal(t, int64(2), st.CutFrameTimeout, "the slow headers and the slow body")
	assert.Zero(t, st.CutHandshakeTimeout)
}

// Closing the NetListener (http.Server.Shutdown does) stops accepting and
// lets a request in flight finish; Listener.Close ends the reads of every
// connection, as it does under Serve.
func TestNetListenerShutdown(t *testing.T) {
	release := make(chan struct{})
	inFlight := make(chan struct{})
	s := serveHTTP(t, stream.Config{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(inFlight)
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	}), nil)
	c := testtool.Dial(t, "127.0.0.2", s.nl.Addr())
	br := bufio.NewReader(c)
	_, err := io.WriteString(c, "POST /slow HTTP/1.1\r\nHost: relay\r\nContent-Length: 4\r\n\r\nbody")
	require.NoError(t, err)
	<-inFlight
	shut := make(chan error, 1)
	go func() { shut <- s.srv.Shutdown(context.Background()) }()
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", s.nl.Addr().String())
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 5*time.Second, time.Millisecond, "listener closed")
	close(release)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, <-shut)
	assert.Zero(t, s.ln.Stats().Open)

	// Listener.Close under a server that is still serving.
	s2 := serveHTTP(t, stream.Config{}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}), nil)
	k := testtool.Dial(t, "127.0.0.2", s2.nl.Addr())
	assert.Equal(t, http.StatusOK, exchange(t, k, bufio.NewReader(k), "/", "").StatusCode)
	require.NoError(t, s2.ln.Close())
	closedByPeer(t, k)
	require.Eventually(t, func() bool { return s2.ln.Stats().Open == 0 }, 5*time.Second, time.Millisecond)
	assert.Zero(t, s2.ln.Stats().CutIdle, "ended by the listener, not cut")
	assert.NoError(t, s2.nl.Close(), "Close after Listener.Close")
}
