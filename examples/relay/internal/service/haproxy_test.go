package service

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/api"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// haRelayConfig writes the config of one relay of the pair behind
// HAProxy: a RELP input on relpAddr that requires a PROXY header from the
// balancer (127.0.0.1), health and the API on metricsAddr, sources on,
// an archive, everything under dir.
func haRelayConfig(t *testing.T, dir, relpAddr, metricsAddr string) string {
	t.Helper()
	path := filepath.Join(dir, "relay.yaml")
	conf := `
inputs:
  relp:
    - name: relp
      listen: ` + relpAddr + `
      proxy_protocol: required
      proxy_allowed: [127.0.0.1]
destinations:
  archive:
    type: archive
    dir: ` + filepath.Join(dir, "archive") + `
spool:
  dir: ` + filepath.Join(dir, "spool") + `
dead_letter:
  dir: ` + filepath.Join(dir, "deadletter") + `
metrics:
  listen: ` + metricsAddr + `
sources:
  enabled: true
api:
  enabled: true
`
	require.NoError(t, os.WriteFile(path, []byte(conf), 0o600))
	return path
}

// haBackend is one relay as HAProxy sees it: its RELP input and its
// health port (the metrics listener's /healthz).
type haBackend struct{ name, relp, health string }

// startHAProxy runs HAProxy in the foreground (-db) with a TCP frontend
// on front that balances over backends, PROXY v2 to each, each checked
// with GET /healthz on its health port. It returns the path of its stats
// socket and stops HAProxy at the end of the test.
func startHAProxy(t *testing.T, front string, backends []haBackend) string {
	t.Helper()
	bin := relaytest.NeedTool(t, "haproxy")
	dir := t.TempDir()
	sock := filepath.Join(dir, "stats.sock")
	var servers strings.Builder
	for _, b := range backends {
		_, port, _ := net.SplitHostPort(b.health)
		fmt.Fprintf(&servers, "    server %s %s check port %s\n", b.name, b.relp, port)
	}
	conf := fmt.Sprintf(`global
    stats socket %s mode 600 level admin
defaults
    mode tcp
    timeout connect 2s
    timeout client 2m
    timeout server 2m
    retries 3
    option redispatch 1
frontend relp
    bind %s
    default_backend relays
backend relays
    balance roundrobin
    option httpchk GET /healthz
    default-server inter 200ms fall 2 rise 1 send-proxy-v2
%s`, sock, front, servers.String())
	cf := filepath.Join(dir, "haproxy.cfg")
	require.NoError(t, os.WriteFile(cf, []byte(conf), 0o600))
	cmd := exec.Command(bin, "-f", cf, "-db")
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("haproxy output:\n%s", out.String())
		}
	})
	relaytest.WaitFor(t, 10*time.Second, func() bool { return len(haproxyStatus(sock)) == len(backends) }, "HAProxy's stats socket")
	return sock
}

// haproxyStatus asks HAProxy's stats socket for the state of each server
// (UP, DOWN, "UP 1/2" going down, ...); empty when it does not answer.
func haproxyStatus(sock string) map[string]string {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return nil
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("show stat\n")); err != nil {
		return nil
	}
	r := csv.NewReader(bufio.NewReader(c))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil || len(recs) == 0 {
		return nil
	}
	head := recs[0]
	col := slices.Index(head, "status")
	sv := slices.Index(head, "svname")
	out := map[string]string{}
	for _, rec := range recs[1:] {
		if col < 0 || sv < 0 || len(rec) <= col || rec[sv] == "FRONTEND" || rec[sv] == "BACKEND" {
			continue
		}
		out[rec[sv]] = rec[col]
	}
	return out
}

