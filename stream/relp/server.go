package relp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaykit/relaykit/internal/cfgerr"
	"github.com/relaykit/relaykit/internal/version"
	"github.com/relaykit/relaykit/stream"
)

var (
	// ErrProtocol is wrapped by the errors of a RELP session whose
	// peer broke the protocol: a malformed frame (a data length that does
	// not match the data, a bad command, a transaction number out of
	// sequence), a command other than open, syslog and close, syslog
	// before open. The session is closed without answering the frame.
	ErrProtocol = errors.New("relp: protocol error")
	// ErrTooLarge is wrapped by the error of a RELP session whose peer
	// announced more data than [Config].MaxDataBytes.
	ErrTooLarge = errors.New("relp: frame too large")
	// ErrHandler is wrapped by the error of a RELP session whose
	// handler failed: the batch was not acknowledged and the session was
	// closed, so the client sends it again after reconnecting.
	ErrHandler = errors.New("relp: handler failed")
)

// Defaults of [Config].
const (
	// DefaultWindow is rsyslog's default RELP window (omrelp
	// windowSize, librelp RELP_DFLT_WINDOW_SIZE): 128 frames.
	DefaultWindow = 128
	// DefaultMaxDataBytes is librelp's default maximum data size
	// (imrelp maxDataSize): 128 KiB.
	DefaultMaxDataBytes = 128 << 10
	// DefaultRELPWriteTimeout bounds the writing of answers.
	DefaultRELPWriteTimeout = 30 * time.Second
)

// Message is one syslog frame of a RELP session.
type Message struct {
	// Txnr is the frame's transaction number (1 to 999999999).
	Txnr int
	// Data is the syslog message as sent (DATA of the frame, possibly
	// empty), in bytes. It points into the session's buffer and is valid
	// only until the handler returns; copy what you keep.
	Data []byte
}

// Handler accepts a batch of syslog messages of one session, in the
// order received. Returning nil means they are accepted under the
// delivery contract (delivered, durably accepted, or dead-lettered): each
// is then answered "200 OK". Returning an error closes the session
// without answering any of them, so the client sends them again after it
// reconnects. While the handler blocks, the session reads nothing more
// and answers nothing: back-pressure reaches the client through its
// window. ctx ends when [Server.Close] is called. c is the session's
// connection (for its [stream.Conn.Source]); the handler must not read from or
// write to it.
type Handler func(ctx context.Context, c *stream.Conn, batch []Message) error

// Hooks observe RELP sessions. They run synchronously on the
// sessions' goroutines: they must be fast, safe for concurrent use and
// must not retain their arguments.
type Hooks struct {
	// OnBatch is called after a batch was accepted and answered, with the
	// number of frames, their data bytes and the handler's duration.
	OnBatch func(source netip.Addr, frames, bytes int, took time.Duration)
	// OnSessionEnd is called when a session ends, with the frames it
	// acknowledged and why it ended: nil after the client's close, or an
	// error (io.EOF when the client went away, [stream.ErrClosed] on shutdown,
	// the listener's deadline errors, or one wrapping [ErrProtocol],
	// [ErrTooLarge] or [ErrHandler]).
	OnSessionEnd func(source netip.Addr, acked int64, err error)
}

// Config configures a [Server]. Handler is required; every other zero
// field means the documented default.
type Config struct {
	// Name identifies the server in log records and errors.
	Name string
	// Handler accepts the batches of syslog messages of every session;
	// see [Handler]. Required.
	Handler Handler
	// Window is the most syslog frames handed to the handler as one batch:
	// the session collects the frames already received, up to Window,
	// and answers them together. rsyslog's omrelp keeps at most its own
	// window (128 by default) unanswered. Zero means 128.
	Window int
	// MaxDataBytes is the largest DATALEN accepted, in bytes; a frame
	// announcing more closes the session ([ErrTooLarge]), as librelp
	// does. The session's buffer never grows past it plus a header. Zero
	// means 128 KiB, librelp's default.
	MaxDataBytes int
	// WriteTimeout bounds each write of answers to the client: a client
	// that does not read them is cut then. Zero means 30 s.
	WriteTimeout time.Duration
	// Hooks observe batches and session ends. Nil hooks cost nothing.
	Hooks Hooks
	// Logger receives one record per session ended by an error other
	// than the client going away or shutdown. Nil means no logging.
	Logger *slog.Logger
}

