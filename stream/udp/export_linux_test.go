package udp

import "net"

// Conn returns the listener's socket.
func Conn(l *Listener) *net.UDPConn { return l.sock.(*linuxSocket).UDPConn }

// RxqOverflow is rxqOverflow.
var RxqOverflow = rxqOverflow
