package udp_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/stream/udp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// received is what a test handler saw: copies of every datagram, in the
// order of the calls.
type received struct {
	mu      sync.Mutex
	dgs     []udp.Datagram // Data copied
	batches []int          // len of each call's batch
	readers []int          // reader of each call
	ch      chan struct{}  // a token per call, if not nil
}

func (rc *received) handle(reader int, batch []udp.Datagram) {
	rc.mu.Lock()
	for _, d := range batch {
		d.Data = bytes.Clone(d.Data)
		rc.dgs = append(rc.dgs, d)
	}
	rc.batches = append(rc.batches, len(batch))
	rc.readers = append(rc.readers, reader)
	rc.mu.Unlock()
	if rc.ch != nil {
		rc.ch <- struct{}{}
	}
}

func (rc *received) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.dgs)
}

func (rc *received) snapshot() []udp.Datagram {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]udp.Datagram(nil), rc.dgs...)
}

func (rc *received) payloads() []string {
	var s []string
	for _, d := range rc.snapshot() {
		s = append(s, string(d.Data))
	}
	return s
}

// serve runs l.Serve until the returned stop is called (or the test
// ends); stop returns Serve's error.
func serve(t *testing.T, l *udp.Listener) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Serve(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Serve did not return")
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// listen returns a listener on 127.0.0.1 with cfg and handler h, closed
// at the end of the test.
func listen(t *testing.T, cfg udp.Config, h udp.Handler) *udp.Listener {
	t.Helper()
	cfg.Address, cfg.Handler = "127.0.0.1:0", h
	l, err := udp.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l
}

// nop is a handler that does nothing.
func nop(int, []udp.Datagram) {}

// dial returns a UDP socket connected to l.
func dial(t *testing.T, l *udp.Listener) *net.UDPConn {
	t.Helper()
	c, err := net.DialUDP("udp", nil, l.Addr().(*net.UDPAddr))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func send(t *testing.T, c *net.UDPConn, msgs ...string) {
	t.Helper()
	for _, m := range msgs {
		_, err := c.Write([]byte(m))
		require.NoError(t, err)
	}
}

func waitCount(t *testing.T, rc *received, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return rc.count() >= n }, 5*time.Second, time.Millisecond,
		"want %d datagrams", n)
}

// TestServe: datagrams from two senders reach the handler whole, each with
// its sender's address, in each sender's order, and are counted.
func TestServe(t *testing.T) {
	var rc received
	l := listen(t, udp.Config{}, rc.handle)
	stop := serve(t, l)
	a, b := dial(t, l), dial(t, l)
	var want []string
	for i := range 20 {
		ma, mb := fmt.Sprintf("<13>a %d", i), fmt.Sprintf("<14>b %d %s", i, strings.Repeat("x", i))
		send(t, a, ma)
		send(t, b, mb)
		want = append(want, ma, mb)
	}
	send(t, a, "") // an empty datagram is a datagram
	waitCount(t, &rc, 41)
	require.NoError(t, stop())

	bySender := map[netip.AddrPort][]string{}
	var bytes int64
	for _, d := range rc.snapshot() {
		bySender[d.Addr] = append(bySender[d.Addr], string(d.Data))
		bytes += int64(len(d.Data))
		assert.False(t, d.Truncated)
	}
	aAddr := a.LocalAddr().(*net.UDPAddr).AddrPort()
	bAddr := b.LocalAddr().(*net.UDPAddr).AddrPort()
	assert.Equal(t, netip.MustParseAddr("127.0.0.1"), aAddr.Addr(), "the sender's address, unmapped")
	var wantA, wantB []string
	for i, m := range want {
		if i%2 == 0 {
			wantA = append(wantA, m)
		} else {
			wantB = append(wantB, m)
		}
	}
	assert.Equal(t, append(wantA, ""), bySender[aAddr])
	assert.Equal(t, wantB, bySender[bAddr])
	assert.Len(t, bySender, 2)

	s := l.Stats()
	assert.Equal(t, int64(41), s.Datagrams)
	assert.Equal(t, bytes, s.Bytes)
	assert.Equal(t, int64(len(rc.batches)), s.Reads, "one handler call per read")
	assert.Zero(t, s.ReadErrors)
	assert.Zero(t, s.KernelDrops)
	assert.Zero(t, s.Truncated)
}

