package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward/forwardtest"
)

// feed sends line(0, i) for i = 0, 1, ... at rate lines per second over a
// TCP connection to addr until stop is closed, and returns how many it
// wrote.
func feed(t *testing.T, addr string, rate int, stop <-chan struct{}, sent *atomic.Int64) {
	var c net.Conn
	require.Eventually(t, func() bool {
		var err error
		c, err = net.Dial("tcp", addr)
		return err == nil
	}, 10*time.Second, 5*time.Millisecond)
	defer c.Close()
	w := bufio.NewWriter(c)
	tk := time.NewTicker(10 * time.Millisecond)
	defer tk.Stop()
	began := time.Now()
	for {
		select {
		case <-stop:
			_ = w.Flush()
			return
		case <-tk.C:
		}
		due := int64(time.Since(began).Seconds()*float64(rate)) - sent.Load()
		for range due {
			if _, err := w.WriteString(line(0, int(sent.Load())) + "\n"); err != nil {
				return
			}
			sent.Add(1)
		}
		if err := w.Flush(); err != nil {
			return
		}
	}
}

// freeAddr returns a free loopback TCP address.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestAgentHECOutage: HEC refuses everything for 60 s while lines arrive
// at 500 a second (100 alerts a second). The agent goes on archiving, and
// once HEC is back every alert arrives, once. It runs in the test pass
// without the race detector (its point is the 60 s; CI runs both passes).
func TestAgentHECOutage(t *testing.T) {
	if raceEnabled {
		t.Skip("a 60 s outage; runs in the pass without -race")
	}
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	dir := t.TempDir()
	addr := freeAddr(t)
	ctx, stopAgent := context.WithCancel(t.Context())
	done := make(chan summary, 1)
	go func() {
		s, err := run(ctx, config{Listen: addr, HECURL: hec.URL, HECToken: hec.Token(), Dir: dir, Drain: 30 * time.Second}, nil)
		assert.NoError(t, err)
		done <- s
	}()
	stop := make(chan struct{})
	var sent atomic.Int64
	fed := make(chan struct{})
	go func() { defer close(fed); feed(t, addr, 500, stop, &sent) }()

	require.Eventually(t, func() bool { return len(hec.Messages()) > 0 }, 20*time.Second, 10*time.Millisecond)
	hec.SetDown(true)
	time.Sleep(60 * time.Second) // the outage
	hec.SetDown(false)
	time.Sleep(2 * time.Second)
	close(stop)
	<-fed
	// Wait until every line was read, then stop the agent: it delivers
	// what is left within its drain.
	require.Eventually(t, func() bool { return int64(len(archived(t, dir))) == sent.Load() }, 20*time.Second, 50*time.Millisecond)
	stopAgent()
	sum := <-done

	n := int(sent.Load())
	var want []string
	for i := range n {
		if i%5 == 4 {
			want = append(want, line(0, i))
		}
	}
	assert.Equal(t, summary{Read: int64(n), Archived: int64(n), Alerts: int64(len(want)), HECSent: int64(len(want))}, sum)
	assert.Equal(t, want, hec.Messages(), "every alert, once, in order")
	t.Logf("%d lines, %d alerts through a 60 s HEC outage", n, len(want))
}

// TestAgentKillDuringOutage: the agent is killed with SIGKILL in the
// middle of a HEC outage, then started again with HEC back. Every alert
// of every batch the agent had flushed (the archive shows which) reaches
// HEC; what is lost is only what it held unflushed: its open batch and the
// lines not yet read.
func TestAgentKillDuringOutage(t *testing.T) {
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	hec.SetDown(true)
	dir := t.TempDir()
	addr := freeAddr(t)
	agent := func(args ...string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], append([]string{"-dir", dir, "-hec", hec.URL, "-hec-token", hec.Token()}, args...)...)
		cmd.Env = append(os.Environ(), "RELAYKIT_AGENT_MAIN=1")
		cmd.Stderr = os.Stderr
		return cmd
	}
	first := agent("-listen", addr)
	require.NoError(t, first.Start())
	stop := make(chan struct{})
	var sent atomic.Int64
	fed := make(chan struct{})
	go func() { defer close(fed); feed(t, addr, 500, stop, &sent) }()
	time.Sleep(8 * time.Second) // lines arrive during the outage
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	close(stop)
	<-fed

	// What the killed agent had flushed: the archive (written per batch).
	flushed := archived(t, dir)
	require.NotEmpty(t, flushed)
	for i, ln := range flushed {
		var v struct{ Seq int }
		require.NoError(t, json.Unmarshal([]byte(ln), &v), ln)
		require.Equal(t, i, v.Seq, "archived lines are a prefix of what was sent")
	}
	assert.Empty(t, hec.Messages(), "HEC was down")

	// Restart with HEC back and no new input: the spool is delivered.
	hec.SetDown(false)
	second := agent()
	second.Stdin, second.Stderr = strings.NewReader(""), nil
	out, err := second.CombinedOutput()
	require.NoError(t, err, string(out))
	var want []string
	for i := range flushed {
		if i%5 == 4 {
			want = append(want, line(0, i))
		}
	}
	assert.Equal(t, want, hec.Messages(), "every flushed alert, once, in order")
	lost := int(sent.Load()) - len(flushed)
	assert.LessOrEqual(t, lost, 1000, "lost only the open batch and unread lines")
	t.Logf("sent %d, flushed %d before the kill, lost %d (open batch and socket buffers); restart: %s",
		sent.Load(), len(flushed), lost, strings.TrimSpace(string(out)))
}
