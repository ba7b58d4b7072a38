package stream

import (
	"bytes"
	"errors"
	"io"
	"sync/atomic"
)

// Framing selects how a [Framer] finds frame boundaries (RFC 6587).
type Framing uint8

const (
	// Auto decides per connection, from its first frame: octet counting
	// when the stream starts with "LEN SP <" (a non-zero digit, at most 10
	// digits, a space, then the '<' of a syslog PRI), delimited framing
	// when it starts with anything but "LEN SP". A first frame "LEN SP x"
	// with x not '<' is read by what follows it: as an octet-counted frame,
	// which decides octet counting, when its LEN bytes hold no LF (or an LF
	// as their last byte); as a line, leaving the decision to the next
	// frame, when an LF comes earlier. Once decided, the framing is kept
	// for the life of the framer.
	Auto Framing = iota
	// OctetCounting reads every frame as "LEN SP MSG" (RFC 6587 section
	// 3.4.1); MSG may hold any bytes.
	OctetCounting
	// Delimited reads frames terminated by a trailer (RFC 6587 section
	// 3.4.2): LF, or NUL for senders that end their frames with NUL, as
	// decided by the first frame (see the package documentation). A CR
	// before the LF is removed.
	Delimited
)

// String returns "auto", "octet-counting" or "delimited".
func (f Framing) String() string {
	switch f {
	case OctetCounting:
		return "octet-counting"
	case Delimited:
		return "delimited"
	}
	return "auto"
}

// Flags describe a frame returned by [Framer.Next].
type Flags uint8

const (
	// Truncated means the frame was longer than [FramerConfig].MaxFrame and
	// was cut there; the rest of it was discarded (counted in
	// [FramerStats].DiscardedBytes), or the stream ended inside an
	// octet-counted frame.
	Truncated Flags = 1 << iota
	// FramingError means an octet-counted connection sent a frame whose
	// header is not "LEN SP" with 1 <= LEN <= [FramerConfig].MaxOctetCount.
	// The frame ends at the next LF or at the next "LEN SP <" (where the
	// framer resynchronises), whichever comes first, and octet counting
	// resumes there (see the package documentation, Framing).
	FramingError
)

// FramerConfig configures a [Framer].
type FramerConfig struct {
	// MaxFrame is the largest frame returned, in bytes; longer frames are
	// cut there and flagged [Truncated]. The framer's buffer never grows
	// past the larger of ReadSize and MaxFrame plus a few bytes of header.
	// Zero means 64 KiB.
	MaxFrame int
	// Framing selects octet counting, delimited framing, or detection per
	// connection. Zero means [Auto]. Use [Delimited] for JSON lines.
	Framing Framing
	// MaxOctetCount is the largest length an octet-counted header may
	// announce, in bytes: a larger one is taken as a framing error rather
	// than a frame to discard (rsyslog's MaxFrameSize, 200000 by default,
	// plays the same role). A frame announced between MaxFrame and
	// MaxOctetCount is cut at MaxFrame and the rest discarded. Zero means
	// the larger of 16 × MaxFrame and 1 MiB.
	MaxOctetCount int64
	// Counters, when not nil, receives the framer's exceptional events as
	// they happen (atomically), so the framers of many connections can feed
	// one set of live totals. The framer keeps its own counts in [Framer.Stats]
	// either way.
	Counters *Counters
	// ReadSize is the most the framer asks for in one read, in bytes: its
	// buffer starts at 4 KiB and grows towards ReadSize while reads come
	// back full, and shrinks again when they stay small (see [ReadBudget]).
	// It is rounded up to a power of two between 4 KiB and 1 MiB. Zero
	// means [DefaultReadSize] (64 KiB).
	ReadSize int
	// Budget, when not nil, bounds the read buffers of every framer that
	// shares it; see [ReadBudget]. Call [Framer.Release] when the
	// connection ends, to give the buffer back. Nil means each framer is
	// bounded by ReadSize alone.
	Budget *ReadBudget
	// BeforeRead, when not nil, is called each time the framer is about to
	// read from its reader, a read that may block: every frame complete in
	// its buffer has been returned by then. It is where a caller that
	// gathers the frames of one read hands them on (to a queue, in one
	// batch) before waiting for more. An error it returns ends the stream
	// as a read error does: the reader is not read again, the bytes of an
	// incomplete frame are counted, and Next returns the error.
	BeforeRead func() error
}

