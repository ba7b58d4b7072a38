package input

import (
	"context"
	"fmt"
	"hash/maphash"
	"net"
	"time"

	libinput "github.com/relaykit/relaykit/input"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relaykit/relaykit/stream"
)

// streamInput is a syslog TCP/TLS or JSON-lines listener: stream.Listener
// enforces the connection limits and deadlines, handle reads one
// connection.
type StreamInput struct {
	Name     string
	Listener *stream.Listener
	stats    *ledger.InputStats
	Budget   *stream.ReadBudget   // the read buffers of its connections
	Handle   func(c *stream.Conn) // reads one connection
	closeLib func() error         // the library input's Close, if any
}

var shardSeed = maphash.MakeSeed()

// ListenStream binds the stream listener of a syslog TCP/TLS, JSON-lines
// or RELP input.
func ListenStream(name, addr string, tlsCfg *config.TLSConfig, maxConns int, idle time.Duration, lim config.StreamLimits, stats *ledger.InputStats, env Env) (*StreamInput, error) {
	cfg, err := listenerConfig(name, &lim.ConnLimits, tlsCfg, stats, env)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns, cfg.IdleTimeout, cfg.FrameTimeout = maxConns, idle, lim.FrameTimeout
	var budget *stream.ReadBudget // none for RELP, which reads its own frames
	if lim.ReadBuffers > 0 {
		if budget, err = stream.NewReadBudget(int64(lim.ReadBuffers)); err != nil {
			return nil, fmt.Errorf("input %s: read_buffers: %w", name, err)
		}
	}
	l := &StreamInput{Name: name, stats: stats, Budget: budget}
	cfg.Address, cfg.Handler = addr, l.serveConn
	ln, err := stream.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", name, err)
	}
	l.Listener = ln
	stats.Listener = ln
	stats.Buffers = budget
	// Frames: its bytes read and frame accounting; a Framer's reads, for
	// all but RELP, whose sessions read their own frames (no budget).
	stats.Frames, stats.Reads = true, budget != nil
	return l, nil
}

// Addrs reports the bound address.
func (l *StreamInput) Addrs(add func(string, net.Addr)) { add(l.Name, l.Listener.Addr()) }

// Collect: the ledger exports a stream input's counters (its
// listener's and framers').
func (l *StreamInput) Collect(chan<- prometheus.Metric) {}

// newSyslogTCPInput binds the syslog TCP/TLS input of in: its listener's
// connections are read by the library's syslog input (package input:
// framing, parsing, the sender as the host, sources, the hand-over).
func newSyslogTCPInput(in *config.TCPInputConfig, env Env) (*StreamInput, error) {
	st := env.Ledger.Input(in.Name, in.Kind())
	l, err := ListenStream(in.Name, in.Listen, in.TLS, in.MaxConnections, in.IdleTimeout, in.StreamLimits, st, env)
	if err != nil {
		return nil, err
	}
	lib, err := libinput.NewSyslog(libinput.SyslogConfig{
		Name: in.Name, Input: st.In, Parser: syslogConfig(env.Loc),
		MaxMessageSize: int(in.MaxMessageSize), ReadSize: int(in.ReadSize), ReadBudget: l.Budget,
		Sources: env.Sources.input(in.Name), ByHost: env.Sources != nil && env.Sources.Config.KeyByHost(in.Name),
		DropOverLimit: env.Sources.drops(), Clock: clk, Logger: env.Log.With("input", in.Name),
	})
	if err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("input %s: %w", in.Name, err)
	}
	l.mount(lib.ServeConn, lib.Stats, lib.Close)
	// The engine's producers show the point each read's events, parsed.
	st.In.Observe(env.Taps.Point(tapInput + in.Name))
	return l, nil
}

// mount makes serve (a library input's ServeConn) the handler of l's
// connections; its counters (stats) stand for the ledger's, and closeLib
// ends its pushes when the input closes.
func (l *StreamInput) mount(serve func(*stream.Conn), stats func() libinput.Stats, closeLib func() error) {
	l.Handle = serve
	l.stats.Lib = stats
	l.closeLib = closeLib
}

// Run accepts until ctx ends, then stops accepting, ends every
// connection's reads (frames already read are still handed over, until
// the engine's hard deadline) and waits for the connection goroutines. A
// connection paced by its source's rate limit waits until its reads end.
func (l *StreamInput) Run(ctx, _ context.Context) error { return l.Listener.Serve(ctx) }

// serveConn is the listener's handler: it reads one connection.
func (l *StreamInput) serveConn(c *stream.Conn) { l.Handle(c) }

// Close releases the listening socket of an input that never ran.
func (l *StreamInput) Close() error {
	if l.closeLib != nil {
		_ = l.closeLib()
	}
	return l.Listener.Close()
}
