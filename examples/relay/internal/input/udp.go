package input

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relaykit/relaykit"
	libinput "github.com/relaykit/relaykit/input"
	"github.com/relaykit/relaykit/stream/udp"
	"github.com/relaykit/relaykit/syslog"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
)

// UDPInput reads syslog datagrams with a stream/udp listener (recvmmsg
// batches, SO_RCVBUF, kernel drops counted), one message per datagram,
// handled by the library's syslog input (package input: parsing, the
// sender as the host, sources, the hand-over to the engine without
// waiting: datagrams arriving while a worker's ring is full are dropped
// and counted, queue_full, since UDP has no back-pressure). Datagrams the
// kernel dropped because the socket's buffer (read_buffer) was full count
// as received and dropped{rcvbuf_full}. A read error never stops the
// input (the listener backs off and logs once per episode); at shutdown
// the readers first read what the socket holds.
//
// With sources tracked, each datagram counts for its source (the sender's
// address, or the event's host), and a datagram over its source's rate
// limit is dropped, counted as received and dropped{rate_limit}: UDP
// cannot be paced.
type UDPInput struct {
	name string
	ln   *udp.Listener
	lib  *libinput.Syslog
}

// UDPDropPoll is how often a UDP input reads its socket's drop count, so
// that drops show when no datagram follows them (zero: the listener's
// default, 1 s; tests change it).
var UDPDropPoll time.Duration

// newUDPInput binds the UDP input of cfg.
func newUDPInput(cfg *config.UDPInputConfig, env Env) (*UDPInput, error) {
	stats := env.Ledger.Input(cfg.Name, cfg.Kind())
	lib, err := libinput.NewSyslog(libinput.SyslogConfig{
		Name: cfg.Name, Input: stats.In, Parser: syslogConfig(env.Loc),
		Sources: env.Sources.input(cfg.Name), ByHost: env.Sources != nil && env.Sources.Config.KeyByHost(cfg.Name),
		Clock: clk, Logger: env.Log.With("input", cfg.Name),
	})
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", cfg.Name, err)
	}
	ln, err := udp.New(udp.Config{
		Name:             cfg.Name,
		Address:          cfg.Listen,
		Handler:          lib.ServeDatagrams,
		ReadBuffer:       int(cfg.ReadBuffer),
		MaxMessageSize:   int(cfg.MaxMessageSize),
		BatchSize:        cfg.BatchSize,
		Readers:          cfg.Readers,
		DropPollInterval: UDPDropPoll,
		Logger:           env.Log.With("input", cfg.Name),
		Hooks: udp.Hooks{OnKernelDrops: func(n int) {
			stats.KernelDropped.Add(int64(n))
			stats.In.Drop(relaykit.ReasonRcvbufFull, n)
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", cfg.Name, err)
	}
	stats.UDP, stats.Lib = ln, lib.Stats
	// The engine's producers show the point each read's events, parsed.
	stats.In.Observe(env.Taps.Point(tapInput + cfg.Name))
	return &UDPInput{name: cfg.Name, ln: ln, lib: lib}, nil
}

// syslogConfig is the parser of the syslog inputs: RFC 5424, RFC 3164
// and their variants, CEF, text only (see syslogParser).
func syslogConfig(loc *time.Location) syslog.Config {
	if loc == nil {
		loc = time.Local
	}
	return syslog.Config{Location: loc, Clock: clk, RequireText: true, CEF: true}
}

// Addrs reports the bound address.
func (u *UDPInput) Addrs(add func(string, net.Addr)) { add(u.name, u.ln.Addr()) }

// Close releases the socket of an input that never ran.
func (u *UDPInput) Close() error {
	_ = u.lib.Close()
	return u.ln.Close()
}

// Collect: the ledger exports a UDP input's counters (its listener's and
// its library input's).
func (u *UDPInput) Collect(chan<- prometheus.Metric) {}

// Run reads until ctx ends (then the listener drains the socket) and
// returns nil; a datagram has nothing to finish after it.
func (u *UDPInput) Run(ctx, _ context.Context) error { return u.ln.Serve(ctx) }
