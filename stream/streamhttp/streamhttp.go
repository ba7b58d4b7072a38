// Package streamhttp serves HTTP on a [stream.Listener]: the connection
// state hook an http.Server needs so that the listener knows which of its
// connections it may evict. The HTTP receivers (stream/hec, otlp over
// HTTP and gRPC) and the relay's operator API share it.
//
// Serving an http.Server from a [stream.NetListener] gives its handlers
// the stream inputs' connection limits (per source IP address and in all,
// with eviction of the longest-idle connection), their TLS handshake
// deadline and the PROXY protocol, counted in the listener's
// [stream.Stats]; the server's ReadHeaderTimeout and IdleTimeout, and the
// handler's own body deadline, bound the rest of a connection's life:
//
//	ln, err := stream.New(stream.Config{Name: "hec", Address: ":8088"})
//	...
//	nl := ln.NetListener()
//	srv := &http.Server{
//		Handler:           h,
//		ConnState:         streamhttp.ConnState(nl),
//		ReadHeaderTimeout: 10 * time.Second,
//		IdleTimeout:       2 * time.Minute,
//	}
//	err = srv.Serve(nl)
//
// It is a package of its own so that package stream, which TCP and TLS
// syslog inputs import, links no net/http.
package streamhttp

import (
	"net"
	"net/http"

	"github.com/relaykit/relaykit/stream"
)

// ConnState returns a hook for http.Server.ConnState that tells ln which
// of its connections may be evicted when it is full
// ([stream.Config].MaxConns): a kept-alive connection waiting for its
// next request (http.StateIdle) may be, one with a request in flight
// (http.StateActive) or taken over by a handler (http.StateHijacked) is
// not, since closing it would lose the request. A gRPC server, which has
// no such hook, leaves its connections busy: the listener then never
// evicts them. See [stream.NetListener].
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
