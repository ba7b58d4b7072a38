package service

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// The relay binary, built once per test process from this package, for
// the tests that run it as users do: through main.
var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// relayBinary builds the relay (go build, as a user would) and returns its
// path.
func relayBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "relay-bin")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "relay")
		out, err := exec.Command("go", "build", "-o", binaryPath, "github.com/relaykit/relaykit/examples/relay").CombinedOutput()
		if err != nil {
			binaryErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, binaryErr)
	return binaryPath
}

// binaryRelay is the relay binary running as a child process.
type binaryRelay struct {
	cmd    *exec.Cmd
	stdout *lockedBuffer
	stderr *lockedBuffer
	addrs  map[string]string // listener -> address, from its "listening" lines
	done   chan error
}

var listeningLine = regexp.MustCompile(`msg=listening listener=(\S+) address=(\S+)`)

// startBinary runs the relay binary with config (YAML text) and waits for
// its "relay started" line, reading the listeners' addresses from its log.
func startBinary(t *testing.T, config string) *binaryRelay {
	t.Helper()
	path := filepath.Join(t.TempDir(), "relay.yaml")
	require.NoError(t, os.WriteFile(path, []byte(config), 0o600))
	br := &binaryRelay{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, addrs: map[string]string{}, done: make(chan error, 1)}
	br.cmd = exec.Command(relayBinary(t), "-config", path)
	br.cmd.Stdout = br.stdout
	pr, pw := io.Pipe()
	br.cmd.Stderr = io.MultiWriter(br.stderr, pw)
	require.NoError(t, br.cmd.Start())
	go func() { br.done <- br.cmd.Wait(); pw.Close() }()
	t.Cleanup(func() {
		if br.cmd.ProcessState == nil {
			_ = br.cmd.Process.Kill()
			<-br.done
		}
		if t.Failed() {
			t.Logf("relay stderr:\n%s", br.stderr.String())
		}
	})
	started := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			if m := listeningLine.FindStringSubmatch(line); m != nil {
				br.addrs[m[1]] = m[2]
			}
			if strings.Contains(line, "msg=\"relay started\"") {
				close(started)
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case <-started:
	case err := <-br.done:
		t.Fatalf("relay exited before it started: %v\n%s", err, br.stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("relay did not start:\n%s", br.stderr.String())
	}
	return br
}

// stop sends SIGTERM and returns the exit code and the final ledger line.
func (br *binaryRelay) stop(t *testing.T) (code int, final string) {
	t.Helper()
	require.NoError(t, br.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-br.done:
	case <-time.After(60 * time.Second):
		t.Fatal("relay did not stop within 60 s of SIGTERM")
	}
	for _, l := range strings.Split(br.stderr.String(), "\n") {
		if strings.HasPrefix(l, "final ledger after ") {
			final = l
		}
	}
	return br.cmd.ProcessState.ExitCode(), final
}

var finalLedger = regexp.MustCompile(`^final ledger after \S+: received=(\d+) routed=(\d+) delivered=(\d+) archived=(\d+) spooled=(\d+) dropped=(\d+)`)

// TestBinaryReceiveTimes runs the built relay through main with one input
// of every listening kind and sends, to each, two events that carry no
// time of their own, at least a second apart. Each archived event carries
// its receive time (time_is_receive_time), and the two of each kind
// differ by at least a second (the second sent 1.1 s after the first was
// archived): the relay's clock moves for every input.
// SIGTERM then stops it with exit code 0 and a final ledger line that
// balances.
func TestBinaryReceiveTimes(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t)
	config := fmt.Sprintf(`timezone: UTC
workers: {count: 2, batch_max_wait: 20ms}
inputs:
  syslog_udp: [{name: udp, listen: 127.0.0.1:0}]
  syslog_tcp:
    - {name: tcp, listen: 127.0.0.1:0}
    - {name: tls, listen: 127.0.0.1:0, tls: {cert_file: %q, key_file: %q}}
  json_tcp: [{name: json, listen: 127.0.0.1:0}]
  hec: [{name: hec, listen: 127.0.0.1:0, tokens: [{name: main, token: s3cret}]}]
  relp: [{name: relp, listen: 127.0.0.1:0}]
  otlp: [{name: otlp, http_listen: 127.0.0.1:0, grpc_listen: 127.0.0.1:0}]
destinations:
  archive: {type: archive, dir: %q, format: json}
spool: {dir: %q}
dead_letter: {dir: %q}
metrics: {listen: 127.0.0.1:0}
`, cert, key, filepath.Join(dir, "archive"), filepath.Join(dir, "spool"), filepath.Join(dir, "deadletter"))
	br := startBinary(t, config)
	for _, l := range []string{"udp", "tcp", "tls", "json", "hec", "relp", "otlp/http", "otlp/grpc", "metrics"} {
		require.Contains(t, br.addrs, l, "listening line of %s", l)
	}
	for _, in := range []string{"udp", "tcp", "tls", "json", "hec", "relp", "otlp"} {
		assert.Contains(t, "\n"+br.stderr.String(), "\ninput "+in+": ", "the startup summary names input %s", in)
	}

	// Each sender sends the event whose message is msg, without a time.
	senders := []struct {
		kind string
		send func(t *testing.T, msg string)
	}{
		{"syslog_udp", func(t *testing.T, msg string) {
			relaytest.Send(t, "udp", br.addrs["udp"], []byte("<13>1 - host app - - - "+msg))
		}},
		{"syslog_tcp", func(t *testing.T, msg string) {
			relaytest.Send(t, "tcp", br.addrs["tcp"], []byte("<13>1 - host app - - - "+msg+"\n"))
		}},
		{"syslog_tls", func(t *testing.T, msg string) {
			c, err := tls.Dial("tcp", br.addrs["tls"], &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the test's own certificate
			require.NoError(t, err)
			_, err = c.Write([]byte("<13>1 - host app - - - " + msg + "\n"))
			require.NoError(t, err)
			require.NoError(t, c.Close())
		}},
		{"json_tcp", func(t *testing.T, msg string) {
			relaytest.Send(t, "tcp", br.addrs["json"], []byte(`{"msg":"`+msg+`"}`+"\n"))
		}},
		{"hec_event", func(t *testing.T, msg string) {
			code, _ := hecPost(t, "http://"+br.addrs["hec"]+"/services/collector/event", "s3cret", []byte(`{"event":"`+msg+`"}`), false)
			require.Equal(t, 200, code)
		}},
		{"hec_raw", func(t *testing.T, msg string) {
			code, _ := hecPost(t, "http://"+br.addrs["hec"]+"/services/collector/raw", "s3cret", []byte(msg), false,
				"X-Splunk-Request-Channel", "0e8a8e8e-0c3f-4b1f-9a0e-4a8e8e8e0c3f")
			require.Equal(t, 200, code)
		}},
		{"relp", func(t *testing.T, msg string) {
			rc := dialRELP(t, br.addrs["relp"])
			rc.send(t, "syslog", "<13>1 - host app - - - "+msg)
			require.Contains(t, rc.read(t), "200 OK")
		}},
		{"otlp_http", func(t *testing.T, msg string) {
			body, err := plogotlp.NewExportRequestFromLogs(untimedLogs(msg)).MarshalProto()
			require.NoError(t, err)
			require.Equal(t, 200, postOTLP(t, br.addrs["otlp/http"], "application/x-protobuf", "", body, false))
		}},
		{"otlp_grpc", func(t *testing.T, msg string) {
			conn, err := grpc.NewClient(br.addrs["otlp/grpc"], grpc.WithTransportCredentials(insecure.NewCredentials()))
			require.NoError(t, err)
			defer conn.Close()
			_, err = plogotlp.NewGRPCClient(conn).Export(t.Context(), plogotlp.NewExportRequestFromLogs(untimedLogs(msg)))
			require.NoError(t, err)
		}},
	}
	// The second round is sent more than a second after the first was
	// archived: whatever each input's latency, the receive times of the
	// two rounds are more than a second apart.
	archiveDir := filepath.Join(dir, "archive")
	for round := range 2 {
		if round == 1 {
			time.Sleep(1100 * time.Millisecond) // the scenario: the second sends come more than a second later
		}
		for _, s := range senders {
			s.send(t, fmt.Sprintf("%s-%d", s.kind, round))
		}
		relaytest.WaitFor(t, 30*time.Second, func() bool { return len(archived(t, archiveDir)) >= (round+1)*len(senders) }, "the round archived")
	}

	code, final := br.stop(t)
	assert.Equal(t, 0, code, "exit code after SIGTERM")
	m := finalLedger.FindStringSubmatch(final)
	require.NotNil(t, m, "final ledger line: %q", final)
	want := fmt.Sprint(2 * len(senders))
	assert.Equal(t, []string{want, want, "0", want, "0", "0"}, m[1:], "received = routed = archived, nothing spooled or dropped: %s", final)

	type rec struct {
		Time        time.Time `json:"time"`
		ReceiveTime bool      `json:"time_is_receive_time"`
		Message     string    `json:"message"`
	}
	times := map[string]time.Time{}
	for _, l := range archived(t, archiveDir) {
		var r rec
		require.NoError(t, json.Unmarshal([]byte(l), &r), l)
		assert.True(t, r.ReceiveTime, "%s carries its receive time", r.Message)
		msg := r.Message
		if i := strings.Index(msg, `"msg":"`); i >= 0 { // the JSON input keeps the line
			msg = strings.TrimSuffix(msg[i+7:], `"}`)
		}
		times[msg] = r.Time
	}
	for _, s := range senders {
		t0, ok0 := times[s.kind+"-0"]
		t1, ok1 := times[s.kind+"-1"]
		if assert.True(t, ok0 && ok1, "%s: both events archived (%v)", s.kind, times) {
			assert.GreaterOrEqual(t, t1.Sub(t0), time.Second, "%s: receive times of sends 1.1 s apart", s.kind)
		}
	}
}

// untimedLogs is one log record with body msg and no timestamp of any
// kind: its event's time is its receive time.
func untimedLogs(msg string) plog.Logs {
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr(msg)
	return ld
}
