package input

import (
	"hash/maphash"
	"log/slog"
	"net/netip"
	"sync"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/internal/cfgerr"
	"github.com/relaykit/relaykit/sources"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/udp"
	"github.com/relaykit/relaykit/syslog"
)

// Defaults of [SyslogConfig] and [JSONLinesConfig].
const (
	// DefaultMaxMessageSize is the largest syslog frame of a stream
	// connection handed over whole: 64 KiB.
	DefaultMaxMessageSize = 64 << 10
	// DefaultMaxLineSize is the largest JSON line accepted: 1 MiB.
	DefaultMaxLineSize = 1 << 20
)

// SyslogConfig configures a [Syslog] input. Input is required; every other
// zero field means the documented default.
type SyslogConfig struct {
	// Name names the input in log records. Zero means Input's name.
	Name string
	// Input is the engine input the events go to. Required.
	Input *engine.Input
	// Parser configures the syslog parser of each connection and UDP
	// reader: the time zone of timestamps without one, RequireText, CEF.
	// Its Clock, when nil, is Clock. The zero value parses RFC 5424, RFC
	// 3164 and the lenient variants, and keeps any bytes; a relay sets
	// RequireText and CEF.
	Parser syslog.Config
	// MaxMessageSize is the largest frame of a stream connection handed
	// over whole, in bytes; a longer one is cut there and handed over
	// with relaykit.FlagTruncated (counted in [Stats].Truncated). Zero
	// means [DefaultMaxMessageSize]. A datagram's limit is its
	// listener's (udp.Config.MaxMessageSize).
	MaxMessageSize int
	// Framing is the framing of stream connections: zero detects octet
	// counting or LF/NUL trailers from each connection's first frame
	// (stream.Auto, RFC 6587).
	Framing stream.Framing
	// ReadSize is the most one stream connection reads at a time, in
	// bytes, and ReadBudget bounds the read buffers of all its
	// connections together (see stream.FramerConfig). Zero means
	// stream.DefaultReadSize (64 KiB); nil means no bound beyond it.
	ReadSize   int
	ReadBudget *stream.ReadBudget
	// Sources is the source tracker as this input sees it
	// (sources.Tracker.Input): each event is counted for its source, the
	// sender's address (or, with ByHost, the host the event names), and
	// a source over its rate limit is paced (a stream connection is not
	// read again until its turn) or, with DropOverLimit and always for
	// UDP, its excess is dropped (relaykit.ReasonRateLimit). The zero
	// value tracks nothing.
	Sources sources.Input
	// ByHost keys sources by the host each event names rather than by
	// the sender's address (senders behind another relay).
	ByHost bool
	// DropOverLimit drops a stream source's events over its rate limit
	// instead of pacing its connection.
	DropOverLimit bool
	// Clock stamps the events' receive time (the reference for
	// timestamps without a year), one read per event. Nil means
	// [clock.Default].
	Clock *clock.Clock
	// Logger logs state changes (the first push that gave up at
	// shutdown), never events. Nil means no logging.
	Logger *slog.Logger
}

// Validate reports whether [NewSyslog] would accept cfg: nil, or a
// *relaykit.FieldError wrapping [ErrInvalidConfig].
func (cfg SyslogConfig) Validate() error { return cfg.fill() }

func (cfg *SyslogConfig) fill() error {
	switch {
	case cfg.Input == nil:
		return cfgerr.New(ErrInvalidConfig, "Input", "required")
	case cfg.MaxMessageSize < 0:
		return cfgerr.New(ErrInvalidConfig, "MaxMessageSize", "%d must not be negative", cfg.MaxMessageSize)
	case cfg.ReadSize < 0:
		return cfgerr.New(ErrInvalidConfig, "ReadSize", "%d must not be negative", cfg.ReadSize)
	case cfg.Framing > stream.Delimited:
		return cfgerr.New(ErrInvalidConfig, "Framing", "unknown framing %d", cfg.Framing)
	}
	if cfg.MaxMessageSize == 0 {
		cfg.MaxMessageSize = DefaultMaxMessageSize
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Default()
	}
	if cfg.Parser.Clock == nil {
		cfg.Parser.Clock = cfg.Clock
	}
	return nil
}

// Syslog is a syslog input: it turns the frames of stream connections
// (TCP, TLS; RFC 6587 octet counting or LF/NUL trailers) and UDP
// datagrams (RFC 5426, one message each) into engine events, parsed with
// syslog.Parser. Mount [Syslog.ServeConn] as a stream.Listener's handler
// and [Syslog.ServeDatagrams] as a udp.Listener's; one Syslog may serve
// any number of listeners of both kinds. See the package documentation.
//
// A Syslog is safe for concurrent use by multiple goroutines.
type Syslog struct {
	core
	cfg SyslogConfig

	udpMu   sync.Mutex
	readers []*udpReader // free UDP reader states
}

// NewSyslog returns a syslog input for cfg, or a *relaykit.FieldError
// wrapping [ErrInvalidConfig]. It starts no goroutine.
func NewSyslog(cfg SyslogConfig) (*Syslog, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	s := &Syslog{cfg: cfg}
	s.core.init(cfg.Name, cfg.Input, cfg.Logger, syslogDecoder{s})
	s.maxFrame, s.framing, s.readSize, s.budget = cfg.MaxMessageSize, cfg.Framing, cfg.ReadSize, cfg.ReadBudget
	s.src = cfg.Sources
	s.connCfg = sources.ConnConfig{ByHost: cfg.ByHost, Drop: cfg.DropOverLimit}
	return s, nil
}

