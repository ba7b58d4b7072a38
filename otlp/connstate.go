package otlp

import (
	"net"
	"net/http"

	"github.com/relaykit/relaykit/stream"
)

// ConnState returns a hook for http.Server.ConnState that tells ln which
// of its connections may be evicted when it is full: a kept-alive
// connection waiting for its next request (http.StateIdle) may be, one
// with a request in flight may not, since closing it would lose the
// request. It is the same hook as stream/hec's; see [stream.NetListener].
// The hook is safe for concurrent use and does not allocate.
func ConnState(ln *stream.NetListener) func(net.Conn, http.ConnState) {
	return func(c net.Conn, s http.ConnState) {
		switch s {
		case http.StateIdle:
			ln.SetIdle(c, true)
		case http.StateActive, http.StateHijacked:
			ln.SetIdle(c, false)
		}
	}
}