// startRsyslogSenders runs one rsyslogd with a sender per local address:
// an imtcp input (returned, in the order of locals) whose messages an
// omrelp action bound to that address (LocalClientIp) forwards to the
// RELP server at relpAddr, window 128, retrying every second for ever.
func startRsyslogSenders(t *testing.T, relpAddr string, locals []string) []string {
	t.Helper()
	root := rsyslogRoot(t)
	host, port, err := net.SplitHostPort(relpAddr)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "work"), 0o700))
	var conf strings.Builder
	fmt.Fprintf(&conf, "global(workDirectory=%q)\nmodule(load=\"imtcp\")\nmodule(load=\"omrelp\")\n", filepath.Join(dir, "work"))
	ins := make([]string, len(locals))
	for i, local := range locals {
		ins[i] = "127.0.0.1:" + relaytest.FreePort(t)
		_, inPort, _ := net.SplitHostPort(ins[i])
		fmt.Fprintf(&conf, `ruleset(name="s%d" queue.type="LinkedList" queue.size="500000") {
	action(type="omrelp" target=%q port=%q localClientIp=%q template="RSYSLOG_SyslogProtocol23Format" windowSize="128"
		action.resumeRetryCount="-1" action.resumeInterval="1" queue.type="LinkedList" queue.size="500000")
}
input(type="imtcp" address="127.0.0.1" port="%s" ruleset="s%d")
`, i, host, port, local, inPort, i)
	}
	cf := filepath.Join(dir, "rsyslog.conf")
	require.NoError(t, os.WriteFile(cf, []byte(conf.String()), 0o600))
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
	for _, in := range ins {
		relaytest.WaitFor(t, 10*time.Second, func() bool {
			c, err := net.Dial("tcp", in)
			if err == nil {
				c.Close()
			}
			return err == nil
		}, "rsyslog's imtcp input "+in)
	}
	return ins
}

// relaySources returns the sources /api/sources lists for the RELP input
// of the relay whose API is on metricsAddr; nil when it does not answer.
func relaySources(metricsAddr string) []string {
	resp, err := http.Get("http://" + metricsAddr + "/api/sources")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var list []api.SourceJSON
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&list) != nil {
		return nil
	}
	var out []string
	for _, s := range list {
		if s.Input == "relp" && s.Events > 0 {
			out = append(out, s.Source)
		}
	}
	slices.Sort(out)
	return out
}

var haMsgRE = regexp.MustCompile(`ha-s(\d)-(\d{6})`)

// haArchived counts the messages "ha-sS-NNNNNN" the archives in dirs
// hold: by sender S and number N.
func haArchived(t *testing.T, dirs ...string) map[[2]int]int {
	t.Helper()
	got := map[[2]int]int{}
	for _, d := range dirs {
		for _, l := range archived(t, d) {
			if m := haMsgRE.FindStringSubmatch(l); m != nil {
				s, _ := strconv.Atoi(m[1])
				n, _ := strconv.Atoi(m[2])
				got[[2]int{s, n}]++
			}
		}
	}
	return got
}