// FramerStats are one framer's counts. Every byte read from the stream is
// in exactly one of FrameBytes, OverheadBytes, DiscardedBytes and
// IncompleteBytes.
type FramerStats struct {
	Frames         int64 // frames returned by Next
	FrameBytes     int64 // bytes of the frames returned, in bytes
	OverheadBytes  int64 // octet-count headers, trailers (LF, CR, NUL) and empty frames, in bytes
	Truncated      int64 // frames cut at MaxFrame (flag Truncated)
	DiscardedBytes int64 // bytes of cut frames thrown away after the cut, in bytes
	// IncompleteFrames counts frames the stream broke off (read error:
	// reset, deadline, eviction, shutdown) before they were complete; their
	// IncompleteBytes were dropped, never returned.
	IncompleteFrames int64
	IncompleteBytes  int64
	EmptyFrames      int64 // delimiters with nothing before them (LF, CRLF, NUL)
	NULFrames        int64 // frames returned with a NUL inside (LF-terminated connections keep NUL as data)
	FramingErrors    int64 // octet-counted frames with a bad header (flag FramingError, or header digits discarded)
	// Reads counts the calls to the reader's Read, each a system call on
	// a plain TCP connection: bytes read divided by Reads is the bytes
	// per read.
	Reads int64
}

// Counters are live totals fed by many framers: the exceptional events of
// [FramerStats] (everything but Frames, FrameBytes and OverheadBytes, which
// the caller counts on its hot path if it wants them), and the reads (one
// atomic add per read, not per frame). Safe for concurrent use; read the
// fields with Load.
type Counters struct {
	Reads            atomic.Int64
	Truncated        atomic.Int64
	DiscardedBytes   atomic.Int64
	IncompleteFrames atomic.Int64
	IncompleteBytes  atomic.Int64
	EmptyFrames      atomic.Int64
	NULFrames        atomic.Int64
	FramingErrors    atomic.Int64
}

// Framer splits a byte stream into frames: syslog over TCP or TLS with
// octet counting or LF/NUL trailers (RFC 6587), or JSON lines. It enforces
// the maximum frame size with bounded memory, decides the framing once per
// stream, and counts every byte it does not return (see [FramerStats]).
// Its read buffer follows the stream's pace (see [ReadBudget]): large
// reads while data waits, 4 KiB when the stream is quiet.
//
// A Framer must not be used from concurrent goroutines; use one per
// connection. Once warm, Next does not allocate.
type Framer struct {
	r            io.Reader
	conn         *Conn
	buf          []byte
	bufp         *[]byte // buf's pool entry; nil for a buffer of no size class
	start, end   int
	readMax      int  // ReadSize
	full         bool // the last read filled the room it was given: grow
	sparse       int  // reads in a row that filled less than an eighth of buf
	budget       *ReadBudget
	before       func() error
	max          int
	maxAnnounced int64
	mode         Framing
	cfgMode      Framing
	trailer      byte // 0 undecided, '\n' LF only, 0xff LF or NUL
	afterNUL     bool // the last frame ended with NUL: an LF right after it is part of its trailer
	inBody       bool // an octet-counted header was read, its message is awaited
	resync       bool // a bad frame ended at a digit run: choose which of its digits are the header
	resyncErr    bool // with resync: the run was itself a bad header, not yet counted
	runBad       bool // the digit run at start is no header: it starts a bad frame

	skip        int64 // bytes still to discard of an oversized octet-counted frame
	skipToDelim bool  // discard until the next delimiter (oversized delimited frame)
	skipToHdr   bool  // discard until the next LF or "LEN SP <" (oversized bad octet-counted frame)
	prevDigit   bool  // while skipToHdr: the last byte discarded was a digit
	err         error // sticky read error, reported once the buffer is used up

	st FramerStats
	c  *Counters
}

