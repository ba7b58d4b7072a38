package input_test

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/input"
	"github.com/relaykit/relaykit/sources"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/udp"
	"github.com/relaykit/relaykit/syslog"
)

func newSyslog(t *testing.T, cfg input.SyslogConfig) *input.Syslog {
	t.Helper()
	s, err := input.NewSyslog(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// octet returns m framed with octet counting (RFC 6587).
func octet(m string) string { return fmt.Sprintf("%d %s", len(m), m) }

// A stream connection's frames, octet-counted or LF-terminated (decided by
// its first frame), become events in the order sent: parsed, the sender's
// address as the host of those that name none, an unparsable one handed
// over raw and flagged, a long one cut and flagged.
func TestSyslogStream(t *testing.T) {
	r := runEngine(t)
	clk := clock.NewFake(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	s := newSyslog(t, input.SyslogConfig{Input: r.eng.NewInput("syslog"), MaxMessageSize: 64, Clock: clk,
		Parser: syslog.Config{Location: time.UTC, RequireText: true}})
	ln, _ := serveStream(t, stream.Config{}, s.ServeConn)

	octets := dial(t, "tcp", ln.Addr())
	_, err := io.WriteString(octets, octet("<13>1 2026-11-28T11:59:00Z web-1 app 42 - - hello")+
		octet("<13>Nov 28 11:59:01 sshd[7]: no host here")+
		octet("<999>not syslog")+
		octet("<13>1 - - - - - - "+strings.Repeat("x", 100)))
	require.NoError(t, err)
	lines := dial(t, "tcp", ln.Addr())
	_, err = io.WriteString(lines, "<14>first line\n<14>second line\n")
	require.NoError(t, err)

	evs := r.wait(t, 6)
	var octs, lfs []relaykit.Event
	for _, e := range evs {
		if strings.Contains(string(e.Raw), "line") {
			lfs = append(lfs, e)
		} else {
			octs = append(octs, e)
		}
	}
	require.Len(t, octs, 4)
	assert.Equal(t, "web-1", string(octs[0].Host))
	assert.Equal(t, "hello", string(octs[0].Raw))
	assert.Equal(t, "127.0.0.1", string(octs[1].Host), "the peer's address when the message names no host")
	assert.Equal(t, "sshd", string(octs[1].Source))
	assert.Equal(t, "<999>not syslog", string(octs[2].Raw))
	assert.NotZero(t, octs[2].Flags&relaykit.FlagParseError)
	assert.Equal(t, "127.0.0.1", string(octs[2].Host))
	assert.NotZero(t, octs[3].Flags&relaykit.FlagTruncated)
	assert.Len(t, octs[3].Raw, 64-len("<13>1 - - - - - - "))
	for _, e := range octs {
		assert.Equal(t, clk.Nano(), e.ReceiveTime, "stamped from the input's clock")
	}
	assert.Equal(t, []string{"first line", "second line"}, raws(lfs))

	st := s.Stats()
	assert.Equal(t, int64(2), st.Connections)
	assert.Equal(t, int64(6), st.Frames)
	assert.Equal(t, int64(1), st.ParseErrors)
	assert.Equal(t, int64(1), st.Truncated)
	assert.Positive(t, st.Bytes)
	assert.Positive(t, st.Framing.Reads)
	assert.Positive(t, st.Framing.DiscardedBytes)
}

// One connection's events keep their order through the engine, across
// many reads.
func TestSyslogStreamOrder(t *testing.T) {
	r := runEngine(t)
	s := newSyslog(t, input.SyslogConfig{Input: r.eng.NewInput("syslog")})
	ln, _ := serveStream(t, stream.Config{}, s.ServeConn)
	const n = 5000
	var b strings.Builder
	var want []string
	for i := range n {
		m := fmt.Sprintf("event %d", i)
		want = append(want, m)
		b.WriteString("<13>" + m + "\n")
	}
	c := dial(t, "tcp", ln.Addr())
	_, err := io.WriteString(c, b.String())
	require.NoError(t, err)
	assert.Equal(t, want, raws(r.wait(t, n)))
}

// Datagrams become events, one each: parsed, the sender's address as the
// host of those that name none, one longer than the listener's maximum
// handed over cut and flagged.
func TestSyslogDatagrams(t *testing.T) {
	r := runEngine(t)
	s := newSyslog(t, input.SyslogConfig{Input: r.eng.NewInput("syslog")})
	ln, _ := serveUDP(t, udp.Config{MaxMessageSize: 60}, s.ServeDatagrams)
	c := dial(t, "udp", ln.Addr())
	for _, m := range []string{"<13>1 2026-11-28T11:59:00Z fw-1 app - - - allowed", "<13>no host", "<13>" + strings.Repeat("y", 80)} {
		_, err := io.WriteString(c, m)
		require.NoError(t, err)
	}
	evs := r.wait(t, 3)
	assert.Equal(t, []string{"allowed", "no host", strings.Repeat("y", 56)}, raws(evs))
	assert.Equal(t, "fw-1", string(evs[0].Host))
	assert.Equal(t, "127.0.0.1", string(evs[1].Host))
	assert.NotZero(t, evs[2].Flags&relaykit.FlagTruncated)
	st := s.Stats()
	assert.Equal(t, int64(3), st.Datagrams)
	assert.Equal(t, int64(1), st.Truncated)
}

// The shutdown order of the package documentation loses nothing: the
// listeners stop reading, their connections hand over what they read
// while the engine runs, then the engine routes it all.
func TestSyslogShutdownOrder(t *testing.T) {
	r := runEngine(t)
	s := newSyslog(t, input.SyslogConfig{Input: r.eng.NewInput("syslog")})
	ln, stopTCP := serveStream(t, stream.Config{}, s.ServeConn)
	uln, stopUDP := serveUDP(t, udp.Config{}, s.ServeDatagrams)
	const n = 2000
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "<13>tcp %d\n", i)
	}
	c := dial(t, "tcp", ln.Addr())
	_, err := io.WriteString(c, b.String())
	require.NoError(t, err)
	u := dial(t, "udp", uln.Addr())
	for i := range 100 {
		_, err := fmt.Fprintf(u, "<13>udp %d", i)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return ln.Stats().BytesRead == int64(b.Len()) && uln.Stats().Datagrams == 100 },
		10*time.Second, time.Millisecond, "the listeners have read everything")
	require.NoError(t, stopTCP()) // 1: stop reading; the handlers hand over what they read
	require.NoError(t, stopUDP())
	r.stop() // 2: route what the engine holds
	require.NoError(t, r.err)
	assert.Len(t, r.rec.all(), n+100, "nothing read was lost")
	assert.Zero(t, r.eng.Stats().Dropped[relaykit.ReasonShutdownUnqueued])
}

