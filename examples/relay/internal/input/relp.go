package input

import (
	"context"
	"hash/maphash"
	"sync"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"
	"github.com/relaykit/relaykit/examples/relay/internal/metrics"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/sources"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/relp"
	"github.com/relaykit/relaykit/tap"
)

// relpInput is a RELP listener (rsyslog's omrelp, librelp clients): a
// stream listener (connection limits, deadlines, TLS) whose connections
// are RELP sessions. The frames a session has read, up to its window, are
// parsed as syslog, pushed into the worker ring of the connection as one
// batch, and answered "200 OK" once their events are finished
// (engine.Input.PushOwnedWait).
// While they are not, the session reads and answers nothing more: a
// sender meets back-pressure through its window, never a drop. A window
// not finished within ack_timeout closes the session unanswered, and the
// client sends it again after reconnecting; the events of it already in
// the pipeline are then delivered twice, and counted
// (relay_relp_duplicate_frames_total).
//
// With sources tracked, each window counts for its sender's address, and
// a sender over its rate limit has its window answered late, as long as
// its limit asks: it holds back that session (the client waits for the
// answer before sending more than its window), whatever the mode; an
// acknowledging input never drops what it would answer as delivered.
type RELPInput struct {
	cfg    config.RELPInputConfig
	Stats  *ledger.InputStats
	loc    *time.Location
	Server *relp.Server
	src    sources.Input
	*StreamInput
	pool sync.Pool  // *relpBatch
	tap  *tap.Point // input:NAME (taps.go)
}

// relpBatch is the per-call state of the RELP handler, pooled.
type relpBatch struct {
	sp  *syslogParser
	evs []*relaykit.Event
}

// newRELPInput binds the RELP input of c.
func newRELPInput(c *config.RELPInputConfig, env Env) (*RELPInput, error) {
	cfg, log := *c, env.Log
	stats := env.Ledger.Input(cfg.Name, cfg.Kind())
	in := &RELPInput{cfg: cfg, Stats: stats, loc: env.Loc, src: env.Sources.input(cfg.Name), tap: env.Taps.Point(tapInput + cfg.Name)}
	srv, err := relp.New(relp.Config{
		Name:         cfg.Name,
		Handler:      in.handle,
		Window:       cfg.Window,
		MaxDataBytes: int(cfg.MaxMessageSize),
		Logger:       log.With("input", cfg.Name),
	})
	if err != nil {
		return nil, err
	}
	in.Server = srv
	l, err := ListenStream(cfg.Name, cfg.Listen, cfg.TLS, cfg.MaxConnections, cfg.IdleTimeout, cfg.StreamLimits, stats, env)
	if err != nil {
		_ = srv.Close()
		return nil, err
	}
	l.Handle = srv.ServeConn
	in.StreamInput = l
	return in, nil
}

// Run serves sessions until ctx ends, then ends their reads: each still
// answers what it had read once finished, until hard ends, when the waits
// are cut (those windows go unanswered and are sent again).
func (in *RELPInput) Run(ctx, hard context.Context) error {
	stop := context.AfterFunc(hard, func() { _ = in.Server.Close() })
	defer stop()
	err := in.StreamInput.Run(ctx, hard)
	_ = in.Server.Close()
	return err
}

// Close releases the listening socket of an input that never ran.
func (in *RELPInput) Close() error {
	err := in.StreamInput.Close()
	_ = in.Server.Close()
	return err
}

