package input

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/internal/episode"
	"github.com/relaykit/relaykit/sources"
	"github.com/relaykit/relaykit/stream"
)

// ErrInvalidConfig is wrapped by the errors [NewSyslog], [NewJSONLines]
// and the Configs' Validate methods return for a bad Config: each is a
// *relaykit.FieldError naming the field.
var ErrInvalidConfig = errors.New("input: invalid config")

// Stats is a snapshot of an input's counters. Counters only grow.
type Stats struct {
	// Connections counts stream connections served; Datagrams the UDP
	// datagrams handled.
	Connections, Datagrams int64
	// Frames counts the frames (syslog messages, JSON lines) read from
	// streams, and Bytes the bytes of frames and datagrams, as read
	// (before parsing).
	Frames, Bytes int64
	// Truncated counts frames cut at the maximum message size and
	// datagrams longer than the listener's: a syslog one is handed over
	// flagged relaykit.FlagTruncated, a JSON line is refused as invalid.
	Truncated int64
	// ParseErrors counts syslog messages that could not be parsed, handed
	// over raw with relaykit.FlagParseError (never dropped).
	ParseErrors int64
	// Invalid counts JSON lines refused (not valid JSON, or cut at
	// MaxLineSize): dropped as relaykit.ReasonInvalidJSON and written to
	// the dead letters. DeadLetterErrors counts those the dead-letter
	// writer failed to take.
	Invalid, DeadLetterErrors int64
	// RateLimited counts events dropped because their source was over its
	// rate limit (UDP, and streams with DropOverLimit): dropped as
	// relaykit.ReasonRateLimit. (Events read after a push gave up at the
	// shutdown deadline are the engine's to count, as
	// relaykit.ReasonShutdownUnqueued, in its InputStats.)
	RateLimited int64
	// Acks counts acknowledgements written (JSON lines with Ack), and
	// AckedLines the lines they answered for.
	Acks, AckedLines int64
	// Framing are the stream framers' counts beyond the frames: what
	// they read, cut, discarded and could not complete (see
	// stream.FramerStats).
	Framing FramingStats
}

// FramingStats are the exceptional counts of an input's stream framers
// (stream.Counters), summed over its connections.
type FramingStats struct {
	// Reads counts reads of the connections (system calls on plain TCP).
	Reads int64
	// DiscardedBytes counts the bytes of frames cut at the maximum size
	// that were thrown away after the cut.
	DiscardedBytes int64
	// IncompleteFrames and IncompleteBytes count frames a connection broke
	// off (reset, deadline, eviction, shutdown) before they were complete.
	IncompleteFrames, IncompleteBytes int64
	// EmptyFrames counts delimiters with nothing before them; NULFrames
	// frames with a NUL inside; FramingErrors octet-counted frames with a
	// bad header.
	EmptyFrames, NULFrames, FramingErrors int64
}

// counters are an input's live totals, added to once per read (streams)
// or per batch (datagrams), not per event.
type counters struct {
	conns, datagrams, frames, bytes, truncated, parseErrors atomic.Int64
	invalid, deadLetterErrors, rateLimited                  atomic.Int64
	acks, ackedLines                                        atomic.Int64
	framing                                                 stream.Counters
}

func (c *counters) stats() Stats {
	return Stats{
		Connections: c.conns.Load(), Datagrams: c.datagrams.Load(), Frames: c.frames.Load(), Bytes: c.bytes.Load(),
		Truncated: c.truncated.Load(), ParseErrors: c.parseErrors.Load(), Invalid: c.invalid.Load(),
		DeadLetterErrors: c.deadLetterErrors.Load(), RateLimited: c.rateLimited.Load(),
		Acks: c.acks.Load(), AckedLines: c.ackedLines.Load(),
		Framing: FramingStats{
			Reads: c.framing.Reads.Load(), DiscardedBytes: c.framing.DiscardedBytes.Load(),
			IncompleteFrames: c.framing.IncompleteFrames.Load(), IncompleteBytes: c.framing.IncompleteBytes.Load(),
			EmptyFrames: c.framing.EmptyFrames.Load(), NULFrames: c.framing.NULFrames.Load(), FramingErrors: c.framing.FramingErrors.Load(),
		},
	}
}