// With sources tracked, a UDP sender over its rate limit loses its excess,
// counted as rate_limit; a stream sender in drop mode too.
func TestSyslogRateLimitDrop(t *testing.T) {
	r := runEngine(t)
	tr, err := sources.New(sources.Config{Policy: sources.Policy{RateLimit: sources.Limit{EventsPerSecond: 0.001, Burst: 10}}})
	require.NoError(t, err)
	in := r.eng.NewInput("syslog")
	s := newSyslog(t, input.SyslogConfig{Input: in, Sources: tr.Input("syslog"), DropOverLimit: true})
	uln, _ := serveUDP(t, udp.Config{}, s.ServeDatagrams)
	u := dial(t, "udp", uln.Addr())
	for i := range 50 {
		_, err := fmt.Fprintf(u, "<13>udp %d", i)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return s.Stats().Datagrams == 50 }, 10*time.Second, time.Millisecond)
	ln, _ := serveStream(t, stream.Config{}, s.ServeConn)
	c := dial(t, "tcp", ln.Addr())
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "<13>tcp %d\n", i)
	}
	_, err = io.WriteString(c, b.String())
	require.NoError(t, err)
	require.Eventually(t, func() bool { return s.Stats().Frames == 50 }, 10*time.Second, time.Millisecond)
	// One source (127.0.0.1): 10 events pass in all, the rest are dropped.
	evs := r.wait(t, 10)
	assert.Len(t, evs, 10)
	assert.Equal(t, int64(90), s.Stats().RateLimited)
	assert.Equal(t, int64(90), in.Stats().Dropped[relaykit.ReasonRateLimit])
	src, ok := tr.Source(sources.AddrKey(netAddrPort(t, ln.Addr()).Addr()))
	require.True(t, ok)
	assert.Equal(t, uint64(100), src.Events)
	assert.Equal(t, uint64(90), src.Dropped)
}

