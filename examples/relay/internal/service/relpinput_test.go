package service

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/input"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/internal/testtool"
)

// rsyslogRoot returns the directory holding rsyslog with omrelp unpacked
// from Debian's packages (.ci/run puts it there and exports
// RELAYKIT_RSYSLOG_ROOT: rsyslog conflicts with syslog-ng-core).
func rsyslogRoot(t *testing.T) string {
	t.Helper()
	root := os.Getenv("RELAYKIT_RSYSLOG_ROOT")
	if root == "" {
		testtool.Missing(t, "RELAYKIT_RSYSLOG_ROOT is not set (unpack rsyslog, rsyslog-relp and librelp0 there; see .ci/run)")
	}
	for _, p := range []string{"usr/sbin/rsyslogd", "usr/lib/x86_64-linux-gnu/rsyslog/omrelp.so", "usr/lib/x86_64-linux-gnu/librelp.so.0"} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			testtool.Missing(t, p+" is missing under "+root+" (see .ci/run)")
		}
	}
	return root
}

// startRsyslog runs rsyslogd in the foreground: an imtcp input on a free
// port whose messages omrelp forwards as RFC 5424 (window 128, retrying every second
// for ever, extra parameters omrelpParams) to the RELP server at relpAddr.
// It returns the imtcp address and stops rsyslogd at the end of the test.
func startRsyslog(t *testing.T, relpAddr, omrelpParams string) string {
	t.Helper()
	root := rsyslogRoot(t)
	host, port, err := net.SplitHostPort(relpAddr)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "work"), 0o700))
	in := relaytest.FreePort(t)
	conf := fmt.Sprintf(`global(workDirectory=%q)
module(load="imtcp")
module(load="omrelp" tls.tlslib="openssl")
ruleset(name="fwd" queue.type="LinkedList" queue.size="500000") {
	action(type="omrelp" target=%q port=%q template="RSYSLOG_SyslogProtocol23Format" windowSize="128" %s
		action.resumeRetryCount="-1" action.resumeInterval="1"
		queue.type="LinkedList" queue.size="500000")
}
input(type="imtcp" address="127.0.0.1" port="%s" ruleset="fwd")
`, filepath.Join(dir, "work"), host, port, omrelpParams, in)
	cf := filepath.Join(dir, "rsyslog.conf")
	require.NoError(t, os.WriteFile(cf, []byte(conf), 0o600))
	lib := filepath.Join(root, "usr/lib/x86_64-linux-gnu")
	cmd := exec.Command(filepath.Join(root, "usr/sbin/rsyslogd"), "-n", "-f", cf, "-i", filepath.Join(dir, "pid"),
		"-M", filepath.Join(lib, "rsyslog"))
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("rsyslogd output:\n%s", out.String())
		}
	})
	addr := "127.0.0.1:" + in
	relaytest.WaitFor(t, 10*time.Second, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, "rsyslog's imtcp input")
	return addr
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

var relpMsgRE = regexp.MustCompile(`relp message (\d{6})`)

// relpNumbers returns the numbers of the "relp message NNNNNN" lines of
// the archive in dir, in the order written (one file per day: the tests
// write within one).
func relpNumbers(t *testing.T, dir string) []int {
	t.Helper()
	var out []int
	for _, l := range archived(t, dir) {
		if m := relpMsgRE.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			out = append(out, n)
		}
	}
	return out
}

// relpInputConfig replaces cfg's inputs with one RELP input.
func relpInputConfig(cfg *config.Config, tls *config.TLSConfig) {
	cfg.Inputs.SyslogUDP, cfg.Inputs.SyslogTCP = nil, nil
	cfg.Inputs.RELP = []config.RELPInputConfig{{Name: "relp", Listen: "127.0.0.1:0", TLS: tls}}
}

