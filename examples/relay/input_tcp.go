package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"hash/maphash"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/relaykit/relaykit"
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
}

// streamInput is a syslog TCP/TLS or JSON-lines listener: stream.Listener
// enforces the connection limits and deadlines, handle reads one
// connection.
type streamInput struct {
	name   string
	ln     *stream.Listener
	stats  *inputStats
	budget *stream.ReadBudget // the read buffers of its connections
	handle func(ctx context.Context, c *stream.Conn, peer string, shard uint64)
	work   context.Context // Run's, for the handlers: set before Serve
}

var shardSeed = maphash.MakeSeed()

func listenStream(name, addr string, tlsCfg *TLSConfig, maxConns int, idle time.Duration, lim StreamLimits, stats *inputStats, log *slog.Logger) (*streamInput, error) {
	cfg := stream.Config{
		Name: name, MaxConns: maxConns, MaxConnsPerSource: lim.MaxConnectionsPerSource,
		RefuseWhenFull: lim.RefuseWhenFull, IdleTimeout: idle, FrameTimeout: lim.FrameTimeout,
		HandshakeTimeout: lim.HandshakeTimeout, Logger: log,
	}
	if tlsCfg != nil {
		tc, err := serverTLS(tlsCfg)
		if err != nil {
			return nil, fmt.Errorf("input %s: tls: %w", name, err)
		}
		cfg.TLS = tc
	}
	var budget *stream.ReadBudget // none for RELP, which reads its own frames
	if lim.ReadBuffers > 0 {
		var err error
		if budget, err = stream.NewReadBudget(int64(lim.ReadBuffers)); err != nil {
			return nil, fmt.Errorf("input %s: read_buffers: %w", name, err)
		}
	}
	l := &streamInput{name: name, stats: stats, budget: budget}
	cfg.Address, cfg.Handler = addr, l.serveConn
	ln, err := stream.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", name, err)
	}
	l.ln = ln
	stats.listener = ln
	stats.buffers = budget
	return l, nil
}

func serverTLS(c *TLSConfig) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, err
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if c.ClientCAFile != "" {
		pem, err := os.ReadFile(c.ClientCAFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("client_ca_file %s: no certificates", c.ClientCAFile)
		}
		tc.ClientCAs = pool
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return tc, nil
}

// Addr is the bound address.
func (l *streamInput) Addr() net.Addr { return l.ln.Addr() }

// Run accepts until ctx ends, then stops accepting, ends every
// connection's reads (frames already read are still handled, pushing under
// work) and waits for the connection goroutines.
//
// A connection paced by its source's rate limit waits on ctx: its wait
// ends with the inputs (see stopContext).
func (l *streamInput) Run(ctx context.Context, work context.Context) error {
	l.work = context.WithValue(work, stopKey{}, ctx)
	return l.ln.Serve(ctx)
}

// serveConn is the listener's handler: it reads one connection.
func (l *streamInput) serveConn(c *stream.Conn) {
	peer := c.Source().String()
	if !c.Source().IsValid() {
		peer = c.RemoteAddr().String()
	}
	l.handle(l.work, c, peer, maphash.String(shardSeed, c.RemoteAddr().String()))
}

// stopKey is the key of the inputs' context in the context a connection's
// handler gets (the shutdown deadline's).
type stopKey struct{}

// stopContext returns the inputs' context that streamInput.Run put in
// ctx, or ctx itself.
func stopContext(ctx context.Context) context.Context {
	if s, ok := ctx.Value(stopKey{}).(context.Context); ok {
		return s
	}
	return ctx
}

// Close releases the listening socket of an input that never ran.
func (l *streamInput) Close() error { return l.ln.Close() }

// syslogStream handles one syslog TCP/TLS connection: frames (octet
// counting or LF/NUL, decided by the connection's first frame), parses
// each, and hands the events parsed from one read to the ring at once,
// before the framer reads again (and may wait).
//
// When the shutdown deadline (ctx) ends a push that waited for room (the
// destinations did not keep up), the events not pushed, and every frame
// still buffered after them, are counted as received and
// dropped{shutdown_unqueued}; the connection is not read again.
//
// With sources tracked (src not nil), the connection's events are counted
// for its source, and its source's rate limit either holds the connection
// back before the next read (pace) or drops the excess (drop, counted
// as dropped{rate_limit}).
func syslogStream(in TCPInputConfig, stats *inputStats, loc *time.Location, budget *stream.ReadBudget, src *sourceTracker) func(context.Context, *stream.Conn, string, uint64) {
	return func(ctx context.Context, c *stream.Conn, peer string, shard uint64) {
		b := stats.in.NewProducer(shard)
		defer b.Release()
		cs := src.streamConn(in.Name, c.Source())
		defer cs.Close()
		stop := stopContext(ctx)
		fr := stream.NewFramer(c, stream.FramerConfig{
			MaxFrame: int(in.MaxMessageSize), Counters: &stats.framing,
			ReadSize: int(in.ReadSize), Budget: budget,
			BeforeRead: func() error {
				if err := b.Flush(ctx); err != nil {
					return err
				}
				return cs.BeforeRead(stop)
			},
		})
		defer fr.Release()
		sp := newSyslogParser(loc)
		for {
			frame, fl, err := fr.Next()
			if err != nil {
				// Complete frames read with the error (EOF, a reset, the
				// listener closing) are still pending.
				_ = b.Push(ctx)
				return
			}
			stats.bytes.Add(int64(len(frame)))
			if b.Err() != nil {
				stats.in.Drop(relaykit.ReasonShutdownUnqueued, 1)
				continue
			}
			ev := b.Event()
			sp.Parse(ev, frame, peer)
			if fl&stream.Truncated != 0 {
				ev.Flags |= relaykit.FlagTruncated
				stats.truncated.Add(1)
			}
			if ev.Flags&relaykit.FlagParseError != 0 {
				stats.parseErrors.Add(1)
			}
			if !cs.Event(ev.Host, len(frame)) {
				b.Unget() // over its source's limit
				stats.in.Drop(relaykit.ReasonRateLimit, 1)
				continue
			}
			if b.Full() {
				_ = b.Push(ctx) // a failure is counted; later frames are dropped above
			}
		}
	}
}