// TestHAProxyKillOneRelay: two relay processes behind HAProxy (Debian's
// haproxy, started by the test: a TCP frontend, PROXY v2 to each relay's
// RELP input with proxy_protocol required, health checks on /healthz),
// four rsyslog omrelp senders bound to 127.0.0.2-5 sending through it.
// Once both relays carry traffic, one is killed with SIGKILL mid-stream.
// HAProxy marks it down; its senders reconnect through HAProxy to the
// other relay and send again what it had not answered. Every message is
// in one of the two archives (nothing a sender was answered for is lost,
// nor anything else), duplicates are counted and at most one RELP window
// per sender, and the per-source statistics of both relays name the
// senders' own addresses, never HAProxy's: the survivor lists all four.
func TestHAProxyKillOneRelay(t *testing.T) {
	t.Parallel() // mostly waits: overlaps with the other waiting tests
	if testing.Short() {
		t.Skip("kill test with HAProxy: about 15 s")
	}
	relaytest.NeedTool(t, "haproxy")
	rsyslogRoot(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var relays [2]struct {
		dir, relp, metrics string
		child              *childRelay
	}
	var backends []haBackend
	for i := range relays {
		r := &relays[i]
		r.dir = t.TempDir()
		r.relp, r.metrics = relaytest.FreeTCPAddr(t), relaytest.FreeTCPAddr(t)
		r.child = startChild(t, ctx, haRelayConfig(t, r.dir, r.relp, r.metrics))
		backends = append(backends, haBackend{name: fmt.Sprintf("relay%d", i+1), relp: r.relp, health: r.metrics})
	}
	front := relaytest.FreeTCPAddr(t)
	sock := startHAProxy(t, front, backends)
	relaytest.WaitFor(t, 20*time.Second, func() bool {
		st := haproxyStatus(sock)
		return st["relay1"] == "UP" && st["relay2"] == "UP"
	}, "both relays up in HAProxy")

	locals := []string{"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"}
	ins := startRsyslogSenders(t, front, locals)
	const perSender, perTick = 6000, 20 // 20 per 10 ms: 2,000 a second per sender, 3 s
	var wg sync.WaitGroup
	sendErrs := make([]error, len(ins))
	for s, in := range ins {
		wg.Go(func() {
			conn, err := net.Dial("tcp", in)
			if err != nil {
				sendErrs[s] = err
				return
			}
			defer conn.Close()
			w := bufio.NewWriter(conn)
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for i := 0; i < perSender; {
				for j := 0; j < perTick && i < perSender; j, i = j+1, i+1 {
					fmt.Fprintf(w, "<13>Nov 23 10:00:00 host hatest: ha-s%d-%06d\n", s, i)
				}
				if sendErrs[s] = w.Flush(); sendErrs[s] != nil {
					return
				}
				<-tick.C
			}
		})
	}
	archives := []string{filepath.Join(relays[0].dir, "archive"), filepath.Join(relays[1].dir, "archive")}
	total := perSender * len(locals)

	// Both relays carry traffic, each from the senders' own addresses.
	var before [2][]string
	relaytest.WaitFor(t, 30*time.Second, func() bool {
		for i := range relays {
			before[i] = relaySources(relays[i].metrics)
		}
		return len(before[0]) > 0 && len(before[1]) > 0 && len(haArchived(t, archives...)) >= total/3
	}, "both relays carrying traffic, a third archived")
	for i := range relays {
		for _, s := range before[i] {
			assert.Contains(t, locals, s, "relay%d names the senders, not the balancer", i+1)
		}
	}
	relays[0].child.kill(t)
	killedAt := len(haArchived(t, archives...))
	relaytest.WaitFor(t, 20*time.Second, func() bool { return haproxyStatus(sock)["relay1"] == "DOWN" }, "HAProxy marking the killed relay down")

	wg.Wait()
	for s, err := range sendErrs {
		require.NoError(t, err, "feeding sender %d", s)
	}
	var got map[[2]int]int
	relaytest.WaitFor(t, 60*time.Second, func() bool {
		got = haArchived(t, archives...)
		return len(got) == total
	}, "every message archived by one relay or the other")
	dups := 0
	for s := range locals {
		for n := range perSender {
			c := got[[2]int{s, n}]
			if !assert.Positive(t, c, "sender %d message %d lost", s, n) {
				return
			}
			dups += c - 1
		}
	}
	assert.LessOrEqual(t, dups, 128*len(locals), "duplicates: at most the window each sender had unanswered at the kill")
	survivor := relaySources(relays[1].metrics)
	assert.Equal(t, locals, survivor, "the surviving relay took every sender, each by its own address")
	onKilled := len(before[0])
	t.Logf("killed relay1 (carrying %v) after %d of %d messages archived; all %d archived by one relay or the other, %d duplicates; relay2 now carries %v",
		before[0], killedAt, total, total, dups, survivor)
	assert.Positive(t, onKilled)
}