// rsyslog's omrelp forwards what logger sends it through the relay's RELP
// input, plain and over TLS (the certificate verified): every message is
// archived once, in order, with rsyslog's host and tag, and each frame is
// answered only once archived.
func TestRELPFromRsyslog(t *testing.T) {
	logger := relaytest.NeedTool(t, "logger")
	rsyslogRoot(t)
	for _, useTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", useTLS), func(t *testing.T) {
			cfg := relaytest.TestConfig(t)
			params := ""
			var tc *config.TLSConfig
			if useTLS {
				cert, key := selfSigned(t)
				tc = &config.TLSConfig{CertFile: cert, KeyFile: key}
				params = fmt.Sprintf(`tls="on" tls.authMode="certvalid" tls.caCert=%q`, cert)
			}
			relpInputConfig(&cfg, tc)
			tr := startRelay(t, cfg)
			in := startRsyslog(t, tr.addr("relp"), params)
			const n = 2000
			var lines strings.Builder
			for i := range n {
				fmt.Fprintf(&lines, "relp message %06d\n", i)
			}
			file := filepath.Join(t.TempDir(), "lines")
			require.NoError(t, os.WriteFile(file, []byte(lines.String()), 0o600))
			_, port, _ := net.SplitHostPort(in)
			runTool(t, logger, "-T", "-n", "127.0.0.1", "-P", port, "-t", "relptest", "-f", file)
			metrics := "http://" + tr.addr("metrics") + "/metrics"
			relaytest.WaitFor(t, 30*time.Second, func() bool {
				return scrapeSample(metrics, `relay_relp_acked_frames_total{input="relp"}`) == n
			}, "every frame answered")
			// Answered means archived.
			assert.Equal(t, int64(n), tr.Ledger().Dest["archive"].Delivered)
			assert.Equal(t, float64(0), scrapeSample(metrics, `relay_relp_duplicate_frames_total{input="relp"}`))
			assert.Equal(t, float64(0), scrapeSample(metrics, `relay_relp_session_errors_total{input="relp",reason="protocol"}`))
			assert.Equal(t, float64(1), scrapeSample(metrics, `relay_input_connections{input="relp"}`))
			read := scrapeSample(metrics, `relay_input_read_bytes_total{input="relp"}`)
			var parts float64
			for _, p := range []string{"message", "overhead", "discarded", "incomplete"} {
				parts += scrapeSample(metrics, `relay_relp_bytes_total{input="relp",part="`+p+`"}`)
			}
			assert.Equal(t, read, parts, "every byte read is counted in one part")
			s := tr.stop(t)
			checkBalanced(t, s)
			assert.Equal(t, int64(n), s.Input["relp"])

			recs := archivedRecords(t, relaytest.ArchiveOf(cfg).Dir)
			require.Len(t, recs, n)
			for i, r := range recs {
				assert.Equal(t, fmt.Sprintf("relp message %06d", i), r.Message, "in order, once")
				assert.Equal(t, "relptest", r.Source)
				assert.NotEmpty(t, r.Host)
			}
		})
	}
}

// relpChildConfig writes the config of a relay process with the shipped
// defaults but for one RELP input on addr (a fixed port, so a restart
// listens where rsyslog reconnects) and everything under dir.
func relpChildConfig(t *testing.T, dir, addr string) string {
	t.Helper()
	path := filepath.Join(dir, "relay.yaml")
	conf := `
inputs:
  relp:
    - name: relp
      listen: ` + addr + `
destinations:
  archive:
    type: archive
    dir: ` + filepath.Join(dir, "archive") + `
spool:
  dir: ` + filepath.Join(dir, "spool") + `
dead_letter:
  dir: ` + filepath.Join(dir, "deadletter") + `
metrics:
  listen: 127.0.0.1:0
`
	require.NoError(t, os.WriteFile(path, []byte(conf), 0o600))
	return path
}

