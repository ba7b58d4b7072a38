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
	"strconv"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"
	"github.com/relaykit/relaykit/examples/relay/internal/metrics"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/sources"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/hec"
	"github.com/relaykit/relaykit/stream/streamhttp"
	"github.com/relaykit/relaykit/tap"
)

// hecInput is a Splunk HTTP Event Collector listener: an http.Server
// serving a hec.Handler whose Sink pushes each request's events into a
// worker ring and waits until they are finished (engine.Input.PushWait). So a request is
// answered "Success" (or, with useACK, its ackId turns true) only once
// every destination it was routed to has its events delivered, on disk or
// dead-lettered, and the archive wrote them. The server accepts from a
// stream listener (TLS optional): the connection limits and the handshake
// deadline of the other stream inputs, with their metrics.
type HECInput struct {
	cfg      config.HECInputConfig
	stats    *ledger.InputStats
	log      *slog.Logger
	handler  *hec.Handler
	srv      *http.Server
	Listener *stream.Listener
	ln       *stream.NetListener
	rr       atomic.Uint64 // shards of requests without a channel or address
	// src is the sources tracker as this input sees it (zero: off); drop
	// answers a request over its sender's limit code 9 instead of
	// answering it late.
	src  sources.Input
	drop bool
	tap  *tap.Point // input:NAME (taps.go)
}

// errRateLimited refuses a request whose sender is over its rate limit:
// the handler answers it 503 code 9 (server busy), and the sender sends
// it again later.
var errRateLimited = errors.New("sender over its rate limit")

// newHECInput binds the HEC input of c.
func newHECInput(c *config.HECInputConfig, env Env) (*HECInput, error) {
	cfg, ready, src, log := *c, env.Ready, env.Sources, env.Log
	stats := env.Ledger.Input(cfg.Name, cfg.Kind())
	in := &HECInput{cfg: cfg, stats: stats, log: log.With("input", cfg.Name), src: src.input(cfg.Name), drop: src.drops(),
		tap: env.Taps.Point(tapInput + cfg.Name)}
	h, err := hec.New(hec.Config{
		Tokens:                config.HECTokens(cfg.Tokens),
		Sink:                  in,
		RouteField:            config.HECRouteField,
		MaxBodyBytes:          int64(cfg.MaxBodySize),
		BodyTimeout:           cfg.BodyTimeout,
		SendTimeout:           cfg.AckTimeout,
		AckConcurrency:        cfg.AckConcurrency,
		MaxPendingAcks:        cfg.MaxPendingAcks,
		MaxAckChannels:        cfg.MaxAckChannels,
		AckChannelIdle:        cfg.AckChannelIdle,
		AllowQueryStringToken: cfg.AllowQueryStringToken,
		Health:                ready,
		Logger:                in.log,
	})
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", cfg.Name, err)
	}
	in.handler = h
	lcfg, err := listenerConfig(cfg.Name, &cfg.ConnLimits, cfg.TLS, stats, env)
	if err != nil {
		_ = h.Close()
		return nil, err
	}
	lcfg.MaxConns, lcfg.Address = cfg.MaxConnections, cfg.Listen
	lcfg.SessionTickets = true // HTTP clients read their answers, the tickets with them
	sl, err := stream.New(lcfg)
	if err != nil {
		_ = h.Close()
		return nil, fmt.Errorf("input %s: %w", cfg.Name, err)
	}
	stats.Listener = sl
	in.Listener, in.ln = sl, sl.NetListener()
	in.srv = &http.Server{
		Handler: h,
		// The handler bounds each body (body_timeout) itself; these bound
		// the rest of a connection's life: a request's headers (from
		// accept, or from the first byte of a later request), and a
		// kept-alive connection between requests.
		ReadHeaderTimeout: cfg.HeaderTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		// Which connections are idle between requests: only those may be
		// evicted at max_connections.
		ConnState: streamhttp.ConnState(in.ln),
		ErrorLog:  slog.NewLogLogger(in.log.Handler(), slog.LevelDebug),
	}
	return in, nil
}

// Addrs reports the bound address.
func (in *HECInput) Addrs(add func(string, net.Addr)) { add(in.cfg.Name, in.ln.Addr()) }

