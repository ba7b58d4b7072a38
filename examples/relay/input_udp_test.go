package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// startRelayLogged is startRelay with the relay's log also written to log.
func startRelayLogged(t *testing.T, cfg Config, log io.Writer) *testRelay {
	t.Helper()
	require.NoError(t, cfg.Validate())
	r, err := NewRelay(cfg, slog.New(slog.NewTextHandler(io.MultiWriter(testWriter{t}, log), nil)))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	tr := &testRelay{Relay: r, cancel: cancel, done: make(chan error, 1)}
	go func() { tr.done <- r.Run(ctx) }()
	t.Cleanup(func() { tr.stop(t) })
	waitFor(t, 5*time.Second, func() bool { return r.healthy() == nil }, "relay ready")
	return tr
}

// closedUDPPort returns a loopback UDP address nothing listens on (a moment
// ago).
func closedUDPPort(t *testing.T) *net.UDPAddr {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	addr := c.LocalAddr().(*net.UDPAddr)
	require.NoError(t, c.Close())
	return addr
}

// TestUDPReadErrorKeepsServing: a read error on a UDP input's socket (here
// a real one: with IP_RECVERR, the ICMP port unreachable answering a
// datagram the socket sent makes the next recvmmsg fail with
// ECONNREFUSED) is counted and logged once per episode, and the input,
// with the rest of the relay, keeps serving.
func TestUDPReadErrorKeepsServing(t *testing.T) {
	cfg := testConfig(t)
	var log syncBuffer
	tr := startRelayLogged(t, cfg, &log)
	u := tr.udp[0]
	rc, err := u.conn.SyscallConn()
	require.NoError(t, err)
	var serr error
	require.NoError(t, rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_RECVERR, 1)
	}))
	require.NoError(t, serr)

	metrics := "http://" + tr.addr("metrics") + "/metrics"
	const errorsSample = `relay_input_read_errors_total{input="udp"}`
	for i := range 3 { // three episodes: each error is followed by a datagram
		dead := closedUDPPort(t)
		_, err := u.conn.WriteToUDP([]byte("probe"), dead)
		require.NoError(t, err)
		waitFor(t, 5*time.Second, func() bool { return scrapeSample(metrics, errorsSample) == float64(i+1) }, "read error counted")
		require.NoError(t, tr.healthy(), "the relay still runs after a UDP read error")

		send(t, "udp", tr.addr("udp"), []byte("<13>1 - h app - - - after the error"))
		waitFor(t, 5*time.Second, func() bool { return tr.Ledger().Input["udp"] == int64(i+1) }, "datagram after the error received")
	}
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Equal(t, int64(3), s.Dest["archive"].Delivered)
	assert.Equal(t, 3, strings.Count(log.String(), "UDP read failed"), "one warning per episode")
	assert.Contains(t, log.String(), "connection refused")
	assert.Equal(t, 3, strings.Count(log.String(), "UDP reads succeed again"))
}

// socketRcvbuf returns the SO_RCVBUF the kernel reports for conn (twice
// the size set, see socket(7)).
func socketRcvbuf(t *testing.T, conn *net.UDPConn) int {
	t.Helper()
	rc, err := conn.SyscallConn()
	require.NoError(t, err)
	var got int
	var gerr error
	require.NoError(t, rc.Control(func(fd uintptr) {
		got, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
	}))
	require.NoError(t, gerr)
	return got
}