// Stats is a snapshot of a [Server]'s counters. Every byte read
// by its sessions is in exactly one of MessageBytes, OverheadBytes,
// DiscardedBytes and IncompleteBytes.
type Stats struct {
	// Sessions counts sessions served; Open those running now.
	Sessions, Open int64
	// Frames counts syslog frames handed to the handler; MessageBytes
	// their data, in bytes. Batches counts handler calls.
	Frames, MessageBytes, Batches int64
	// Acked counts syslog frames answered "200 OK" (accepted by the
	// handler and the answer written).
	Acked int64
	// OverheadBytes counts frame headers and trailers and the frames of
	// other commands (open, close), in bytes.
	OverheadBytes int64
	// DiscardedBytes counts bytes read but not handed over: the rest of
	// the buffer when a session is closed for a protocol error or a
	// handler failure, in bytes.
	DiscardedBytes int64
	// IncompleteFrames counts sessions that ended inside a frame (reset,
	// deadline, eviction, shutdown); IncompleteBytes the bytes of those
	// frames.
	IncompleteFrames, IncompleteBytes int64
	// ProtocolErrors counts sessions closed for a protocol error
	// ([ErrProtocol]); TooLarge those closed for a frame over
	// MaxDataBytes ([ErrTooLarge]).
	ProtocolErrors, TooLarge int64
	// HandlerErrors counts batches the handler refused; Unacknowledged
	// the frames of those batches (the client sends them again after it
	// reconnects: no duplicate, they were not accepted).
	HandlerErrors, Unacknowledged int64
	// AcceptedUnanswered counts frames the handler accepted whose answer
	// could not be written (the connection broke): the client sends them
	// again, so they are accepted twice. At most Window per broken
	// session; this is the bound on duplicates this process can see (a
	// crash between acceptance and answer makes the same duplicates
	// without a count).
	AcceptedUnanswered int64
	// ServerCloses counts "serverclose" hints sent (shutdown, eviction,
	// timeouts).
	ServerCloses int64
}

// Server serves RELP (Reliable Event Logging Protocol, rsyslog's
// omrelp/imrelp, specified in librelp's doc/relp.md) sessions on the
// connections of a [stream.Listener]: [Server.ServeConn] is its
// [stream.Config].Handler. Its methods are safe for concurrent use; each session
// runs in its connection's goroutine. See the package documentation.
type Server struct {
	cfg    Config
	h      Handler
	ctx    context.Context
	cancel context.CancelFunc
	pool   sync.Pool // *relpSession

	sessions, open, frames, messageBytes, batches, acked, overhead atomic.Int64
	discarded, incompleteFrames, incompleteBytes, protocolErrors   atomic.Int64
	tooLarge, handlerErrors, unacked, acceptedUnanswered, closes   atomic.Int64
}

// New returns a RELP server handing batches to cfg.Handler, or a
// *relaykit.FieldError wrapping [stream.ErrInvalidConfig]. It starts no
// goroutine: pass [Server.ServeConn] to a [stream.Listener] as its
// Handler.
func New(cfg Config) (*Server, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, h: cfg.Handler}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// Validate reports whether [New] would accept cfg: nil, or a
// *relaykit.FieldError wrapping [stream.ErrInvalidConfig].
func (cfg Config) Validate() error { return cfg.fill() }

