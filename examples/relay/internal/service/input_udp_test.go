package service

import (
	"fmt"
	"net"
	"os"
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

// TestUDPReadBufferDefault: a UDP input a user writes without read_buffer
// gets the documented 4 MiB, not the kernel's default (208 KiB), in the
// config, the startup summary and the socket.
func TestUDPReadBufferDefault(t *testing.T) {
	dir := t.TempDir()
	cfg, err := config.LoadConfig(relaytest.WriteConfig(t, `
inputs:
  syslog_udp:
    - name: mine
      listen: 127.0.0.1:0
routes:
  - name: all
    final: true
    destinations: [archive]
destinations:
  archive:
    type: archive
    dir: `+dir+`/archive
spool:
  dir: `+dir+`/spool
dead_letter:
  dir: `+dir+`/deadletter
`))
	require.NoError(t, err)
	assert.Equal(t, config.ByteSize(4<<20), cfg.Inputs.SyslogUDP[0].ReadBuffer)
	assert.Contains(t, cfg.Summary(), "input mine: syslog udp 127.0.0.1:0 (max 65536 B, rcvbuf 4194304 B)")

	// stream/udp's tests check that the socket gets it.
}

// procUDP returns the receive queue (bytes) and the drop count that
// /proc/net/udp shows for the IPv4 socket bound to 127.0.0.1:port.
func procUDP(t *testing.T, port int) (rxQueue, drops int64) {
	t.Helper()
	b, err := os.ReadFile("/proc/net/udp")
	require.NoError(t, err)
	want := fmt.Sprintf("0100007F:%04X", port)
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 13 || f[1] != want {
			continue
		}
		q := strings.Split(f[4], ":")
		require.Len(t, q, 2, line)
		rx, err := strconv.ParseInt(q[1], 16, 64)
		require.NoError(t, err, line)
		d, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		require.NoError(t, err, line)
		return rx, d
	}
	t.Fatalf("no socket %s in /proc/net/udp", want)
	return 0, 0
}

// softnetDrops sums the packets the kernel dropped before any socket
// (backlog full, /proc/net/softnet_stat column 2).
func softnetDrops(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/net/softnet_stat")
	require.NoError(t, err)
	var sum int64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		require.GreaterOrEqual(t, len(f), 2, line)
		v, err := strconv.ParseInt(f[1], 16, 64)
		require.NoError(t, err, line)
		sum += v
	}
	return sum
}

// TestUDPKernelDrops: a UDP input with the smallest receive buffer is
// flooded faster than it reads. The datagrams the kernel drops are counted
// (relay_input_kernel_dropped_total, received and dropped{rcvbuf_full})
// exactly as the socket's own drop counter in /proc/net/udp shows them,
// from the control messages while the relay runs and in the final ledger,
// which balances: every datagram sent is received, and what was not
// delivered is a counted drop.
func TestUDPKernelDrops(t *testing.T) {
	// Only the control messages count while the relay runs (no SO_MEMINFO
	// polling): the last datagram below must report the drops.
	poll := input.UDPDropPoll
	input.UDPDropPoll = -1
	t.Cleanup(func() { input.UDPDropPoll = poll })
	cfg := relaytest.TestConfig(t)
	cfg.Inputs.SyslogUDP[0].ReadBuffer = 1 // the kernel's minimum, a few datagrams
	tr := startRelay(t, cfg)
	addr := tr.Addrs()["udp"].(*net.UDPAddr)
	port := addr.Port
	before := softnetDrops(t)

	conn, err := net.DialUDP("udp", nil, addr)
	require.NoError(t, err)
	defer conn.Close()
	const n = 20000
	for i := range n {
		_, err := fmt.Fprintf(conn, "<13>1 - h app - - - flood %d", i)
		require.NoError(t, err)
	}
	// Everything sent is read or dropped once the queue is empty.
	relaytest.WaitFor(t, 10*time.Second, func() bool { rx, _ := procUDP(t, port); return rx == 0 }, "socket queue empty")
	_, drops := procUDP(t, port)
	require.Positive(t, drops, "the flood overflowed the socket's buffer")

	// A last datagram carries the socket's drop count (SO_RXQ_OVFL).
	_, err = fmt.Fprintf(conn, "<13>1 - h app - - - last")
	require.NoError(t, err)
	metrics := "http://" + tr.addr("metrics") + "/metrics"
	relaytest.WaitFor(t, 5*time.Second, func() bool {
		return scrapeSample(metrics, `relay_input_kernel_dropped_total{input="udp"}`) == float64(drops)
	}, fmt.Sprintf("relay_input_kernel_dropped_total = %d, the socket's drops", drops))
	assert.Equal(t, float64(drops), scrapeSample(metrics, `relay_dropped_events_total{reason="rcvbuf_full"}`))
	_, drops2 := procUDP(t, port)
	require.Equal(t, drops, drops2, "the last datagram was not dropped")

	s := tr.stop(t)
	t.Logf("sent %d, kernel dropped %d, final ledger %s", n+1, drops, s)
	assert.Equal(t, drops, s.Dropped["rcvbuf_full"])
	checkBalanced(t, s)
	if softnetDrops(t) == before {
		// No packet was lost before reaching the socket (on loopback, only
		// a full backlog queue can do that, and it counts in softnet_stat).
		assert.Equal(t, int64(n+1), s.Received, "received = datagrams sent (read or dropped by the kernel)")
		assert.Equal(t, s.Received, s.Delivered+s.Archived+s.Spooled+s.DroppedTotal(), "received = delivered + archived + spooled + dropped")
	}
}

// TestUDPKernelDropsPolled: drops that no datagram follows (a burst, then
// silence) show within the polling interval (SO_MEMINFO).
func TestUDPKernelDropsPolled(t *testing.T) {
	poll := input.UDPDropPoll
	input.UDPDropPoll = 20 * time.Millisecond
	t.Cleanup(func() { input.UDPDropPoll = poll })
	cfg := relaytest.TestConfig(t)
	cfg.Inputs.SyslogUDP[0].ReadBuffer = 1
	tr := startRelay(t, cfg)
	addr := tr.Addrs()["udp"].(*net.UDPAddr)
	conn, err := net.DialUDP("udp", nil, addr)
	require.NoError(t, err)
	defer conn.Close()
	const n = 5000
	for i := range n {
		_, err := fmt.Fprintf(conn, "<13>1 - h app - - - burst %d", i)
		require.NoError(t, err)
	}
	relaytest.WaitFor(t, 10*time.Second, func() bool { rx, _ := procUDP(t, addr.Port); return rx == 0 }, "socket queue empty")
	_, drops := procUDP(t, addr.Port)
	require.Positive(t, drops)
	relaytest.WaitFor(t, 5*time.Second, func() bool {
		return tr.Ledger().Dropped["rcvbuf_full"] == drops
	}, fmt.Sprintf("the ledger shows the socket's %d drops", drops))
	s := tr.stop(t)
	assert.Equal(t, drops, s.Dropped["rcvbuf_full"])
	checkBalanced(t, s)
}
