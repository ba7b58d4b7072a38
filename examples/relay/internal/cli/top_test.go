package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/api"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `relay top` against a running relay draws -n screens from /api/status:
// the inputs, the route, the archive and the ledger, with rates from the
// second screen on.
func TestTopCommand(t *testing.T) {
	const token = "top-token"
	tr := startRelay(t, relaytest.ConfigWithAPI(t, token))
	relaytest.SendTCP(t, tr.addr("tcp"), relaytest.LoggerLine)
	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == 1 }, "the line archived")

	var out, errb bytes.Buffer
	code := Main(t.Context(), []string{"top", "-addr", tr.addr("metrics"), "-token", token, "-n", "2", "-interval", "50ms"}, &out, &errb)
	require.Equal(t, 0, code, errb.String())
	screens := strings.Split(out.String(), "\x1b[H\x1b[2J")
	require.Len(t, screens, 3, "two screens, each after a clear") // "" before the first
	first, second := screens[1], screens[2]
	for _, s := range []string{first, second} {
		assert.Contains(t, s, "relay "+tr.addr("metrics")+"  ready")
		assert.Regexp(t, regexp.MustCompile(`(?m)^\s*tcp\s+syslog_tcp\s+\d+\s+\S+\s+1\s+0\s+0$`), s)
		assert.Regexp(t, regexp.MustCompile(`(?m)^\s*udp\s+syslog_udp\s+-\s`), s)
		assert.Regexp(t, regexp.MustCompile(`(?m)^\s*archive-all\s+\S+\s+1\s+1\s+0$`), s)
		assert.Regexp(t, regexp.MustCompile(`(?m)^\s*archive\s+archive\s+\S+\s+1\s+0\s+0B\s+0\s+ok$`), s)
		assert.Contains(t, s, "LEDGER received=1 routed=1 ")
		assert.Contains(t, s, " archived=1 ")
	}
	assert.Regexp(t, `(?m)^\s*tcp\s+syslog_tcp\s+\d+\s+-\s`, first, "no rate on the first screen")
	assert.Regexp(t, `(?m)^\s*tcp\s+syslog_tcp\s+\d+\s+0\s`, second, "a rate from the second on")

	// Without the token: exit 1 and a hint; without the API: 404 explained.
	out.Reset()
	errb.Reset()
	t.Setenv("RELAY_API_TOKEN", "")
	assert.Equal(t, 1, Main(t.Context(), []string{"top", "-addr", tr.addr("metrics"), "-n", "1"}, &out, &errb))
	assert.Contains(t, errb.String(), "RELAY_API_TOKEN")
	assert.Empty(t, out.String())
	assert.Equal(t, 2, Main(t.Context(), []string{"top", "-n", "-1"}, &out, &errb))

	off := startRelay(t, relaytest.TestConfig(t))
	errb.Reset()
	assert.Equal(t, 1, Main(t.Context(), []string{"top", "-addr", off.addr("metrics"), "-n", "1"}, &out, &errb))
	assert.Contains(t, errb.String(), "api.enabled")
}

// A TLS input's certificate is on the screen: the fingerprint senders
// pin, its expiry, and a reload that kept the old certificate.
func TestTopShowsTLSCertificate(t *testing.T) {
	st := &api.Status{Time: time.Now(), Ready: true, Inputs: []api.InputStatus{
		{Name: "tcp", Kind: "syslog_tcp", Connections: 0},
		{Name: "tls", Kind: "syslog_tcp", Connections: 2, TLS: &api.TLSStatus{
			SHA256: "AB:CD:EF", NotAfter: time.Date(2036, 11, 28, 0, 0, 0, 0, time.UTC),
			Reloads: 3, ReloadErrors: 1, Error: "tls: private key does not match public key",
		}},
	}}
	var b strings.Builder
	renderTop(&b, "127.0.0.1:9464", st, nil)
	assert.Contains(t, b.String(), `TLS tls sha256=AB:CD:EF expires 2036-11-28 reloads=3 reload_errors=1 error="tls: private key does not match public key"`+"\n")
	assert.NotContains(t, b.String(), "TLS tcp ")
}
