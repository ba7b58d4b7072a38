//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package forward

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
	"time"
)

// peerClosed reports whether the receiver has closed (or reset) conn, by
// peeking at the socket without blocking. A syslog receiver never sends on
// the connection, so end of stream or an error means it is gone. Pending
// bytes on a TLS connection (a session ticket or a close_notify alert) are
// consumed through the TLS layer with a short deadline.
func peerClosed(conn net.Conn) bool {
	raw := conn
	tc, isTLS := conn.(*tls.Conn)
	if isTLS {
		raw = tc.NetConn()
	}
	sc, ok := raw.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	var n int
	var rerr error
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true // never wait
	})
	switch {
	case err != nil:
		return true
	case rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK || rerr == syscall.EINTR:
		return false
	case rerr != nil:
		return true
	case n == 0:
		return true // orderly shutdown by the receiver
	}
	// Bytes are pending. On plain TCP a receiver that talks is unusual but
	// alive. On TLS, let the TLS layer process the record.
	if !isTLS {
		return false
	}
	_ = tc.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	var buf [64]byte
	_, rerr = tc.Read(buf[:])
	_ = tc.SetReadDeadline(time.Time{})
	var ne net.Error
	if rerr == nil || (errors.As(rerr, &ne) && ne.Timeout()) {
		return false
	}
	return true
}
