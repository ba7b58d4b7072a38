package main

import (
	"bufio"
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
// TCP connection to addr until stop is closed or the connection fails,
// counting them in sent. With acked not nil it also reads the agent's
// answers (-ack) into acked, until the connection closes.
func feed(t *testing.T, addr string, rate int, stop <-chan struct{}, sent, acked *atomic.Int64) {
	c := dial(t, addr)
	defer c.Close()
	if acked != nil {
		answers := make(chan struct{})
		go func() { defer close(answers); _ = readAcks(t, c, acked, nil) }()
		defer func() { <-answers }() // after a kill: EOF or a reset
	}
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
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestAgentHECOutageNoRace: HEC refuses everything for 60 s while lines arrive
// at 500 a second (100 alerts a second). The agent goes on archiving, and
// once HEC is back every alert arrives, once. It runs in the test pass
// without the race detector (its point is the 60 s; CI runs both passes).
func TestAgentHECOutageNoRace(t *testing.T) {
	if raceEnabled {
		t.Skip("a 60 s outage; runs in the pass without -race")
	}
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	addr := freeAddr(t)
	dir, stopAgent := runAgent(t, hec, config{JSON: addr, Drain: 30 * time.Second})
	stop := make(chan struct{})
	var sent atomic.Int64
	fed := make(chan struct{})
	go func() { defer close(fed); feed(t, addr, 500, stop, &sent, nil) }()

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
	sum, err := stopAgent()
	require.NoError(t, err)

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

// agentCmd returns the command that runs the agent (this test binary, see
// TestMain) with -dir dir and -hec hec, no listener but those args name,
// and args.
func agentCmd(dir string, hec *forwardtest.HECServer, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"-dir", dir, "-hec", hec.URL, "-hec-token", hec.Token(), "-syslog", "", "-json", ""}, args...)...)
	cmd.Env = append(os.Environ(), "RELAYKIT_AGENT_MAIN=1")
	cmd.Stderr = os.Stderr
	return cmd
}

// TestAgentKillDuringOutage: the agent, acknowledging (-ack), is killed
// with SIGKILL in the middle of a HEC outage, then started again with HEC
// back. Every line it answered for is in the archive, and every alert of
// every batch it had archived (so every alert it answered for) reaches
// HEC, once, in order. What is lost is only what it had not answered for:
// a sender that sends that again loses nothing.
func TestAgentKillDuringOutage(t *testing.T) {
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	hec.SetDown(true)
	dir := t.TempDir()
	addr := freeAddr(t)
	first := agentCmd(dir, hec, "-json", addr, "-ack")
	require.NoError(t, first.Start())
	stop := make(chan struct{})
	var sent, acked atomic.Int64
	fed := make(chan struct{})
	go func() { defer close(fed); feed(t, addr, 500, stop, &sent, &acked) }()
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
	require.Positive(t, acked.Load())
	assert.LessOrEqual(t, acked.Load(), int64(len(flushed)), "every line answered for is archived")
	assert.Empty(t, hec.Messages(), "HEC was down")

	// Restart with HEC back and no input: the agent delivers the spool and
	// exits.
	hec.SetDown(false)
	second := agentCmd(dir, hec)
	second.Stderr = nil
	outb, err := second.CombinedOutput()
	out := string(outb)
	require.NoError(t, err, out)
	// The alerts of a prefix of the lines sent, once, in order, that
	// covers every archived line (a kill between the spool's write and
	// the archive's may add the alerts of one batch more).
	got := hec.Messages()
	for i, m := range got {
		require.Equal(t, line(0, 5*i+4), m, "alert %d", i)
	}
	assert.GreaterOrEqual(t, len(got), len(flushed)/5, "every archived alert")
	lost := int(sent.Load()) - len(flushed)
	assert.LessOrEqual(t, lost, 1000, "lost only the open batch and unread lines")
	t.Logf("sent %d, answered for %d, flushed %d before the kill, lost %d (open batch and socket buffers); restart: %s",
		sent.Load(), acked.Load(), len(flushed), lost, strings.TrimSpace(out))
}

// TestAgentAckArchiveFails: when the archive cannot write (a file size
// limit makes its writes fail with EFBIG, as a full disk would), the
// agent answers for no line it could not archive: it closes the
// connection, and every line it answered for is in the archive.
func TestAgentAckArchiveFails(t *testing.T) {
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	dir := t.TempDir()
	addr := freeAddr(t)
	agent := agentCmd(dir, hec, "-json", addr, "-ack")
	agent.Env = append(agent.Env, "RELAYKIT_AGENT_FSIZE=65536") // about 1,500 lines
	var out strings.Builder
	agent.Stdout, agent.Stderr = &out, &out
	require.NoError(t, agent.Start())
	defer func() {
		require.NoError(t, agent.Process.Signal(syscall.SIGTERM))
		_ = agent.Wait() // its exit status reports the archive's failure
		t.Logf("agent: %s", strings.TrimSpace(out.String()))
	}()

	c := dial(t, addr)
	defer c.Close()
	var acked atomic.Int64
	closed := make(chan error, 1)
	go func() { closed <- readAcks(t, c, &acked, nil) }()
	// Rounds of 100 lines, each answered for before the next, until the
	// agent closes the connection: about 1,500 lines fit.
	const n = 5000
	sent := 0
	var end error // what ended the answers
	deadline := time.Now().Add(20 * time.Second)
	for sent < n && end == nil {
		var b strings.Builder
		for range 100 {
			b.WriteString(line(0, sent) + "\n")
			sent++
		}
		if _, err := c.Write([]byte(b.String())); err != nil {
			end = <-closed // the agent closed the connection
			break
		}
		for end == nil && acked.Load() < int64(sent) {
			require.True(t, time.Now().Before(deadline), "no answer nor close, %d of %d lines answered for", acked.Load(), sent)
			select {
			case end = <-closed:
			case <-time.After(time.Millisecond):
			}
		}
	}
	require.Error(t, end, "the agent closed the connection")
	assert.Less(t, sent, n)

	// The archive holds whole lines, in order, once, with a gap where a
	// batch failed (a later, smaller batch may fit under the limit
	// again); no line from the gap on was answered for.
	lines := archived(t, dir)
	gap := len(lines) // the first line missing
	for i, ln := range lines {
		seq := seqOf(t, ln)
		if i > 0 {
			require.Greater(t, seq, seqOf(t, lines[i-1]), "in order, once: %s", ln)
		}
		if seq != i {
			gap = min(gap, i)
		}
	}
	assert.Less(t, gap, n, "a batch failed")
	require.Positive(t, acked.Load(), "lines were answered for before the limit")
	assert.LessOrEqual(t, acked.Load(), int64(gap), "every line answered for is archived")
	t.Logf("%d lines answered for, %d archived, the first missing %d, of %d sent", acked.Load(), len(lines), gap, n)
}

// seqOf returns the seq member of an archived test line.
func seqOf(t *testing.T, ln string) int {
	var v struct{ Seq int }
	require.NoError(t, json.Unmarshal([]byte(ln), &v), ln)
	return v.Seq
}
