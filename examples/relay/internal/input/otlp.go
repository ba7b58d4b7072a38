package input

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"
	"github.com/relaykit/relaykit/examples/relay/internal/metrics"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/otlp"
	"github.com/relaykit/relaykit/sources"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/streamhttp"
	"github.com/relaykit/relaykit/tap"
)

// otlpInput is an OpenTelemetry logs listener: an otlp.Receiver served
// over HTTP (an http.Server) and gRPC (a grpc.Server), each on a stream
// listener of its own (connection limits per source and in all, TLS with
// its handshake deadline). The receiver's Sink pushes each request's
// records into a worker ring and waits until they are finished
// (engine.Input.PushWait), so a request is answered success only once
// every destination it was routed to has its events delivered, on disk or
// dead-lettered: the HEC and RELP inputs' contract.
type OTLPInput struct {
	cfg      config.OTLPInputConfig
	stats    *ledger.InputStats
	log      *slog.Logger
	Receiver *otlp.Receiver

	HTTPListener *stream.Listener // nil without http_listen
	httpLn       *stream.NetListener
	srv          *http.Server
	GRPCListener *stream.Listener // nil without grpc_listen
	grpcLn       *stream.NetListener
	gs           *grpc.Server

	rr   atomic.Uint64 // shards of requests without a peer address
	src  sources.Input
	drop bool
	tap  *tap.Point // input:NAME (taps.go)
}

// otlpPeerKey is the context key of an HTTP request's remote address
// (http.Server.ConnContext), for sharding and per-source accounting.
type otlpPeerKey struct{}