// Run serves until ctx ends, then stops taking requests and lets those in
// progress, and the sends of acknowledged ones, finish until hard ends
// (the workers still run meanwhile: the relay closes the rings after its
// inputs returned). What is cut then is answered code 9, or its ackId
// stays false: the senders send it again.
func (in *HECInput) Run(ctx, hard context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- in.srv.Serve(in.ln) }()
	select {
	case err := <-errc:
		_ = in.srv.Close()
		_ = in.Listener.Close()
		_ = in.handler.Close()
		return fmt.Errorf("input %s: %w", in.cfg.Name, err)
	case <-ctx.Done():
	}
	if err := in.srv.Shutdown(hard); err != nil {
		_ = in.srv.Close() // cancels the requests' contexts: their waits end
	}
	_ = in.handler.Shutdown(hard)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("input %s: %w", in.cfg.Name, err)
	}
	return nil
}

// Close releases the listening socket of an input that never ran.
func (in *HECInput) Close() error {
	_ = in.handler.Close()
	return in.Listener.Close()
}

// Name implements the sink naming the hec handler's errors use.
func (in *HECInput) Name() string { return in.cfg.Name }

// Send is the handler's Sink: it pushes the request's events into one
// worker ring (by channel, or the sender's address: a sender's requests
// stay in order) and returns once they are finished.
//
// With sources tracked, the request counts for its sender's address. Over
// the sender's rate limit, in drop mode, it is refused (errRateLimited:
// answered code 9, not taken in, sent again by the sender; the source's
// dropped counts its events); in pace mode it is taken in and answered as
// much later as the limit asks (within ack_timeout), which holds back a
// sender that waits for its answers. Nothing is answered as delivered
// that was dropped.
func (in *HECInput) Send(ctx context.Context, batch []relaykit.Event) error {
	var shard uint64
	r, ok := hec.FromContext(ctx)
	var h sources.Handle
	if ok {
		if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
			h = in.src.Addr(ap.Addr())
		}
	}
	n, wait, err := admit(h, in.drop, batch)
	if err != nil {
		return err
	}
	if ok && (r.Channel != "" || r.RemoteAddr != "") {
		key := r.Channel
		if key == "" {
			key = r.RemoteAddr
		}
		shard = maphash.String(shardSeed, key)
	} else {
		shard = in.rr.Add(1)
	}
	in.stats.Bytes.Add(n)
	in.tap.Publish(batch) // before the push: the events as parsed
	return pushThenPace(ctx, in.stats.In, shard, batch, wait)
}

// admit weighs batch (its events and the bytes of their messages) against
// its sender's rate limit h: in drop mode a batch over the limit is
// refused whole with errRateLimited (the sender is answered "busy" and
// sends it again); in pace mode it passes and wait is how long the answer
// is held back afterwards. n is the batch's message bytes.
func admit(h sources.Handle, drop bool, batch []relaykit.Event) (n int64, wait time.Duration, err error) {
	for i := range batch {
		n += int64(len(batch[i].Raw))
	}
	if drop {
		if h.Allow(len(batch), int(n)) < len(batch) {
			return n, 0, errRateLimited
		}
		return n, 0, nil
	}
	return n, h.Pace(len(batch), int(n)), nil
}

