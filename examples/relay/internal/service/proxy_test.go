package service

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/api"
	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/relaykit/relaykit/stream"
)

// proxyV1 is a PROXY protocol version 1 header naming src as the sender
// and dst as the address it connected to.
func proxyV1(src, dst string) []byte {
	s, d := netip.MustParseAddrPort(src), netip.MustParseAddrPort(dst)
	return fmt.Appendf(nil, "PROXY TCP4 %s %s %d %d\r\n", s.Addr(), d.Addr(), s.Port(), d.Port())
}

// proxyV2 is a PROXY protocol version 2 header: PROXY over TCP/IPv4
// naming src and dst, or LOCAL (a balancer's own connection, such as a
// health check) when src is "".
func proxyV2(src, dst string) []byte {
	b := []byte("\r\n\r\n\x00\r\nQUIT\n")
	if src == "" {
		return append(b, 0x20, 0x00, 0, 0)
	}
	s, d := netip.MustParseAddrPort(src), netip.MustParseAddrPort(dst)
	b = append(b, 0x21, 0x11, 0, 12)
	sa, da := s.Addr().As4(), d.Addr().As4()
	b = append(append(b, sa[:]...), da[:]...)
	b = binary.BigEndian.AppendUint16(b, s.Port())
	return binary.BigEndian.AppendUint16(b, d.Port())
}

// dialProxied connects to addr from local (any loopback address when
// empty) and sends header first, as a load balancer does.
func dialProxied(t *testing.T, local, addr string, header []byte) net.Conn {
	t.Helper()
	d := net.Dialer{}
	if local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	c, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	_, err = c.Write(header)
	require.NoError(t, err)
	return c
}

// closedByPeer reports whether the relay closed c (a read ends with EOF
// or a reset, not by the deadline).
func closedByPeer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// proxyDialer dials addr with header first: an http.Transport's and a
// gRPC client's dialer behind a balancer.
func proxyDialer(header []byte) func(ctx context.Context, addr string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			_, err = c.Write(header)
		}
		return c, err
	}
}