// local are one connection's or one datagram batch's counts, added to the
// input's counters at once.
type local struct {
	frames, bytes, truncated, parseErrors, invalid, deadLetterErrors, rateLimited int64
}

func (l *local) addTo(c *counters) {
	if l.frames != 0 {
		c.frames.Add(l.frames)
	}
	if l.bytes != 0 {
		c.bytes.Add(l.bytes)
	}
	if l.truncated != 0 {
		c.truncated.Add(l.truncated)
	}
	if l.parseErrors != 0 {
		c.parseErrors.Add(l.parseErrors)
	}
	if l.invalid != 0 {
		c.invalid.Add(l.invalid)
	}
	if l.deadLetterErrors != 0 {
		c.deadLetterErrors.Add(l.deadLetterErrors)
	}
	if l.rateLimited != 0 {
		c.rateLimited.Add(l.rateLimited)
	}
	*l = local{}
}

// decoder turns one frame of a stream connection into an event of the
// connection's producer, or refuses it (counting why in l).
type decoder interface {
	// frame handles one frame; fl are its framer flags.
	frame(cs *connState, frame []byte, fl stream.Flags)
}

// core is what the stream inputs share: the engine input, the framing
// settings, source tracking, the push context and the counters.
type core struct {
	name     string
	in       *engine.Input
	maxFrame int
	framing  stream.Framing
	readSize int
	budget   *stream.ReadBudget
	src      sources.Input
	connCfg  sources.ConnConfig
	ack      func(c *stream.Conn, lines int) error
	log      *slog.Logger
	dec      decoder

	// ctx bounds pushes and acknowledgement waits: Close ends it.
	ctx    context.Context
	cancel context.CancelFunc

	shard   atomic.Uint64 // the next stream connection's shard
	pool    sync.Pool     // *connState
	c       counters
	gaveUp  episode.Log // pushes that gave up: logged once
	letters episode.Log // dead-letter writes failing
}

func (k *core) init(name string, in *engine.Input, log *slog.Logger, dec decoder) {
	k.name, k.in, k.dec = name, in, dec
	if k.name == "" {
		k.name = in.Name()
	}
	k.log = log
	if k.log == nil {
		k.log = slog.New(slog.DiscardHandler)
	}
	k.ctx, k.cancel = context.WithCancel(context.Background())
}

// close ends the push context.
func (k *core) close() error {
	k.cancel()
	return nil
}

// connState is one stream connection's state, pooled between
// connections: its framer keeps its buffer class, its events their
// buffers.
type connState struct {
	k    *core
	c    *stream.Conn
	pace context.Context // c's: a paced source's wait ends with the connection's reading
	p    *engine.Producer
	fr   *stream.Framer
	sc   *sources.Conn // nil: tracking off
	peer []byte        // the sender's address, the events' host when they name none
	l    local

	// With acknowledgements: the lines read since the last answer (blank
	// ones included), the framer's count of them at that answer, and the
	// producer's mark then.
	lines    int64
	framed   int64
	lastMark engine.Mark
	err      error // the failure that ends the connection without an answer

	dec any // the decoder's per-connection state (a syslog parser)
}