// TestUDPReadBufferDefault: a UDP input a user writes without read_buffer
// gets the documented 4 MiB, not the kernel's default (208 KiB), in the
// config, the startup summary and the socket.
func TestUDPReadBufferDefault(t *testing.T) {
	dir := t.TempDir()
	cfg, err := LoadConfig(writeConfig(t, `
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
	assert.Equal(t, ByteSize(4<<20), cfg.Inputs.SyslogUDP[0].ReadBuffer)
	assert.Contains(t, cfg.Summary(), "input mine: syslog udp 127.0.0.1:0 (max 65536 B, rcvbuf 4194304 B)")

	r, err := NewRelay(cfg, nil)
	require.NoError(t, err)
	defer r.closeAll()
	rmemMax := 4 << 20
	if b, err := os.ReadFile("/proc/sys/net/core/rmem_max"); err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			rmemMax = v
		}
	}
	// Without CAP_NET_ADMIN the kernel caps the size at rmem_max.
	assert.GreaterOrEqual(t, socketRcvbuf(t, r.udp[0].conn), 2*min(4<<20, rmemMax))
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
	poll := kernelDropsPoll
	kernelDropsPoll = 0
	t.Cleanup(func() { kernelDropsPoll = poll })
	cfg := testConfig(t)
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
	waitFor(t, 10*time.Second, func() bool { rx, _ := procUDP(t, port); return rx == 0 }, "socket queue empty")
	_, drops := procUDP(t, port)
	require.Positive(t, drops, "the flood overflowed the socket's buffer")

	// A last datagram carries the socket's drop count (SO_RXQ_OVFL).
	_, err = fmt.Fprintf(conn, "<13>1 - h app - - - last")
	require.NoError(t, err)
	metrics := "http://" + tr.addr("metrics") + "/metrics"
	waitFor(t, 5*time.Second, func() bool {
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
	poll := kernelDropsPoll
	kernelDropsPoll = 20 * time.Millisecond
	t.Cleanup(func() { kernelDropsPoll = poll })
	cfg := testConfig(t)
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
	waitFor(t, 10*time.Second, func() bool { rx, _ := procUDP(t, addr.Port); return rx == 0 }, "socket queue empty")
	_, drops := procUDP(t, addr.Port)
	require.Positive(t, drops)
	waitFor(t, 5*time.Second, func() bool {
		return tr.Ledger().Dropped["rcvbuf_full"] == drops
	}, fmt.Sprintf("the ledger shows the socket's %d drops", drops))
	s := tr.stop(t)
	assert.Equal(t, drops, s.Dropped["rcvbuf_full"])
	checkBalanced(t, s)
}

// TestRxqOverflow: the SO_RXQ_OVFL count is found among control messages
// as the kernel lays them out (cmsg(3)), and malformed ones are refused.
func TestRxqOverflow(t *testing.T) {
	msg := func(level, typ int, data []byte) []byte {
		b := make([]byte, unix.CmsgSpace(len(data)))
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		h.Level, h.Type = int32(level), int32(typ)
		h.SetLen(unix.CmsgLen(len(data)))
		copy(b[unix.CmsgLen(0):], data)
		return b
	}
	count := binary.NativeEndian.AppendUint32(nil, 4242)
	ovfl := msg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, count)
	v, ok := rxqOverflow(ovfl)
	assert.True(t, ok)
	assert.Equal(t, uint32(4242), v)

	// After another control message (a timestamp, 16 bytes).
	v, ok = rxqOverflow(append(msg(unix.SOL_SOCKET, unix.SO_TIMESTAMP, make([]byte, 16)), ovfl...))
	assert.True(t, ok)
	assert.Equal(t, uint32(4242), v)

	for name, b := range map[string][]byte{
		"empty":         nil,
		"short header":  ovfl[:unix.SizeofCmsghdr-1],
		"cut data":      ovfl[:unix.CmsgLen(2)],
		"other message": msg(unix.SOL_SOCKET, unix.SO_TIMESTAMP, make([]byte, 16)),
		"other level":   msg(unix.IPPROTO_IP, unix.SO_RXQ_OVFL, count),
		"length zero":   make([]byte, unix.CmsgSpace(4)),
	} {
		_, ok := rxqOverflow(b)
		assert.False(t, ok, name)
	}
	if !raceEnabled {
		assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = rxqOverflow(ovfl) }))
	}
}
