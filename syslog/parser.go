package syslog

import (
	"bytes"
	"encoding/binary"
	"time"
	"unicode/utf8"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/internal/evfield"
)

// Names of the fields the syslog parser sets.
const (
	// FieldProcID holds the RFC 5424 PROCID, or the PID of an RFC 3164
	// tag "prog[pid]:".
	FieldProcID = "procid"
	// FieldMsgID holds the RFC 5424 MSGID, or the mnemonic of a Cisco tag
	// ("ASA-6-302013" from "%ASA-6-302013:").
	FieldMsgID = "msgid"
	// FieldSequence holds a Cisco IOS sequence number ("52" from
	// "52: *Mar  1 18:46:11: ...").
	FieldSequence = "sequence"
	// FieldTimestamp holds a timestamp that is valid syslog but outside the
	// range of [relaykit.Event.Time] (years 1678 to 2261), as written.
	FieldTimestamp = "timestamp"
	// SDFieldPrefix starts the name of every field taken from RFC 5424
	// STRUCTURED-DATA: "sd.<SD-ID>.<PARAM-NAME>", e.g. "sd.origin.ip" or
	// "sd.exampleSDID@32473.iut". An element without parameters becomes
	// the field "sd.<SD-ID>" with an empty value.
	SDFieldPrefix = "sd."
)

// SourceType is the [relaykit.Event.SourceType] the syslog parser
// sets when the event has none.
const SourceType = "syslog"

// maxParsedFields caps the fields one message's STRUCTURED-DATA or CEF
// extension adds, so that a hostile message cannot make field lookup
// quadratic; see [Parser.Parse] and [DecodeCEF] for what happens
// beyond it.
const maxParsedFields = 256

// Format says which grammar [Parser.Parse] recognised.
type Format uint8

const (
	// Unparsed: the input could not be read (malformed PRI, empty,
	// or not text under [Config.RequireText]); Raw holds it whole
	// and [relaykit.FlagParseError] is set.
	Unparsed Format = iota
	// RFC5424: a complete RFC 5424 message.
	RFC5424
	// RFC3164: a BSD syslog message (RFC 3164 or a variant listed in
	// the package documentation) with its timestamp.
	RFC3164
	// Lenient: anything else with a well-formed or absent PRI: what
	// could be recognised was extracted, the rest is the message.
	Lenient
)

var syslogFormatNames = [...]string{"unparsed", "rfc5424", "rfc3164", "lenient"}

// String returns "unparsed", "rfc5424", "rfc3164" or "lenient".
func (f Format) String() string {
	if int(f) < len(syslogFormatNames) {
		return syslogFormatNames[f]
	}
	return "unknown"
}

// Config configures a [Parser]. The zero value is ready to use.
type Config struct {
	// Location is the time zone of timestamps that carry none (RFC 3164,
	// ISO 8601 local time). Nil means time.Local.
	Location *time.Location
	// Clock gives the reference time from which the year of an RFC 3164
	// timestamp without one is inferred, when the event has no
	// ReceiveTime. Nil means [clock.Default]. It is read only for such
	// timestamps, and only when ReceiveTime is zero.
	Clock *clock.Clock
	// RequireText makes input that is not valid UTF-8, or that contains
	// control bytes other than tab (NUL, ESC, DEL, ...), unparsed:
	// [Unparsed] with the input whole in Raw. False parses any
	// bytes.
	RequireText bool
	// CEF makes the parser decode a message that starts with "CEF:" with
	// [DecodeCEF] as well, so that one call extracts both the syslog
	// header and the CEF fields.
	CEF bool
}

// Parser parses syslog messages into [relaykit.Event] values in place,
// without allocating once the event's buffers are warm: RFC 5424 (with
// STRUCTURED-DATA), RFC 3164 and its common variants, and a lenient path
// for anything else. See the package documentation for the field names and
// the variants handled.
//
// A Parser holds small caches (the last local time zone conversion)
// and must not be used from concurrent goroutines; use one per goroutine
// (for example per connection or listener). It holds no reference to the
// events or bytes it parsed.
type Parser struct {
	loc        *time.Location
	clock      *clock.Clock
	text       bool
	cef        bool
	key        []byte // SD field name scratch
	lastLocal  int64  // wall-clock seconds of the last zone conversion...
	lastUnix   int64  // ...and its Unix seconds
	lastRefKey int64  // reference hour of the last inferred year...
	lastRefYr  int    // ...and the reference year
}

