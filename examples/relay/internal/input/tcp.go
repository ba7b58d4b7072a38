package input

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

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/stream"
)

// streamInput is a syslog TCP/TLS or JSON-lines listener: stream.Listener
// enforces the connection limits and deadlines, handle reads one
// connection.
type StreamInput struct {
	Name     string
	Listener *stream.Listener
	stats    *ledger.InputStats
	Budget   *stream.ReadBudget // the read buffers of its connections
	Handle   func(ctx context.Context, c *stream.Conn, peer string, shard uint64)
}

var shardSeed = maphash.MakeSeed()

func ListenStream(name, addr string, tlsCfg *config.TLSConfig, maxConns int, idle time.Duration, lim config.StreamLimits, stats *ledger.InputStats, log *slog.Logger) (*StreamInput, error) {
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
	ln, err := stream.Listen("tcp", addr, cfg)
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", name, err)
	}
	stats.Listener = ln
	stats.Buffers = budget
	// Frames: its bytes read and frame accounting; a Framer's reads, for
	// all but RELP, whose sessions read their own frames (no budget).
	stats.Frames, stats.Reads = true, budget != nil
	return &StreamInput{Name: name, Listener: ln, stats: stats, Budget: budget}, nil
}

func serverTLS(c *config.TLSConfig) (*tls.Config, error) {
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

// Addrs reports the bound address.
func (l *StreamInput) Addrs(add func(string, net.Addr)) { add(l.Name, l.Listener.Addr()) }

// Collect: the ledger exports a stream input's counters (its
// listener's and framers').
func (l *StreamInput) Collect(chan<- prometheus.Metric) {}

// newSyslogTCPInput binds the syslog TCP/TLS input of in.
func newSyslogTCPInput(in *config.TCPInputConfig, env Env) (*StreamInput, error) {
	st := env.Ledger.Input(in.Name, in.Kind())
	l, err := ListenStream(in.Name, in.Listen, in.TLS, in.MaxConnections, in.IdleTimeout, in.StreamLimits, st, env.Log)
	if err != nil {
		return nil, err
	}
	l.Handle = SyslogStream(*in, st, env.Loc, l.Budget, env.Sources)
	// The engine's producers show the point each read's events, parsed.
	st.In.Observe(env.Taps.Point(tapInput + in.Name))
	return l, nil
}

// Run accepts until ctx ends, then stops accepting, ends every
// connection's reads (frames already read are still handled, pushing under
// work) and waits for the connection goroutines.
//
// A connection paced by its source's rate limit waits on ctx: its wait
// ends with the inputs (see stopContext).
func (l *StreamInput) Run(ctx context.Context, work context.Context) error {
	work = context.WithValue(work, stopKey{}, ctx)
	return l.Listener.Serve(ctx, func(c *stream.Conn) {
		peer := c.Source().String()
		if !c.Source().IsValid() {
			peer = c.RemoteAddr().String()
		}
		l.Handle(work, c, peer, maphash.String(shardSeed, c.RemoteAddr().String()))
	})
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
func (l *StreamInput) Close() error { return l.Listener.Close() }

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
func SyslogStream(in config.TCPInputConfig, stats *ledger.InputStats, loc *time.Location, budget *stream.ReadBudget, src *SourceTracker) func(context.Context, *stream.Conn, string, uint64) {
	return func(ctx context.Context, c *stream.Conn, peer string, shard uint64) {
		b := stats.In.NewProducer(shard)
		defer b.Release()
		cs := src.StreamConn(in.Name, c.Source())
		defer cs.Close()
		stop := stopContext(ctx)
		fr := stream.NewFramer(c, stream.FramerConfig{
			MaxFrame: int(in.MaxMessageSize), Counters: &stats.Framing,
			ReadSize: int(in.ReadSize), Budget: budget,
			BeforeRead: func() error {
				if err := b.Flush(ctx); err != nil {
					return err
				}
				return cs.BeforeRead(stop)
			},
		})
		defer fr.Release()
		sp := NewSyslogParser(loc)
		for {
			frame, fl, err := fr.Next()
			if err != nil {
				// Complete frames read with the error (EOF, a reset, the
				// listener closing) are still pending.
				_ = b.Push(ctx)
				return
			}
			stats.Bytes.Add(int64(len(frame)))
			if b.Err() != nil {
				stats.In.Drop(relaykit.ReasonShutdownUnqueued, 1)
				continue
			}
			ev := b.Event()
			sp.Parse(ev, frame, peer)
			if fl&stream.Truncated != 0 {
				ev.Flags |= relaykit.FlagTruncated
				stats.Truncated.Add(1)
			}
			if ev.Flags&relaykit.FlagParseError != 0 {
				stats.ParseErrors.Add(1)
			}
			if !cs.Event(ev.Host, len(frame)) {
				b.Unget() // over its source's limit
				stats.In.Drop(relaykit.ReasonRateLimit, 1)
				continue
			}
			if b.Full() {
				_ = b.Push(ctx) // a failure is counted; later frames are dropped above
			}
		}
	}
}
