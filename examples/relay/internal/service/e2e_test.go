package service

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/input"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLogger sends with util-linux logger over UDP, TCP with LF framing and
// TCP with octet counting, RFC 5424 and RFC 3164, and checks each event
// arrives once in the archive with the right fields.
func TestLogger(t *testing.T) {
	relaytest.NeedTool(t, "logger")
	cfg := relaytest.TestConfig(t)
	tr := startRelay(t, cfg)
	udp, tcp := tr.port("udp"), tr.port("tcp")
	cases := []struct {
		name string
		args []string
	}{
		{"udp-rfc5424", []string{"-d", "-P", udp, "--rfc5424"}},
		{"udp-rfc3164", []string{"-d", "-P", udp, "--rfc3164"}},
		{"tcp-lf-rfc5424", []string{"-T", "-P", tcp, "--rfc5424"}},
		{"tcp-lf-rfc3164", []string{"-T", "-P", tcp, "--rfc3164"}},
		{"tcp-octet-rfc5424", []string{"-T", "--octet-count", "-P", tcp, "--rfc5424"}},
		{"tcp-octet-rfc3164", []string{"-T", "--octet-count", "-P", tcp, "--rfc3164"}},
	}
	for i, c := range cases {
		msg := fmt.Sprintf("hello from %s number %d", c.name, i)
		args := append([]string{"-n", "127.0.0.1", "-t", "tag" + strconv.Itoa(i), "-p", "local3.warning"}, c.args...)
		runTool(t, "logger", append(args, msg)...)
	}
	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == int64(len(cases)) }, "all logger events archived")
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Equal(t, int64(len(cases)), s.Received)
	assert.Zero(t, s.ParseErrors)

	recs := archivedRecords(t, relaytest.ArchiveOf(cfg).Dir)
	require.Len(t, recs, len(cases))
	host, _ := os.Hostname()
	byMsg := map[string]archiveRecord{}
	for _, r := range recs {
		byMsg[r.Message] = r
	}
	for i, c := range cases {
		msg := fmt.Sprintf("hello from %s number %d", c.name, i)
		r, ok := byMsg[msg]
		if !assert.True(t, ok, "%s: message %q not archived; got %v", c.name, msg, recs) {
			continue
		}
		assert.Equal(t, "tag"+strconv.Itoa(i), r.Source, c.name)
		assert.Equal(t, "syslog", r.SourceType, c.name)
		assert.NotEmpty(t, r.Time, c.name)
		if host != "" {
			assert.Contains(t, []string{host, "127.0.0.1"}, r.Host, c.name)
		}
	}
}

// loggenCount parses loggen's "count = N" summary.
func loggenCount(t *testing.T, out string) int {
	t.Helper()
	m := regexp.MustCompile(`count\s*=\s*(\d+)`).FindAllStringSubmatch(out, -1)
	require.NotEmpty(t, m, "loggen output: %s", out)
	n, err := strconv.Atoi(m[len(m)-1][1])
	require.NoError(t, err)
	return n
}

var loggenSeq = regexp.MustCompile(`seq: (\d+), thread: (\d+), runid: (\d+)`)

// checkLoggenOnce asserts each (thread, seq) loggen sent arrived exactly once.
func checkLoggenOnce(t *testing.T, msgs []string, want int) {
	t.Helper()
	seen := map[string]int{}
	for _, m := range msgs {
		s := loggenSeq.FindStringSubmatch(m)
		if !assert.NotNil(t, s, "not a loggen message: %q", m) {
			return
		}
		seen[s[2]+"/"+s[1]]++
	}
	assert.Len(t, seen, want, "distinct loggen messages")
	for k, n := range seen {
		if n != 1 {
			t.Errorf("loggen message %s arrived %d times", k, n)
		}
	}
}

// TestLoggen drives the relay with syslog-ng's loggen at a few thousand
// events per second over TCP (BSD-style lines with ISO timestamps without
// zone, the format go-syslog rejects), TCP with RFC 5424 octet counting, and
// TLS with a self-signed certificate.
func TestLoggen(t *testing.T) {
	relaytest.NeedTool(t, "loggen")
	cert, key := selfSigned(t)
	cfg := relaytest.TestConfig(t)
	cfg.Inputs.SyslogTCP = append(cfg.Inputs.SyslogTCP, config.TCPInputConfig{
		Name: "tls", Listen: "127.0.0.1:0", TLS: &config.TLSConfig{CertFile: cert, KeyFile: key},
	})
	tr := startRelay(t, cfg)
	runs := []struct {
		name string
		args []string
	}{
		{"tcp-bsd", []string{"--inet", "--stream", "--active-connections", "2", "--rate", "1500", "--interval", "2", "127.0.0.1", tr.port("tcp")}},
		{"tcp-rfc5424", []string{"--inet", "--stream", "--syslog-proto", "--rate", "2000", "--interval", "2", "127.0.0.1", tr.port("tcp")}},
		{"tls-rfc5424", []string{"--use-ssl", "--syslog-proto", "--active-connections", "2", "--rate", "1000", "--interval", "2", "127.0.0.1", tr.port("tls")}},
	}
	total := 0
	var outs []string
	t.Cleanup(func() { // what the senders and the listeners saw, for a run that came up short
		if t.Failed() {
			t.Logf("loggen:\n%s", strings.Join(outs, "\n"))
			for _, l := range inputsOf[*input.StreamInput](tr.Relay) {
				t.Logf("listener %s %s: %+v", l.Name, l.Listener.Addr(), l.Listener.Stats())
			}
		}
	})
	for _, r := range runs {
		out := runTool(t, "loggen", r.args...)
		outs = append(outs, out)
		n := loggenCount(t, out)
		require.Positive(t, n, r.name)
		total += n
		relaytest.WaitFor(t, 20*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == int64(total) },
			fmt.Sprintf("%s: %d events archived", r.name, total))
	}
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Equal(t, int64(total), s.Received)
	assert.Zero(t, s.ParseErrors)
	assert.Zero(t, s.DroppedTotal())

	recs := archivedRecords(t, relaytest.ArchiveOf(cfg).Dir)
	require.Len(t, recs, total)
	msgs := make([]string, len(recs))
	for i, r := range recs {
		msgs[i] = r.Message
		assert.Regexp(t, `^prg\d+$`, r.Source, "loggen's program name")
		assert.NotEmpty(t, r.Host)
		assert.NotEmpty(t, r.Time)
	}
	// loggen numbers messages per connection from 0 in each run; check
	// each run's share is exact by counting (thread, seq) pairs per runid.
	byRun := map[string][]string{}
	for _, m := range msgs {
		if s := loggenSeq.FindStringSubmatch(m); s != nil {
			byRun[s[3]] = append(byRun[s[3]], m)
		}
	}
	got := 0
	for _, ms := range byRun {
		checkLoggenOnce(t, ms, len(ms))
		got += len(ms)
	}
	assert.Equal(t, total, got, "every archived message is a loggen message")
}