const (
	// framerHeader is the room past MaxFrame the buffer may grow to: "LEN
	// SP" in front of a max-sized frame, and the look-ahead that
	// resynchronisation needs (a digit run of up to maxRun digits, SP and
	// '<' starting at MaxFrame; see Framer.boundary and Framer.resyncHeader).
	framerHeader = 16
	trailerAny   = 0xff
	// maxRun is the longest digit run in front of " <" taken as the place
	// where a new octet-counted frame may start after a framing error: up
	// to 10 header digits, after up to 3 digits that ended the bad frame.
	maxRun = 13
	// undecided is what detect returns for a first frame "LEN SP x" with x
	// not '<': it is read as a line or as an octet-counted frame by what
	// follows (undecidedFrame).
	undecided Framing = 0xff
)

// NewFramer returns a framer reading from r. When r is a [*Conn], the
// framer tells it whether a frame is in progress, which is what
// [Config].FrameTimeout measures.
func NewFramer(r io.Reader, cfg FramerConfig) *Framer {
	if cfg.MaxFrame <= 0 {
		cfg.MaxFrame = 64 << 10
	}
	if cfg.MaxOctetCount <= 0 {
		cfg.MaxOctetCount = max(16*int64(cfg.MaxFrame), 1<<20)
	}
	f := &Framer{r: r, max: cfg.MaxFrame, maxAnnounced: cfg.MaxOctetCount, mode: cfg.Framing, cfgMode: cfg.Framing, c: cfg.Counters,
		readMax: readSizeOf(cfg.ReadSize), budget: cfg.Budget, before: cfg.BeforeRead}
	if c, ok := r.(*Conn); ok {
		f.conn = c
		c.fr = f
	}
	f.setBuf(minRead)
	f.take(minRead)
	return f
}

// Reset discards the framer's state and counts and makes it read from r,
// keeping its buffer and configuration: a framer can serve connection after
// connection without allocating. After [Framer.Release] it takes a new
// buffer.
func (f *Framer) Reset(r io.Reader) {
	if f.conn != nil {
		f.conn.fr = nil
	}
	*f = Framer{r: r, buf: f.buf, bufp: f.bufp, max: f.max, maxAnnounced: f.maxAnnounced, mode: f.cfgMode, cfgMode: f.cfgMode, c: f.c,
		readMax: f.readMax, budget: f.budget, before: f.before}
	if c, ok := r.(*Conn); ok {
		f.conn = c
		c.fr = f
	}
	if f.buf == nil { // released
		f.setBuf(minRead)
		f.take(minRead)
	}
}

// Framing reports the framing in use: [Auto] until a frame decided it
// (the first one, unless it was a line "LEN SP x" with x not '<').
func (f *Framer) Framing() Framing { return f.mode }

// Stats returns the framer's counts so far.
func (f *Framer) Stats() FramerStats { return f.st }

// InFrame reports whether part of a frame has been read: what the frame
// deadline measures.
func (f *Framer) InFrame() bool {
	return f.start < f.end || f.inBody || f.skip > 0 || f.skipToDelim || f.skipToHdr
}

