package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/relaykit/relaykit/stream"
)

// validate fills the defaults of the stream limits and of the input's
// max_connections, and checks them.
func (s *StreamLimits) validate(field string, maxConns *int, bad func(field, format string, args ...any)) {
	s.ConnLimits.validate(field, maxConns, bad)
	if s.FrameTimeout == 0 {
		s.FrameTimeout = 30 * time.Second
	}
	if s.FrameTimeout < 0 {
		bad(field+".frame_timeout", "must be positive")
	}
}

// validateReads fills the defaults of read_size and read_buffers, for the
// inputs that read through a stream.Framer (syslog TCP/TLS, JSON lines),
// and checks them.
func (s *StreamLimits) validateReads(field string, bad func(field, format string, args ...any)) {
	if s.ReadSize == 0 {
		s.ReadSize = stream.DefaultReadSize
	}
	if s.ReadSize < 4<<10 || s.ReadSize > 1<<20 {
		bad(field+".read_size", "%d out of range 4KiB..1MiB", s.ReadSize)
	}
	if s.ReadBuffers == 0 {
		s.ReadBuffers = 16 << 20
	}
	if s.ReadBuffers < s.ReadSize {
		bad(field+".read_buffers", "%d is less than read_size", s.ReadBuffers)
	}
}

// validate fills the defaults of the connection limits and of the
// input's max_connections (1024), and checks them.
func (s *ConnLimits) validate(field string, maxConns *int, bad func(field, format string, args ...any)) {
	if *maxConns == 0 {
		*maxConns = 1024
	}
	if *maxConns < 0 {
		bad(field+".max_connections", "must be positive")
	}
	if s.MaxConnectionsPerSource == 0 {
		s.MaxConnectionsPerSource = min(64, max(*maxConns, 1))
	}
	if s.MaxConnectionsPerSource < 0 {
		bad(field+".max_connections_per_source", "must be positive")
	}
	if s.HandshakeTimeout == 0 {
		s.HandshakeTimeout = 10 * time.Second
	}
	if s.HandshakeTimeout < 0 {
		bad(field+".handshake_timeout", "must be positive")
	}
	if _, err := stream.ParseProxyAllowed(s.ProxyAllowed); err != nil {
		bad(field+".proxy_allowed", "%v", err)
	}
	switch on := s.ProxyProtocol != stream.ProxyOff; {
	case on && len(s.ProxyAllowed) == 0:
		bad(field+".proxy_allowed", "proxy_protocol %s needs the addresses allowed to send the header, the balancers' (0.0.0.0/0 and ::/0 allow any)", s.ProxyProtocol)
	case !on && len(s.ProxyAllowed) > 0:
		bad(field+".proxy_allowed", "set, but proxy_protocol is off")
	}
}

// Apply sets the connection limits and the PROXY protocol settings of a
// listener's config.
func (s *ConnLimits) Apply(sc *stream.Config) {
	sc.MaxConnsPerSource, sc.RefuseWhenFull, sc.HandshakeTimeout = s.MaxConnectionsPerSource, s.RefuseWhenFull, s.HandshakeTimeout
	sc.ProxyProtocol = s.ProxyProtocol
	sc.ProxyAllowed, _ = stream.ParseProxyAllowed(s.ProxyAllowed) // validated
}

// summary is what a summary line adds for the PROXY protocol and an
// auto certificate (the line names TLS itself).
func (s *ConnLimits) summary(t *TLSConfig) string {
	var out string
	if s.ProxyProtocol != stream.ProxyOff {
		out = fmt.Sprintf(", proxy %s from %s", s.ProxyProtocol, strings.Join(s.ProxyAllowed, " "))
	}
	if t != nil && t.Auto {
		out += ", self-signed certificate"
	}
	return out
}
