package stream_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"sync/atomic"
	"testing"

	"github.com/relaykit/relaykit/internal/testtool"
	"github.com/relaykit/relaykit/stream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ticketCache is a tls.ClientSessionCache that counts the session
// tickets a client was given.
type ticketCache struct {
	tls.ClientSessionCache
	puts atomic.Int32
}

func (c *ticketCache) Put(key string, cs *tls.ClientSessionState) {
	if cs != nil {
		c.puts.Add(1)
	}
	c.ClientSessionCache.Put(key, cs)
}

// A TLS listener issues no session tickets unless SessionTickets is set:
// a TLS 1.3 server sends them after the handshake, and a syslog sender
// that never reads closes with them unread, which resets the connection
// and discards what the sender's kernel still held to send. The
// handler here answers each line so that the client reads, and with its
// read takes any ticket sent before the answer. The caller's tls.Config
// is left as it was.
func TestListenerTLSSessionTickets(t *testing.T) {
	cert := testtool.SelfSigned(t)
	for _, tickets := range []bool{false, true} {
		server := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		ln, err := stream.New(loopback(stream.Config{TLS: server, SessionTickets: tickets}, func(c *stream.Conn) {
			f := stream.NewFramer(c, stream.FramerConfig{})
			for {
				if _, _, err := f.Next(); err != nil {
					return
				}
				if _, err := io.WriteString(c, "ok\n"); err != nil {
					return
				}
			}
		}))
		require.NoError(t, err)
		go func() { done <- ln.Serve(ctx) }()

		cache := &ticketCache{ClientSessionCache: tls.NewLRUClientSessionCache(4)}
		c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{InsecureSkipVerify: true, ClientSessionCache: cache})
		require.NoError(t, err)
		_, err = io.WriteString(c, "<13>hello\n")
		require.NoError(t, err)
		line, err := bufio.NewReader(c).ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, "ok\n", line)
		require.NoError(t, c.Close())
		cancel()
		require.NoError(t, <-done)

		if tickets {
			assert.Positive(t, cache.puts.Load(), "SessionTickets: the client was given a ticket")
		} else {
			assert.Zero(t, cache.puts.Load(), "no ticket by default")
		}
		assert.False(t, server.SessionTicketsDisabled, "the caller's config is not changed")
	}
}
