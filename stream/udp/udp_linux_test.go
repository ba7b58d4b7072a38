package udp_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/relaykit/relaykit/stream/udp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// procUDP returns the receive queue (bytes) and the drop count that
// /proc/net/udp shows for l's socket (IPv4, bound to 127.0.0.1).
func procUDP(t *testing.T, l *udp.Listener) (rxQueue, drops int64) {
	t.Helper()
	b, err := os.ReadFile("/proc/net/udp")
	require.NoError(t, err)
	want := fmt.Sprintf("0100007F:%04X", l.Addr().(*net.UDPAddr).Port)
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

// sendQueued sends each message and waits until l's socket holds it, so
// that a test knows what the socket holds (on loopback, delivery usually
// completes within the send, but may be deferred to ksoftirqd).
func sendQueued(t *testing.T, l *udp.Listener, c *net.UDPConn, msgs ...string) {
	t.Helper()
	for _, m := range msgs {
		before, _ := procUDP(t, l)
		send(t, c, m)
		require.Eventually(t, func() bool { rx, _ := procUDP(t, l); return rx > before }, 5*time.Second, time.Millisecond,
			"datagram %q queued", m)
	}
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

// gated is a handler whose first call blocks until release: the socket
// fills meanwhile.
type gated struct {
	received
	entered  chan struct{}
	gate     chan struct{}
	first    sync.Once
	released sync.Once
}

func newGated() *gated { return &gated{entered: make(chan struct{}), gate: make(chan struct{})} }

func (g *gated) handle(reader int, batch []udp.Datagram) {
	g.first.Do(func() {
		close(g.entered)
		<-g.gate
	})
	g.received.handle(reader, batch)
}

func (g *gated) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler was not called")
	}
}

func (g *gated) release() { g.released.Do(func() { close(g.gate) }) }

// TestBatchPerRead: the handler gets the datagrams of one recvmmsg in one
// call, at most BatchSize of them, in order.
func TestBatchPerRead(t *testing.T) {
	var rc received
	l := listen(t, udp.Config{BatchSize: 4}, rc.handle)
	c := dial(t, l)
	var msgs []string
	for i := range 10 {
		msgs = append(msgs, fmt.Sprintf("m%d", i))
	}
	sendQueued(t, l, c, msgs...) // before Serve: the socket holds all ten
	stop := serve(t, l)
	waitCount(t, &rc, 10)
	require.NoError(t, stop())
	assert.Equal(t, []int{4, 4, 2}, rc.batches)
	assert.Equal(t, msgs, rc.payloads())
	assert.Equal(t, int64(3), l.Stats().Reads)
}

// TestDrainAtShutdown: what the socket holds when Serve's context ends is
// handed over before Serve returns, and the drain ends as soon as the
// socket is empty, well before DrainTime.
func TestDrainAtShutdown(t *testing.T) {
	g := newGated()
	t.Cleanup(g.release)
	l := listen(t, udp.Config{DrainTime: time.Minute}, g.handle)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Serve(ctx) }()
	c := dial(t, l)
	send(t, c, "first")
	g.waitEntered(t)
	held := []string{"a", "b", "c", "d", "e"}
	sendQueued(t, l, c, held...)

	cancel()
	start := time.Now()
	require.Eventually(t, func() bool { return udp.Stopping(l) }, 5*time.Second, time.Millisecond)
	g.release()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return")
	}
	assert.Less(t, time.Since(start), 20*time.Second, "the drain ends when the socket is empty, not after DrainTime")
	assert.Equal(t, append([]string{"first"}, held...), g.payloads())
	_, err := c.Write([]byte("after")) // the socket is closed: nobody reads this
	require.NoError(t, err)
	c2, err := net.ListenUDP("udp", l.Addr().(*net.UDPAddr))
	require.NoError(t, err, "Serve closed the socket")
	c2.Close()
}