func (cfg *Config) fill() error {
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(stream.ErrInvalidConfig, field, format, args...)
	}
	switch {
	case cfg.Handler == nil:
		return bad("Handler", "required")
	case cfg.Window < 0:
		return bad("Window", "%d must not be negative", cfg.Window)
	case cfg.MaxDataBytes < 0:
		return bad("MaxDataBytes", "%d must not be negative", cfg.MaxDataBytes)
	case cfg.WriteTimeout < 0:
		return bad("WriteTimeout", "%s must not be negative", cfg.WriteTimeout)
	}
	if cfg.Window == 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.MaxDataBytes == 0 {
		cfg.MaxDataBytes = DefaultMaxDataBytes
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = DefaultRELPWriteTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Close cancels the ctx of handler calls in progress and to come; their
// batches, if refused, are sent again by the clients. Sessions end when
// the listener shuts down. Close is idempotent and returns nil.
func (s *Server) Close() error {
	s.cancel()
	return nil
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	return Stats{
		Sessions: s.sessions.Load(), Open: s.open.Load(), Frames: s.frames.Load(), MessageBytes: s.messageBytes.Load(),
		Batches: s.batches.Load(), Acked: s.acked.Load(), OverheadBytes: s.overhead.Load(), DiscardedBytes: s.discarded.Load(),
		IncompleteFrames: s.incompleteFrames.Load(), IncompleteBytes: s.incompleteBytes.Load(),
		ProtocolErrors: s.protocolErrors.Load(), TooLarge: s.tooLarge.Load(), HandlerErrors: s.handlerErrors.Load(),
		Unacknowledged: s.unacked.Load(), AcceptedUnanswered: s.acceptedUnanswered.Load(), ServerCloses: s.closes.Load(),
	}
}

// ServeConn runs one RELP session on c until the client closes it, the
// listener ends it (shutdown, eviction, idle or frame deadline), the
// client breaks the protocol, or the handler fails. It is a [Handler].
func (s *Server) ServeConn(c *stream.Conn) {
	s.sessions.Add(1)
	s.open.Add(1)
	defer s.open.Add(-1)
	ss := s.session(c)
	err := ss.run()
	ss.end(err)
	if f := s.cfg.Hooks.OnSessionEnd; f != nil {
		f(c.Source(), ss.ackedTotal, err)
	}
	ss.c = nil
	c.TrackFrames(nil)
	s.pool.Put(ss)
}

func (s *Server) session(c *stream.Conn) *relpSession {
	ss, _ := s.pool.Get().(*relpSession)
	if ss == nil {
		ss = &relpSession{s: s, buf: make([]byte, min(64<<10, s.cfg.MaxDataBytes+relpMaxHeader+1))}
	}
	ss.c = c
	ss.start, ss.end_, ss.txnr, ss.opened, ss.readErr, ss.ackedTotal = 0, 0, 1, false, nil, 0
	c.TrackFrames(ss)
	return ss
}

// relpSession is one connection's state. It is used by the connection's
// goroutine only.
type relpSession struct {
	s          *Server
	c          *stream.Conn
	buf        []byte
	start      int
	end_       int
	txnr       int // the transaction number expected next
	opened     bool
	readErr    error
	batch      []Message
	out        []byte
	ackedTotal int64
}

// InFrame implements stream.FrameState: part of a frame is buffered.
func (ss *relpSession) InFrame() bool { return ss.start < ss.end_ }

// errNeedMore is next's answer when the buffer holds no complete frame
// and it may not read.
var errNeedMore = errors.New("need more")

// next returns the next frame and its length in bytes. It reads only
// when block is set (the batch is empty, so no message points into the
// buffer).
func (ss *relpSession) next(block bool) (relpFrame, int, error) {
	for {
		f, n, err := parseRELP(ss.buf[ss.start:ss.end_], ss.s.cfg.MaxDataBytes)
		if err != nil {
			return f, 0, err
		}
		if n > 0 {
			ss.start += n
			return f, n, nil
		}
		if !block {
			return f, 0, errNeedMore
		}
		if err := ss.fill(); err != nil {
			return f, 0, err
		}
	}
}

// fill reads more into the buffer, compacting and growing it up to one
// frame of MaxDataBytes.
func (ss *relpSession) fill() error {
	if ss.readErr != nil {
		return ss.readErr
	}
	if ss.start > 0 {
		ss.end_ = copy(ss.buf, ss.buf[ss.start:ss.end_])
		ss.start = 0
	}
	if ss.end_ == len(ss.buf) {
		limit := ss.s.cfg.MaxDataBytes + relpMaxHeader + 1
		if len(ss.buf) >= limit {
			// parseRELP refuses a frame longer than this before it
			// fills the buffer; this cannot happen.
			return fmt.Errorf("%w: frame longer than its buffer", ErrProtocol)
		}
		nb := make([]byte, min(2*len(ss.buf), limit))
		copy(nb, ss.buf[:ss.end_])
		ss.buf = nb
	}
	n, err := ss.c.Read(ss.buf[ss.end_:])
	ss.end_ += n
	if err != nil {
		ss.readErr = err
		if n > 0 {
			return nil
		}
		return err
	}
	return nil
}

// run serves the session until it ends, and returns why (nil after the
// client's close).
func (ss *relpSession) run() error {
	for {
		f, n, err := ss.next(len(ss.batch) == 0)
		if errors.Is(err, errNeedMore) {
			if err := ss.flush(); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			// Frames read before the error are still handed over.
			if ferr := ss.flush(); ferr != nil {
				return ferr
			}
			return err
		}
		s := ss.s
		if f.txnr != ss.txnr {
			s.discarded.Add(int64(n))
			_ = ss.flush()
			return &relpError{msg: fmt.Sprintf("RELP transaction number %d out of sequence, %d expected", f.txnr, ss.txnr)}
		}
		ss.txnr = relpNextTxnr(ss.txnr)
		switch string(f.cmd) {
		case relpCmdSyslog:
			if !ss.opened {
				s.discarded.Add(int64(n))
				return &relpError{msg: "RELP syslog command before open"}
			}
			s.overhead.Add(int64(n - len(f.data)))
			ss.batch = append(ss.batch, Message{Txnr: f.txnr, Data: f.data})
			if len(ss.batch) >= s.cfg.Window {
				if err := ss.flush(); err != nil {
					return err
				}
			}
		case relpCmdOpen:
			s.overhead.Add(int64(n))
			if err := ss.flush(); err != nil {
				return err
			}
			if err := ss.openSession(f); err != nil {
				return err
			}
		case relpCmdClose:
			s.overhead.Add(int64(n))
			if err := ss.flush(); err != nil {
				return err
			}
			ss.out = appendRsp(ss.out[:0], f.txnr, relpRspOK)
			_ = ss.write(ss.out)
			return nil
		default:
			s.discarded.Add(int64(n))
			_ = ss.flush()
			return &relpError{msg: fmt.Sprintf("RELP command %q is not served (open, syslog and close are)", f.cmd)}
		}
	}
}

// openSession answers an open command with the offers the session uses.
func (ss *relpSession) openSession(f relpFrame) error {
	if ss.opened {
		// librelp answers a repeated open the same way.
		ss.out = appendRsp(ss.out[:0], f.txnr, "200 connection already open - ignored")
		return ss.write(ss.out)
	}
	v, syslog := relpOffers(f.data)
	var msg string
	switch {
	case v < 0:
		msg = "500 relp_version offer missing"
	case !syslog:
		msg = "500 required command not supported by client"
	}
	if msg != "" {
		ss.out = appendRsp(ss.out[:0], f.txnr, msg)
		_ = ss.write(ss.out)
		return &relpError{msg: "RELP open refused: " + msg[4:]}
	}
	// Answer the client's version (librelp speaks 0, the specification
	// 1): a client refuses a higher one.
	ss.out = appendRsp(ss.out[:0], f.txnr, "200 OK\nrelp_version="+string(rune('0'+min(v, 1)))+
		"\nrelp_software="+relpSoftwareName+","+version.Version+",https://github.com/relaykit/relaykit\ncommands=syslog")
	ss.opened = true
	return ss.write(ss.out)
}

// flush hands the batch to the handler and answers its frames.
func (ss *relpSession) flush() error {
	n := len(ss.batch)
	if n == 0 {
		return nil
	}
	s := ss.s
	bytes := 0
	for i := range ss.batch {
		bytes += len(ss.batch[i].Data)
	}
	s.frames.Add(int64(n))
	s.messageBytes.Add(int64(bytes))
	s.batches.Add(1)
	start := time.Now()
	err := s.h(s.ctx, ss.c, ss.batch)
	took := time.Since(start)
	if err != nil {
		s.handlerErrors.Add(1)
		s.unacked.Add(int64(n))
		ss.batch = ss.batch[:0]
		return fmt.Errorf("%w: %w", ErrHandler, err)
	}
	ss.out = ss.out[:0]
	for i := range ss.batch {
		ss.out = appendRsp(ss.out, ss.batch[i].Txnr, relpRspOK)
	}
	ss.batch = ss.batch[:0]
	if err := ss.write(ss.out); err != nil {
		s.acceptedUnanswered.Add(int64(n))
		return err
	}
	s.acked.Add(int64(n))
	ss.ackedTotal += int64(n)
	if f := s.cfg.Hooks.OnBatch; f != nil {
		f(ss.c.Source(), n, bytes, took)
	}
	return nil
}

func (ss *relpSession) write(b []byte) error {
	_ = ss.c.Conn.SetWriteDeadline(time.Now().Add(ss.s.cfg.WriteTimeout))
	_, err := ss.c.Conn.Write(b)
	return err
}

// end accounts for the bytes left in the buffer, counts why the session
// ended and, when the server ends it, sends the serverclose hint.
func (ss *relpSession) end(err error) {
	s := ss.s
	rest := int64(ss.end_ - ss.start)
	ss.start, ss.end_ = 0, 0
	var re *relpError
	switch {
	case errors.As(err, &re):
		s.discarded.Add(rest)
		if re.tooLarge {
			s.tooLarge.Add(1)
		} else {
			s.protocolErrors.Add(1)
		}
	case errors.Is(err, ErrHandler):
		s.discarded.Add(rest)
	case rest > 0:
		s.incompleteFrames.Add(1)
		s.incompleteBytes.Add(rest)
	}
	switch {
	case err == nil, errors.Is(err, io.EOF):
	case errors.Is(err, stream.ErrClosed), errors.Is(err, stream.ErrEvicted), errors.Is(err, stream.ErrIdleTimeout),
		errors.Is(err, stream.ErrFrameTimeout), errors.Is(err, ErrHandler):
		// A hint, without waiting (librelp relpSessSrvDoDisconnect).
		if ss.c.Conn.SetWriteDeadline(time.Now().Add(time.Second)) == nil {
			if _, werr := io.WriteString(ss.c.Conn, relpServerClose); werr == nil {
				s.closes.Add(1)
			}
		}
		if !errors.Is(err, stream.ErrClosed) {
			s.cfg.Logger.Warn("RELP session ended", "input", s.cfg.Name, "source", ss.c.Source(), "error", err)
		}
	default:
		s.cfg.Logger.Warn("RELP session ended", "input", s.cfg.Name, "source", ss.c.Source(), "error", err)
	}
}
