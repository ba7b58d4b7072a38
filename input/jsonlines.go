package input

import (
	"log/slog"
	"strconv"

	"github.com/valyala/fastjson"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/internal/cfgerr"
	"github.com/relaykit/relaykit/sources"
	"github.com/relaykit/relaykit/storage/deadletter"
	"github.com/relaykit/relaykit/stream"
)

// JSONLinesConfig configures a [JSONLines] input. Input is required;
// every other zero field means the documented default.
type JSONLinesConfig struct {
	// Name names the input in log records and dead letters. Zero means
	// Input's name.
	Name string
	// Input is the engine input the events go to. Required.
	Input *engine.Input
	// MaxLineSize is the largest line accepted, in bytes; a longer one is
	// refused as invalid (cut at the limit, the rest discarded). Zero
	// means [DefaultMaxLineSize] (1 MiB).
	MaxLineSize int
	// SourceType is the events' sourcetype. Zero means "json".
	SourceType string
	// ReadSize and ReadBudget are as for [SyslogConfig].
	ReadSize   int
	ReadBudget *stream.ReadBudget
	// Sources is the source tracker as this input sees it, keyed by the
	// sender's address: each line counts for its sender, whose connection
	// is paced over its rate limit or, with DropOverLimit, loses its
	// excess. The zero value tracks nothing.
	Sources       sources.Input
	DropOverLimit bool
	// DeadLetters receives the lines refused (not valid JSON, or longer
	// than MaxLineSize), with the input's name, the sender's address and
	// the reason ("invalid json", "line longer than N bytes"). Nil means
	// they are only counted ([Stats].Invalid, and the engine's
	// relaykit.ReasonInvalidJSON).
	DeadLetters *deadletter.Writer
	// Ack, when not nil, makes the input acknowledge what it reads: before
	// each read of a connection, once the lines read since its previous
	// acknowledgement (LF-terminated, blank and refused ones included)
	// are finished (the engine's Sink accepted them: delivered, durably
	// accepted or dead-lettered), Ack is called with c and their number,
	// to answer the sender (for example "ok N\n"). When they cannot be
	// finished (the Sink refused a batch holding some, or the shutdown
	// deadline came first), or Ack fails, the connection is closed
	// without an answer for them: a sender that keeps each line until an
	// answer covers it, and sends the rest again on a new connection,
	// loses nothing. Ack runs on the connection's goroutine; it must not
	// read from c. Nil means the input never writes to a connection.
	Ack func(c *stream.Conn, lines int) error
	// Logger logs state changes (dead-letter writes failing and working
	// again, the first push that gave up at shutdown), never lines. Nil
	// means no logging.
	Logger *slog.Logger
}

// Validate reports whether [NewJSONLines] would accept cfg: nil, or a
// *relaykit.FieldError wrapping [ErrInvalidConfig].
func (cfg JSONLinesConfig) Validate() error { return cfg.fill() }

func (cfg *JSONLinesConfig) fill() error {
	switch {
	case cfg.Input == nil:
		return cfgerr.New(ErrInvalidConfig, "Input", "required")
	case cfg.MaxLineSize < 0:
		return cfgerr.New(ErrInvalidConfig, "MaxLineSize", "%d must not be negative", cfg.MaxLineSize)
	case cfg.ReadSize < 0:
		return cfgerr.New(ErrInvalidConfig, "ReadSize", "%d must not be negative", cfg.ReadSize)
	}
	if cfg.MaxLineSize == 0 {
		cfg.MaxLineSize = DefaultMaxLineSize
	}
	if cfg.SourceType == "" {
		cfg.SourceType = "json"
	}
	return nil
}

// JSONLines is an input of JSON lines over stream connections: each
// LF-terminated line (a CR before the LF removed, blank lines skipped)
// that is a valid JSON value (fastjson's validation) becomes an event
// whose message is the line, whose host is the sender's address and whose
// sourcetype is SourceType; the others are refused, dead-lettered and
// counted. Mount [JSONLines.ServeConn] as a stream.Listener's handler.
// With [JSONLinesConfig].Ack it acknowledges each read once its lines are
// finished. See the package documentation.
//
// A JSONLines is safe for concurrent use by multiple goroutines.
type JSONLines struct {
	core
	cfg        JSONLinesConfig
	sourceType []byte
	tooLong    string // the dead letters' reason for a cut line
}

// NewJSONLines returns a JSON-lines input for cfg, or a
// *relaykit.FieldError wrapping [ErrInvalidConfig]. It starts no
// goroutine.
func NewJSONLines(cfg JSONLinesConfig) (*JSONLines, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	j := &JSONLines{cfg: cfg, sourceType: []byte(cfg.SourceType), tooLong: "line longer than " + strconv.Itoa(cfg.MaxLineSize) + " bytes"}
	j.core.init(cfg.Name, cfg.Input, cfg.Logger, jsonDecoder{j})
	j.maxFrame, j.framing, j.readSize, j.budget = cfg.MaxLineSize, stream.Delimited, cfg.ReadSize, cfg.ReadBudget
	j.src = cfg.Sources
	j.connCfg = sources.ConnConfig{Drop: cfg.DropOverLimit}
	j.ack = cfg.Ack
	return j, nil
}

// ServeConn reads one stream connection until it ends, as
// [Syslog.ServeConn] does, and, with Ack, answers for each read's lines
// once they are finished: a stream.Handler (stream.Config.Handler). When
// the listener ends the connection, the lines complete in what was read
// are still handed over and, with Ack, answered for, until [JSONLines.Close]
// or the engine's hard deadline.
func (j *JSONLines) ServeConn(c *stream.Conn) {
	j.serve(c, noState)
}

func noState() any { return nil }

// jsonDecoder validates the lines of a stream connection.
type jsonDecoder struct{ j *JSONLines }

func (d jsonDecoder) frame(cs *connState, line []byte, fl stream.Flags) {
	j := d.j
	cut := fl&stream.Truncated != 0
	if cut || fastjson.ValidateBytes(line) != nil {
		reason := "invalid json"
		if cut {
			reason = j.tooLong
		}
		cs.l.invalid++
		j.in.Drop(relaykit.ReasonInvalidJSON, 1)
		j.deadLetter(cs, reason, line)
		return
	}
	ev := cs.take()
	if ev == nil {
		return
	}
	ev.Raw = append(ev.Raw, line...)
	ev.Host = append(ev.Host, cs.peer...)
	ev.SourceType = append(ev.SourceType, j.sourceType...)
	cs.charge(ev, len(line))
}

// deadLetter writes a refused line to the dead letters.
func (j *JSONLines) deadLetter(cs *connState, reason string, line []byte) {
	if j.cfg.DeadLetters == nil {
		return
	}
	err := j.cfg.DeadLetters.Write(deadletter.Record{Input: j.name, Peer: string(cs.peer), Reason: reason, Line: line})
	if err != nil {
		cs.l.deadLetterErrors++
		j.letters.Fail(j.log, "input: dead letters not written (further failures are counted, not logged)", "input", j.name, "err", err)
		return
	}
	j.letters.OK(j.log, "input: dead letters written again", "input", j.name)
}

// Close ends the input's pushes and acknowledgement waits, as
// [Syslog.Close] does: a connection waiting for its lines to finish closes
// without answering for them. Close is idempotent and returns nil.
func (j *JSONLines) Close() error { return j.close() }

// Stats returns a snapshot of the input's counters.
func (j *JSONLines) Stats() Stats { return j.c.stats() }