// The relay process is killed with SIGKILL in the middle of a stream of
// 20,000 messages a second that rsyslog's omrelp forwards to its RELP
// input, and restarted on the same port and directories: rsyslog sends
// what was not answered again, and every message is in the archive; the
// duplicates (messages archived, not yet answered at the kill) are counted
// and at most one window. About 10 s.
func TestRELPKillAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("kill test: about 10 s")
	}
	rsyslogRoot(t)
	dir := t.TempDir()
	addr := "127.0.0.1:" + relaytest.FreePort(t)
	path := relpChildConfig(t, dir, addr)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	child := startChild(t, ctx, path)
	in := startRsyslog(t, addr, "")

	const total, perTick = 60000, 200 // 200 per 10 ms: 20,000 a second for 3 s
	conn, err := net.Dial("tcp", in)
	require.NoError(t, err)
	defer conn.Close()
	var wg sync.WaitGroup
	var sendErr error
	wg.Go(func() {
		w := bufio.NewWriter(conn)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < total; {
			for j := 0; j < perTick && i < total; j, i = j+1, i+1 {
				fmt.Fprintf(w, "<13>Nov 23 10:00:00 host relptest: relp message %06d\n", i)
			}
			if sendErr = w.Flush(); sendErr != nil {
				return
			}
			<-tick.C
		}
	})
	archive := filepath.Join(dir, "archive")
	relaytest.WaitFor(t, 30*time.Second, func() bool { return len(relpNumbers(t, archive)) >= total/4 }, "a quarter archived")
	child.kill(t)
	killedAt := len(relpNumbers(t, archive))
	child = startChild(t, ctx, path)
	wg.Wait()
	require.NoError(t, sendErr)

	var got []int
	relaytest.WaitFor(t, 60*time.Second, func() bool {
		got = relpNumbers(t, archive)
		seen := map[int]bool{}
		for _, n := range got {
			seen[n] = true
		}
		return len(seen) == total
	}, "every message archived after the restart")
	counts := make([]int, total)
	dups := 0
	for _, n := range got {
		counts[n]++
		if counts[n] > 1 {
			dups++
		}
	}
	t.Logf("killed after %d messages archived; %d archived in all, %d duplicates", killedAt, len(got), dups)
	assert.LessOrEqual(t, dups, 128, "duplicates: at most the window unanswered at the kill")
	metrics := "http://" + child.addrs["metrics"] + "/metrics"
	assert.Equal(t, float64(0), scrapeSample(metrics, `relay_relp_duplicate_frames_total{input="relp"}`),
		"the restarted relay answered everything it took")
	child.kill(t)
}

// relpClient is a minimal RELP client for the bad-input tests.
type relpClient struct {
	c    net.Conn
	r    *bufio.Reader
	txnr int
}

func dialRELP(t *testing.T, addr string) *relpClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	rc := &relpClient{c: c, r: bufio.NewReader(c), txnr: 1}
	rc.send(t, "open", "relp_version=0\nrelp_software=test\ncommands=syslog")
	rsp := rc.read(t)
	require.True(t, strings.HasPrefix(rsp, "1 rsp "), rsp)
	require.Contains(t, rsp, "200 OK")
	return rc
}

func (rc *relpClient) send(t *testing.T, cmd, data string) {
	t.Helper()
	frame := fmt.Sprintf("%d %s %d", rc.txnr, cmd, len(data))
	if data != "" {
		frame += " " + data
	}
	_, err := io.WriteString(rc.c, frame+"\n")
	require.NoError(t, err)
	rc.txnr++
}

// read returns the next response frame (without its trailer).
func (rc *relpClient) read(t *testing.T) string {
	t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	var txnr, n int
	var cmd string
	_, err := fmt.Fscanf(rc.r, "%d %s %d", &txnr, &cmd, &n)
	require.NoError(t, err)
	data := make([]byte, n+1) // the space before DATA, or the trailer
	if n > 0 {
		data = make([]byte, n+2)
	}
	_, err = io.ReadFull(rc.r, data)
	require.NoError(t, err)
	return fmt.Sprintf("%d %s %s", txnr, cmd, strings.TrimSpace(string(data)))
}