// handle is the RELP handler: one session's window of frames.
func (in *RELPInput) handle(ctx context.Context, c *stream.Conn, batch []relp.Message) error {
	b, _ := in.pool.Get().(*relpBatch)
	if b == nil {
		b = &relpBatch{sp: NewSyslogParser(in.loc)}
	}
	defer func() {
		b.evs = b.evs[:0]
		in.pool.Put(b)
	}()
	peer := c.Source().String()
	var n int64
	for i := range batch {
		ev := engine.NewEvent()
		b.sp.Parse(ev, batch[i].Data, peer)
		if ev.Flags&relaykit.FlagParseError != 0 {
			in.Stats.ParseErrors.Add(1)
		}
		n += int64(len(batch[i].Data))
		b.evs = append(b.evs, ev)
	}
	in.Stats.Bytes.Add(n)
	publishPtrs(in.tap, b.evs)
	ctx, cancel := context.WithTimeout(ctx, in.cfg.AckTimeout)
	defer cancel()
	// One connection's windows go to one ring: they stay in order.
	if err := in.Stats.In.PushOwnedWait(ctx, maphash.Comparable(shardSeed, c), b.evs); err != nil {
		return err
	}
	h := in.src.Addr(c.Source())
	if wait := h.Pace(len(batch), int(n)); wait > 0 {
		// Over its limit: the answer waits (bounded by ack_timeout's
		// context, which ends with the relay).
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
	descRELPSessions   = prometheus.NewDesc("relay_relp_sessions_total", "RELP sessions served.", []string{"input"}, nil)
	descRELPFrames     = prometheus.NewDesc("relay_relp_frames_total", "RELP syslog frames read and handed over.", []string{"input"}, nil)
	descRELPAcked      = prometheus.NewDesc("relay_relp_acked_frames_total", "RELP syslog frames answered 200 OK (finished: delivered, on disk or dead-lettered).", []string{"input"}, nil)
	descRELPUnacked    = prometheus.NewDesc("relay_relp_unacknowledged_frames_total", "RELP syslog frames of windows not finished in time (ack_timeout, shutdown): the session was closed unanswered and the client sends them again.", []string{"input"}, nil)
	descRELPDuplicates = prometheus.NewDesc("relay_relp_duplicate_frames_total", "RELP syslog frames the client will send again although the relay has them: accepted but the answer could not be written, or in the pipeline when the wait was cut. A crash makes such duplicates too, uncounted (at most a window per session).", []string{"input"}, nil)
	descRELPBytes      = prometheus.NewDesc("relay_relp_bytes_total", "Bytes read by RELP sessions, by part: message (frame data), overhead (headers, trailers, open and close), discarded (after a protocol error or an unanswered window), incomplete (a frame cut by a reset, a deadline or shutdown). They add up to relay_input_read_bytes_total.", []string{"input", "part"}, nil)
	descRELPErrors     = prometheus.NewDesc("relay_relp_session_errors_total", "RELP sessions closed for the peer's fault, by reason (protocol: a malformed frame, a lying length, an out-of-sequence txnr; too_large: a frame over max_message_size), and windows left unanswered (unanswered).", []string{"input", "reason"}, nil)
	descRELPCloses     = prometheus.NewDesc("relay_relp_serverclose_total", "serverclose hints sent (shutdown, eviction, deadlines, unanswered windows).", []string{"input"}, nil)
)

// relpStats is what a RELP input's metrics read: its server's counters
// and its engine input's (the events abandoned in the pipeline are
// duplicates too).
type relpStats struct {
	relp.Stats
	in engine.InputStats
}

// relpTable exports relp.Stats, per input.
var relpTable = metrics.Table[relpStats]{
	metrics.Counter(descRELPSessions, func(s *relpStats) int64 { return s.Sessions }),
	metrics.Counter(descRELPFrames, func(s *relpStats) int64 { return s.Frames }),
	metrics.Counter(descRELPAcked, func(s *relpStats) int64 { return s.Acked }),
	metrics.Counter(descRELPUnacked, func(s *relpStats) int64 { return s.Unacknowledged }),
	metrics.Counter(descRELPDuplicates, func(s *relpStats) int64 { return s.AcceptedUnanswered + s.in.Abandoned }),
	metrics.Counter(descRELPBytes, func(s *relpStats) int64 { return s.MessageBytes }, "message"),
	metrics.Counter(descRELPBytes, func(s *relpStats) int64 { return s.OverheadBytes }, "overhead"),
	metrics.Counter(descRELPBytes, func(s *relpStats) int64 { return s.DiscardedBytes }, "discarded"),
	metrics.Counter(descRELPBytes, func(s *relpStats) int64 { return s.IncompleteBytes }, "incomplete"),
	metrics.Counter(descRELPErrors, func(s *relpStats) int64 { return s.ProtocolErrors }, "protocol"),
	metrics.Counter(descRELPErrors, func(s *relpStats) int64 { return s.TooLarge }, "too_large"),
	metrics.Counter(descRELPErrors, func(s *relpStats) int64 { return s.HandlerErrors }, "unanswered"),
	metrics.Counter(descRELPCloses, func(s *relpStats) int64 { return s.ServerCloses }),
}

// Collect sends the server's counters and the acknowledging inputs'.
func (in *RELPInput) Collect(ch chan<- prometheus.Metric) {
	s := relpStats{Stats: in.Server.Stats(), in: in.Stats.In.Stats()}
	relpTable.Collect(ch, &s, in.cfg.Name)
	ackTable.Collect(ch, &s.in, in.cfg.Name)
}
