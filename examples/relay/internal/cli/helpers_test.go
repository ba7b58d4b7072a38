package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"
	"github.com/relaykit/relaykit/examples/relay/internal/service"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testRelay is a relay the commands under test talk to, as a user's
// shell would: over its listeners.
type testRelay struct{ *service.Relay }

// startRelay runs the relay of cfg until the test ends and waits until it
// answers /healthz.
func startRelay(t *testing.T, cfg config.Config) *testRelay {
	t.Helper()
	require.NoError(t, cfg.Validate())
	r, err := service.NewRelay(cfg, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(60 * time.Second):
			t.Fatal("relay did not stop")
		}
	})
	tr := &testRelay{r}
	client := &http.Client{Timeout: 5 * time.Second}
	relaytest.WaitFor(t, 10*time.Second, func() bool {
		resp, err := client.Get("http://" + tr.addr("metrics") + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, "relay ready")
	client.CloseIdleConnections()
	return tr
}

func (tr *testRelay) addr(name string) string { return tr.Addrs()[name].String() }

// waitSubscribed waits until the tap point has n subscriptions.
func waitSubscribed(t *testing.T, tr *testRelay, point string, n int) {
	t.Helper()
	relaytest.WaitFor(t, 10*time.Second, func() bool {
		p := tr.Taps().Lookup(point)
		return p != nil && p.Stats().Subscribers == n
	}, fmt.Sprintf("%d subscriber(s) at %s", n, point))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