// fill reads more data into the buffer, compacting and growing it (up to
// max+header for a frame, up to readMax for read-ahead) as needed. It
// returns false when no more data can come.
func (f *Framer) fill() bool {
	if f.err != nil {
		return false
	}
	if f.before != nil {
		if err := f.before(); err != nil {
			f.err = err
			return false
		}
	}
	if f.start > 0 && f.start == f.end {
		f.start, f.end = 0, 0
	}
	if f.buf == nil { // used after Release
		f.setBuf(minRead)
		f.take(minRead)
	}
	f.resize()
	if f.end == len(f.buf) {
		if f.start > 0 {
			n := copy(f.buf, f.buf[f.start:f.end])
			f.start, f.end = 0, n
		} else if limit := f.max + framerHeader; len(f.buf) < limit {
			// A frame that does not fit: grow for it, budget or not.
			n := len(f.buf)
			want := min(2*n, limit)
			f.setBuf(want)
			f.take(want - n)
		}
	}
	if f.end == len(f.buf) {
		// Buffer full of an unfinished frame at its limit: the caller cuts.
		return true
	}
	for range 100 {
		room := len(f.buf) - f.end
		n, err := f.r.Read(f.buf[f.end:])
		f.end += n
		f.st.Reads++
		if f.c != nil {
			f.c.Reads.Add(1)
		}
		// Full: the reader had at least as much as the buffer had room
		// for (and the room was worth it); sparse: it had little.
		f.full = n == room && 2*room >= len(f.buf)
		if 8*n < len(f.buf) {
			f.sparse++
		} else {
			f.sparse = 0
		}
		if err != nil {
			f.err = err
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	f.err = io.ErrNoProgress
	return false
}

// Next returns the next frame and its flags. The frame is valid only until
// the next call to Next. At the end of the stream Next returns io.EOF; after
// a read error it returns that error, once the complete frames read before
// it have been returned (an incomplete frame is dropped and counted).
func (f *Framer) Next() ([]byte, Flags, error) {
	for {
		if !f.discard() {
			return nil, 0, f.finalErr()
		}
		f.skipEmpty()
		if f.start == f.end {
			if !f.fill() {
				return nil, 0, f.finalErr()
			}
			continue
		}
		if f.mode == Auto {
			mode, n, hdr := f.detect()
			switch mode {
			case OctetCounting:
				f.mode = OctetCounting
			case Delimited:
				f.mode = Delimited
			case undecided:
				frame, fl, done, err := f.undecidedFrame(n, hdr)
				if done {
					if frame == nil && err == nil {
						continue // an empty frame, counted
					}
					return frame, fl, err
				}
				if f.fill() {
					continue
				}
				// The stream ended inside the frame: a last line.
				return f.lastFrame(0)
			default:
				if f.fill() {
					continue
				}
				// The stream ended before the first header was complete:
				// what arrived is a delimited frame.
				f.mode = Delimited
			}
		}
		if f.mode == OctetCounting {
			var n int64
			var hdr int
			var ok bool
			if f.resync {
				decided, good := f.resyncHeader(false)
				if !decided {
					if f.fill() {
						continue
					}
					if !errors.Is(f.err, io.EOF) {
						return nil, 0, f.finalErr()
					}
					_, good = f.resyncHeader(true) // at the end of the stream it decides
				}
				if good {
					n, hdr, ok = f.octetHeader()
				}
			} else if !f.runBad {
				n, hdr, ok = f.octetHeader()
			}
			if ok {
				frame, fl, err := f.octetFrame(n, hdr)
				if frame == nil && err == nil {
					continue // an empty frame, counted
				}
				return frame, fl, err
			}
			if hdr < 0 {
				if f.fill() {
					continue
				}
				// The stream ended inside a header.
				frame, fl, err := f.lastFrame(FramingError)
				if err == nil {
					f.framingError()
				}
				return frame, fl, err
			}
			// A bad header: this frame ends at the next LF or at the next
			// "LEN SP <" header, whichever comes first.
			frame, fl, ok := f.badFrame()
			if !ok {
				if f.fill() {
					continue
				}
				frame, fl, err := f.lastFrame(FramingError)
				if err == nil {
					f.framingError()
				}
				return frame, fl, err
			}
			if frame == nil {
				continue // an empty frame, counted
			}
			f.framingError()
			return frame, fl | FramingError, nil
		}
		if frame, fl, ok := f.delimFrame(); ok {
			if frame == nil {
				continue // an empty frame, counted
			}
			return frame, fl, nil
		}
		if !f.fill() {
			return f.lastFrame(0)
		}
	}
}

func (f *Framer) framingError() {
	f.st.FramingErrors++
	if f.c != nil {
		f.c.FramingErrors.Add(1)
	}
}

// lastFrame handles the end of the stream with bytes buffered: after EOF
// they are a last frame without trailer; after a read error they are an
// incomplete frame, dropped and counted.
func (f *Framer) lastFrame(fl Flags) ([]byte, Flags, error) {
	if f.start < f.end && errors.Is(f.err, io.EOF) {
		frame := f.buf[f.start:f.end]
		f.start = f.end
		if len(frame) > f.max {
			// An unfinished octet-counting header longer than a frame.
			f.discarded(int64(len(frame) - f.max))
			frame = frame[:f.max]
			fl |= Truncated
		}
		if n := len(frame); n > 0 && frame[n-1] == '\r' {
			frame = frame[:n-1]
			f.st.OverheadBytes++
		}
		if len(frame) == 0 {
			f.empty(0)
			return nil, 0, io.EOF
		}
		return f.frame(frame, fl), fl, nil
	}
	f.incomplete(0)
	return nil, 0, f.finalErr()
}

// incomplete drops what is buffered after a read error, plus extra bytes
// of it consumed already (an octet-counted header).
func (f *Framer) incomplete(extra int) {
	n := int64(f.end-f.start) + int64(extra)
	if n == 0 {
		return
	}
	f.start = f.end
	f.st.IncompleteFrames++
	f.st.IncompleteBytes += n
	if f.c != nil {
		f.c.IncompleteFrames.Add(1)
		f.c.IncompleteBytes.Add(n)
	}
}

func (f *Framer) finalErr() error {
	if f.err == nil || errors.Is(f.err, io.EOF) {
		return io.EOF
	}
	f.incomplete(0)
	return f.err
}

// frame counts a returned frame.
func (f *Framer) frame(b []byte, fl Flags) []byte {
	f.st.Frames++
	f.st.FrameBytes += int64(len(b))
	if fl&Truncated != 0 {
		f.st.Truncated++
		if f.c != nil {
			f.c.Truncated.Add(1)
		}
	}
	if f.mode != OctetCounting && f.trailer == '\n' && bytes.IndexByte(b, 0) >= 0 {
		f.st.NULFrames++
		if f.c != nil {
			f.c.NULFrames.Add(1)
		}
	}
	return b
}

func (f *Framer) discarded(n int64) {
	f.st.DiscardedBytes += n
	if f.c != nil {
		f.c.DiscardedBytes.Add(n)
	}
}

// skipEmpty consumes delimiters between frames: empty frames (counted), an
// LF that completes a NUL-LF trailer, and the LF some senders put after
// octet-counted frames.
func (f *Framer) skipEmpty() {
	for f.start < f.end {
		c := f.buf[f.start]
		switch {
		case c == '\n' && (f.afterNUL || f.mode == OctetCounting):
			f.afterNUL = false
			f.st.OverheadBytes++
			f.start++
		case c == '\n' || (c == 0 && f.trailer != '\n'):
			f.afterNUL = false
			f.empty(1)
			f.start++
		case c == '\r' && f.start+1 < f.end && f.buf[f.start+1] == '\n':
			f.afterNUL = false
			f.empty(2)
			f.start += 2
		default:
			return
		}
	}
}

func (f *Framer) empty(n int) {
	f.st.OverheadBytes += int64(n)
	f.st.EmptyFrames++
	if f.c != nil {
		f.c.EmptyFrames.Add(1)
	}
}

// discard drops the rest of an oversized frame. It reports false when the
// stream ended while discarding.
func (f *Framer) discard() bool {
	for f.skip > 0 {
		if f.start == f.end && !f.fill() {
			return false
		}
		n := min(int64(f.end-f.start), f.skip)
		f.start += int(n)
		f.skip -= n
		f.discarded(n)
	}
	for f.skipToDelim {
		if f.start == f.end && !f.fill() {
			return false
		}
		data := f.buf[f.start:f.end]
		i := f.indexDelim(data)
		if i >= 0 {
			f.discarded(int64(i))
			f.st.OverheadBytes++
			f.afterNUL = data[i] == 0
			f.start += i + 1
			f.skipToDelim = false
			break
		}
		f.discarded(int64(len(data)))
		f.start = f.end
	}
	for f.skipToHdr {
		if f.start == f.end && !f.fill() {
			return false
		}
		data := f.buf[f.start:f.end]
		pos, lf, safe := f.boundary(data, f.prevDigit)
		if pos >= 0 {
			f.discarded(int64(pos))
			f.start += pos
			f.skipToHdr = false
			if lf {
				f.start++
				f.st.OverheadBytes++
			} else {
				f.resync = true
			}
			break
		}
		if safe > 0 {
			f.prevDigit = isDigit(data[safe-1])
			f.discarded(int64(safe))
			f.start += safe
		}
		if f.start < f.end && !f.fill() {
			// The stream ended in a digit run of the discarded frame.
			f.discarded(int64(f.end - f.start))
			f.start = f.end
			return false
		}
	}
	return true
}

// detect decides the framing of the stream from the frame at the start of
// the buffer: Auto when more bytes are needed; undecided, with the
// announced length and the header's length, for "LEN SP x" with x not '<'
// and 1 <= LEN <= MaxOctetCount.
func (f *Framer) detect() (Framing, int64, int) {
	data := f.buf[f.start:f.end]
	if data[0] < '1' || data[0] > '9' {
		return Delimited, 0, 0
	}
	var n int64
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c >= '0' && c <= '9' && i < 10:
			n = n*10 + int64(c-'0')
		case c == ' ':
			switch {
			case i+1 == len(data):
				return Auto, 0, 0
			case data[i+1] == '<':
				return OctetCounting, 0, 0
			case n > f.maxAnnounced:
				return Delimited, 0, 0
			}
			return undecided, n, i + 1
		default:
			return Delimited, 0, 0
		}
	}
	return Auto, 0, 0
}