// TestLoggerStructuredData: logger's RFC 5424 structured data, MSGID and
// PROCID arrive in the JSON archive as fields (sd.<SD-ID>.<PARAM-NAME>,
// msgid, procid), with the tag as source and the message alone.
func TestLoggerStructuredData(t *testing.T) {
	relaytest.NeedTool(t, "logger")
	cfg := relaytest.TestConfig(t)
	tr := startRelay(t, cfg)
	udp, tcp := tr.port("udp"), tr.port("tcp")
	base := []string{"-n", "127.0.0.1", "--rfc5424", "--sd-id", "origin@32473", "--sd-param", `ip="10.1.2.3"`, "--msgid", "LOGIN", "-t", "myapp"}
	runTool(t, "logger", append(append([]string{"-d", "-P", udp}, base...), "sd test")...)
	runTool(t, "logger", append(append([]string{"-T", "-P", tcp, "--id=4242"}, base...), "sd test with pid")...)
	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == 2 }, "logger events archived")
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Zero(t, s.ParseErrors)

	recs := archivedRecords(t, relaytest.ArchiveOf(cfg).Dir)
	require.Len(t, recs, 2)
	byMsg := map[string]archiveRecord{}
	for _, r := range recs {
		byMsg[r.Message] = r
	}
	for _, msg := range []string{"sd test", "sd test with pid"} {
		r, ok := byMsg[msg]
		if !assert.True(t, ok, "%q not archived: %+v", msg, recs) {
			continue
		}
		assert.Equal(t, "myapp", r.Source)
		assert.Equal(t, "syslog", r.SourceType)
		assert.Equal(t, "10.1.2.3", r.Fields["sd.origin@32473.ip"], "%+v", r.Fields)
		assert.Equal(t, "LOGIN", r.Fields["msgid"])
		assert.Contains(t, r.Fields, "sd.timeQuality.tzKnown", "logger's own SD element")
	}
	assert.Equal(t, "4242", byMsg["sd test with pid"].Fields["procid"])
	assert.NotContains(t, byMsg["sd test"].Fields, "procid", "logger sends PROCID '-' without --id")
}

// TestCEF: CEF messages after a BSD or RFC 5424 syslog header are decoded
// at the input (sourcetype cef, header and extension fields), the message
// is archived whole, and the parse_cef step accepts them again unchanged.
func TestCEF(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	cfg.Routes = []config.RouteConfig{{Name: "all", Final: true, Destinations: []string{"archive"},
		Pipeline: []config.StepConfig{{Type: "parse_cef"}}}}
	tr := startRelay(t, cfg)
	cef := `CEF:0|security|threatmanager|1.0|100|detected a \| in message|10|src=10.0.0.1 act=blocked a \= dst=1.1.1.1`
	relaytest.Send(t, "tcp", tr.addr("tcp"), []byte("<134>Jan  5 10:00:00 fw01 "+cef+"\n<134>1 2024-01-05T10:00:00Z fw02 - - - - "+cef+"\n"))
	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == 2 }, "CEF events archived")
	s := tr.stop(t)
	checkBalanced(t, s)
	recs := archivedRecords(t, relaytest.ArchiveOf(cfg).Dir)
	require.Len(t, recs, 2)
	for _, r := range recs {
		assert.Equal(t, cef, r.Message)
		assert.Equal(t, "cef", r.SourceType)
		assert.Equal(t, "security", r.Fields["cef.device_vendor"])
		assert.Equal(t, "detected a | in message", r.Fields["cef.name"])
		assert.Equal(t, "10", r.Fields["cef.severity"])
		assert.Equal(t, "blocked a =", r.Fields["act"])
		assert.Equal(t, "1.1.1.1", r.Fields["dst"])
	}
	assert.ElementsMatch(t, []string{"fw01", "fw02"}, []string{recs[0].Host, recs[1].Host})
}