// serve reads c until it ends: frames, decodes, hands each read's events
// to the engine before the next read, and, with acknowledgements, answers
// for them once they are finished.
func (k *core) serve(c *stream.Conn, newState func() any) {
	k.c.conns.Add(1)
	cs, _ := k.pool.Get().(*connState)
	if cs == nil {
		cs = &connState{k: k, dec: newState()}
	}
	cs.c, cs.pace = c, c.Context()
	cs.p = k.in.NewProducer(k.shard.Add(1))
	cs.sc = k.src.Conn(c.Source(), k.connCfg)
	cs.peer = appendPeer(cs.peer[:0], c)
	if cs.fr == nil {
		cs.fr = stream.NewFramer(c, stream.FramerConfig{
			MaxFrame: k.maxFrame, Framing: k.framing, Counters: &k.c.framing,
			ReadSize: k.readSize, Budget: k.budget, BeforeRead: cs.beforeRead,
		})
	} else {
		cs.fr.Reset(c)
	}
	if k.ack != nil {
		cs.lastMark = cs.p.Mark()
	}
	for {
		frame, fl, err := cs.fr.Next()
		if err != nil {
			break // the complete frames read with the error have been returned
		}
		cs.l.frames++
		cs.l.bytes += int64(len(frame))
		if fl&stream.Truncated != 0 {
			cs.l.truncated++
		}
		k.dec.frame(cs, frame, fl)
	}
	// What the last read held goes to the engine, and is answered for.
	if cs.err == nil {
		cs.settle()
	}
	cs.l.addTo(&k.c)
	cs.sc.Close()
	cs.p.Release()
	cs.fr.Release()
	cs.c, cs.pace, cs.p, cs.sc, cs.err, cs.lines, cs.framed = nil, nil, nil, nil, nil, 0, 0
	k.pool.Put(cs)
}

// appendPeer appends c's source address (the sender a PROXY header named,
// or the peer), or its remote address when it has none.
func appendPeer(b []byte, c *stream.Conn) []byte {
	if s := c.Source(); s.IsValid() {
		return s.AppendTo(b)
	}
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().AppendTo(b)
	}
	return append(b, c.RemoteAddr().String()...)
}

// beforeRead runs before each read of the connection, which may wait:
// the events of the previous read go to the engine, acknowledged ones are
// answered for, and a paced source waits its turn.
func (cs *connState) beforeRead() error {
	cs.l.addTo(&cs.k.c)
	if cs.err == nil {
		cs.settle()
	}
	if cs.err != nil {
		return cs.err
	}
	return cs.sc.BeforeRead(cs.pace)
}

// settle pushes the pending events and, acknowledging, waits until the
// lines read since the last answer are finished and answers for them. A
// failure is kept in cs.err: the connection ends without an answer for
// them.
func (cs *connState) settle() {
	k := cs.k
	if err := cs.p.Flush(k.ctx); err != nil {
		cs.gaveUp(err)
		cs.err = err // the connection is not read again
		return
	}
	if k.ack == nil {
		return
	}
	st := cs.fr.Stats()
	framed := st.Frames + st.EmptyFrames
	cs.lines += framed - cs.framed
	cs.framed = framed
	if cs.lines == 0 {
		return
	}
	m := cs.p.Mark()
	if err := m.Since(cs.lastMark).Wait(k.ctx); err != nil {
		cs.err = err
		return
	}
	if err := k.ack(cs.c, int(cs.lines)); err != nil {
		cs.err = err
		return
	}
	k.c.acks.Add(1)
	k.c.ackedLines.Add(cs.lines)
	cs.lines, cs.lastMark = 0, m
}

// gaveUp notes a push that gave up: the events it held are counted by
// the engine (shutdown_unqueued); the first is logged.
func (cs *connState) gaveUp(err error) {
	cs.k.gaveUp.Fail(cs.k.log, "input: a push gave up (input closed or engine stopped); what is read from now on is dropped and counted",
		"input", cs.k.name, "err", err)
}

// take returns the event to fill for one frame, or nil when a push has
// failed already (the frame is counted as dropped, shutdown_unqueued).
func (cs *connState) take() *relaykit.Event {
	if cs.p.Err() != nil {
		cs.k.in.Drop(relaykit.ReasonShutdownUnqueued, 1)
		return nil
	}
	return cs.p.Event()
}

// charge counts ev (n bytes read) for its source and reports whether it
// may be handed over; over its source's limit in drop mode it is given
// back and counted. Then, when the producer's slab is full, it pushes.
func (cs *connState) charge(ev *relaykit.Event, n int) {
	if !cs.sc.Event(ev.Host, n) {
		cs.p.Unget()
		cs.k.in.Drop(relaykit.ReasonRateLimit, 1)
		cs.l.rateLimited++
		return
	}
	if cs.p.Full() {
		if err := cs.p.Push(cs.k.ctx); err != nil {
			cs.gaveUp(err) // the engine counted what it did not take
		}
	}
}
