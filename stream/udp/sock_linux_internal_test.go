package udp

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestMmsghdrLayout: mmsghdr has the size of C's struct mmsghdr (a msghdr
// and an unsigned int, padded to the msghdr's alignment), so recvmmsg
// finds each header where it looks.
func TestMmsghdrLayout(t *testing.T) {
	ptr := unsafe.Sizeof(uintptr(0))
	want := (unix.SizeofMsghdr + 4 + ptr - 1) / ptr * ptr
	assert.Equal(t, want, unsafe.Sizeof(mmsghdr{}))
	assert.Equal(t, uintptr(unix.SizeofMsghdr), unsafe.Offsetof(mmsghdr{}.n))
}

// TestAddrPort: sender addresses of either family come out as
// netip.AddrPort, IPv4-mapped ones unmapped, link-local ones with their
// zone.
func TestAddrPort(t *testing.T) {
	var r mmsgReader
	sa := func(family uint16, addr []byte, port uint16, scope uint32) *unix.RawSockaddrInet6 {
		var s unix.RawSockaddrInet6
		b := (*[unix.SizeofSockaddrInet6]byte)(unsafe.Pointer(&s))
		s.Family = family
		binary.BigEndian.PutUint16(b[2:4], port)
		if family == unix.AF_INET {
			copy(b[4:8], addr)
		} else {
			copy(s.Addr[:], addr)
			s.Scope_id = scope
		}
		return &s
	}
	assert.Equal(t, netip.MustParseAddrPort("10.1.2.3:514"),
		r.addrPort(sa(unix.AF_INET, []byte{10, 1, 2, 3}, 514, 0)))
	assert.Equal(t, netip.MustParseAddrPort("10.1.2.3:5140"),
		r.addrPort(sa(unix.AF_INET6, netip.MustParseAddr("::ffff:10.1.2.3").AsSlice(), 5140, 0)), "unmapped")
	assert.Equal(t, netip.MustParseAddrPort("[2001:db8::1]:65535"),
		r.addrPort(sa(unix.AF_INET6, netip.MustParseAddr("2001:db8::1").AsSlice(), 65535, 0)))
	ifi, err := net.InterfaceByIndex(1)
	require.NoError(t, err)
	for range 2 { // the zone name is remembered
		assert.Equal(t, netip.AddrPortFrom(netip.MustParseAddr("fe80::1").WithZone(ifi.Name), 1),
			r.addrPort(sa(unix.AF_INET6, netip.MustParseAddr("fe80::1").AsSlice(), 1, 1)))
	}
	assert.Equal(t, netip.AddrPort{}, r.addrPort(sa(unix.AF_UNIX, nil, 0, 0)), "not an IP address")
}

// TestReadAllocs: once warm, reading a batch and handing it to the
// handler allocates nothing, whether the datagrams carry a kernel drop
// count or not, and so does parsing the control messages.
func TestReadAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const runs = 100
	const batch = 4
	l, err := New(Config{Address: "127.0.0.1:0", Handler: func(int, []Datagram) {}, DropPollInterval: -1})
	require.NoError(t, err)
	defer l.Close()
	c, err := net.DialUDP("udp", nil, l.Addr().(*net.UDPAddr))
	require.NoError(t, err)
	defer c.Close()
	msg := []byte("<13>1 2026-01-02T03:04:05Z host app - - - a message of some length")
	for range (runs + 1) * batch {
		_, err := c.Write(msg)
		require.NoError(t, err)
	}
	var n int
	r := &reader{l: l, h: func(_ int, b []Datagram) { n += len(b) }, src: l.sock.newReader(batch, 2048), dgs: make([]Datagram, batch)}
	assert.Zero(t, testing.AllocsPerRun(runs, func() {
		if err := r.once(false); err != nil {
			panic(err)
		}
	}))
	assert.Positive(t, n)

	oob := make([]byte, unix.CmsgSpace(4))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	h.Level, h.Type = unix.SOL_SOCKET, unix.SO_RXQ_OVFL
	h.SetLen(unix.CmsgLen(4))
	assert.Zero(t, testing.AllocsPerRun(runs, func() { _, _ = rxqOverflow(oob) }))

	// Datagrams that carry a drop count: fill the smallest buffer, then
	// read what it holds and a datagram queued after the drops.
	l2, err := New(Config{Address: "127.0.0.1:0", Handler: func(int, []Datagram) {}, ReadBuffer: 1, DropPollInterval: -1})
	require.NoError(t, err)
	defer l2.Close()
	c2, err := net.DialUDP("udp", nil, l2.Addr().(*net.UDPAddr))
	require.NoError(t, err)
	defer c2.Close()
	r2 := &reader{l: l2, h: func(int, []Datagram) {}, src: l2.sock.newReader(1, 2048), dgs: make([]Datagram, 1)}
	for range 50 {
		_, err := c2.Write(msg)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { v, _ := l2.sock.kernelDrops(); return v > 0 }, 5*time.Second, time.Millisecond)
	for {
		if err := r2.once(true); err != nil {
			require.ErrorIs(t, err, errEmpty)
			break
		}
	}
	// Each datagram sent now is queued after the drops: it carries them.
	assert.Zero(t, testing.AllocsPerRun(runs, func() {
		if _, err := c2.Write(msg); err != nil {
			panic(err)
		}
		if err := r2.once(false); err != nil {
			panic(err)
		}
	}))
	assert.Positive(t, l2.Stats().KernelDrops)
	assert.Equal(t, uint32(l2.Stats().KernelDrops), r2.drops, "the datagrams read carried the drop count")
}
