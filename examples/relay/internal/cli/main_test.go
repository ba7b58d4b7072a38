package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuickstart follows README.md: start the relay with the embedded
// default config, send a line with
// `logger -n 127.0.0.1 -P <port> -T --rfc5424 "hello"`, find it in
// ./data/archive and in the metrics. The config is the default's own text
// (-print-default-config) with one change: its ports, 5514 (UDP and TCP)
// and 9464, moved to free ones, so the test runs whatever else listens
// there (TestDefaultConfig checks the default's ports).
func TestQuickstart(t *testing.T) {
	relaytest.NeedTool(t, "logger")
	var def bytes.Buffer
	require.Equal(t, 0, Main(t.Context(), []string{"-print-default-config"}, &def, io.Discard))
	syslogPort, metricsAddr := relaytest.FreeUDPAndTCPPort(t), relaytest.FreeTCPAddr(t)
	yaml := def.String()
	require.Equal(t, 2, strings.Count(yaml, "listen: 127.0.0.1:5514"))
	require.Equal(t, 1, strings.Count(yaml, "listen: 127.0.0.1:9464"))
	yaml = strings.ReplaceAll(yaml, "listen: 127.0.0.1:5514", "listen: 127.0.0.1:"+syslogPort)
	yaml = strings.ReplaceAll(yaml, "listen: 127.0.0.1:9464", "listen: "+metricsAddr)
	config := relaytest.WriteConfig(t, yaml)

	t.Chdir(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	var stderr relaytest.SyncBuffer
	done := make(chan int, 1)
	go func() { done <- Main(ctx, []string{"-config", config, "-stats", "50ms"}, io.Discard, &stderr) }()
	defer func() {
		cancel()
		assert.Equal(t, 0, <-done, "exit code")
		assert.Contains(t, stderr.String(), "final ledger")
		assert.Contains(t, stderr.String(), "destination archive: archive ./data/archive (raw)", "startup summary")
	}()
	relaytest.WaitFor(t, 10*time.Second, func() bool { return strings.Contains(stderr.String(), "relay started") }, "relay started")

	out, err := exec.Command("logger", "-n", "127.0.0.1", "-P", syslogPort, "-T", "--rfc5424", "hello").CombinedOutput()
	require.NoError(t, err, string(out))

	// The archive is flushed within a second (storage's flush interval).
	relaytest.WaitFor(t, 10*time.Second, func() bool {
		files, _ := filepath.Glob("data/archive/relay-*.log")
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if bytes.Contains(b, []byte("hello\n")) {
				return true
			}
		}
		return false
	}, "hello in ./data/archive/relay-YYYY-MM-DD.log")
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	assert.Contains(t, string(b), `relay_destination_delivered_events_total{destination="archive",type="archive"} 1`)
	relaytest.WaitFor(t, 5*time.Second, func() bool { return strings.Contains(stderr.String(), "received=1 routed=1") }, "-stats line")
}

// TestSIGHUPReload runs the relay as main does, with a config file, and
// reloads its routes with a real SIGHUP.
func TestSIGHUPReload(t *testing.T) {
	dir := t.TempDir()
	tcp, metrics := relaytest.FreePort(t), relaytest.FreePort(t)
	write := func(routes string) string {
		return relaytest.WriteConfigAt(t, filepath.Join(dir, "relay.yaml"), `
inputs:
  syslog_tcp:
    - {name: tcp, listen: "127.0.0.1:`+tcp+`"}
destinations:
  archive: {type: archive, dir: `+dir+`/archive}
  errors: {type: archive, dir: `+dir+`/errors}
spool: {dir: `+dir+`/spool}
dead_letter: {dir: `+dir+`/dl}
metrics: {listen: "127.0.0.1:`+metrics+`"}
routes:
`+routes)
	}
	path := write("  - {name: all, final: true, destinations: [archive]}\n")
	ctx, cancel := context.WithCancel(context.Background())
	var stderr relaytest.SyncBuffer
	done := make(chan int, 1)
	go func() { done <- Main(ctx, []string{"-config", path}, io.Discard, &stderr) }()
	defer func() {
		cancel()
		assert.Equal(t, 0, <-done)
	}()
	relaytest.WaitFor(t, 10*time.Second, func() bool { return strings.Contains(stderr.String(), "relay started") }, "relay started")
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	delivered := func(dest string) bool {
		resp, err := client.Get("http://127.0.0.1:" + metrics + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(b), `relay_destination_delivered_events_total{destination="`+dest+`",type="archive"} 1`)
	}
	relaytest.Send(t, "tcp", "127.0.0.1:"+tcp, []byte("<13>1 - h a - - - ERROR one\n"))
	relaytest.WaitFor(t, 10*time.Second, func() bool { return delivered("archive") }, "first event in the archive")

	write("  - {name: errors, filter: ERROR, final: true, destinations: [errors]}\n  - {name: all, final: true, destinations: [archive]}\n")
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	relaytest.WaitFor(t, 10*time.Second, func() bool { return strings.Contains(stderr.String(), "routes reloaded") }, "routes reloaded")
	relaytest.Send(t, "tcp", "127.0.0.1:"+tcp, []byte("<13>1 - h a - - - ERROR two\n"))
	relaytest.WaitFor(t, 10*time.Second, func() bool { return delivered("errors") }, "second event routed by the reloaded table")
}
