package service

import (
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTLSSenderClosesWithoutReading: loggen sends syslog over TLS for a
// second and closes without ever reading, as most syslog senders do,
// while the relay still has most of it to read (held back here by the
// sender's rate limit, as a busy relay would be). Everything loggen
// counted as sent is archived. With TLS 1.3 session tickets, which a
// server sends after the handshake, loggen's close left them unread and
// reset the connection, and its kernel discarded what it still held to
// send: a fifth of the events in this test, and in a test whose relay
// read at 1,000 events/s, 22,000 of 27,000.
func TestTLSSenderClosesWithoutReading(t *testing.T) {
	relaytest.NeedTool(t, "loggen")
	cert, key := selfSigned(t)
	cfg := sourcesConfig(t)
	cfg.Inputs.SyslogTCP = append(cfg.Inputs.SyslogTCP, config.TCPInputConfig{
		Name: "tls", Listen: "127.0.0.1:0", TLS: &config.TLSConfig{CertFile: cert, KeyFile: key},
	})
	cfg.Sources.RateLimit.EventsPerSecond = 2000 // burst: one second's worth
	require.NoError(t, cfg.Validate())
	tr := startRelay(t, cfg)

	out := runTool(t, "loggen", "--use-ssl", "--syslog-proto", "--active-connections", "1", "--rate", "5000", "--interval", "1", "127.0.0.1", tr.port("tls"))
	n := loggenCount(t, out)
	require.Greater(t, n, 3000, "loggen sent more than the relay reads while it sends:\n%s", out)
	relaytest.WaitFor(t, 30*time.Second, func() bool { return tr.Ledger().Received >= int64(n) },
		"every event loggen sent received")
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.EqualValues(t, n, s.Received)
	assert.Zero(t, s.DroppedTotal())
}