// NewParser returns a parser configured by cfg.
func NewParser(cfg Config) *Parser {
	loc := cfg.Location
	if loc == nil {
		loc = time.Local
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.Default()
	}
	return &Parser{
		loc: loc, clock: clk, text: cfg.RequireText, cef: cfg.CEF,
		key: make([]byte, 0, 64), lastLocal: -1 << 63, lastRefKey: -1 << 63,
	}
}

// Parse fills e from the syslog message b and returns the grammar it
// recognised. A trailing CR and LF are ignored.
//
// Parse overwrites e's Time, Host, Source, Raw and Priority, clears
// [relaykit.FlagPriority], [relaykit.FlagPriorityAssumed] and
// [relaykit.FlagParseError] before setting them, and adds fields (replacing fields of the same name). It keeps
// ReceiveTime, Index, the other flags and the fields already there; it sets
// SourceType to [SourceType] (or "cef", see [Config.CEF]) only
// when it is empty, so a value the caller set survives. Host and Source
// stay empty when the message carries none; callers typically fill in the
// peer address.
//
// What Parse sets:
//
//   - PRI: Priority and [relaykit.FlagPriority], on every path. A message
//     without a valid PRI (none, malformed, or not parsed at all) gets
//     [relaykit.PriorityAssumed], 13 (user.notice), with FlagPriority and
//     [relaykit.FlagPriorityAssumed], as RFC 3164 section 4.3.3 tells a
//     relay to do and rsyslog does.
//   - RFC 5424: TIMESTAMP into Time (ns, zone and fraction applied),
//     HOSTNAME into Host, APP-NAME into Source, PROCID into the field
//     [FieldProcID], MSGID into [FieldMsgID], every SD-PARAM into the field
//     "sd.<SD-ID>.<PARAM-NAME>" with the escapes \" \\ \] decoded (see
//     [SDFieldPrefix]), MSG into Raw without its UTF-8 BOM. SP around
//     '=', several SP between parameters and SP before ']' are tolerated,
//     as rsyslog does (eventSource= "Application"). A NILVALUE
//     ("-") sets nothing. If the header is valid but STRUCTURED-DATA is not
//     (such as Check Point's "[key:"value"; ...]"), the header is kept and
//     Raw holds everything from STRUCTURED-DATA on ([Lenient]), less
//     the BOM that starts MSG after it (STRUCTURED-DATA ends at the first
//     "] ", rsyslog's rule); the same happens past 256 SD parameters.
//   - RFC 3164 and lenient: timestamp into Time, HOSTNAME into Host (only
//     after a timestamp), TAG into Source and its [pid] into [FieldProcID],
//     a Cisco "%FAC-SEV-MNEMONIC:" tag into Source (FAC) and [FieldMsgID],
//     the rest into Raw without a UTF-8 BOM that starts it. Nothing
//     unrecognised is removed from the message.
//   - A malformed PRI ("<999>", "<13"), an empty message, or (with
//     RequireText) bytes that are not text: Raw holds b as given, minus the
//     trailing CR/LF, with [relaykit.FlagParseError]; nothing else is set
//     but the assumed priority.
//
// The year of a timestamp without one is the year, in Location, of
// e.ReceiveTime (or of Config.Now when ReceiveTime is zero), moved back a
// year if the result would lie more than 31 days in the future, or ahead a
// year if more than 335 days in the past (December logs read in January).
//
// Parse never retains b or e; Raw and the fields are copies.
func (p *Parser) Parse(e *relaykit.Event, b []byte) Format {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	e.Host, e.Source, e.Raw = e.Host[:0], e.Source[:0], e.Raw[:0]
	e.Time, e.Priority = 0, 0
	e.Flags &^= relaykit.FlagPriority | relaykit.FlagPriorityAssumed | relaykit.FlagParseError

	f := p.parse(e, b)
	if e.Flags&relaykit.FlagPriority == 0 {
		// RFC 3164 section 4.3.3: a relay assumes PRI 13 for a message
		// without a valid one.
		e.Priority = relaykit.PriorityAssumed
		e.Flags |= relaykit.FlagPriority | relaykit.FlagPriorityAssumed
	}
	if p.cef && f != Unparsed && bytes.HasPrefix(e.Raw, cefPrefix) {
		_ = DecodeCEF(e, e.Raw) // a malformed CEF header leaves a plain syslog event
	}
	if len(e.SourceType) == 0 {
		e.SourceType = append(e.SourceType, SourceType...)
	}
	return f
}