// newOTLPInput binds the OTLP input of c.
func newOTLPInput(c *config.OTLPInputConfig, env Env) (_ *OTLPInput, err error) {
	cfg, src, log := *c, env.Sources, env.Log
	stats := env.Ledger.Input(cfg.Name, cfg.Kind())
	in := &OTLPInput{cfg: cfg, stats: stats, log: log.With("input", cfg.Name), src: src.input(cfg.Name), drop: src.drops(),
		tap: env.Taps.Point(tapInput + cfg.Name)}
	in.Receiver, err = otlp.NewReceiver(otlp.ReceiverConfig{
		Sink:          in,
		Mapping:       otlp.Mapping{Names: config.OTLPNames[cfg.Names]},
		Token:         string(cfg.Token),
		MaxBodyBytes:  int64(cfg.MaxBodySize),
		MaxEventBytes: int(cfg.MaxEventSize),
		BodyTimeout:   cfg.BodyTimeout,
		SendTimeout:   cfg.AckTimeout,
		// The gRPC connection's deadlines are the HTTP ones: idle_timeout
		// without streams, header_timeout for the HTTP/2 preface.
		GRPCIdleTimeout:      cfg.IdleTimeout,
		GRPCHandshakeTimeout: cfg.HeaderTimeout,
		Hooks: otlp.ReceiverHooks{OnSendError: func(err error, records int) {
			in.log.Debug("export request refused, the sender retries it", "records", records, "err", err)
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", cfg.Name, err)
	}
	defer func() {
		if err != nil {
			in.Close()
		}
	}()
	// One certificate store for both listeners.
	base, err := listenerConfig(cfg.Name, &cfg.ConnLimits, cfg.TLS, stats, env)
	if err != nil {
		return nil, err
	}
	listen := func(addr, proto string) (*stream.Listener, error) {
		lcfg := base
		lcfg.Name, lcfg.MaxConns, lcfg.Address = cfg.Name+"/"+proto, cfg.MaxConnections, addr
		lcfg.SessionTickets = true // HTTP and gRPC clients read their answers, the tickets with them
		if lcfg.TLS != nil && proto == "grpc" {
			lcfg.TLS = lcfg.TLS.Clone()
			lcfg.TLS.NextProtos = []string{"h2"} // gRPC clients require ALPN h2
		}
		sl, err := stream.New(lcfg)
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", cfg.Name, err)
		}
		return sl, nil
	}
	if cfg.HTTPListen != "" {
		if in.HTTPListener, err = listen(cfg.HTTPListen, "http"); err != nil {
			return nil, err
		}
		in.httpLn = in.HTTPListener.NetListener()
		stats.Listener = in.HTTPListener
		stats.Frames, stats.Reads = true, true
		in.srv = &http.Server{
			Handler:           in.Receiver,
			ReadHeaderTimeout: cfg.HeaderTimeout,
			IdleTimeout:       cfg.IdleTimeout,
			ConnState:         streamhttp.ConnState(in.httpLn),
			ConnContext: func(ctx context.Context, c net.Conn) context.Context {
				return context.WithValue(ctx, otlpPeerKey{}, c.RemoteAddr())
			},
			ErrorLog: slog.NewLogLogger(in.log.Handler(), slog.LevelDebug),
		}
	}
	if cfg.GRPCListen != "" {
		if in.GRPCListener, err = listen(cfg.GRPCListen, "grpc"); err != nil {
			return nil, err
		}
		in.grpcLn = in.GRPCListener.NetListener()
		if stats.Listener == nil {
			stats.Listener = in.GRPCListener
			stats.Frames, stats.Reads = true, true
		} else {
			stats.Also = in.GRPCListener // its connections count with the HTTP listener's
		}
		in.gs = grpc.NewServer(in.Receiver.ServerOptions()...)
		in.Receiver.RegisterGRPC(in.gs)
	}
	return in, nil
}

// Addrs reports the bound addresses: NAME/http and NAME/grpc.
func (in *OTLPInput) Addrs(add func(string, net.Addr)) {
	if a := in.HTTPAddr(); a != nil {
		add(in.cfg.Name+"/http", a)
	}
	if a := in.GRPCAddr(); a != nil {
		add(in.cfg.Name+"/grpc", a)
	}
}

// HTTPAddr and GRPCAddr are the bound addresses (nil without the
// listener).
func (in *OTLPInput) HTTPAddr() net.Addr {
	if in.httpLn == nil {
		return nil
	}
	return in.httpLn.Addr()
}

func (in *OTLPInput) GRPCAddr() net.Addr {
	if in.grpcLn == nil {
		return nil
	}
	return in.grpcLn.Addr()
}

// Run serves until ctx ends, then stops taking connections and lets the
// requests in progress finish until hard ends (the workers still run: the
// relay closes the rings after its inputs returned). A request cut then
// is answered 503 / UNAVAILABLE, or not at all: its sender sends it
// again.
func (in *OTLPInput) Run(ctx, hard context.Context) error {
	errc := make(chan error, 2)
	n := 0
	if in.srv != nil {
		n++
		go func() {
			if err := in.srv.Serve(in.httpLn); !errors.Is(err, http.ErrServerClosed) {
				errc <- err
				return
			}
			errc <- nil
		}()
	}
	if in.gs != nil {
		n++
		go func() { errc <- in.gs.Serve(in.grpcLn) }()
	}
	var err error
	select {
	case err = <-errc: // a listener failed
		n--
	case <-ctx.Done():
	}
	if in.srv != nil {
		if in.srv.Shutdown(hard) != nil {
			_ = in.srv.Close() // cancels the requests' contexts: their waits end
		}
	}
	if in.gs != nil {
		stopped := make(chan struct{})
		go func() { in.gs.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-hard.Done():
			// Stop waits for connections still in their HTTP/2 preface
			// (up to header_timeout): ending their reads first ends it.
			_ = in.GRPCListener.Close()
			in.gs.Stop()
			<-stopped
		}
	}
	for range n {
		err = errors.Join(err, <-errc)
	}
	_ = in.Receiver.Close()
	in.closeListeners()
	if err != nil {
		return fmt.Errorf("input %s: %w", in.cfg.Name, err)
	}
	return nil
}

func (in *OTLPInput) closeListeners() {
	if in.HTTPListener != nil {
		_ = in.HTTPListener.Close()
	}
	if in.GRPCListener != nil {
		_ = in.GRPCListener.Close()
	}
}

// Close releases the listening sockets of an input that never ran.
func (in *OTLPInput) Close() error {
	_ = in.Receiver.Close()
	if in.gs != nil {
		in.gs.Stop()
	}
	in.closeListeners()
	return nil
}

// Send is the receiver's Sink: it pushes a request's records into one
// worker ring (by the sender's connection: its requests stay in order)
// and returns once they are finished. With sources tracked, the request
// counts for its sender's address, and over its rate limit is refused
// (drop mode: answered 503 / UNAVAILABLE, sent again) or answered late
// (pace mode), as the HEC input does.
func (in *OTLPInput) Send(ctx context.Context, batch []relaykit.Event) error {
	var ap netip.AddrPort
	if a, ok := ctx.Value(otlpPeerKey{}).(net.Addr); ok {
		ap = addrOf(a)
	} else if p, ok := peer.FromContext(ctx); ok {
		ap = addrOf(p.Addr)
	}
	var shard uint64
	var h sources.Handle
	if ap.IsValid() {
		h = in.src.Addr(ap.Addr())
		// By connection, as the HEC input shards by address and port:
		// a connection's requests stay in order, and one sender's
		// connections spread over the workers.
		b := ap.Addr().As16()
		shard = maphash.Bytes(shardSeed, b[:]) ^ maphash.Comparable(shardSeed, ap.Port())
	} else {
		shard = in.rr.Add(1)
	}
	n, wait, err := admit(h, in.drop, batch) // hec.go
	if err != nil {
		return err
	}
	in.stats.Bytes.Add(n)
	in.tap.Publish(batch)                                     // before the push: the events as decoded
	return pushThenPace(ctx, in.stats.In, shard, batch, wait) // hec.go
}

// addrOf returns the address and port of a TCP peer; the zero AddrPort
// otherwise.
func addrOf(a net.Addr) netip.AddrPort {
	if ta, ok := a.(*net.TCPAddr); ok {
		ip, _ := netip.AddrFromSlice(ta.IP)
		return netip.AddrPortFrom(ip.Unmap(), uint16(ta.Port))
	}
	return netip.AddrPort{}
}

var (
	descOTLPRequests = prometheus.NewDesc("relay_otlp_requests_total", "OTLP export requests that passed authentication, by transport.", []string{"input", "transport"}, nil)
	descOTLPRecords  = prometheus.NewDesc("relay_otlp_records_total", "OTLP log records decoded, by outcome (accepted: answered success; retried: in requests answered 503 / UNAVAILABLE, which the sender sends again; rejected: refused with a partial success, over max_event_size).", []string{"input", "outcome"}, nil)
	descOTLPErrors   = prometheus.NewDesc("relay_otlp_errors_total", "OTLP requests answered with an error of their own, by reason (unauthorized 401, bad_content_type 415, too_large 413, bad_request 400: truncated protobuf, invalid JSON, broken gzip; body_timeout: 408, or a gRPC Export whose message was late (DEADLINE_EXCEEDED); body_error: the sender broke off; send_error: refused, retried by the sender; closed: refused while stopping).", []string{"input", "reason"}, nil)
	descOTLPBytes    = prometheus.NewDesc("relay_otlp_body_bytes_total", "OTLP/HTTP request body bytes, as received (wire) and after decompression (decoded).", []string{"input", "encoding"}, nil)
)

// otlpTable exports otlp.ReceiverStats, per input.
var otlpTable = metrics.Table[otlp.ReceiverStats]{
	metrics.Counter(descOTLPRequests, func(s *otlp.ReceiverStats) int64 { return s.Requests }, "http"),
	metrics.Counter(descOTLPRequests, func(s *otlp.ReceiverStats) int64 { return s.GRPCRequests }, "grpc"),
	metrics.Counter(descOTLPRecords, func(s *otlp.ReceiverStats) int64 { return s.RecordsAccepted }, "accepted"),
	metrics.Counter(descOTLPRecords, func(s *otlp.ReceiverStats) int64 { return s.RecordsRetried }, "retried"),
	metrics.Counter(descOTLPRecords, func(s *otlp.ReceiverStats) int64 { return s.RecordsRejected }, "rejected"),
	metrics.Counter(descOTLPErrors, func(s *otlp.ReceiverStats) int64 { return s.Unauthorized }, "unauthorized"),
	metrics.Counter(descOTLPErrors, func(s *otlp.ReceiverStats) int64 { return s.BadContentType }, "bad_content_type"),
	metrics.Counter(descOTLPErrors, func(s *otlp.ReceiverStats) int64 { return s.TooLarge }, "too_large"),
	metrics.Counter(descOTLPErrors, func(s *otlp.ReceiverStats) int64 { return s.BadRequests }, "bad_request"),
	metrics.Counter(descOTLPErrors, func(s *otlp.ReceiverStats) int64 { return s.BodyTimeouts }, "body_timeout"),
	metrics.Counter(descOTLPErrors, func(s *otlp.ReceiverStats) int64 { return s.BodyErrors }, "body_error"),
	metrics.Counter(descOTLPErrors, func(s *otlp.ReceiverStats) int64 { return s.SendErrors }, "send_error"),
	metrics.Counter(descOTLPErrors, func(s *otlp.ReceiverStats) int64 { return s.Closed }, "closed"),
	metrics.Counter(descOTLPBytes, func(s *otlp.ReceiverStats) int64 { return s.Bytes }, "wire"),
	metrics.Counter(descOTLPBytes, func(s *otlp.ReceiverStats) int64 { return s.DecodedBytes }, "decoded"),
}

// Collect sends the receiver's counters.
func (in *OTLPInput) Collect(ch chan<- prometheus.Metric) {
	s := in.Receiver.Stats()
	otlpTable.Collect(ch, &s, in.cfg.Name)
}