// undecidedFrame reads a frame that starts "LEN SP x", x not '<', while
// the framing is not decided. It is an octet-counted frame, and decides
// octet counting, when its LEN bytes hold no delimiter, or an LF only as
// their last byte (a sender that counts its trailer). It is a line, and
// leaves the framing undecided, when a delimiter comes earlier or LEN is
// above MaxFrame: "123 apples\n" stays a line, and so does the next one.
// done is false when more bytes are needed.
func (f *Framer) undecidedFrame(n int64, hdr int) (frame []byte, fl Flags, done bool, err error) {
	if n <= int64(f.max) {
		data := f.buf[f.start:f.end]
		body := data[hdr:min(len(data), hdr+int(n))]
		i := bytes.IndexByte(body, '\n')
		if f.trailer != '\n' {
			// NUL ends a line too, unless the connection ends lines with LF.
			if i >= 0 {
				if z := bytes.IndexByte(body[:i], 0); z >= 0 {
					i = z
				}
			} else {
				i = bytes.IndexByte(body, 0)
			}
		}
		switch {
		case i < 0 && len(body) < int(n):
			return nil, 0, false, nil
		case i < 0 || (i == int(n)-1 && body[i] == '\n'):
			f.mode = OctetCounting
			frame, fl, err = f.octetFrame(n, hdr)
			return frame, fl, true, err
		}
	}
	frame, fl, done = f.delimFrame()
	return frame, fl, done, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// headerSuffix returns the start of the longest suffix of the digit run
// that is a valid octet count (no leading zero, at most 10 digits, 1 <= LEN
// <= MaxOctetCount), or -1.
func (f *Framer) headerSuffix(run []byte) int {
	for q := max(0, len(run)-10); q < len(run); q++ {
		if run[q] != '0' && parseLen(run[q:]) <= f.maxAnnounced {
			return q
		}
	}
	return -1
}

// parseLen returns the value of at most 10 digits.
func parseLen(digits []byte) int64 {
	var n int64
	for _, c := range digits {
		n = n*10 + int64(c-'0')
	}
	return n
}

// boundary finds where the next frame may start after an octet-counted
// frame with a bad header: the first LF in data (pos, lf true), or the
// first digit run that does not continue one (prevDigit tells whether the
// byte before data was a digit), has at most maxRun digits ending in a
// valid octet count, and is followed by " <" (pos, lf false). Without one
// pos is -1. No boundary starts before safe: safe is len(data), or the start
// of a run that the bytes so far leave undecided.
func (f *Framer) boundary(data []byte, prevDigit bool) (pos int, lf bool, safe int) {
	for i := 0; i < len(data); {
		c := data[i]
		if c == '\n' {
			return i, true, i
		}
		if !isDigit(c) {
			prevDigit = false
			i++
			continue
		}
		j := i + 1
		for j < len(data) && isDigit(data[j]) && j-i <= maxRun {
			j++
		}
		switch {
		case prevDigit || j-i > maxRun:
			for j < len(data) && isDigit(data[j]) {
				j++
			}
			prevDigit = true
			i = j
			continue
		case j == len(data) || (data[j] == ' ' && j+1 == len(data)):
			return -1, false, i
		case data[j] == ' ' && data[j+1] == '<' && f.headerSuffix(data[i:j]) >= 0:
			return i, false, i
		}
		i = j
	}
	return -1, false, len(data)
}

// badFrame returns the frame at the start of the buffer, whose
// octet-counted header is bad, once the buffer holds its end (see
// boundary): an LF, removed with a CR before it, or a digit run followed by
// " <", where the next frame starts. A frame longer than MaxFrame is cut
// there and the rest discarded up to that end. ok is false when more bytes
// are needed.
func (f *Framer) badFrame() ([]byte, Flags, bool) {
	data := f.buf[f.start:f.end]
	if isDigit(data[0]) && !f.runBad {
		switch pos, _, safe := f.boundary(data, false); {
		case pos == 0:
			// The bad header is a digit run followed by " <" that ends in
			// a valid count ("00153 <"): the digits of a frame cut
			// short, then the next header.
			f.resync, f.resyncErr = true, true
			return nil, 0, true
		case safe == 0:
			return nil, 0, false
		}
	}
	pos, lf, safe := f.boundary(data[1:], isDigit(data[0]))
	if pos >= 0 {
		pos++
	}
	safe++
	switch {
	case pos >= 0 && pos <= f.max:
		f.runBad = false
		frame := data[:pos]
		f.start += pos
		if !lf {
			f.resync = true
			return f.frame(frame, 0), 0, true
		}
		f.start++
		f.st.OverheadBytes++
		if n := len(frame); frame[n-1] == '\r' {
			frame = frame[:n-1]
			f.st.OverheadBytes++
		}
		if len(frame) == 0 {
			f.empty(0)
			return nil, 0, true
		}
		return f.frame(frame, 0), 0, true
	case safe > f.max:
		f.runBad = false
		frame := data[:f.max]
		f.start += f.max
		f.skipToHdr = true
		f.prevDigit = isDigit(frame[f.max-1])
		return f.frame(frame, Truncated), Truncated, true
	}
	return nil, 0, false
}

// resyncHeader chooses, after a bad frame that ended at a digit run
// followed by " <", which of the run's digits are the next header, since
// the bad frame may have ended with digits of its own: the longest valid
// count whose frame is followed by what may follow a frame (the end of the
// stream, an LF, or "LEN SP <"). The digits before it are discarded
// (counted). When no count is followed so, or its frame is too long to look
// past it, the run is no header (good false): it starts another bad frame.
// decided is false when more bytes are needed.
func (f *Framer) resyncHeader(eof bool) (decided, good bool) {
	data := f.buf[f.start:f.end]
	r := 0
	for r < len(data) && isDigit(data[r]) {
		r++
	}
	choice := -1
	limit := f.max + framerHeader // the most the buffer holds from start
	for q := max(0, r-10); q < r; q++ {
		if data[q] == '0' {
			continue
		}
		n := parseLen(data[q:r])
		if n > f.maxAnnounced || int64(r)+1+n > int64(limit) {
			continue // a frame too long to look past
		}
		ok, decided := followsFrame(data, r+1+int(n), eof)
		if !decided {
			if len(data) < limit {
				return false, false
			}
			continue // what follows does not fit the buffer
		}
		if ok {
			choice = q
			break
		}
	}
	f.resync = false
	if choice < 0 {
		f.resyncErr = false // counted with the bad frame the run starts
		f.runBad = true
		return true, false
	}
	if choice > 0 {
		f.start += choice
		f.discarded(int64(choice))
	}
	if f.resyncErr {
		f.resyncErr = false
		f.framingError()
	}
	return true, true
}

// followsFrame reports whether data[e:] starts with what may follow an
// octet-counted frame: the end of the stream, an LF, or "LEN SP <". decided
// is false when more bytes are needed.
func followsFrame(data []byte, e int, eof bool) (ok, decided bool) {
	if e >= len(data) {
		return eof && e == len(data), eof
	}
	if data[e] == '\n' {
		return true, true
	}
	if data[e] < '1' || data[e] > '9' {
		return false, true
	}
	for i := e + 1; i < len(data); i++ {
		if c := data[i]; isDigit(c) && i-e < 10 {
			continue
		}
		if data[i] != ' ' {
			return false, true
		}
		if i+1 == len(data) {
			break
		}
		return data[i+1] == '<', true
	}
	return false, eof
}

// octetHeader parses "LEN SP" at the start of the buffer. hdr is the
// header length; ok false with hdr -1 means more bytes are needed, with hdr
// 0 a bad header.
func (f *Framer) octetHeader() (n int64, hdr int, ok bool) {
	data := f.buf[f.start:f.end]
	if data[0] < '1' || data[0] > '9' {
		return 0, 0, false
	}
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c >= '0' && c <= '9' && i < 10:
			n = n*10 + int64(c-'0')
		case c == ' ' && n <= f.maxAnnounced:
			return n, i + 1, true
		default:
			return 0, 0, false
		}
	}
	return 0, -1, false
}

