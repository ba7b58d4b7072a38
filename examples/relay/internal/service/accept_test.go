package service

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAcceptEMFILE: a relay with the default max_connections (1024) under
// `ulimit -n 200` gets 256 idle connections from four addresses (64 each,
// within max_connections_per_source): accept fails with EMFILE. The relay
// keeps running, logs the episode once and counts the errors; the events
// of connections that waited in the backlog meanwhile arrive once the idle
// connections are gone, and so do a new sender's.
func TestAcceptEMFILE(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "relay.yaml")
	conf := `
inputs:
  syslog_udp: []
  syslog_tcp:
    - name: tcp
      listen: 127.0.0.1:0
routes:
  - name: archive-all
    final: true
    destinations: [archive]
destinations:
  archive:
    type: archive
    format: json
    dir: ` + filepath.Join(dir, "archive") + `
spool:
  dir: ` + filepath.Join(dir, "spool") + `
dead_letter:
  dir: ` + filepath.Join(dir, "deadletter") + `
metrics:
  listen: 127.0.0.1:0
`
	require.NoError(t, os.WriteFile(path, []byte(conf), 0o600))
	cfg, err := config.LoadConfig(path)
	require.NoError(t, err)
	require.Equal(t, 1024, cfg.Inputs.SyslogTCP[0].MaxConnections, "the shipped default")

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var log relaytest.SyncBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("relay output:\n%s", log.String())
		}
	})
	child := startChildWith(t, ctx, path, childOptions{nofile: 200, out: &log}) // as after `ulimit -n 200`
	addrs, exited := child.addrs, child.exited

	// 256 connections, 64 from each of four addresses; the last one of each
	// address sends an event at once.
	var idle, senders []net.Conn
	defer func() {
		for _, c := range append(idle, senders...) {
			c.Close()
		}
	}()
	for i := range 256 {
		src := fmt.Sprintf("127.0.0.%d", 1+i/64)
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 10 * time.Second}
		c, err := d.DialContext(ctx, "tcp", addrs["tcp"])
		require.NoError(t, err, "connection %d", i)
		if i%64 == 63 {
			_, err = fmt.Fprintf(c, "<13>Nov 22 10:00:00 host app: waited %s\n", src)
			require.NoError(t, err)
			senders = append(senders, c)
		} else {
			idle = append(idle, c)
		}
	}
	const warning = "accept failing, retrying with backoff"
	relaytest.WaitFor(t, 30*time.Second, func() bool { return strings.Contains(log.String(), warning) }, "accept failing")
	select {
	case err := <-exited:
		t.Fatalf("the relay exited at EMFILE: %v", err)
	default:
	}
	assert.NotContains(t, log.String(), "relay stopping")

	// The episode ends when the idle connections go.
	for _, c := range idle {
		c.Close()
	}
	idle = nil
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.5")}, Timeout: 10 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addrs["tcp"])
	require.NoError(t, err)
	senders = append(senders, c)
	_, err = io.WriteString(c, "<13>Nov 22 10:00:01 host app: after the episode\n")
	require.NoError(t, err)

	want := []string{"waited 127.0.0.1", "waited 127.0.0.2", "waited 127.0.0.3", "waited 127.0.0.4", "after the episode"}
	archive := filepath.Join(dir, "archive")
	relaytest.WaitFor(t, 30*time.Second, func() bool { return len(archivedRecords(t, archive)) >= len(want) }, "events archived")
	var got []string
	for _, r := range archivedRecords(t, archive) {
		got = append(got, r.Message)
	}
	assert.ElementsMatch(t, want, got)
	metrics := "http://" + addrs["metrics"] + "/metrics"
	assert.Positive(t, scrapeSample(metrics, `relay_input_accept_errors_total{input="tcp"}`))
	// One warning per episode, not per failed accept: each warning is
	// followed by "accepting again" before the next one. Closing the idle
	// connections can start a second episode (the relay accepts the
	// connections still in the backlog before their handlers have seen the
	// first ones end), never a warning per error.
	out := log.String()
	var episodes []string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(l, warning):
			episodes = append(episodes, "failing")
		case strings.Contains(l, "accepting again"):
			episodes = append(episodes, "again")
		}
	}
	require.NotEmpty(t, episodes)
	for i, e := range episodes {
		assert.Equal(t, []string{"failing", "again"}[i%2], e, "warnings and recoveries alternate: %v", episodes)
	}
	assert.Equal(t, "again", episodes[len(episodes)-1], "the episode ended: %v", episodes)
	errs := scrapeSample(metrics, `relay_input_accept_errors_total{input="tcp"}`)
	assert.GreaterOrEqual(t, errs, float64(len(episodes)/2), "every episode counted its errors")
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, warning) {
			assert.Contains(t, l, "too many open files", "the warning names the error")
			assert.Contains(t, l, "input=tcp")
		}
	}
	assert.Contains(t, out, "accepting again")

	require.NoError(t, child.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, <-exited)
}
