//go:build linux

package udp

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// linuxSocket reads with recvmmsg(2) and counts kernel drops with
// SO_RXQ_OVFL and SO_MEMINFO (socket(7)).
type linuxSocket struct {
	*net.UDPConn
	rc syscall.RawConn
}

// newSocket sets the receive buffer and SO_RXQ_OVFL on conn.
func newSocket(conn *net.UDPConn, cfg *Config, log *slog.Logger) (socket, error) {
	rc, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	s := &linuxSocket{UDPConn: conn, rc: rc}
	if cfg.ReadBuffer > 0 {
		if err := s.setReadBuffer(cfg.ReadBuffer, log); err != nil {
			return nil, fmt.Errorf("SO_RCVBUF (%d bytes): %w", cfg.ReadBuffer, err)
		}
	}
	if err := s.setsockopt(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, 1); err != nil {
		return nil, fmt.Errorf("SO_RXQ_OVFL (counting kernel drops): %w", err)
	}
	return s, nil
}

func (s *linuxSocket) setsockopt(level, opt, v int) error {
	var serr error
	if err := s.rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), level, opt, v) }); err != nil {
		return err
	}
	return serr
}

func (s *linuxSocket) getsockopt(level, opt int) (int, error) {
	var v int
	var gerr error
	if err := s.rc.Control(func(fd uintptr) { v, gerr = unix.GetsockoptInt(int(fd), level, opt) }); err != nil {
		return 0, err
	}
	return v, gerr
}

// setReadBuffer sets SO_RCVBUF to n bytes. The kernel caps it at
// net.core.rmem_max (and reports twice the size it set, socket(7)); when
// that cuts the request, SO_RCVBUFFORCE sets the full size if the process
// has CAP_NET_ADMIN, and otherwise the cap is logged.
func (s *linuxSocket) setReadBuffer(n int, log *slog.Logger) error {
	if err := s.setsockopt(unix.SOL_SOCKET, unix.SO_RCVBUF, n); err != nil {
		return err
	}
	got, err := s.getsockopt(unix.SOL_SOCKET, unix.SO_RCVBUF)
	if err != nil || got/2 >= n {
		return nil
	}
	if err := s.setsockopt(unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, n); err != nil {
		log.Warn("UDP receive buffer capped by net.core.rmem_max; raise it (sysctl) or grant CAP_NET_ADMIN to get the size asked for",
			"read_buffer", n, "granted", got/2, "error", err)
	}
	return nil
}

func (s *linuxSocket) countsDrops() bool { return true }

// kernelDrops reads the socket's drop count with SO_MEMINFO (Linux 4.12
// and later; sock_diag(7)).
func (s *linuxSocket) kernelDrops() (drops uint32, ok bool) {
	_ = s.rc.Control(func(fd uintptr) {
		var mem [unix.SK_MEMINFO_VARS + 4]uint32
		n := uint32(unsafe.Sizeof(mem))
		_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, fd, unix.SOL_SOCKET, unix.SO_MEMINFO,
			uintptr(unsafe.Pointer(&mem[0])), uintptr(unsafe.Pointer(&n)), 0)
		if errno == 0 && n > 4*unix.SK_MEMINFO_DROPS {
			drops, ok = mem[unix.SK_MEMINFO_DROPS], true
		}
	})
	return drops, ok
}

// oobSize is the room for one datagram's control messages: the
// SO_RXQ_OVFL counter (a __u32).
var oobSize = unix.CmsgSpace(4)

// mmsghdr is struct mmsghdr (recvmmsg(2)); Go pads it as C does.
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
}

// mmsgReader calls recvmmsg(2) into buffers set up once, and turns what
// it returns into Datagrams without allocating. x/net's ipv4.PacketConn
// ReadBatch does the same call but allocates a *net.UDPAddr and its IP
// for every datagram.
type mmsgReader struct {
	rc    syscall.RawConn
	hs    []mmsghdr
	names []unix.RawSockaddrInet6 // room for either family
	oob   []byte
	buf   []byte
	size  int // bytes per datagram in buf
	used  int // headers the last call may have changed

	recv  func(fd uintptr) bool // r.recvmmsg, bound once
	flags int
	n     int
	errno syscall.Errno

	zoneID uint32 // the last IPv6 scope seen, and its name
	zone   string
}

func (s *linuxSocket) newReader(batch, size int) batchReader {
	r := &mmsgReader{
		rc: s.rc, hs: make([]mmsghdr, batch), names: make([]unix.RawSockaddrInet6, batch),
		oob: make([]byte, batch*oobSize), buf: make([]byte, batch*size), size: size, used: batch,
	}
	iovs := make([]unix.Iovec, batch)
	for i := range r.hs {
		iovs[i].Base = &r.buf[i*size]
		iovs[i].SetLen(size)
		h := &r.hs[i].hdr
		h.Name = (*byte)(unsafe.Pointer(&r.names[i]))
		h.Iov = &iovs[i]
		h.SetIovlen(1)
		h.Control = &r.oob[i*oobSize]
	}
	r.recv = r.recvmmsg
	return r
}