// TestProxyProtocolEndToEnd: every stream input behind a load balancer
// that sends PROXY protocol headers (version 1 and 2). The sender a header
// names is the source everywhere: the host of events that name none, the
// per-source statistics (/api/sources), the per-source connection cap,
// the dead letters' peer, on syslog TCP, JSON lines, RELP, HEC and OTLP
// (HTTP and gRPC). A header from an address not allowed, a malformed one
// and a missing one each cost their own connection, counted by reason,
// while an open connection keeps sending; a LOCAL header (a health check)
// keeps the balancer's address; /api/status shows each input's PROXY
// stage.
func TestProxyProtocolEndToEnd(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	required := config.ConnLimits{ProxyProtocol: stream.ProxyRequired, ProxyAllowed: []string{"127.0.0.1"}}
	optional := config.ConnLimits{ProxyProtocol: stream.ProxyOptional, ProxyAllowed: []string{"127.0.0.0/30"}}
	tcpLimits := required
	tcpLimits.MaxConnectionsPerSource = 1  // per sender behind the balancer, not for the balancer
	tcpLimits.HandshakeTimeout = time.Hour // the stalled headers below stay stalled for the test
	cfg.Inputs.SyslogUDP = nil
	cfg.Inputs.SyslogTCP = []config.TCPInputConfig{{Name: "tcp", Listen: "127.0.0.1:0",
		StreamLimits: config.StreamLimits{ConnLimits: tcpLimits}}}
	cfg.Inputs.JSONTCP = []config.JSONInputConfig{{Name: "json", Listen: "127.0.0.1:0", StreamLimits: config.StreamLimits{ConnLimits: optional}}}
	cfg.Inputs.RELP = []config.RELPInputConfig{{Name: "relp", Listen: "127.0.0.1:0", StreamLimits: config.StreamLimits{ConnLimits: required}}}
	cfg.Inputs.HEC = []config.HECInputConfig{{Name: "hec", Listen: "127.0.0.1:0", ConnLimits: required,
		Tokens: []config.HECTokenConfig{{Name: "main", Token: "s3cret"}}}}
	cfg.Inputs.OTLP = []config.OTLPInputConfig{{Name: "otlp", HTTPListen: "127.0.0.1:0", GRPCListen: "127.0.0.1:0", ConnLimits: required}}
	cfg.Sources.Enabled = true
	cfg.API.Enabled = true
	tr := startRelay(t, cfg)
	metrics := "http://" + tr.addr("metrics") + "/metrics"
	sample := func(name, input, label string) float64 { // label sorts after input
		return scrapeSample(metrics, fmt.Sprintf(`%s{input=%q,%s}`, name, input, label))
	}
	archive := relaytest.ArchiveOf(cfg).Dir
	hostOf := func(msg string) string {
		for _, r := range archivedRecords(t, archive) {
			if strings.HasSuffix(r.Message, msg) {
				return r.Host
			}
		}
		return ""
	}
	waitHost := func(msg string) string {
		t.Helper()
		var h string
		relaytest.WaitFor(t, 10*time.Second, func() bool { h = hostOf(msg); return h != "" }, "event "+msg+" archived")
		return h
	}

	// Syslog TCP, required: a v2 header and a v1 header each name their
	// sender, the host of a message without a HOSTNAME. Two connections
	// that stall in their header (one silent, one halfway through a v2
	// signature) hold up nobody: the headers are read in each
	// connection's goroutine, never in the accept loop.
	tcp := tr.addr("tcp")
	dialProxied(t, "", tcp, nil)
	dialProxied(t, "", tcp, proxyV2("127.0.0.29:40000", "127.0.0.1:5514")[:8])
	a := dialProxied(t, "", tcp, proxyV2("127.0.0.20:40001", "127.0.0.1:5514"))
	_, err := io.WriteString(a, "<13>1 - - app - - - proxied v2\n")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.20", waitHost("proxied v2"))
	b := dialProxied(t, "", tcp, proxyV1("127.0.0.21:40002", "127.0.0.1:5514"))
	_, err = io.WriteString(b, "<13>1 - - app - - - proxied v1\n")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.21", waitHost("proxied v1"))

	// max_connections_per_source is 1: a second connection of 127.0.0.20
	// is refused, one of another sender through the same balancer is not.
	assert.True(t, closedByPeer(dialProxied(t, "", tcp, proxyV2("127.0.0.20:40003", "127.0.0.1:5514"))), "second connection of one sender")
	assert.Equal(t, float64(1), sample("relay_input_connections_refused_total", "tcp", `reason="per_source"`))
	c := dialProxied(t, "", tcp, proxyV2("127.0.0.22:40004", "127.0.0.1:5514"))
	_, err = io.WriteString(c, "<13>1 - - app - - - another sender\n")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.22", waitHost("another sender"))

	// What the PROXY stage refuses costs that connection alone.
	refusals := []struct {
		reason, local string
		header        []byte
	}{
		{"missing", "", []byte("<13>1 - - app - - - no header\n")},
		{"malformed", "", []byte("PROXY TCP4 nonsense\r\n")},
		{"not_allowed", "127.0.0.2", proxyV2("127.0.0.23:40005", "127.0.0.1:5514")},
	}
	for _, r := range refusals {
		assert.True(t, closedByPeer(dialProxied(t, r.local, tcp, r.header)), r.reason)
		relaytest.WaitFor(t, 10*time.Second, func() bool {
			return sample("relay_input_proxy_refused_total", "tcp", `reason="`+r.reason+`"`) == 1
		}, "refusal counted: "+r.reason)
	}
	_, err = io.WriteString(a, "<13>1 - - app - - - after the refusals\n")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.20", waitHost("after the refusals"), "the open connection sends on")
	// A LOCAL header (a balancer's health check) is served as the
	// balancer's own connection.
	assert.True(t, closedByPeer(func() net.Conn {
		l := dialProxied(t, "", tcp, proxyV2("", ""))
		require.NoError(t, l.(*net.TCPConn).CloseWrite())
		return l
	}()))
	relaytest.WaitFor(t, 10*time.Second, func() bool {
		return scrapeSample(metrics, `relay_input_proxy_headers_total{command="local",input="tcp"}`) == 1
	}, "LOCAL header counted")
	assert.Equal(t, float64(4), scrapeSample(metrics, `relay_input_proxy_headers_total{command="proxy",input="tcp"}`),
		"headers that named a sender: 127.0.0.20 twice, .21, .22")

	// JSON lines, optional: a header names the sender of a line refused
	// into the dead letters (its peer) and of a valid one (its host); a
	// connection without a header is a direct sender.
	j := dialProxied(t, "", tr.addr("json"), proxyV1("127.0.0.24:40006", "127.0.0.1:5515"))
	_, err = io.WriteString(j, "not json\n{\"msg\":\"json proxied\"}\n")
	require.NoError(t, err)
	d := dialProxied(t, "", tr.addr("json"), []byte("{\"msg\":\"json direct\"}\n"))
	assert.Equal(t, "127.0.0.24", waitHost(`json proxied"}`))
	assert.Equal(t, "127.0.0.1", waitHost(`json direct"}`))
	d.Close()
	var dl []map[string]any
	relaytest.WaitFor(t, 10*time.Second, func() bool {
		dl = deadLetters(t, cfg.DeadLetter.Dir)
		return len(dl) == 1
	}, "the invalid line dead-lettered")
	assert.Equal(t, "127.0.0.24", dl[0]["peer"], "the dead letter names the sender")

	// RELP, required: a window from the sender a v2 header names.
	r := dialProxied(t, "", tr.addr("relp"), proxyV2("127.0.0.25:40007", "127.0.0.1:2514"))
	rc := &relpClient{c: r, r: bufio.NewReader(r), txnr: 1}
	rc.send(t, "open", "relp_version=0\nrelp_software=test\ncommands=syslog")
	require.Contains(t, rc.read(t), "200 OK")
	rc.send(t, "syslog", "<13>1 - - app - - - relp proxied")
	require.Contains(t, rc.read(t), "200 OK")
	assert.Equal(t, "127.0.0.25", waitHost("relp proxied"))

	// HEC and OTLP over HTTP and gRPC: their clients dial through the
	// "balancer" (a dialer that sends the header first).
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
		return proxyDialer(proxyV2("127.0.0.26:40008", "127.0.0.1:8088"))(ctx, addr)
	}}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+tr.addr("hec")+"/services/collector/event",
		strings.NewReader(`{"event":"hec proxied"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Splunk s3cret")
	resp, err := hc.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	oc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
		return proxyDialer(proxyV1("127.0.0.27:40009", "127.0.0.1:4318"))(ctx, addr)
	}}}
	defer oc.CloseIdleConnections()
	body, err := plogotlp.NewExportRequestFromLogs(untimedLogs("otlp http proxied")).MarshalProto()
	require.NoError(t, err)
	resp, err = oc.Post("http://"+tr.addr("otlp/http")+"/v1/logs", "application/x-protobuf", strings.NewReader(string(body)))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	conn, err := grpc.NewClient("passthrough:///"+tr.addr("otlp/grpc"), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(proxyDialer(proxyV2("127.0.0.28:40010", "127.0.0.1:4317"))))
	require.NoError(t, err)
	defer conn.Close()
	_, err = plogotlp.NewGRPCClient(conn).Export(t.Context(), plogotlp.NewExportRequestFromLogs(untimedLogs("otlp grpc proxied")))
	require.NoError(t, err)

	// Per-source statistics name the senders, never the balancer (but for
	// the JSON input's direct sender).
	want := map[string][]string{
		"tcp":  {"127.0.0.20", "127.0.0.21", "127.0.0.22"},
		"json": {"127.0.0.1", "127.0.0.24"},
		"relp": {"127.0.0.25"},
		"hec":  {"127.0.0.26"},
		"otlp": {"127.0.0.27", "127.0.0.28"},
	}
	got := map[string][]string{}
	relaytest.WaitFor(t, 10*time.Second, func() bool {
		got = map[string][]string{}
		for _, s := range apiSources(t, tr, "") {
			got[s.Input] = append(got[s.Input], s.Source)
		}
		for _, v := range got {
			slices.Sort(v)
		}
		return len(got["otlp"]) == 2 && len(got["hec"]) == 1
	}, "every sender tracked")
	for in, w := range want {
		assert.Equal(t, w, got[in], "sources of input %s", in)
	}

	// The status names each input's PROXY stage.
	st := getStatus(t, tr, "")
	for _, in := range st.Inputs {
		if _, ok := want[in.Name]; !ok {
			continue // the sources' health events
		}
		require.NotNil(t, in.Proxy, "input %s", in.Name)
		switch in.Name {
		case "tcp":
			assert.Equal(t, api.ProxyStatus{Mode: "required", Headers: 4, Local: 1, Refused: 3}, *in.Proxy)
		case "json":
			assert.Equal(t, api.ProxyStatus{Mode: "optional", Headers: 1}, *in.Proxy)
		case "otlp":
			assert.Equal(t, api.ProxyStatus{Mode: "required", Headers: 2}, *in.Proxy, "its HTTP and gRPC listeners")
		}
	}
	checkBalanced(t, tr.stop(t))
}

// deadLetters reads the dead-letter files in dir.
func deadLetters(t *testing.T, dir string) []map[string]any {
	t.Helper()
	var out []map[string]any
	files, _ := filepath.Glob(filepath.Join(dir, "deadletter-*.jsonl"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l == "" {
				continue
			}
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &m), l)
			out = append(out, m)
		}
	}
	return out
}