// TestNoDrain: with a negative DrainTime, Serve returns without reading
// what the socket holds.
func TestNoDrain(t *testing.T) {
	g := newGated()
	t.Cleanup(g.release)
	l := listen(t, udp.Config{DrainTime: -1}, g.handle)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Serve(ctx) }()
	c := dial(t, l)
	send(t, c, "first")
	g.waitEntered(t)
	sendQueued(t, l, c, "held")
	cancel()
	require.Eventually(t, func() bool { return udp.Stopping(l) }, 5*time.Second, time.Millisecond)
	g.release()
	require.NoError(t, <-done)
	assert.Equal(t, []string{"first"}, g.payloads())
}

// floodUntilDrops sends datagrams to l, whose handler g is blocked, until
// the kernel drops some, and returns how many it sent.
func floodUntilDrops(t *testing.T, l *udp.Listener, c *net.UDPConn, n int) int {
	t.Helper()
	for i := range n {
		_, err := fmt.Fprintf(c, "<13>1 - h app - - - flood %d", i)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { _, d := procUDP(t, l); return d > 0 }, 5*time.Second, time.Millisecond,
		"the flood overflowed the socket's buffer")
	return n
}

// dropCounter sums what OnKernelDrops reports.
type dropCounter struct {
	sum, calls atomic.Int64
}

func (d *dropCounter) hook(n int) {
	if n <= 0 {
		d.sum.Add(1 << 40) // a bad report fails the sum
	}
	d.sum.Add(int64(n))
	d.calls.Add(1)
}

// TestKernelDrops: a listener with the smallest receive buffer, its
// handler blocked, is flooded. The datagram read after the flood carries
// the socket's drop count (SO_RXQ_OVFL), and the listener counts exactly
// the drops the kernel shows in /proc/net/udp, which are what was sent and
// did not arrive.
func TestKernelDrops(t *testing.T) {
	var hooked dropCounter
	// No SO_MEMINFO poll: only the control messages count here.
	g := newGated()
	t.Cleanup(g.release)
	l := listen(t, udp.Config{ReadBuffer: 1, DropPollInterval: -1, Hooks: udp.Hooks{OnKernelDrops: hooked.hook}}, g.handle)
	stop := serve(t, l)
	before := softnetDrops(t)
	c := dial(t, l)
	send(t, c, "first")
	g.waitEntered(t)
	sent := 1 + floodUntilDrops(t, l, c, 500)
	g.release()
	// Everything held is read once the queue is empty; nothing reported
	// the drops yet (the datagrams read were queued before them).
	require.Eventually(t, func() bool { rx, _ := procUDP(t, l); return rx == 0 }, 5*time.Second, time.Millisecond)
	_, drops := procUDP(t, l)
	require.Eventually(t, func() bool { return l.Stats().Datagrams == int64(g.count()) }, 5*time.Second, time.Millisecond)
	assert.Zero(t, l.Stats().KernelDrops, "no datagram has followed the drops yet")

	send(t, c, "last")
	sent++
	require.Eventually(t, func() bool { p := g.payloads(); return len(p) > 0 && p[len(p)-1] == "last" }, 5*time.Second, time.Millisecond)
	_, drops2 := procUDP(t, l)
	require.Equal(t, drops, drops2, "the last datagram was not dropped")
	s := l.Stats()
	t.Logf("sent %d, received %d, kernel dropped %d", sent, g.count(), drops)
	assert.Equal(t, drops, s.KernelDrops)
	assert.Equal(t, drops, hooked.sum.Load())
	assert.Equal(t, int64(1), hooked.calls.Load(), "one report: the last datagram's")
	if softnetDrops(t) == before { // nothing lost before the socket
		assert.Equal(t, int64(sent-g.count()), s.KernelDrops, "kernel drops = sent - received")
	}
	require.NoError(t, stop())
	assert.Equal(t, drops, l.Stats().KernelDrops, "the final count adds nothing")
}