// recvmmsg runs in RawConn.Read: false asks it to wait until the socket is
// readable.
func (r *mmsgReader) recvmmsg(fd uintptr) bool {
	for {
		n, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&r.hs[0])), uintptr(len(r.hs)),
			uintptr(r.flags), 0, 0)
		if e == unix.EINTR {
			continue
		}
		r.n, r.errno = int(n), e
		return e != unix.EAGAIN || r.flags&unix.MSG_DONTWAIT != 0
	}
}

func (r *mmsgReader) read(dgs []Datagram, nonblocking bool) (int, uint32, bool, error) {
	for i := range r.used { // what the kernel wrote last time
		h := &r.hs[i]
		h.hdr.Namelen = unix.SizeofSockaddrInet6
		h.hdr.SetControllen(oobSize)
		h.hdr.Flags = 0
		h.n = 0
	}
	r.flags = 0
	if nonblocking {
		r.flags = unix.MSG_DONTWAIT
	}
	r.n, r.errno = 0, 0
	if err := r.rc.Read(r.recv); err != nil {
		return 0, 0, false, err
	}
	if r.errno != 0 {
		r.used = len(r.hs)
		if r.errno == unix.EAGAIN {
			return 0, 0, false, errEmpty
		}
		return 0, 0, false, os.NewSyscallError("recvmmsg", r.errno)
	}
	n := r.n
	r.used = n
	if n <= 0 { // recvmmsg returns a datagram or an error; never seen
		return 0, 0, false, errEmpty
	}
	var drops uint32
	var hasDrops bool
	for i := range n {
		h := &r.hs[i]
		off := i * r.size
		l := min(int(h.n), r.size)
		dgs[i] = Datagram{
			Data:      r.buf[off : off+l : off+l],
			Addr:      r.addrPort(&r.names[i]),
			Truncated: h.hdr.Flags&unix.MSG_TRUNC != 0,
		}
		if c := int(h.hdr.Controllen); c > 0 { // only once the socket has dropped a datagram
			o := r.oob[i*oobSize:]
			if v, ok := rxqOverflow(o[:min(c, oobSize)]); ok {
				drops, hasDrops = v, true
			}
		}
	}
	return n, drops, hasDrops, nil
}

// addrPort returns the address in sa (either family), IPv4-mapped
// addresses unmapped. It does not allocate, except once for each new IPv6
// zone.
func (r *mmsgReader) addrPort(sa *unix.RawSockaddrInet6) netip.AddrPort {
	b := (*[unix.SizeofSockaddrInet6]byte)(unsafe.Pointer(sa))
	port := binary.BigEndian.Uint16(b[2:4])
	switch sa.Family {
	case unix.AF_INET:
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), port)
	case unix.AF_INET6:
		a := netip.AddrFrom16(sa.Addr)
		if a.Is4In6() {
			a = a.Unmap()
		} else if sa.Scope_id != 0 {
			a = a.WithZone(r.zoneName(sa.Scope_id))
		}
		return netip.AddrPortFrom(a, port)
	}
	return netip.AddrPort{}
}

// zoneName names the interface of an IPv6 scope, as net does.
func (r *mmsgReader) zoneName(id uint32) string {
	if id != r.zoneID || r.zone == "" {
		r.zoneID = id
		if ifi, err := net.InterfaceByIndex(int(id)); err == nil {
			r.zone = ifi.Name
		} else {
			r.zone = strconv.FormatUint(uint64(id), 10)
		}
	}
	return r.zone
}

// rxqOverflow returns the SO_RXQ_OVFL count in the control messages oob,
// if there is one (cmsg(3) layout). It does not allocate.
func rxqOverflow(oob []byte) (uint32, bool) {
	const hdr = unix.SizeofCmsghdr
	for len(oob) >= hdr {
		var l uint64
		var level, typ int32
		if hdr == 16 { // 64-bit: size_t cmsg_len, int cmsg_level, int cmsg_type
			l = binary.NativeEndian.Uint64(oob)
			level, typ = int32(binary.NativeEndian.Uint32(oob[8:])), int32(binary.NativeEndian.Uint32(oob[12:]))
		} else {
			l = uint64(binary.NativeEndian.Uint32(oob))
			level, typ = int32(binary.NativeEndian.Uint32(oob[4:])), int32(binary.NativeEndian.Uint32(oob[8:]))
		}
		if l < hdr || l > uint64(len(oob)) {
			return 0, false
		}
		if level == unix.SOL_SOCKET && typ == unix.SO_RXQ_OVFL && l >= uint64(unix.CmsgLen(4)) {
			return binary.NativeEndian.Uint32(oob[unix.CmsgLen(0):]), true
		}
		next := unix.CmsgSpace(int(l) - unix.CmsgLen(0))
		if next > len(oob) {
			return 0, false
		}
		oob = oob[next:]
	}
	return 0, false
}