// pushThenPace pushes an acknowledging input's request batch and waits
// for it to be finished (engine PushWait), then holds the answer for
// wait, the pace its source's rate limit asks (0: none). A ctx that ends
// during the pause answers at once: the events are delivered all the
// same.
func pushThenPace(ctx context.Context, in *engine.Input, shard uint64, batch []relaykit.Event, wait time.Duration) error {
	if err := in.PushWait(ctx, shard, batch); err != nil {
		return err
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return nil
}

var (
	descHECRequests   = prometheus.NewDesc("relay_hec_requests_total", "HEC data requests (event and raw endpoints) that passed authentication.", []string{"input"}, nil)
	descHECResponses  = prometheus.NewDesc("relay_hec_responses_total", "HEC answers by HEC code (0 success, 2/3 token required/invalid authorization, 4 invalid token, 6 invalid data format, 9 server busy, ...), every endpoint.", []string{"input", "code"}, nil)
	descHECStatus     = prometheus.NewDesc("relay_hec_errors_total", "HEC requests answered with an HTTP status of their own, by reason (too_large 413, bad_encoding 400/415, body_timeout 408, body_error: the sender broke off).", []string{"input", "reason"}, nil)
	descHECEvents     = prometheus.NewDesc("relay_hec_events_total", "HEC events decoded, by outcome (accepted: answered or acknowledged; refused: answered code 9 or left unacknowledged, the sender sends them again).", []string{"input", "outcome"}, nil)
	descHECBytes      = prometheus.NewDesc("relay_hec_body_bytes_total", "HEC request body bytes, as received (wire) and after gzip decompression (decoded).", []string{"input", "encoding"}, nil)
	descHECAckQueries = prometheus.NewDesc("relay_hec_ack_queries_total", "Requests to /services/collector/ack.", []string{"input"}, nil)
	descHECAcks       = prometheus.NewDesc("relay_hec_acks_total", "ackIds by outcome (accepted: turned true; failed: stay false, the sender resends; expired: dropped with an idle channel).", []string{"input", "outcome"}, nil)
	descHECAcksPend   = prometheus.NewDesc("relay_hec_acks_pending", "ackIds issued and not yet reported true to their sender.", []string{"input"}, nil)
	descHECAckChans   = prometheus.NewDesc("relay_hec_ack_channels", "Channels holding ack state.", []string{"input"}, nil)
	descAckAbandoned  = prometheus.NewDesc("relay_ack_abandoned_events_total", "Events of an acknowledging input (hec, relp) that were in the pipeline when their sender's wait ended unanswered (ack_timeout, shutdown): delivered, and sent again by the sender, so each is a duplicate.", []string{"input"}, nil)
	descAckRefused    = prometheus.NewDesc("relay_ack_refused_events_total", "Events of an acknowledging input not taken in because the rings stayed full until the sender's wait ended: the sender keeps them and sends them again.", []string{"input"}, nil)
)

// hecTable exports hec.Stats, per input.
var hecTable = metrics.Table[hec.Stats]{
	metrics.Counter(descHECRequests, func(s *hec.Stats) int64 { return s.Requests }),
	{Desc: descHECResponses, Type: prometheus.CounterValue, Each: func(s *hec.Stats, emit func(float64, ...string)) {
		for code, n := range s.Responses {
			if _, _, ok := hec.Status(code); ok {
				emit(float64(n), strconv.Itoa(code))
			}
		}
	}},
	metrics.Counter(descHECStatus, func(s *hec.Stats) int64 { return s.TooLarge }, "too_large"),
	metrics.Counter(descHECStatus, func(s *hec.Stats) int64 { return s.BadEncoding }, "bad_encoding"),
	metrics.Counter(descHECStatus, func(s *hec.Stats) int64 { return s.BodyTimeouts }, "body_timeout"),
	metrics.Counter(descHECStatus, func(s *hec.Stats) int64 { return s.BodyErrors }, "body_error"),
	metrics.Counter(descHECEvents, func(s *hec.Stats) int64 { return s.EventsAccepted }, "accepted"),
	metrics.Counter(descHECEvents, func(s *hec.Stats) int64 { return s.EventsRefused }, "refused"),
	metrics.Counter(descHECBytes, func(s *hec.Stats) int64 { return s.Bytes }, "wire"),
	metrics.Counter(descHECBytes, func(s *hec.Stats) int64 { return s.DecodedBytes }, "decoded"),
	metrics.Counter(descHECAckQueries, func(s *hec.Stats) int64 { return s.AckQueries }),
	metrics.Counter(descHECAcks, func(s *hec.Stats) int64 { return s.AcksAccepted }, "accepted"),
	metrics.Counter(descHECAcks, func(s *hec.Stats) int64 { return s.AcksFailed }, "failed"),
	metrics.Counter(descHECAcks, func(s *hec.Stats) int64 { return s.AcksExpired }, "expired"),
	metrics.Gauge(descHECAcksPend, func(s *hec.Stats) int64 { return s.AcksPending }),
	metrics.Gauge(descHECAckChans, func(s *hec.Stats) int64 { return s.AckChannels }),
}

// ackTable exports what engine.InputStats counts of an acknowledging
// input (hec, relp), per input.
var ackTable = metrics.Table[engine.InputStats]{
	metrics.Counter(descAckAbandoned, func(s *engine.InputStats) int64 { return s.Abandoned }),
	metrics.Counter(descAckRefused, func(s *engine.InputStats) int64 { return s.Refused }),
}

// Collect sends the handler's counters and the acknowledging inputs'.
func (in *HECInput) Collect(ch chan<- prometheus.Metric) {
	s, is := in.handler.Stats(), in.stats.In.Stats()
	hecTable.Collect(ch, &s, in.cfg.Name)
	ackTable.Collect(ch, &is, in.cfg.Name)
}
