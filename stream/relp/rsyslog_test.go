package relp_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/internal/testtool"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/relp"
)

// rsyslogRootEnv names the directory holding rsyslog, omrelp and librelp
// unpacked from their Debian packages (rsyslog, rsyslog-relp, librelp0,
// libestr0, libfastjson4, liblognorm5): .ci/run unpacks them there with
// apt-get download and dpkg-deb -x, since rsyslog conflicts with
// syslog-ng-core.
const rsyslogRootEnv = "RELAYKIT_RSYSLOG_ROOT"

func rsyslogRoot(t *testing.T) string {
	t.Helper()
	root := os.Getenv(rsyslogRootEnv)
	if root == "" {
		testtool.Missing(t, rsyslogRootEnv+" is not set (unpack rsyslog, rsyslog-relp and librelp0 there; see .ci/run)")
	}
	for _, p := range []string{"usr/sbin/rsyslogd", "usr/lib/x86_64-linux-gnu/rsyslog/omrelp.so", "usr/lib/x86_64-linux-gnu/librelp.so.0"} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			testtool.Missing(t, p+" is missing under "+root+" (see .ci/run)")
		}
	}
	return root
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startRsyslog runs rsyslogd in the foreground with an imtcp input
// forwarding everything through omrelp (window 128, retrying forever,
// every second, with omrelpParams added to the action) to
// 127.0.0.1:relpPort, and returns the input's port. It stops rsyslogd at
// the end of the test. omrelp uses librelp's OpenSSL backend: Debian 12's
// librelp with GnuTLS offers only TLS 1.3 cipher suites while capping the
// version at TLS 1.2, a ClientHello no server can accept.
func startRsyslog(t *testing.T, relpPort int, omrelpParams string) int {
	t.Helper()
	root := rsyslogRoot(t)
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "work"), 0o700))
	in := freePort(t)
	conf := fmt.Sprintf(`global(workDirectory=%q)
module(load="imtcp")
module(load="omrelp" tls.tlslib="openssl")
template(name="relpmsg" type="string" string="<%%PRI%%>%%TIMESTAMP%% %%HOSTNAME%% %%syslogtag%%%%msg%%")
ruleset(name="fwd" queue.type="LinkedList" queue.size="500000") {
	action(type="omrelp" target="127.0.0.1" port="%d" template="relpmsg" windowSize="128" %s
		action.resumeRetryCount="-1" action.resumeInterval="1"
		queue.type="LinkedList" queue.size="500000")
}
input(type="imtcp" address="127.0.0.1" port="%d" ruleset="fwd")
`, filepath.Join(dir, "work"), relpPort, omrelpParams, in)
	cf := filepath.Join(dir, "rsyslog.conf")
	require.NoError(t, os.WriteFile(cf, []byte(conf), 0o600))
	lib := filepath.Join(root, "usr/lib/x86_64-linux-gnu")
	cmd := exec.Command(filepath.Join(root, "usr/sbin/rsyslogd"), "-n", "-f", cf, "-i", filepath.Join(dir, "pid"),
		"-M", filepath.Join(lib, "rsyslog"))
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("rsyslogd output:\n%s", out.String())
		}
	})
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", in))
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "rsyslog's imtcp input did not open")
	return in
}

var (
	relpMsgRE  = regexp.MustCompile(`relp message (\d+)`)
	relpLineRE = regexp.MustCompile(`relptest: relp message (\d{6})$`)
)

func msgNumber(t *testing.T, data string) int {
	t.Helper()
	m := relpMsgRE.FindStringSubmatch(data)
	require.NotNil(t, m, "unexpected message %q", data)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

// rsyslog's omrelp forwards the messages logger sends it to a RELP server
// built on Server: every message arrives, once, in order, each batch
// within the window.
func TestRELPFromRsyslog(t *testing.T) {
	logger := testtool.Need(t, "logger", "apt-get install bsdutils")
	sink := &relpSink{}
	s := serveRELP(t, stream.Config{}, relp.Config{}, sink)
	relpPort := s.ln.Addr().(*net.TCPAddr).Port
	in := startRsyslog(t, relpPort, "")

	const n = 2000
	var lines strings.Builder
	for i := range n {
		fmt.Fprintf(&lines, "relp message %06d\n", i)
	}
	file := filepath.Join(t.TempDir(), "lines")
	require.NoError(t, os.WriteFile(file, []byte(lines.String()), 0o600))
	out, err := exec.Command(logger, "-T", "-n", "127.0.0.1", "-P", strconv.Itoa(in), "-t", "relptest", "-f", file).CombinedOutput()
	require.NoError(t, err, string(out))

	require.Eventually(t, func() bool { return len(sink.got()) >= n }, 30*time.Second, 10*time.Millisecond)
	got := sink.got()
	require.Len(t, got, n)
	for i, m := range got {
		require.Equal(t, i, msgNumber(t, m), "in order, once")
		assert.Contains(t, m, "relptest")
	}
	sink.mu.Lock()
	for _, b := range sink.batches {
		assert.LessOrEqual(t, b, 128)
	}
	sink.mu.Unlock()
	st := s.srv.Stats()
	assert.Equal(t, int64(n), st.Acked)
	assert.Zero(t, st.ProtocolErrors+st.TooLarge+st.HandlerErrors)
}

// rsyslog's omrelp forwards over TLS (librelp with OpenSSL, verifying
// the server's certificate against a CA) to a Server on a TLS
// listener.
func TestRELPFromRsyslogTLS(t *testing.T) {
	caPEM, serverCert := testtool.CA(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(ca, caPEM, 0o600))
	sink := &relpSink{}
	s := serveRELP(t, stream.Config{TLS: &tls.Config{Certificates: []tls.Certificate{serverCert}, MinVersion: tls.VersionTLS12}},
		relp.Config{}, sink)
	in := startRsyslog(t, s.ln.Addr().(*net.TCPAddr).Port,
		fmt.Sprintf(`tls="on" tls.authMode="certvalid" tls.caCert=%q`, ca))
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", in))
	require.NoError(t, err)
	defer c.Close()
	const n = 500
	for i := range n {
		_, err := fmt.Fprintf(c, "<13>Nov 23 10:00:00 host relptest: relp message %06d\n", i)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return len(sink.got()) >= n }, 30*time.Second, 10*time.Millisecond)
	for i, m := range sink.got() {
		require.Equal(t, i, msgNumber(t, m))
	}
	assert.Equal(t, int64(n), s.srv.Stats().Acked)
}