func (f *Framer) octetFrame(n int64, hdr int) ([]byte, Flags, error) {
	f.start += hdr
	f.st.OverheadBytes += int64(hdr)
	want := n
	var fl Flags
	if want > int64(f.max) {
		want = int64(f.max)
		fl = Truncated
	}
	f.inBody = true
	for int64(f.end-f.start) < want {
		if !f.fill() {
			// The stream ended inside the frame: at EOF deliver what
			// arrived, marked cut; after an error it is incomplete.
			f.inBody = false
			if f.start == f.end || !errors.Is(f.err, io.EOF) {
				f.st.OverheadBytes -= int64(hdr)
				f.incomplete(hdr)
				return nil, 0, f.finalErr()
			}
			frame := f.buf[f.start:f.end]
			f.start = f.end
			return f.frame(frame, Truncated), Truncated, nil
		}
	}
	f.inBody = false
	frame := f.buf[f.start : f.start+int(want)]
	f.start += int(want)
	if fl != 0 {
		f.skip = n - want
	}
	// Some senders end octet-counted frames with LF too; it is part of
	// the count and not of the message.
	for len(frame) > 0 && (frame[len(frame)-1] == '\n' || frame[len(frame)-1] == '\r') {
		frame = frame[:len(frame)-1]
		f.st.OverheadBytes++
	}
	if len(frame) == 0 {
		f.empty(0)
		return nil, 0, nil
	}
	return f.frame(frame, fl), fl, nil
}