// TestKernelDropsPolled: drops that no datagram follows (a burst, then
// silence) show within the polling interval (SO_MEMINFO).
func TestKernelDropsPolled(t *testing.T) {
	var hooked dropCounter
	g := newGated()
	t.Cleanup(g.release)
	l := listen(t, udp.Config{ReadBuffer: 1, DropPollInterval: 20 * time.Millisecond, Hooks: udp.Hooks{OnKernelDrops: hooked.hook}}, g.handle)
	stop := serve(t, l)
	before := softnetDrops(t)
	c := dial(t, l)
	send(t, c, "first")
	g.waitEntered(t)
	sent := 1 + floodUntilDrops(t, l, c, 500)
	g.release()
	require.Eventually(t, func() bool { rx, _ := procUDP(t, l); return rx == 0 }, 5*time.Second, time.Millisecond)
	_, drops := procUDP(t, l)
	require.Eventually(t, func() bool { return l.Stats().KernelDrops == drops }, 5*time.Second, time.Millisecond,
		"the listener shows the socket's %d drops", drops)
	assert.Equal(t, drops, hooked.sum.Load())
	require.NoError(t, stop())
	if softnetDrops(t) == before {
		assert.Equal(t, int64(sent-g.count()), l.Stats().KernelDrops, "kernel drops = sent - received")
	}
}

// TestKernelDropsAtEnd: without polling and without a datagram after
// them, drops are counted when Serve ends.
func TestKernelDropsAtEnd(t *testing.T) {
	var hooked dropCounter
	g := newGated()
	t.Cleanup(g.release)
	l := listen(t, udp.Config{ReadBuffer: 1, DropPollInterval: -1, Hooks: udp.Hooks{OnKernelDrops: hooked.hook}}, g.handle)
	stop := serve(t, l)
	before := softnetDrops(t)
	c := dial(t, l)
	send(t, c, "first")
	g.waitEntered(t)
	sent := 1 + floodUntilDrops(t, l, c, 500)
	g.release()
	require.Eventually(t, func() bool { rx, _ := procUDP(t, l); return rx == 0 }, 5*time.Second, time.Millisecond)
	_, drops := procUDP(t, l)
	require.Eventually(t, func() bool { return l.Stats().Datagrams == int64(g.count()) }, 5*time.Second, time.Millisecond)
	assert.Zero(t, l.Stats().KernelDrops, "nothing has reported the drops yet")
	require.NoError(t, stop())
	assert.Equal(t, drops, l.Stats().KernelDrops)
	assert.Equal(t, drops, hooked.sum.Load())
	if softnetDrops(t) == before {
		assert.Equal(t, int64(sent-g.count()), l.Stats().KernelDrops, "kernel drops = sent - received")
	}
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// closedUDPPort returns a loopback UDP address nothing listens on (a
// moment ago).
func closedUDPPort(t *testing.T) *net.UDPAddr {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	addr := c.LocalAddr().(*net.UDPAddr)
	require.NoError(t, c.Close())
	return addr
}

// TestReadErrorKeepsServing: a read error on the socket (here a real one:
// with IP_RECVERR, the ICMP port unreachable answering a datagram the
// socket sent makes the next recvmmsg fail with ECONNREFUSED) is counted
// and logged once per episode, and the listener keeps serving.
func TestReadErrorKeepsServing(t *testing.T) {
	var log syncBuffer
	var got received
	l := listen(t, udp.Config{Name: "syslog", Logger: slog.New(slog.NewTextHandler(&log, nil))}, got.handle)
	conn := udp.Conn(l)
	rc, err := conn.SyscallConn()
	require.NoError(t, err)
	var serr error
	require.NoError(t, rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_RECVERR, 1)
	}))
	require.NoError(t, serr)
	stop := serve(t, l)
	c := dial(t, l)
	for i := range 3 { // three episodes: each error is followed by a datagram
		_, err := conn.WriteToUDP([]byte("probe"), closedUDPPort(t))
		require.NoError(t, err)
		require.Eventually(t, func() bool { return l.Stats().ReadErrors == int64(i+1) }, 5*time.Second, time.Millisecond,
			"read error counted")
		send(t, c, fmt.Sprintf("after error %d", i))
		waitCount(t, &got, i+1)
		require.Eventually(t, func() bool { return !l.Stats().ReadFailing }, 5*time.Second, time.Millisecond)
	}
	require.NoError(t, stop())
	assert.Equal(t, []string{"after error 0", "after error 1", "after error 2"}, got.payloads())
	out := log.String()
	assert.Equal(t, 3, strings.Count(out, "UDP read failed"), "one warning per episode:\n%s", out)
	assert.Contains(t, out, "connection refused")
	assert.Contains(t, out, "input=syslog")
	assert.Equal(t, 3, strings.Count(out, "UDP reads succeed again"))
	assert.Equal(t, int64(3), l.Stats().ReadErrors)
}

