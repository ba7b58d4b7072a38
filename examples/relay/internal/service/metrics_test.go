package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/api"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMetricsServerTimeouts: the metrics and health server does not let a
// client hold a connection: one that trickles its request body is cut at
// the read timeout, one that sends requests and never reads the responses
// at the write timeout. Each case waits for the shipped timeout (5 s and
// 10 s, in parallel).
func TestMetricsServerTimeouts(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the shipped 5 s and 10 s timeouts: skipped in -short mode (the -race run has it)")
	}
	l := ledger.New()
	eng, err := engine.New(engine.Config{Sink: sinkFunc(func(context.Context, []relaykit.Event) error { return nil }), Workers: 1})
	require.NoError(t, err)
	l.Engine = eng
	ms, err := api.NewServer("127.0.0.1:0", func() error { return nil }, nil, l)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ms.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	// Enough series that a few hundred responses fill the socket buffers.
	for i := range 200 {
		l.Input(fmt.Sprintf("input-%03d", i), "syslog_tcp")
	}
	addr := ms.Addr()
	assert.Positive(t, ms.HTTP.IdleTimeout, "kept-alive connections are closed when idle")

	t.Run("trickled request", func(t *testing.T) {
		t.Parallel()
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		began := time.Now()
		_, err = io.WriteString(c, "POST /healthz HTTP/1.1\r\nHost: relay\r\nContent-Length: 100000\r\n\r\n")
		require.NoError(t, err)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Go(func() { // one byte every 100 ms: well within any header timeout, forever for the body
			tk := time.NewTicker(100 * time.Millisecond)
			defer tk.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tk.C:
				}
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
			}
		})
		defer func() { close(stop); wg.Wait() }()
		// Generous: the deadline only bounds how long a server that holds
		// the connection keeps the test waiting.
		require.NoError(t, c.SetReadDeadline(time.Now().Add(ms.HTTP.ReadTimeout+30*time.Second)))
		_, err = io.Copy(io.Discard, c) // until the server closes the connection
		var ne net.Error
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "the server still holds the trickling connection after %s", time.Since(began))
		assert.GreaterOrEqual(t, time.Since(began), ms.HTTP.ReadTimeout-time.Second)
	})

	t.Run("response never read", func(t *testing.T) {
		t.Parallel()
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		req := "GET /metrics HTTP/1.1\r\nHost: relay\r\nX-Pad: " + strings.Repeat("p", 4000) + "\r\n\r\n"
		began := time.Now()
		// Pipelined requests, never a read: the responses fill the socket
		// buffers, the server's write blocks, then the requests fill the
		// server's receive buffer and this write blocks. A server that
		// gives up on the response closes the connection (with unread
		// data: a reset) and the write fails; one that waits for ever
		// lets the write time out. The write timeout runs from the headers
		// of the request being answered, not from began: filling megabytes
		// of loopback buffers with responses takes seconds on a loaded
		// machine, so the deadline is generous (it only bounds how long a
		// server that holds the connection keeps the test waiting).
		require.NoError(t, c.SetWriteDeadline(time.Now().Add(ms.HTTP.WriteTimeout+50*time.Second)))
		for {
			if _, err = io.WriteString(c, req); err != nil {
				break
			}
		}
		var ne net.Error
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "the server still holds the connection after %s: %v", time.Since(began), err)
		assert.True(t, errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE), "closed by the server: %v", err)
		assert.GreaterOrEqual(t, time.Since(began), ms.HTTP.WriteTimeout-time.Second)
	})
}