func (p *Parser) parse(e *relaykit.Event, b []byte) Format {
	if len(b) == 0 || p.text && !isText(b) {
		return unparsed(e, b)
	}
	pri, rest, hasPRI, ok := parsePRI(b)
	if !ok {
		return unparsed(e, b)
	}
	if hasPRI {
		e.Priority = pri
		e.Flags |= relaykit.FlagPriority
		// VERSION: 1 to 3 digits, no leading zero, then SP.
		if v := versionLen(rest); v > 0 {
			if f, ok := p.parse5424(e, rest[v+1:]); ok {
				return f
			}
		}
	}
	return p.lenient(e, rest)
}

func unparsed(e *relaykit.Event, b []byte) Format {
	e.Raw = append(e.Raw[:0], b...)
	e.Flags |= relaykit.FlagParseError
	return Unparsed
}

// parsePRI reads "<N>" (N in 0..191, no leading zeros except "0"). ok is
// false for a malformed PRI; hasPRI is false when b has none.
func parsePRI(b []byte) (pri uint8, rest []byte, hasPRI, ok bool) {
	if len(b) == 0 || b[0] != '<' {
		return 0, b, false, true
	}
	n, i := 0, 1
	for ; i < len(b) && i <= 4 && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int(b[i]-'0')
	}
	digits := i - 1
	if digits == 0 || digits > 3 || i >= len(b) || b[i] != '>' || n > 191 || (digits > 1 && b[1] == '0') {
		return 0, b, false, false
	}
	return uint8(n), b[i+1:], true, true
}

// versionLen returns the length of an RFC 5424 VERSION (1-999) at the start
// of b when a space follows it, else 0.
func versionLen(b []byte) int {
	if len(b) < 2 || b[0] < '1' || b[0] > '9' {
		return 0
	}
	for i := 1; i < len(b) && i <= 3; i++ {
		if b[i] == ' ' {
			return i
		}
		if b[i] < '0' || b[i] > '9' {
			return 0
		}
	}
	return 0
}

// isText reports whether b is valid UTF-8 without control bytes other than
// tab. Sixteen bytes at a time, it tests for any byte outside 0x20-0x7e
// (SWAR: x-0x20 borrows into the high bit for bytes below 0x20, x+1 carries
// into it for 0x7f, and bytes from 0x80 have it set); from the first word
// holding one it checks bytes one by one, and validates UTF-8 only from the
// first non-ASCII byte on (the bytes before it are ASCII, so a rune starts
// there).
func isText(b []byte) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	i := 0
	for ; i+16 <= len(b); i += 16 {
		x := binary.LittleEndian.Uint64(b[i:])
		y := binary.LittleEndian.Uint64(b[i+8:])
		if ((x-0x20*ones)&^x|(x+ones)|x|(y-0x20*ones)&^y|(y+ones)|y)&highs != 0 {
			break
		}
	}
	for j := i; j < len(b); j++ {
		c := b[j]
		if c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			return !hasControl(b[j:]) && utf8.Valid(b[j:])
		}
	}
	return true
}

// hasControl reports control bytes other than tab (NUL, ESC, DEL, ...),
// which no text log line carries. It tests eight bytes at a time and looks
// at single bytes only in a word that may hold one.
func hasControl(b []byte) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		// A byte below 0x20, or equal to 0x7f (x^0x7f.. has a zero byte).
		y := x ^ (0x7f * ones)
		if ((x-0x20*ones)&^x|(y-ones)&^y)&highs != 0 {
			if hasControlSlow(b[:8]) {
				return true
			}
		}
		b = b[8:]
	}
	return hasControlSlow(b)
}

