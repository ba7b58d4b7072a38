//go:build !linux

package udp

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
)

// portableSocket reads one datagram per read with the standard library
// (ReadMsgUDPAddrPort, which does not allocate), and cannot count kernel
// drops.
type portableSocket struct {
	*net.UDPConn
}

// newSocket sets the receive buffer on conn.
func newSocket(conn *net.UDPConn, cfg *Config, _ *slog.Logger) (socket, error) {
	if cfg.ReadBuffer > 0 {
		if err := conn.SetReadBuffer(cfg.ReadBuffer); err != nil {
			return nil, fmt.Errorf("SO_RCVBUF (%d bytes): %w", cfg.ReadBuffer, err)
		}
	}
	return portableSocket{conn}, nil
}

func (s portableSocket) countsDrops() bool           { return false }
func (s portableSocket) kernelDrops() (uint32, bool) { return 0, false }

func (s portableSocket) newReader(_, size int) batchReader {
	// One byte more than a datagram may have: a datagram that fills it is
	// longer than size (no MSG_TRUNC on every platform).
	return &msgReader{conn: s.UDPConn, buf: make([]byte, size+1), size: size}
}

type msgReader struct {
	conn *net.UDPConn
	buf  []byte
	size int
}

// read reads one datagram; nonblocking is not supported, the read waits
// for a datagram or the read deadline.
func (r *msgReader) read(dgs []Datagram, _ bool) (int, uint32, bool, error) {
	n, _, _, ap, err := r.conn.ReadMsgUDPAddrPort(r.buf, nil)
	if err != nil {
		return 0, 0, false, err
	}
	l := min(n, r.size)
	dgs[0] = Datagram{
		Data:      r.buf[:l:l],
		Addr:      netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()),
		Truncated: n > r.size,
	}
	return 1, 0, false, nil
}
