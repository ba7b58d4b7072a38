package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/relaykit/relaykit/forward/forwardtest"
)

// TestMain runs the agent's main when the test binary is started as the
// agent (see TestReadme), and otherwise the tests with a goroutine check.
func TestMain(m *testing.M) {
	if os.Getenv("RELAYKIT_AGENT_MAIN") == "1" {
		if fsize, err := strconv.ParseUint(os.Getenv("RELAYKIT_AGENT_FSIZE"), 10, 64); err == nil {
			// A file size limit (ulimit -f): writes past it fail with
			// EFBIG, as on a full disk (Go ignores SIGXFSZ).
			var lim syscall.Rlimit
			if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
				panic(err)
			}
			lim.Cur = fsize
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
				panic(err)
			}
		}
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// line returns the i-th test line of a sender: every fifth is an error.
func line(sender, i int) string {
	level := "info"
	if i%5 == 4 {
		level = "error"
	}
	return fmt.Sprintf(`{"level":"%s","sender":%d,"seq":%d}`, level, sender, i)
}

// archived returns the lines of the archive in dir, in file order.
func archived(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "agent-*.log*"))
	require.NoError(t, err)
	var lines []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		lines = append(lines, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")...)
	}
	return lines
}

// TestAgentStdin runs the agent over standard input to its end: every line
// is archived in order, and exactly the error lines reach HEC, in order,
// with their JSON members as indexed fields.
func TestAgentStdin(t *testing.T) {
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	dir := t.TempDir()
	const n = 5000
	var in strings.Builder
	var want, alerts []string
	for i := range n {
		want = append(want, line(0, i))
		if i%5 == 4 {
			alerts = append(alerts, line(0, i))
		}
		in.WriteString(line(0, i) + "\n")
	}
	sum, err := run(t.Context(), config{HECURL: hec.URL, HECToken: hec.Token(), Dir: dir, Drain: 10 * time.Second}, strings.NewReader(in.String()))
	require.NoError(t, err)
	assert.Equal(t, summary{Read: n, Archived: n, Alerts: n / 5, HECSent: n / 5}, sum)
	assert.Equal(t, want, archived(t, dir))
	assert.Equal(t, alerts, hec.Messages())
	ev := hec.Events()
	require.NotEmpty(t, ev)
	assert.Equal(t, "_json", ev[0].SourceType)
	assert.Equal(t, map[string]string{"level": "error", "sender": "0", "seq": "4"}, ev[0].Fields)
}

// TestAgentTCPShutdown: senders stream lines over TCP and the agent is
// stopped (as by SIGTERM) while they are still sending. Every line it
// read is archived, every error line among them reached HEC, and each
// sender's lines are in order.
func TestAgentTCPShutdown(t *testing.T) {
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	ctx, stop := context.WithCancel(t.Context())
	type result struct {
		sum summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := run(ctx, config{Listen: addr, HECURL: hec.URL, HECToken: hec.Token(), Dir: dir, Drain: 10 * time.Second}, nil)
		done <- result{s, err}
	}()

	const senders = 4
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			var c net.Conn
			if !assert.Eventually(t, func() bool {
				var derr error
				c, derr = net.Dial("tcp", addr)
				return derr == nil
			}, 10*time.Second, 5*time.Millisecond) {
				return
			}
			defer c.Close()
			w := bufio.NewWriter(c)
			for i := 0; i < 1_000_000; i++ {
				if _, err := w.WriteString(line(s, i) + "\n"); err != nil {
					return // the agent closed the connection
				}
			}
			_ = w.Flush()
		})
	}
	require.Eventually(t, func() bool { return hec.Requests() >= 3 }, 20*time.Second, 10*time.Millisecond)
	t0 := time.Now()
	stop()
	res := <-done
	t.Logf("run returned %v after the stop", time.Since(t0).Round(time.Millisecond))
	wg.Wait()
	require.NoError(t, res.err)

	lines := archived(t, dir)
	assert.Equal(t, res.sum.Read, res.sum.Archived)
	assert.Len(t, lines, int(res.sum.Read))
	assert.Equal(t, res.sum.Alerts, res.sum.HECSent)
	assert.Zero(t, res.sum.HECFailed)
	var alerts []string
	next := make([]int, senders)
	for _, ln := range lines {
		var v struct{ Sender, Seq int }
		require.NoError(t, json.Unmarshal([]byte(ln), &v), ln)
		s, i := v.Sender, v.Seq
		require.Equal(t, next[s], i, "sender %d out of order", s)
		next[s]++
		if i%5 == 4 {
			alerts = append(alerts, ln)
		}
	}
	assert.ElementsMatch(t, alerts, hec.Messages())
	assert.Len(t, alerts, int(res.sum.Alerts))
	t.Logf("read %d lines from %d senders before the shutdown", res.sum.Read, senders)
}