// A paced connection (its source over its limit) waits its turn before
// it is read again, and the wait ends when the listener stops: Serve
// returns, and what the connection had read is handed over.
func TestSyslogPaceEndsWithListener(t *testing.T) {
	r := runEngine(t)
	tr, err := sources.New(sources.Config{Policy: sources.Policy{RateLimit: sources.Limit{EventsPerSecond: 0.001, Burst: 1}}})
	require.NoError(t, err)
	s := newSyslog(t, input.SyslogConfig{Input: r.eng.NewInput("syslog"), Sources: tr.Input("syslog")})
	ln, stop := serveStream(t, stream.Config{}, s.ServeConn)
	c := dial(t, "tcp", ln.Addr())
	_, err = io.WriteString(c, "<13>a\n<13>b\n<13>c\n")
	require.NoError(t, err)
	evs := r.wait(t, 3) // handed over before the read that waits
	assert.Equal(t, []string{"a", "b", "c"}, raws(evs))
	require.Eventually(t, func() bool { s, _ := tr.Source(sources.AddrKey(netAddrPort(t, ln.Addr()).Addr())); return s.Paced > 0 },
		10*time.Second, time.Millisecond, "the connection is paced")
	done := make(chan error, 1)
	go func() { done <- stop() }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return: the pace outlived the listener")
	}
}

// netAddrPort returns a's address and port.
func netAddrPort(t *testing.T, a net.Addr) netip.AddrPort {
	t.Helper()
	ap, err := netip.ParseAddrPort(a.String())
	require.NoError(t, err)
	return ap
}

// A bad Config is refused with a FieldError naming the field.
func TestSyslogConfig(t *testing.T) {
	r := runEngine(t)
	in := r.eng.NewInput("syslog")
	for field, cfg := range map[string]input.SyslogConfig{
		"Input":          {},
		"MaxMessageSize": {Input: in, MaxMessageSize: -1},
		"ReadSize":       {Input: in, ReadSize: -1},
		"Framing":        {Input: in, Framing: 9},
	} {
		for _, err := range []error{cfg.Validate(), func() error { _, err := input.NewSyslog(cfg); return err }()} {
			require.ErrorIs(t, err, input.ErrInvalidConfig, field)
			var fe *relaykit.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, field, fe.Field)
		}
	}
}

// Behind a load balancer that sends PROXY headers, the sender the header
// names is the host of the events that name none, and their source.
func TestSyslogBehindProxy(t *testing.T) {
	r := runEngine(t)
	tr, err := sources.New(sources.Config{})
	require.NoError(t, err)
	s := newSyslog(t, input.SyslogConfig{Input: r.eng.NewInput("syslog"), Sources: tr.Input("syslog")})
	allowed, err := stream.ParseProxyAllowed([]string{"127.0.0.1"})
	require.NoError(t, err)
	ln, _ := serveStream(t, stream.Config{ProxyProtocol: stream.ProxyRequired, ProxyAllowed: allowed}, s.ServeConn)
	c := dial(t, "tcp", ln.Addr())
	_, err = io.WriteString(c, "PROXY TCP4 192.0.2.10 192.0.2.1 51234 514\r\n<13>behind the balancer\n")
	require.NoError(t, err)
	evs := r.wait(t, 1)
	assert.Equal(t, "192.0.2.10", string(evs[0].Host))
	// Charged before the connection's next read, once the event is handed over.
	require.Eventually(t, func() bool {
		src, ok := tr.Source(sources.AddrKey(netip.MustParseAddr("192.0.2.10")))
		return ok && src.Events == 1
	}, 10*time.Second, time.Millisecond, "charged to the sender, not the balancer")
}
