package main

import (
	"bufio"
	"bytes"
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

// runAgent runs the agent with cfg (its HEC the stand-in hec, its archive
// in a new directory) until the returned stop is called, which returns its
// ledger.
func runAgent(t *testing.T, hec *forwardtest.HECServer, cfg config) (dir string, stop func() (summary, error)) {
	t.Helper()
	dir = t.TempDir()
	cfg.HECURL, cfg.HECToken, cfg.Dir = hec.URL, hec.Token(), dir
	if cfg.Drain == 0 {
		cfg.Drain = 10 * time.Second
	}
	ctx, cancel := context.WithCancel(t.Context())
	type result struct {
		sum summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := run(ctx, cfg)
		done <- result{s, err}
	}()
	var once sync.Once
	var res result
	stop = func() (summary, error) {
		once.Do(func() { cancel(); res = <-done })
		return res.sum, res.err
	}
	t.Cleanup(func() { _, _ = stop() })
	return dir, stop
}

// TestAgentSyslog runs the agent end to end on its syslog input: messages
// over UDP and over TCP (octet-counted, and LF-terminated) are all
// archived, the severe ones (err or worse) reach HEC once, parsed, and the
// repeats of one within the suppress window reach it as one summary at
// shutdown.
func TestAgentSyslog(t *testing.T) {
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	addr := freeAddr(t)
	dir, stop := runAgent(t, hec, config{Syslog: addr})
	msgs := []string{
		"<11>1 2026-11-28T12:00:00Z web-1 app 42 - - disk failing",      // err: an alert
		"<14>1 2026-11-28T12:00:01Z web-1 app 42 - - cache warmed",      // info
		"<10>Nov 28 12:00:02 db-1 postgres[7]: could not write block 7", // crit, RFC 3164
		"<13>no header at all", // notice, the sender's address as host
	}
	tcp := dial(t, addr)
	octets := ""
	for _, m := range msgs[:2] {
		octets += fmt.Sprintf("%d %s", len(m), m)
	}
	_, err := io.WriteString(tcp, octets)
	require.NoError(t, err)
	lf := dial(t, addr)
	_, err = io.WriteString(lf, msgs[2]+"\n")
	require.NoError(t, err)
	u, err := net.Dial("udp", addr)
	require.NoError(t, err)
	defer u.Close()
	_, err = io.WriteString(u, msgs[3])
	require.NoError(t, err)
	const repeat = "<11>1 2026-11-28T12:00:03Z web-1 app 42 - - disk failing again"
	for range 5 {
		_, err = io.WriteString(u, repeat)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return len(archived(t, dir)) == 9 }, 20*time.Second, 10*time.Millisecond)
	sum, err := stop()
	require.NoError(t, err)

	assert.ElementsMatch(t, []string{"disk failing", "cache warmed", "could not write block 7", "no header at all",
		"disk failing again", "disk failing again", "disk failing again", "disk failing again", "disk failing again"}, archived(t, dir))
	ev := hec.Events()
	require.Len(t, ev, 4, "%v", ev)
	byMsg := map[string]forwardtest.HECEvent{}
	for _, e := range ev {
		if _, dup := byMsg[e.Event]; dup {
			byMsg[e.Event+" (summary)"] = e
			continue
		}
		byMsg[e.Event] = e
	}
	assert.Equal(t, "web-1", byMsg["disk failing"].Host)
	assert.Equal(t, "syslog", byMsg["disk failing"].SourceType)
	assert.Equal(t, "db-1", byMsg["could not write block 7"].Host)
	assert.Equal(t, "postgres", byMsg["could not write block 7"].Source)
	assert.Equal(t, "crit", byMsg["could not write block 7"].Fields["severity"])
	assert.Equal(t, "4", byMsg["disk failing again (summary)"].Fields["suppressed_count"], "the repeats, summarised")
	assert.Equal(t, summary{Read: 9, Archived: 9, Alerts: 4, HECSent: 4}, sum)
}

// TestAgentJSON runs the agent on JSON lines over TCP to the end of the
// connection: every line is archived in order, and exactly the error lines
// reach HEC, in order, with their JSON members as indexed fields.
func TestAgentJSON(t *testing.T) {
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	addr := freeAddr(t)
	dir, stop := runAgent(t, hec, config{JSON: addr})
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
	c := dial(t, addr)
	_, err := io.WriteString(c, in.String()+"{not json\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(archived(t, dir)) == n }, 20*time.Second, 10*time.Millisecond)
	sum, err := stop()
	require.NoError(t, err)
	assert.Equal(t, summary{Read: n + 1, Refused: 1, Archived: n, Alerts: n / 5, HECSent: n / 5}, sum)
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
	addr := freeAddr(t)
	dir, stop := runAgent(t, hec, config{JSON: addr})

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
	sum, err := stop()
	t.Logf("run returned %v after the stop", time.Since(t0).Round(time.Millisecond))
	wg.Wait()
	require.NoError(t, err)

	lines := archived(t, dir)
	assert.Equal(t, sum.Read, sum.Archived+sum.Refused)
	assert.Zero(t, sum.Refused)
	assert.Len(t, lines, int(sum.Read))
	assert.Equal(t, sum.Alerts, sum.HECSent)
	assert.Zero(t, sum.HECFailed)
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
	assert.Len(t, alerts, int(sum.Alerts))
	t.Logf("read %d lines from %d senders before the shutdown", sum.Read, senders)
}

// TestReadme runs the agent the way README.md shows: the built program
// with -dir, syslog sent over UDP (as logger -d does) and a JSON line over
// TCP, the local HEC stand-in, SIGTERM.
func TestReadme(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	syslogAddr, jsonAddr := freeAddr(t), freeAddr(t)
	var out lockedBuffer
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-dir", dir, "-syslog", syslogAddr, "-json", jsonAddr)
	cmd.Env = append(os.Environ(), "RELAYKIT_AGENT_MAIN=1")
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "receiving JSON lines") }, 20*time.Second, 10*time.Millisecond)
	u, err := net.Dial("udp", syslogAddr)
	require.NoError(t, err)
	defer u.Close()
	_, err = io.WriteString(u, "<11>Nov 28 12:00:00 web-1 app: disk full") // logger -d -p user.err
	require.NoError(t, err)
	c := dial(t, jsonAddr)
	_, err = io.WriteString(c, `{"level":"info","msg":"started"}`+"\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(archived(t, dir)) == 2 }, 20*time.Second, 10*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), out.String())
	assert.Contains(t, out.String(), "HEC indexed: sourcetype=syslog disk full")
	assert.Contains(t, out.String(), "read 2, refused 0, archived 2 in "+dir+", alerts 1: sent to HEC 1, spooled 0, failed 0")
	assert.ElementsMatch(t, []string{"disk full", `{"level":"info","msg":"started"}`}, archived(t, dir))
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
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
	addr := freeAddr(t)
	dir, stop := runAgent(t, hec, config{JSON: addr, Ack: true})

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
	sum, err := stop()
	require.NoError(t, err)
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
