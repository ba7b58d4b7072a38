package forward_test

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"

	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/internal/testtool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A TLS 1.3 receiver sends session tickets after the handshake to a
// client that can keep them (one with a ClientSessionCache). A sender that
// closes with them unread resets the connection, and its kernel discards
// what it still held to send. The sink reads what the receiver sent
// before it closes, so a receiver that reads only after the sink has
// closed (a busy one) still gets every frame of the one batch sent on the
// connection.
func TestSyslogTLSCloseWithUnreadTickets(t *testing.T) {
	cert := testtool.SelfSigned(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13})
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		_ = c.(*tls.Conn).Handshake() // the tickets go out with it
		accepted <- c
	}()

	pool := x509.NewCertPool()
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	require.NoError(t, err)
	pool.AddCert(leaf)
	sink, err := forward.NewSyslog(forward.SyslogConfig{Network: "tls", Address: ln.Addr().String(), TLS: &tls.Config{RootCAs: pool, ClientSessionCache: tls.NewLRUClientSessionCache(1)}})
	require.NoError(t, err)
	batch := bigSyslogBatch(2500) // 1 MB: more than the receiver's socket buffer takes unread, the rest waits in the sink's
	require.NoError(t, sink.Send(t.Context(), batch))
	c, ok := <-accepted
	require.True(t, ok, "accepted")
	defer c.Close()
	require.NoError(t, sink.Close())

	frames := readFrames(c) // only now does the receiver read
	assert.Len(t, frames, len(batch), "every frame of the batch, none lost to a reset")
}