const relpChildEnv = "RELAYKIT_RELP_CHILD"

// TestRELPChild is the child process of TestRELPKillAndRestart: a RELP
// server on the address named by the environment whose handler appends
// each message to a file and syncs it before it returns (the message is
// then durable: accepted under the delivery contract). It runs until it
// is killed.
func TestRELPChild(t *testing.T) {
	spec := os.Getenv(relpChildEnv)
	if spec == "" {
		t.Skip("child process of TestRELPKillAndRestart")
	}
	addr, path, _ := strings.Cut(spec, "|")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	defer f.Close()
	var buf []byte
	srv, err := relp.New(relp.Config{Handler: func(_ context.Context, _ *stream.Conn, batch []relp.Message) error {
		buf = buf[:0]
		for _, m := range batch {
			buf = append(append(buf, m.Data...), '\n')
		}
		if _, err := f.Write(buf); err != nil {
			return err
		}
		return f.Sync()
	}})
	require.NoError(t, err)
	var ln *stream.Listener
	require.Eventually(t, func() bool {
		ln, err = stream.New(stream.Config{Address: addr, Handler: srv.ServeConn})
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	require.NoError(t, ln.Serve(ctx))
}

// startRELPChild runs TestRELPChild in a new process on addr, appending to
// path, and waits until it listens.
func startRELPChild(t *testing.T, addr, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRELPChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), relpChildEnv+"="+addr+"|"+path)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "the RELP child did not listen")
	return cmd
}

// readMessages returns the numbers of the messages in path, in order.
func readMessages(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []int
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// A line the kill cut short is not a message.
		if m := relpLineRE.FindSubmatch(sc.Bytes()); m != nil {
			n, _ := strconv.Atoi(string(m[1]))
			out = append(out, n)
		}
	}
	return out
}

// The RELP server process is killed with SIGKILL in the middle of a
// stream of about 20,000 messages a second from rsyslog's omrelp, and
// restarted on the same port: rsyslog sends the unacknowledged messages
// again and nothing is lost; the duplicates are counted and bounded by
// the window (128). About 5 s.
func TestRELPKillAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test: about 5 s")
	}
	rsyslogRoot(t)
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	out := filepath.Join(t.TempDir(), "received")
	child := startRELPChild(t, addr, out)
	in := startRsyslog(t, port, "")

	const total, perTick = 40000, 200 // 200 per 10 ms: 20,000 a second
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", in))
	require.NoError(t, err)
	defer conn.Close()
	var wg sync.WaitGroup
	var sendErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
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
	}()
	require.Eventually(t, func() bool { return len(readMessages(t, out)) >= total/4 }, 30*time.Second, 5*time.Millisecond)
	require.NoError(t, child.Process.Signal(syscall.SIGKILL))
	_ = child.Wait()
	killedAt := len(readMessages(t, out))
	startRELPChild(t, addr, out)
	wg.Wait()
	require.NoError(t, sendErr)

	var got []int
	require.Eventually(t, func() bool {
		got = readMessages(t, out)
		seen := map[int]bool{}
		for _, n := range got {
			seen[n] = true
		}
		return len(seen) == total
	}, 60*time.Second, 50*time.Millisecond, "every message arrives after the restart")
	counts := make([]int, total)
	dups := 0
	for _, n := range got {
		counts[n]++
		if counts[n] > 1 {
			dups++
		}
	}
	t.Logf("killed after %d messages; %d received in all, %d duplicates", killedAt, len(got), dups)
	assert.LessOrEqual(t, dups, 128, "duplicates are bounded by the window")
	// Before the kill and after the restart the order is kept: a number
	// below its predecessor only where rsyslog resent its window.
	drops := 0
	for i := 1; i < len(got); i++ {
		if got[i] < got[i-1] {
			drops++
		}
	}
	assert.LessOrEqual(t, drops, 1, "one resend point at most")
}