func hasControlSlow(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

// Byte classes of the RFC 5424 grammar.
const (
	classGraph  = 1 << iota // PRINTUSASCII, 33-126
	classSDName             // SD-NAME: PRINTUSASCII except '=', ']', '"'
)

var class5424 = func() (t [256]uint8) {
	for c := 33; c <= 126; c++ {
		t[c] = classGraph
		if c != '=' && c != ']' && c != '"' {
			t[c] |= classSDName
		}
	}
	return t
}()

// token5424 returns the length of a header field at the start of b: 1 to
// max PRINTUSASCII bytes followed by a space; 0 if there is none.
func token5424(b []byte, max int) int {
	if len(b) > max+1 {
		b = b[:max+1]
	}
	for i, c := range b {
		if class5424[c]&classGraph == 0 {
			if c == ' ' && i > 0 {
				return i
			}
			return 0
		}
	}
	return 0 // no space within max+1 bytes
}

// parse5424 reads the RFC 5424 message after "<PRI>VERSION SP". It
// reports false, with e unchanged, when the header is not valid RFC 5424.
func (p *Parser) parse5424(e *relaykit.Event, b []byte) (Format, bool) {
	var c civil
	hasTime := false
	i, tsLen := 0, 0
	switch {
	case len(b) > 1 && b[0] == '-' && b[1] == ' ':
		i = 1
	default:
		i = parseISO(b, true, &c)
		if i == 0 || i >= len(b) || b[i] != ' ' {
			return 0, false
		}
		hasTime, tsLen = true, i
	}
	i++
	var parts [4][]byte // HOSTNAME, APP-NAME, PROCID, MSGID
	for k, max := range [4]int{255, 48, 128, 32} {
		n := token5424(b[i:], max)
		if n == 0 {
			return 0, false
		}
		if n > 1 || b[i] != '-' {
			parts[k] = b[i : i+n]
		}
		i += n + 1
	}
	if i >= len(b) {
		return 0, false
	}
	if hasTime {
		p.setTime(e, &c, b[:tsLen])
	}
	e.Host = append(e.Host, parts[0]...)
	e.Source = append(e.Source, parts[1]...)
	n0 := len(e.Fields)
	if parts[2] != nil {
		f := evfield.SlotString(e, FieldProcID)
		f.Value = append(f.Value, parts[2]...)
	}
	if parts[3] != nil {
		f := evfield.SlotString(e, FieldMsgID)
		f.Value = append(f.Value, parts[3]...)
	}
	rest := b[i:]
	format := RFC5424
	sdEnd := 0 // with format lenient: where MSG starts after STRUCTURED-DATA kept in the message
	switch {
	case rest[0] == '-':
		rest = rest[1:]
	case rest[0] == '[':
		n1 := len(e.Fields)
		if r, ok := p.parseSD(e, rest, n0); ok {
			rest = r
		} else {
			evfield.Truncate(e, n1)
			format = Lenient
			sdEnd = sdEndLenient(rest)
		}
	default:
		format = Lenient
	}
	if format == RFC5424 {
		switch {
		case len(rest) == 0:
		case rest[0] == ' ':
			rest = rest[1:]
		default:
			// Something glued to STRUCTURED-DATA: keep it all as the message.
			format = Lenient
			sdEnd = len(b) - i - len(rest)
			rest = b[i:]
		}
	}
	if sdEnd > 0 {
		// MSG, and so its BOM, starts after the STRUCTURED-DATA kept.
		if msg := trimBOM(rest[sdEnd:]); len(msg) < len(rest)-sdEnd {
			e.Raw = append(append(e.Raw, rest[:sdEnd]...), msg...)
			return format, true
		}
	}
	e.Raw = append(e.Raw, trimBOM(rest)...)
	return format, true
}

// trimBOM removes the UTF-8 byte order marks that start b.
func trimBOM(b []byte) []byte {
	for len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		b = b[3:]
	}
	return b
}

// sdEndLenient returns where STRUCTURED-DATA that the parser could not read
// ends by rsyslog's rule (pmrfc5424: at the first ']' that is not escaped
// as "\]" and is followed by SP), just after that SP; 0 when there is none.
func sdEndLenient(b []byte) int {
	for k := 0; k+1 < len(b); k++ {
		switch {
		case b[k] == '\\' && b[k+1] == ']':
			k++
		case b[k] == ']' && b[k+1] == ' ':
			return k + 2
		}
	}
	return 0
}

// sdNameLen returns the length of an SD-NAME (1-32 printable US-ASCII
// bytes except '=', SP, ']', '"') at the start of b, or 0.
func sdNameLen(b []byte) int {
	if len(b) > 33 {
		b = b[:33]
	}
	for i, c := range b {
		if class5424[c]&classSDName == 0 {
			return i
		}
	}
	if len(b) > 32 {
		return 0
	}
	return len(b)
}

// skipSP returns the index of the first byte of b from i on that is not SP.
func skipSP(b []byte, i int) int {
	for i < len(b) && b[i] == ' ' {
		i++
	}
	return i
}

