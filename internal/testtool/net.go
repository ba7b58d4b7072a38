package testtool

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// Dial connects to addr over TCP from the local address src (a loopback
// address such as 127.0.0.2, so that tests can play several sources), and
// closes the connection at the end of the test.
func Dial(t testing.TB, src string, addr net.Addr) *net.TCPConn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", addr.String())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}