// indexDelim returns the index of the first trailer in b, or -1. Until the
// trailer is decided, or on NUL-terminated connections, that is LF or NUL;
// on LF-terminated connections LF alone.
func (f *Framer) indexDelim(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if f.trailer == '\n' || f.mode == OctetCounting {
		return i
	}
	var z int
	if i < 0 {
		z = bytes.IndexByte(b, 0)
	} else {
		z = bytes.IndexByte(b[:i], 0)
	}
	if f.trailer == 0 {
		switch {
		case z >= 0:
			f.trailer = trailerAny
		case i >= 0:
			f.trailer = '\n'
		}
	}
	if z >= 0 {
		return z
	}
	return i
}

// delimFrame returns the next terminated frame if the buffer holds one, or
// the first max bytes of an oversized frame.
func (f *Framer) delimFrame() ([]byte, Flags, bool) {
	data := f.buf[f.start:f.end]
	limit := min(len(data), f.max+1)
	if i := f.indexDelim(data[:limit]); i >= 0 && i <= f.max {
		f.start += i + 1
		f.afterNUL = data[i] == 0
		f.st.OverheadBytes++
		frame := data[:i]
		if n := len(frame); n > 0 && frame[n-1] == '\r' {
			frame = frame[:n-1]
			f.st.OverheadBytes++
		}
		if len(frame) == 0 {
			f.empty(0)
			return nil, 0, true
		}
		return f.frame(frame, 0), 0, true
	}
	// Cut only with max+1 bytes in hand: a frame of exactly max bytes may
	// still be followed by its delimiter.
	if len(data) > f.max {
		frame := data[:f.max]
		f.start += f.max
		f.skipToDelim = true
		return f.frame(frame, Truncated), Truncated, true
	}
	return nil, 0, false
}