// sockRcvbuf returns the SO_RCVBUF the kernel reports for conn (twice the
// size set, see socket(7)).
func sockRcvbuf(t *testing.T, conn *net.UDPConn) int {
	t.Helper()
	rc, err := conn.SyscallConn()
	require.NoError(t, err)
	var got int
	var gerr error
	require.NoError(t, rc.Control(func(fd uintptr) {
		got, gerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
	}))
	require.NoError(t, gerr)
	return got
}

func readSysctl(t *testing.T, name string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/core/" + name)
	require.NoError(t, err)
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return v
}

// mayForceRcvbuf reports whether this process may use SO_RCVBUFFORCE
// (CAP_NET_ADMIN).
func mayForceRcvbuf(t *testing.T) bool {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer c.Close()
	rc, err := c.SyscallConn()
	require.NoError(t, err)
	var serr error
	require.NoError(t, rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 4096)
	}))
	return serr == nil
}

// TestReadBuffer: the receive buffer is DefaultReadBuffer by default, not
// the kernel's default; a size over net.core.rmem_max is forced when the
// process may, and otherwise capped with a warning; a negative size leaves
// the kernel's default.
func TestReadBuffer(t *testing.T) {
	rmemMax, rmemDefault := readSysctl(t, "rmem_max"), readSysctl(t, "rmem_default")
	force := mayForceRcvbuf(t)
	t.Logf("rmem_max %d, rmem_default %d, SO_RCVBUFFORCE allowed: %v", rmemMax, rmemDefault, force)
	granted := func(n int) int {
		if force {
			return 2 * n
		}
		return 2 * min(n, rmemMax)
	}

	l := listen(t, udp.Config{}, nop)
	assert.Equal(t, granted(udp.DefaultReadBuffer), sockRcvbuf(t, udp.Conn(l)))

	var log syncBuffer
	over := 2 * rmemMax
	l = listen(t, udp.Config{ReadBuffer: over, Logger: slog.New(slog.NewTextHandler(&log, nil))}, nop)
	assert.Equal(t, granted(over), sockRcvbuf(t, udp.Conn(l)))
	if force {
		assert.Empty(t, log.String())
	} else {
		assert.Contains(t, log.String(), "capped by net.core.rmem_max")
	}

	l = listen(t, udp.Config{ReadBuffer: -1}, nop)
	assert.Equal(t, rmemDefault, sockRcvbuf(t, udp.Conn(l)))
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
	v, ok := udp.RxqOverflow(ovfl)
	assert.True(t, ok)
	assert.Equal(t, uint32(4242), v)

	// After another control message (a timestamp, 16 bytes).
	v, ok = udp.RxqOverflow(append(msg(unix.SOL_SOCKET, unix.SO_TIMESTAMP, make([]byte, 16)), ovfl...))
	assert.True(t, ok)
	assert.Equal(t, uint32(4242), v)

	for name, b := range map[string][]byte{
		"empty":         nil,
		"short header":  ovfl[:unix.SizeofCmsghdr-1],
		"cut data":      ovfl[:unix.CmsgLen(2)],
		"other message": msg(unix.SOL_SOCKET, unix.SO_TIMESTAMP, make([]byte, 16)),
		"other level":   msg(unix.IPPROTO_IP, unix.SO_RXQ_OVFL, count),
		"length zero":   make([]byte, unix.CmsgSpace(4)),
		"length beyond": append(msg(unix.SOL_SOCKET, unix.SO_TIMESTAMP, make([]byte, 16)), ovfl[:unix.SizeofCmsghdr]...),
	} {
		_, ok := udp.RxqOverflow(b)
		assert.False(t, ok, name)
	}
}