// parseSD reads one or more SD-ELEMENTs at the start of b into fields and
// returns what follows them. It reports false on a syntax error (the
// caller removes the fields added). n0 is the number of fields before the
// message's own, for the field cap.
func (p *Parser) parseSD(e *relaykit.Event, b []byte, n0 int) ([]byte, bool) {
	for len(b) > 0 && b[0] == '[' {
		n := sdNameLen(b[1:])
		if n == 0 {
			return nil, false
		}
		p.key = append(append(append(p.key[:0], SDFieldPrefix...), b[1:1+n]...), '.')
		base := len(p.key)
		i := 1 + n
		params := 0
		for {
			if i >= len(b) {
				return nil, false
			}
			if b[i] == ']' {
				i++
				break
			}
			if b[i] != ' ' {
				return nil, false
			}
			// Tolerated as rsyslog does (its pmrfc5424 takes everything up
			// to "] " as STRUCTURED-DATA): more than one SP before a
			// parameter or before ']', and SP around '=' (eventSource=
			// "Application" in the test messages of rsyslog and others).
			i = skipSP(b, i+1)
			if i < len(b) && b[i] == ']' {
				i++
				break
			}
			m := sdNameLen(b[i:])
			if m == 0 {
				return nil, false
			}
			p.key = append(p.key[:base], b[i:i+m]...)
			i = skipSP(b, i+m)
			if i >= len(b) || b[i] != '=' {
				return nil, false
			}
			i = skipSP(b, i+1)
			if i+1 >= len(b) || b[i] != '"' {
				return nil, false
			}
			i++
			// PARAM-VALUE up to the closing '"'; fast path without escapes.
			j := i
			for j < len(b) && b[j] != '"' && b[j] != '\\' && b[j] != ']' {
				j++
			}
			if j >= len(b) || b[j] == ']' {
				return nil, false
			}
			if len(e.Fields)-n0 >= maxParsedFields {
				return nil, false
			}
			f := evfield.Slot(e, p.key)
			if b[j] == '"' {
				f.Value = append(f.Value, b[i:j]...)
			} else {
				f.Value = append(f.Value, b[i:j]...)
				for {
					if j >= len(b) {
						return nil, false
					}
					c := b[j]
					if c == '"' {
						break
					}
					if c == ']' {
						return nil, false
					}
					if c == '\\' && j+1 < len(b) && (b[j+1] == '"' || b[j+1] == '\\' || b[j+1] == ']') {
						f.Value = append(f.Value, b[j+1])
						j += 2
						continue
					}
					f.Value = append(f.Value, c)
					j++
				}
			}
			i = j + 1
			params++
		}
		if params == 0 {
			if len(e.Fields)-n0 >= maxParsedFields {
				return nil, false
			}
			evfield.Slot(e, p.key[:base-1])
		}
		b = b[i:]
	}
	return b, true
}

// setTime stores c into e.Time. Zone-less times are read in the parser's
// Location and a missing year is inferred (see Parse). A time outside the
// range of int64 nanoseconds leaves Time zero and keeps the text (raw) in
// the field FieldTimestamp.
func (p *Parser) setTime(e *relaykit.Event, c *civil, raw []byte) {
	if !c.hasYear {
		c.year = p.inferYear(e, c)
	}
	var sec int64
	switch {
	case c.zoned:
		sec = c.localSeconds() - int64(c.offset)
	case p.loc == time.UTC:
		sec = c.localSeconds()
	default:
		local := c.localSeconds()
		if local != p.lastLocal {
			p.lastLocal = local
			p.lastUnix = time.Date(c.year, time.Month(c.month), c.day, c.hour, c.minute, c.sec, 0, p.loc).Unix()
		}
		sec = p.lastUnix
	}
	if sec < minUnixSec || sec > maxUnixSec {
		f := evfield.SlotString(e, FieldTimestamp)
		f.Value = append(f.Value, bytes.TrimRight(raw, " ")...)
		return
	}
	e.Time = sec*1e9 + int64(c.nsec)
}

// inferYear returns the year of a BSD timestamp without one (see Parse).
func (p *Parser) inferYear(e *relaykit.Event, c *civil) int {
	ref := e.ReceiveTime
	if ref == 0 {
		ref = p.clock.Nano()
	}
	if hour := ref / int64(time.Hour); hour != p.lastRefKey {
		p.lastRefKey = hour
		p.lastRefYr = time.Unix(0, ref).In(p.loc).Year()
	}
	y := p.lastRefYr
	// Compare wall-clock seconds: close enough for a ±1 month decision.
	refLocal := ref/1e9 + int64(p.zoneOffset(ref))
	c.year = y
	t := c.localSeconds()
	switch {
	case t > refLocal+31*86400:
		y--
	case t < refLocal-335*86400:
		y++
	}
	return y
}

