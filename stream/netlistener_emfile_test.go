//go:build linux

package stream_test

import (
	"bufio"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/relaykit/relaykit/internal/testtool"

	"github.com/relaykit/relaykit/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Out of file descriptors, an http.Server on a NetListener backs off on
// EMFILE (net/http's own backoff) and keeps serving: the listener counts
// the errors and logs the episode once, and the waiting client is served
// once descriptors are free again. It runs in a process of its own, as
// TestListenerAcceptEMFILE does.
func TestNetListenerAcceptEMFILE(t *testing.T) {
	if !testtool.Isolated(t) {
		return
	}
	logs := &recordHandler{}
	s := serveHTTP(t, stream.Config{Logger: slog.New(logs)}, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}), nil)

	sender := newRawSender(t, "127.0.0.2")
	release := exhaustDescriptors(t) // none is left for accept
	sender.send(s.nl.Addr(), []byte("GET / HTTP/1.1\r\nHost: relay\r\n\r\n"))
	require.Eventually(t, func() bool { st := s.ln.Stats(); return st.AcceptErrors >= 3 && st.AcceptFailing },
		10*time.Second, time.Millisecond, "accept errors")

	release()
	c := sender.conn()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err, "the waiting client served after the episode")
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	st := s.ln.Stats()
	assert.False(t, st.AcceptFailing)
	assert.Equal(t, int64(1), st.Accepted)
	assert.Equal(t, []string{
		"WARN accept failing, the server retries with its backoff; new connections wait in the backlog",
		"INFO accepting again",
	}, logs.messages())
}

// With ProxyProtocol the NetListener's own accept loop backs off on
// EMFILE as Listener.Serve does (the server never sees the errors), and
// the waiting client's header and request are served once descriptors
// are free again.
func TestNetListenerProxyAcceptEMFILE(t *testing.T) {
	if !testtool.Isolated(t) {
		return
	}
	logs := &recordHandler{}
	s := serveHTTP(t, stream.Config{Logger: slog.New(logs), ProxyProtocol: stream.ProxyRequired, ProxyAllowed: allowed("127.0.0.0/8")},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.RemoteAddr) }), nil)
	// The accept loop starts with the server's first Accept: wait for it
	// before the descriptors run out.
	warm := testtool.Dial(t, "127.0.0.3", s.nl.Addr())
	_, err := warm.Write(append(header(t, 1, "203.0.113.1:1", "198.51.100.1:80"), "GET / HTTP/1.1\r\nHost: relay\r\n\r\n"...))
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(warm), nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.NoError(t, warm.Close())
	require.Eventually(t, func() bool { return s.ln.Stats().Open == 0 }, 5*time.Second, time.Millisecond)

	sender := newRawSender(t, "127.0.0.2")
	request := append(header(t, 2, "203.0.113.7:40001", "198.51.100.1:80"), "GET / HTTP/1.1\r\nHost: relay\r\n\r\n"...)
	release := exhaustDescriptors(t)
	sender.send(s.nl.Addr(), request)
	require.Eventually(t, func() bool { st := s.ln.Stats(); return st.AcceptErrors >= 3 && st.AcceptFailing },
		10*time.Second, time.Millisecond, "accept errors")

	release()
	c := sender.conn()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err = http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err, "the waiting client served after the episode")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "203.0.113.7:40001", string(body))
	st := s.ln.Stats()
	assert.False(t, st.AcceptFailing)
	assert.Equal(t, int64(2), st.ProxyHeaders)
	assert.Equal(t, []string{
		"WARN accept failing, retrying with backoff; new connections wait in the backlog",
		"INFO accepting again",
	}, logs.messages())
}