// TestReadme runs the agent the way README.md shows: lines on standard
// input, no flags but -dir, the local HEC stand-in.
func TestReadme(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-dir", filepath.Join(dir, "data"))
	cmd.Env = append(os.Environ(), "RELAYKIT_AGENT_MAIN=1")
	cmd.Stdin = strings.NewReader(`{"level":"info","msg":"started"}` + "\n" + `{"level":"error","msg":"disk full"}` + "\n")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), `HEC indexed: sourcetype=_json {"level":"error","msg":"disk full"}`)
	assert.Contains(t, string(out), "read 2, archived 2 in "+filepath.Join(dir, "data")+", alerts 1: sent to HEC 1, spooled 0, failed 0")
	assert.Equal(t, []string{`{"level":"info","msg":"started"}`, `{"level":"error","msg":"disk full"}`}, archived(t, filepath.Join(dir, "data")))
}

// readAcks reads the answers of an agent running with -ack from r until
// it closes or fails, adding each "ok N" to acked and calling each (if
// not nil) after it. It returns the error that ended the answers.
func readAcks(t testing.TB, r io.Reader, acked *atomic.Int64, each func()) error {
	br := bufio.NewReader(r)
	for {
		s, err := br.ReadString('\n')
		if err != nil {
			return err
		}
		n, ok := strings.CutPrefix(strings.TrimSuffix(s, "\n"), "ok ")
		k, err := strconv.Atoi(n)
		if !assert.True(t, ok && err == nil && k > 0, "answer %q", s) {
			return errors.New("bad answer")
		}
		acked.Add(int64(k))
		if each != nil {
			each()
		}
	}
}

// TestAgentAck: with -ack, every answer "ok N" comes only once the lines
// it answers for are in the archive (checked as each answer arrives, well
// within the 200 ms a batch may stay open), blank lines count, and the
// answers add up to every line sent. Shutdown then closes the connection.
func TestAgentAck(t *testing.T) {
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	dir := t.TempDir()
	addr := freeAddr(t)
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan summary, 1)
	go func() {
		s, err := run(ctx, config{Listen: addr, Ack: true, HECURL: hec.URL, HECToken: hec.Token(), Dir: dir, Drain: 10 * time.Second}, nil)
		assert.NoError(t, err)
		done <- s
	}()

	// 20 rounds of 50 lines; round 3 ends with a blank line.
	var rounds [][]string
	var all, alerts []string // all in sending order, blank lines too
	for r := range 20 {
		var round []string
		for i := r * 50; i < (r+1)*50; i++ {
			round = append(round, line(0, i))
			if i%5 == 4 {
				alerts = append(alerts, line(0, i))
			}
		}
		if r == 3 {
			round = append(round, "")
		}
		rounds = append(rounds, round)
		all = append(all, round...)
	}

	c := dial(t, addr)
	defer c.Close()
	var acked, answers atomic.Int64
	closed := make(chan error, 1)
	go func() {
		closed <- readAcks(t, c, &acked, func() {
			answers.Add(1)
			n := int(acked.Load())
			if !assert.LessOrEqual(t, n, len(all), "answered for more lines than were sent") {
				return
			}
			var want []string
			for _, ln := range all[:n] {
				if ln != "" {
					want = append(want, ln)
				}
			}
			got := archived(t, dir)
			if assert.GreaterOrEqual(t, len(got), len(want), "answered for %d lines, %d archived", n, len(got)) {
				assert.Equal(t, want, got[:len(want)])
			}
		})
	}()
	sent := 0
	for _, round := range rounds {
		_, err := c.Write([]byte(strings.Join(round, "\n") + "\n"))
		require.NoError(t, err)
		sent += len(round)
		require.Eventually(t, func() bool { return acked.Load() == int64(sent) }, 10*time.Second, time.Millisecond,
			"answered for %d of %d lines", acked.Load(), sent)
	}
	stop()
	sum := <-done
	require.ErrorIs(t, <-closed, io.EOF, "the agent closes the connection at shutdown")
	assert.Equal(t, int64(len(all)), acked.Load())
	assert.GreaterOrEqual(t, answers.Load(), int64(len(rounds)), "one answer per read at least")
	assert.Equal(t, summary{Read: 1000, Archived: 1000, Alerts: 200, HECSent: 200}, sum)
	assert.Equal(t, alerts, hec.Messages())
}

// dial connects to the agent at addr once it listens.
func dial(t testing.TB, addr string) net.Conn {
	t.Helper()
	var c net.Conn
	require.Eventually(t, func() bool {
		var err error
		c, err = net.Dial("tcp", addr)
		return err == nil
	}, 10*time.Second, 5*time.Millisecond)
	return c
}