// TestTruncated: a datagram longer than MaxMessageSize is handed over cut,
// flagged and counted; the next one is whole.
func TestTruncated(t *testing.T) {
	var rc received
	l := listen(t, udp.Config{MaxMessageSize: 100}, rc.handle)
	stop := serve(t, l)
	c := dial(t, l)
	long := strings.Repeat("0123456789", 15)
	send(t, c, long, "short", strings.Repeat("y", 100))
	waitCount(t, &rc, 3)
	require.NoError(t, stop())
	got := rc.snapshot()
	assert.Equal(t, long[:100], string(got[0].Data))
	assert.True(t, got[0].Truncated)
	assert.Equal(t, "short", string(got[1].Data))
	assert.False(t, got[1].Truncated)
	assert.Len(t, got[2].Data, 100)
	assert.False(t, got[2].Truncated, "exactly MaxMessageSize is whole")
	s := l.Stats()
	assert.Equal(t, int64(1), s.Truncated)
	assert.Equal(t, int64(205), s.Bytes)
}

// TestDataCannotOverrun: appending to a datagram's Data never writes over
// the next datagram of the batch.
func TestDataCannotOverrun(t *testing.T) {
	var mu sync.Mutex
	var got []string
	l := listen(t, udp.Config{}, func(_ int, batch []udp.Datagram) {
		mu.Lock()
		defer mu.Unlock()
		for i := range batch {
			_ = append(batch[i].Data, "XXXX"...)
		}
		for _, d := range batch {
			got = append(got, string(d.Data))
		}
	})
	stop := serve(t, l)
	c := dial(t, l)
	send(t, c, "one", "two", "three")
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 3 }, 5*time.Second, time.Millisecond)
	require.NoError(t, stop())
	assert.Equal(t, []string{"one", "two", "three"}, got)
}

// TestIPv6: a listener on ::1 receives from an IPv6 sender, whose address
// it reports as such.
func TestIPv6(t *testing.T) {
	probe, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback})
	if err != nil {
		t.Skipf("no IPv6 loopback (::1): %v", err)
	}
	probe.Close()
	var rc received
	l, err := udp.New(udp.Config{Address: "[::1]:0", Handler: rc.handle})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	assert.Equal(t, "::1", l.Addr().(*net.UDPAddr).IP.String())
	stop := serve(t, l)
	c := dial(t, l)
	send(t, c, "<13>over IPv6")
	waitCount(t, &rc, 1)
	require.NoError(t, stop())
	d := rc.snapshot()[0]
	assert.Equal(t, "<13>over IPv6", string(d.Data))
	assert.Equal(t, c.LocalAddr().(*net.UDPAddr).AddrPort(), d.Addr)
	assert.Equal(t, netip.IPv6Loopback(), d.Addr.Addr())
}

// TestIPv4OnlyAddress: an IPv4 address binds an IPv4 socket (a client
// cannot reach it over IPv6), and a mapped one is taken as IPv4.
func TestIPv4OnlyAddress(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::ffff:127.0.0.1]:0"} {
		l, err := udp.New(udp.Config{Address: addr, Handler: nop})
		require.NoError(t, err, addr)
		ua := l.Addr().(*net.UDPAddr)
		assert.NotNil(t, ua.IP.To4(), addr)
		assert.Equal(t, "127.0.0.1", ua.IP.String(), addr)
		require.NoError(t, l.Close())
	}
}

// TestReaders: several readers share the socket; every datagram arrives
// once, the reader index is in range, and calls for one reader never
// overlap.
func TestReaders(t *testing.T) {
	const readers = 4
	var busy [readers]atomic.Bool
	var overlap atomic.Int64
	var rc received
	l := listen(t, udp.Config{Readers: readers, BatchSize: 8}, func(reader int, batch []udp.Datagram) {
		if reader < 0 || reader >= readers {
			overlap.Add(1000)
			return
		}
		if busy[reader].Swap(true) {
			overlap.Add(1)
		}
		rc.handle(reader, batch)
		busy[reader].Store(false)
	})
	stop := serve(t, l)
	c := dial(t, l)
	const n = 400
	want := map[string]bool{}
	for i := range n {
		m := fmt.Sprintf("m%d", i)
		want[m] = true
		send(t, c, m)
	}
	waitCount(t, &rc, n)
	require.NoError(t, stop())
	got := map[string]bool{}
	for _, p := range rc.payloads() {
		assert.False(t, got[p], "delivered twice: %s", p)
		got[p] = true
	}
	assert.Equal(t, want, got)
	assert.Zero(t, overlap.Load())
	assert.Equal(t, int64(n), l.Stats().Datagrams)
}

