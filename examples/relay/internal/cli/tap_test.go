package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTapCommandPrintsAnEvent(t *testing.T) {
	const token = "cli-token"
	tr := startRelay(t, relaytest.ConfigWithAPI(t, token))
	t.Setenv("RELAY_API_TOKEN", token)

	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(t.Context(), []string{"tap", "-addr", tr.addr("metrics"), "-at", "destination:archive", "-n", "1"}, &out, &errb)
	}()
	waitSubscribed(t, tr, "destination:archive", 1)
	relaytest.SendTCP(t, tr.addr("tcp"), relaytest.LoggerLine)
	select {
	case code := <-done:
		require.Equal(t, 0, code, errb.String())
	case <-time.After(30 * time.Second):
		t.Fatal("relay tap did not end after -n 1")
	}
	assert.Regexp(t, `^\S+ destination:archive delivered web-1 user\.notice hello from logger`, out.String())
	assert.Equal(t, 1, bytes.Count(out.Bytes(), []byte("\n")), out.String())

	// Without the token: exit 1, and a hint.
	out.Reset()
	errb.Reset()
	t.Setenv("RELAY_API_TOKEN", "")
	code := Main(t.Context(), []string{"tap", "-addr", tr.addr("metrics"), "-at", "destination:archive", "-n", "1"}, &out, &errb)
	assert.Equal(t, 1, code)
	assert.Contains(t, errb.String(), "RELAY_API_TOKEN")
	assert.Empty(t, out.String())

	// -at is required.
	assert.Equal(t, 2, Main(t.Context(), []string{"tap", "-addr", tr.addr("metrics")}, &out, &errb))
}
