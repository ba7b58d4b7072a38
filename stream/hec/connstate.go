package hec

import (
	"net"
	"net/http"

	"github.com/relaykit/relaykit/stream"
)

// ConnState returns a hook for http.Server.ConnState that tells ln which
// of its connections may be evicted when it is full
// ([stream.Config].MaxConns): a kept-alive connection waiting for its next
// request (http.StateIdle) may be, one with a request in flight
// (http.StateActive) or taken over by a handler (http.StateHijacked) is
// not, since closing it would lose the request. See [stream.NetListener].
//
// Serving a [Handler] from an http.Server on a [stream.NetListener] gives
// it the stream inputs' connection limits — per source IP address and in
// all, with eviction of the longest-idle connection — and their TLS
// handshake deadline, counted in the listener's [stream.Stats]; the
// server's ReadHeaderTimeout and IdleTimeout and the handler's
// BodyTimeout bound the rest of a connection's life.
//
// The hook is safe for concurrent use; it does not allocate.
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