// TestConfig: bad configurations are refused with a FieldError naming the
// field, by New and by Validate; defaults and limits are accepted.
func TestConfig(t *testing.T) {
	for field, cfg := range map[string]udp.Config{
		"BatchSize":      {Address: "127.0.0.1:0", Handler: nop, BatchSize: -1},
		"MaxMessageSize": {Address: "127.0.0.1:0", Handler: nop, MaxMessageSize: udp.MaxMessageSize + 1},
		"Readers":        {Address: "127.0.0.1:0", Handler: nop, Readers: udp.MaxReaders + 1},
		"Handler":        {Address: "127.0.0.1:0"},
		"Address":        {Handler: nop},
	} {
		for _, err := range []error{cfg.Validate(), func() error { _, err := udp.New(cfg); return err }()} {
			require.ErrorIs(t, err, udp.ErrInvalidConfig, field)
			var fe *relaykit.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, field, fe.Field)
		}
	}
	for name, cfg := range map[string]udp.Config{
		"negative batch":        {BatchSize: -1},
		"batch over 1024":       {BatchSize: udp.MaxBatchSize + 1},
		"negative message size": {MaxMessageSize: -1},
		"message over 64 KiB":   {MaxMessageSize: udp.MaxMessageSize + 1},
		"negative readers":      {Readers: -1},
		"too many readers":      {Readers: udp.MaxReaders + 1},
	} {
		cfg.Address, cfg.Handler = "127.0.0.1:0", nop
		_, err := udp.New(cfg)
		assert.ErrorIs(t, err, udp.ErrInvalidConfig, name)
	}
	for name, cfg := range map[string]udp.Config{
		"zero":               {},
		"limits":             {BatchSize: udp.MaxBatchSize, MaxMessageSize: udp.MaxMessageSize, Readers: 2},
		"smallest":           {BatchSize: 1, MaxMessageSize: 1, Readers: 1, ReadBuffer: 1},
		"kernel's rcvbuf":    {ReadBuffer: -1},
		"no drain, no polls": {DrainTime: -1, DropPollInterval: -1},
	} {
		cfg.Address, cfg.Handler = "127.0.0.1:0", nop
		l, err := udp.New(cfg)
		require.NoError(t, err, name)
		require.NoError(t, l.Close())
	}
	_, err := udp.New(udp.Config{Address: "127.0.0.1:notaport", Handler: nop})
	assert.Error(t, err)
}

// TestClose: Close releases a listener that never served and is
// idempotent; Serve on a closed listener, or a second Serve, returns
// ErrClosed; Close during Serve ends it with nil.
func TestClose(t *testing.T) {
	l := listen(t, udp.Config{}, nop)
	addr := l.Addr().(*net.UDPAddr)
	require.NoError(t, l.Close())
	require.NoError(t, l.Close())
	assert.ErrorIs(t, l.Serve(t.Context()), udp.ErrClosed)
	// The port is free again.
	c, err := net.ListenUDP("udp", addr)
	require.NoError(t, err)
	require.NoError(t, c.Close())

	var rc received
	l = listen(t, udp.Config{}, rc.handle)
	done := make(chan error, 1)
	go func() { done <- l.Serve(context.Background()) }()
	send(t, dial(t, l), "before close")
	waitCount(t, &rc, 1)
	require.NoError(t, l.Close())
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end Serve")
	}
	assert.ErrorIs(t, l.Serve(t.Context()), udp.ErrClosed, "a second Serve")
}

// TestServeEndedContext: Serve with a context that has already ended
// returns at once, nil, and closes the socket.
func TestServeEndedContext(t *testing.T) {
	l := listen(t, udp.Config{}, func(int, []udp.Datagram) { t.Error("no datagram was sent") })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	require.NoError(t, l.Serve(ctx))
	assert.Less(t, time.Since(start), 5*time.Second)
	c, err := net.ListenUDP("udp", l.Addr().(*net.UDPAddr))
	require.NoError(t, err, "the socket is closed")
	require.NoError(t, c.Close())
}