// zoneOffset returns the Location's offset at Unix time ns, in seconds.
func (p *Parser) zoneOffset(ns int64) int {
	if p.loc == time.UTC {
		return 0
	}
	_, off := time.Unix(0, ns).In(p.loc).Zone()
	return off
}

// lenient parses what follows the PRI (or the whole line) as
// [TIMESTAMP SP [HOSTNAME SP]] [TAG: ] MSG, where TIMESTAMP is a BSD
// timestamp (see parseBSD) or an ISO 8601 / RFC 3339 one (see parseISO),
// optionally preceded by a Cisco sequence number "NN: " and a '*' or '.'.
func (p *Parser) lenient(e *relaykit.Event, rest []byte) Format {
	format := Lenient
	for len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:] // "<167> Mar  7 ..."
	}
	rest = trimBOM(rest)
	// Cisco IOS sequence number: "52: *Mar  1 ...".
	orig := rest
	var seq []byte
	if n := seqLen(rest); n > 0 {
		seq, rest = rest[:n-2], rest[n:]
	}
	t := rest
	if len(t) > 0 && (t[0] == '*' || t[0] == '.') {
		t = t[1:]
	}
	var c civil
	n := parseBSD(t, &c)
	if n == 0 {
		n = parseISO(t, false, &c)
	}
	if n > 0 {
		p.setTime(e, &c, t[:n])
		if c.bsd {
			format = RFC3164
		}
		rest = t[n:]
		for len(rest) > 0 && rest[0] == ' ' {
			rest = rest[1:]
		}
		if seq != nil {
			f := evfield.SlotString(e, FieldSequence)
			f.Value = append(f.Value, seq...)
		}
		// HOSTNAME: a token followed by a space that is not itself a tag.
		if sp := bytes.IndexByte(rest, ' '); sp > 0 && isHostToken(rest[:sp]) {
			e.Host = append(e.Host, rest[:sp]...)
			rest = rest[sp+1:]
			// Cisco ASA with "logging device-id": "host : %ASA-...".
			if len(rest) > 2 && rest[0] == ':' && rest[1] == ' ' && rest[2] == '%' {
				rest = rest[2:]
			}
		}
	} else {
		rest = orig // no timestamp: the digits were no sequence number
	}
	// TAG: "prog[pid]: ", "prog: " or Cisco "%ASA-6-302013: ".
	if i := bytes.Index(rest, []byte(": ")); i > 0 && i <= 64 && isTag(rest[:i]) {
		tag := rest[:i]
		switch {
		case tag[0] == '%':
			f := evfield.SlotString(e, FieldMsgID)
			f.Value = append(f.Value, tag[1:]...)
			if d := bytes.IndexByte(tag, '-'); d > 1 {
				e.Source = append(e.Source, tag[1:d]...)
			}
		case tag[len(tag)-1] == ']' && bytes.IndexByte(tag, '[') > 0:
			lb := bytes.IndexByte(tag, '[')
			e.Source = append(e.Source, tag[:lb]...)
			f := evfield.SlotString(e, FieldProcID)
			f.Value = append(f.Value, tag[lb+1:len(tag)-1]...)
		default:
			e.Source = append(e.Source, tag...)
		}
		rest = rest[i+2:]
	}
	e.Raw = append(e.Raw, trimBOM(rest)...)
	return format
}

// seqLen returns the length of a leading "digits: " (1-10 digits), or 0.
func seqLen(b []byte) int {
	i := 0
	for i < len(b) && i < 10 && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == 0 || i+1 >= len(b) || b[i] != ':' || b[i+1] != ' ' {
		return 0
	}
	return i + 2
}

var cefPrefix = []byte("CEF:")

// isHostToken reports whether tok can be a HOSTNAME: not a tag ("su:",
// "prog[1]", "%ASA-..."), not key=value or CEF text.
func isHostToken(tok []byte) bool {
	return tok[len(tok)-1] != ':' && tok[0] != '%' && bytes.IndexByte(tok, '[') < 0 &&
		bytes.IndexByte(tok, '=') < 0 && bytes.IndexByte(tok, '|') < 0 && !bytes.HasPrefix(tok, cefPrefix)
}

// isTag reports whether tok (the text before ": ") can be a TAG.
func isTag(tok []byte) bool {
	for _, c := range tok {
		if c == ' ' || c == '=' || c == '|' || c == '"' {
			return false
		}
	}
	return !bytes.HasPrefix(tok, cefPrefix)
}
