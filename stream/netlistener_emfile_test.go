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

	release := exhaustDescriptors(t, 1) // one for the client's socket; none is left for accept
	c := testtool.Dial(t, "127.0.0.2", s.nl.Addr())
	_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: relay\r\n\r\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { st := s.ln.Stats(); return st.AcceptErrors >= 3 && st.AcceptFailing },
		10*time.Second, time.Millisecond, "accept errors")

	release()
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
