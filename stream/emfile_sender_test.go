//go:build linux

package stream_test

import (
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rawSender is a TCP socket made before the test runs the process out of
// descriptors, so that the sender needs none during the episode: connect
// and write are system calls on the socket it already has. (Closing a
// descriptor for the sender to take instead raced with the rest of the
// process for it.) conn wraps it in a net.Conn once descriptors are free.
type rawSender struct {
	t  *testing.T
	fd int
}

// newRawSender makes a blocking TCP socket bound to the loopback address
// src, such as 127.0.0.2.
func newRawSender(t *testing.T, src string) *rawSender {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	s := &rawSender{t: t, fd: fd}
	t.Cleanup(func() {
		if s.fd >= 0 {
			syscall.Close(s.fd)
		}
	})
	sa := &syscall.SockaddrInet4{}
	copy(sa.Addr[:], net.ParseIP(src).To4())
	require.NoError(t, syscall.Bind(fd, sa))
	return s
}

// send connects to addr (the kernel completes the handshake into the
// listener's backlog, accepted or not) and writes b.
func (s *rawSender) send(addr net.Addr, b []byte) {
	s.t.Helper()
	a := addr.(*net.TCPAddr)
	sa := &syscall.SockaddrInet4{Port: a.Port}
	copy(sa.Addr[:], a.IP.To4())
	deadline := time.Now().Add(10 * time.Second)
	for err := syscall.Connect(s.fd, sa); !errors.Is(err, syscall.EISCONN); err = syscall.Connect(s.fd, sa) {
		if err == nil {
			break
		}
		// A signal (the runtime's preemption) interrupts a blocking
		// connect, which goes on: ask again until it is done.
		if !errors.Is(err, syscall.EINTR) && !errors.Is(err, syscall.EALREADY) && !errors.Is(err, syscall.EINPROGRESS) {
			require.NoError(s.t, err, "connect")
		}
		require.True(s.t, time.Now().Before(deadline), "connect did not complete")
		time.Sleep(time.Millisecond)
	}
	for len(b) > 0 {
		n, err := syscall.Write(s.fd, b)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		require.NoError(s.t, err, "write")
		b = b[n:]
	}
}

// conn returns the socket as a net.Conn, closed at the end of the test;
// call it once descriptors are free (it takes one).
func (s *rawSender) conn() net.Conn {
	s.t.Helper()
	f := os.NewFile(uintptr(s.fd), "sender")
	s.fd = -1
	c, err := net.FileConn(f)
	f.Close()
	require.NoError(s.t, err)
	s.t.Cleanup(func() { c.Close() })
	return c
}