// Bad RELP peers get their session closed and a counter, and cost a good
// sender on the same input nothing: a frame whose length lies, a frame
// over max_message_size, a syslog frame before open, and a peer that
// opens a frame and then never sends (or reads) anything more, holding its
// connection until a deadline or shutdown. Shipped defaults.
func TestRELPBadInput(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	relpInputConfig(&cfg, nil)
	tr := startRelay(t, cfg)
	addr := tr.addr("relp")
	metrics := "http://" + tr.addr("metrics") + "/metrics"

	// The silent peer: open, then half a frame, then nothing.
	silent := dialRELP(t, addr)
	_, err := io.WriteString(silent.c, "2 syslog 40 <13>1 - h app - - - half")
	require.NoError(t, err)

	good := dialRELP(t, addr)
	sendGood := func(from, n int) {
		for i := from; i < from+n; i++ {
			good.send(t, "syslog", fmt.Sprintf("<13>1 2026-01-02T03:04:05Z h app - - - relp message %06d", i))
		}
		for range n {
			rsp := good.read(t)
			require.Contains(t, rsp, " rsp 200 OK", rsp)
		}
	}
	sendGood(0, 100)

	expectClosed := func(c *relpClient, what string) {
		t.Helper()
		_ = c.c.SetReadDeadline(time.Now().Add(30 * time.Second))
		b, err := io.ReadAll(c.r)
		assert.NoError(t, err, what) // EOF: the relay closed the session
		assert.NotContains(t, string(b), "200 OK", what)
	}
	// A lying length: DATALEN 60 over a shorter message, then the next
	// frame, so the byte where the trailer must be is not LF.
	liar := dialRELP(t, addr)
	_, err = io.WriteString(liar.c, "2 syslog 60 <13>1 - h app - - - lie\n3 syslog 30 <13>1 - h app - - - next message\n")
	require.NoError(t, err)
	expectClosed(liar, "lying length")
	sendGood(100, 100)

	// A frame over max_message_size (128 KiB): closed at its header.
	huge := dialRELP(t, addr)
	_, err = fmt.Fprintf(huge.c, "2 syslog %d ", 200<<10)
	require.NoError(t, err)
	expectClosed(huge, "too large")
	sendGood(200, 100)

	// syslog before open.
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "1 syslog 10 0123456789\n")
	require.NoError(t, err)
	expectClosed(&relpClient{c: c, r: bufio.NewReader(c)}, "syslog before open")
	sendGood(300, 100)

	assert.Equal(t, float64(2), scrapeSample(metrics, `relay_relp_session_errors_total{input="relp",reason="protocol"}`))
	assert.Equal(t, float64(1), scrapeSample(metrics, `relay_relp_session_errors_total{input="relp",reason="too_large"}`))
	// A session counts its frames acked once their answers are written,
	// so the count may lag the answers the client has read.
	relaytest.WaitFor(t, 5*time.Second, func() bool { return scrapeSample(metrics, `relay_relp_acked_frames_total{input="relp"}`) == 400 }, "400 frames counted acked")
	assert.Equal(t, float64(2), scrapeSample(metrics, `relay_input_connections{input="relp"}`), "the good and the silent peer")
	good.send(t, "close", "")
	assert.Contains(t, good.read(t), "rsp 200 OK")

	s := tr.stop(t) // ends the silent session: its half frame is counted
	checkBalanced(t, s)
	assert.Equal(t, int64(400), s.Input["relp"])
	assert.Equal(t, int64(400), s.Archived)
	assert.Equal(t, []int(nil), nonSequential(relpNumbers(t, relaytest.ArchiveOf(cfg).Dir), 400))
	st := inputsOf[*input.RELPInput](tr.Relay)[0].Server.Stats()
	assert.Equal(t, int64(1), st.IncompleteFrames, "the silent peer's half frame")
	assert.Equal(t, inputsOf[*input.RELPInput](tr.Relay)[0].Stats.Listener.Stats().BytesRead, st.MessageBytes+st.OverheadBytes+st.DiscardedBytes+st.IncompleteBytes,
		"every byte read is counted once")
}

// nonSequential returns the positions where got differs from 0..n-1.
func nonSequential(got []int, n int) []int {
	var bad []int
	for i := range max(n, len(got)) {
		if i >= len(got) || i >= n || got[i] != i {
			bad = append(bad, i)
		}
	}
	return bad
}