// ServeConn reads one stream connection until it ends: it frames what
// arrives, parses each frame into an event of the connection's shard
// (the connection's events stay in order), and hands the events of each
// read to the engine before it reads again. It is a stream.Handler:
// stream.Config.Handler.
//
// When the listener ends the connection (its shutdown, eviction, a
// deadline), the frames complete in what was read are still handed over,
// waiting for room in the engine as any push does, until [Syslog.Close]
// or the engine's hard deadline; the events of a push that gave up, and
// the frames read after it, are counted by the engine as
// relaykit.ReasonShutdownUnqueued, and the connection is not read again.
// A paced source's wait ends with the connection's reading
// (stream.Conn.Context).
func (s *Syslog) ServeConn(c *stream.Conn) {
	s.serve(c, s.newParser)
}

func (s *Syslog) newParser() any { return syslog.NewParser(s.cfg.Parser) }

// syslogDecoder parses the frames of a stream connection.
type syslogDecoder struct{ s *Syslog }

func (d syslogDecoder) frame(cs *connState, frame []byte, fl stream.Flags) {
	ev := cs.take()
	if ev == nil {
		return
	}
	d.s.parse(cs.dec.(*syslog.Parser), ev, frame, cs.peer, &cs.l)
	if fl&stream.Truncated != 0 {
		ev.Flags |= relaykit.FlagTruncated
	}
	cs.charge(ev, len(frame))
}

// parse fills ev (reset) from frame: receive time, the parser's fields,
// and peer as the host when the message names none.
func (s *Syslog) parse(p *syslog.Parser, ev *relaykit.Event, frame, peer []byte, l *local) {
	ev.ReceiveTime = s.cfg.Clock.Nano()
	p.Parse(ev, frame)
	if len(ev.Host) == 0 {
		ev.Host = append(ev.Host, peer...)
		ev.Flags |= relaykit.FlagHostFromPeer
	}
	if ev.Flags&relaykit.FlagParseError != 0 {
		l.parseErrors++
	}
}

// udpReader is the state one ServeDatagrams call works with: a parser, a
// producer per engine worker, and the last sender (senders send in
// bursts, so most datagrams skip formatting and hashing the address).
type udpReader struct {
	parser    *syslog.Parser
	producers []*engine.Producer
	last      netip.AddrPort
	peer      []byte
	p         *engine.Producer // the last sender's worker's
	l         local
}

var shardSeed = maphash.MakeSeed()

// ServeDatagrams handles the datagrams of one read of a UDP listener, one
// syslog message each: it is a udp.Handler (udp.Config.Handler). Each
// datagram is parsed into an event sharded by its sender's address (a
// sender's datagrams stay in order) and handed to the engine without
// waiting: UDP has no back-pressure, so what finds a worker's ring full is
// dropped and counted by the engine (relaykit.ReasonQueueFull). A sender
// over its rate limit loses its excess (relaykit.ReasonRateLimit). The
// datagrams are not retained.
func (s *Syslog) ServeDatagrams(_ int, batch []udp.Datagram) {
	r := s.getReader()
	defer s.putReader(r)
	for i := range batch {
		d := &batch[i]
		if d.Addr != r.last || r.p == nil {
			r.last = d.Addr
			r.peer = d.Addr.Addr().AppendTo(r.peer[:0])
			r.p = r.producers[maphash.Comparable(shardSeed, d.Addr)%uint64(len(r.producers))]
		}
		r.l.bytes += int64(len(d.Data))
		if d.Truncated {
			r.l.truncated++
		}
		if !s.cfg.ByHost && s.src.AllowAddr(d.Addr.Addr(), 1, len(d.Data)) == 0 {
			s.in.Drop(relaykit.ReasonRateLimit, 1)
			r.l.rateLimited++
			continue
		}
		ev := r.p.Event()
		s.parse(r.parser, ev, d.Data, r.peer, &r.l)
		if s.cfg.ByHost && s.src.AllowHost(ev.Host, 1, len(d.Data)) == 0 {
			r.p.Unget()
			s.in.Drop(relaykit.ReasonRateLimit, 1)
			r.l.rateLimited++
			continue
		}
		if d.Truncated {
			ev.Flags |= relaykit.FlagTruncated
		}
		if r.p.Full() {
			r.p.TryPush()
		}
	}
	for _, p := range r.producers {
		p.TryPush()
	}
	s.c.datagrams.Add(int64(len(batch)))
	r.l.addTo(&s.c)
}

// getReader takes a free reader state, or makes one.
func (s *Syslog) getReader() *udpReader {
	s.udpMu.Lock()
	if n := len(s.readers); n > 0 {
		r := s.readers[n-1]
		s.readers = s.readers[:n-1]
		s.udpMu.Unlock()
		return r
	}
	s.udpMu.Unlock()
	r := &udpReader{parser: syslog.NewParser(s.cfg.Parser), producers: make([]*engine.Producer, s.in.Workers())}
	for w := range r.producers {
		r.producers[w] = s.in.NewProducer(uint64(w))
	}
	return r
}

func (s *Syslog) putReader(r *udpReader) {
	s.udpMu.Lock()
	s.readers = append(s.readers, r)
	s.udpMu.Unlock()
}

// Close ends the input's pushes: a push waiting for room in the engine
// gives up (its events counted as relaykit.ReasonShutdownUnqueued), and
// every connection stops reading once its handler notices. It is what a
// program calls at its shutdown deadline if the engine's own hard
// deadline does not end those waits already; the graceful stop is the
// listeners' (see the package documentation, "Shutdown"). Close is
// idempotent and returns nil.
func (s *Syslog) Close() error { return s.close() }

// Stats returns a snapshot of the input's counters.
func (s *Syslog) Stats() Stats { return s.c.stats() }
