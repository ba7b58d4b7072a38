package main

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/agilira/go-timecache"

	"github.com/leodido/go-syslog/v4"
	"github.com/leodido/go-syslog/v4/rfc3164"
	"github.com/leodido/go-syslog/v4/rfc5424"
	"github.com/relaykit/relaykit"
)

// Field names the syslog parser sets on events.
const (
	fieldProcID = "procid"
	fieldMsgID  = "msgid"
)

// syslogParser turns one syslog frame into a relaykit.Event. It tries, in
// order: go-syslog's RFC 5424 parser (frames starting "<PRI>1 "), go-syslog's
// RFC 3164 parser, then a lenient parser that accepts what mainstream
// daemons accept (ISO timestamps without zone as loggen sends them, Cisco
// "%ASA-…" tags, lines without PRI). A frame none of them can read
// (malformed PRI, invalid UTF-8, control bytes) becomes a raw event with
// [relaykit.FlagParseError]: it is forwarded, never dropped.
//
// A syslogParser must not be used from concurrent goroutines; use one per
// connection or listener.
type syslogParser struct {
	p5424 syslog.Machine
	p3164 syslog.Machine
	loc   *time.Location

	isoKey  string // last zone-less ISO timestamp parsed, and its value
	isoTime time.Time
}

func newSyslogParser(loc *time.Location) *syslogParser {
	if loc == nil {
		loc = time.Local
	}
	return &syslogParser{
		p5424: rfc5424.NewParser(),
		p3164: rfc3164.NewParser(rfc3164.WithYear(rfc3164.CurrentYear{}), rfc3164.WithTimezone(loc)),
		loc:   loc,
	}
}

// parseResult says which parser produced an event.
type parseResult uint8

const (
	parsed5424 parseResult = iota
	parsed3164
	parsedLenient
	parsedRaw
)

var formatNames = [...]string{"rfc5424", "rfc3164", "lenient", "raw"}

func (r parseResult) String() string { return formatNames[r] }

// Parse fills ev (which it resets first) from frame. peer is used as the
// host when the message carries none. ev's buffers are reused.
func (sp *syslogParser) Parse(ev *relaykit.Event, frame []byte, peer string) parseResult {
	ev.Reset()
	frame = bytes.TrimRight(frame, "\r\n")
	res := sp.parse(ev, frame)
	if len(ev.Host) == 0 {
		ev.Host = append(ev.Host, peer...)
	}
	ev.SourceType = append(ev.SourceType, "syslog"...)
	return res
}

func (sp *syslogParser) parse(ev *relaykit.Event, frame []byte) parseResult {
	if !utf8.Valid(frame) || hasControl(frame) {
		return raw(ev, frame)
	}
	pri, rest, hasPRI, ok := parsePRI(frame)
	if !ok {
		return raw(ev, frame)
	}
	if hasPRI && len(rest) >= 2 && rest[0] == '1' && rest[1] == ' ' {
		if m, err := sp.p5424.Parse(frame); err == nil && m != nil && m.Valid() {
			if sm, ok := m.(*rfc5424.SyslogMessage); ok {
				fill(ev, &sm.Base)
				return parsed5424
			}
		}
	} else if hasPRI && looksBSD(rest) {
		if m, err := sp.p3164.Parse(frame); err == nil && m != nil && m.Valid() {
			if sm, ok := m.(*rfc3164.SyslogMessage); ok && sm.Message != nil {
				fill(ev, &sm.Base)
				return parsed3164
			}
		}
	}
	sp.lenient(ev, pri, hasPRI, rest)
	return parsedLenient
}

func raw(ev *relaykit.Event, frame []byte) parseResult {
	ev.Raw = append(ev.Raw[:0], frame...)
	ev.Flags |= relaykit.FlagParseError
	return parsedRaw
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

// parsePRI reads "<N>" (N in 0..191, no leading zeros except "0"). ok is
// false for a malformed PRI; hasPRI is false when the frame has none.
func parsePRI(b []byte) (pri uint8, rest []byte, hasPRI, ok bool) {
	if len(b) == 0 || b[0] != '<' {
		return 0, b, false, true
	}
	n := 0
	i := 1
	for ; i < len(b) && i <= 4 && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int(b[i]-'0')
	}
	digits := i - 1
	if digits == 0 || digits > 3 || i >= len(b) || b[i] != '>' || n > 191 || (digits > 1 && b[1] == '0') {
		return 0, b, false, false
	}
	return uint8(n), b[i+1:], true, true
}

var months = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// looksBSD reports whether b starts with an RFC 3164 TIMESTAMP "Mmm dd ".
func looksBSD(b []byte) bool {
	if len(b) < 16 || b[3] != ' ' {
		return false
	}
	for _, m := range months {
		if string(b[:3]) == m {
			return true
		}
	}
	return false
}

func fill(ev *relaykit.Event, b *syslog.Base) {
	if b.Priority != nil {
		ev.Priority = *b.Priority
		ev.Flags |= relaykit.FlagPriority
	}
	if b.Timestamp != nil {
		ev.Time = b.Timestamp.UnixNano()
	}
	if b.Hostname != nil {
		ev.Host = append(ev.Host, *b.Hostname...)
	}
	if b.Appname != nil {
		ev.Source = append(ev.Source, *b.Appname...)
	}
	if b.Message != nil {
		ev.Raw = append(ev.Raw, *b.Message...)
	}
	if b.ProcID != nil {
		ev.SetFieldString(fieldProcID, *b.ProcID)
	}
	if b.MsgID != nil {
		ev.SetFieldString(fieldMsgID, *b.MsgID)
	}
}

// lenient parses the part after PRI: [TIMESTAMP SP] [HOST SP] [TAG[PID]: ]
// MSG, where TIMESTAMP is RFC 3339 with or without zone or fraction, or the
// BSD "Mmm dd hh:mm:ss" (optionally with year or fraction), and TAG may be a
// Cisco "%FAC-SEV-MNEMONIC:". What it does not recognise stays in the
// message, so every byte of the input survives.
func (sp *syslogParser) lenient(ev *relaykit.Event, pri uint8, hasPRI bool, rest []byte) {
	if hasPRI {
		ev.Priority = pri
		ev.Flags |= relaykit.FlagPriority
	}
	// Cisco sequence numbers and a leading '*' or '.' on the time.
	rest = bytes.TrimLeft(rest, " ")
	if t, n := sp.parseTime(rest); n > 0 {
		ev.Time = t.UnixNano()
		rest = bytes.TrimLeft(rest[n:], " ")
		// Host: a token followed by a space, not itself a tag.
		if sp := bytes.IndexByte(rest, ' '); sp > 0 {
			tok := rest[:sp]
			if tok[len(tok)-1] != ':' && tok[0] != '%' && bytes.IndexByte(tok, '[') < 0 {
				ev.Host = append(ev.Host, tok...)
				rest = rest[sp+1:]
			}
		}
	}
	// Tag: "prog[pid]: ", "prog: " or Cisco "%ASA-6-302013: ".
	if i := bytes.Index(rest, []byte(": ")); i > 0 && i <= 64 && bytes.IndexByte(rest[:i], ' ') < 0 {
		tag := rest[:i]
		if tag[0] == '%' {
			ev.SetField(fieldMsgID, tag[1:])
			if d := bytes.IndexByte(tag, '-'); d > 1 {
				ev.Source = append(ev.Source, tag[1:d]...)
			}
		} else if lb := bytes.IndexByte(tag, '['); lb > 0 && tag[len(tag)-1] == ']' {
			ev.Source = append(ev.Source, tag[:lb]...)
			ev.SetField(fieldProcID, tag[lb+1:len(tag)-1])
		} else {
			ev.Source = append(ev.Source, tag...)
		}
		rest = rest[i+2:]
	}
	ev.Raw = append(ev.Raw, rest...)
}

// parseTime recognises a timestamp at the start of b and returns it and the
// number of bytes it took (0: none).
func (sp *syslogParser) parseTime(b []byte) (time.Time, int) {
	if len(b) > 0 && (b[0] == '*' || b[0] == '.') {
		t, n := sp.parseTime(b[1:])
		if n > 0 {
			return t, n + 1
		}
		return time.Time{}, 0
	}
	// ISO 8601 / RFC 3339: 2006-01-02T15:04:05[.frac][Z|±hh:mm]
	if len(b) >= 19 && b[4] == '-' && b[7] == '-' && (b[10] == 'T' || b[10] == ' ') && b[13] == ':' && b[16] == ':' {
		end := 19
		if end < len(b) && b[end] == '.' {
			end++
			for end < len(b) && b[end] >= '0' && b[end] <= '9' {
				end++
			}
		}
		zoneStart := end
		if end < len(b) && b[end] == 'Z' {
			end++
		} else if end+6 <= len(b) && (b[end] == '+' || b[end] == '-') && b[end+3] == ':' {
			end += 6
		}
		s := string(b[:end])
		if b[10] == ' ' {
			s = s[:10] + "T" + s[11:]
		}
		if zoneStart != end {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t, end
			}
			return time.Time{}, 0
		}
		// Senders repeat the same second many times: parse it once.
		if end == 19 && sp.isoKey == s {
			return sp.isoTime, end
		}
		t, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", s, sp.loc)
		if err != nil {
			return time.Time{}, 0
		}
		if end == 19 {
			sp.isoKey, sp.isoTime = s, t
		}
		return t, end
	}
	// Cisco "Mmm _d yyyy hh:mm:ss": move the year behind the time.
	if len(b) >= 20 && b[3] == ' ' && b[6] == ' ' && b[11] == ' ' && b[14] == ':' && b[17] == ':' {
		var tmp [24]byte
		s := append(append(append(append(tmp[:0], b[:7]...), b[12:20]...), ' '), b[7:11]...)
		if t, n := sp.parseTime(s); n == len(s) {
			end := 20
			if end < len(b) && b[end] == ':' {
				end++
			}
			return t, end
		}
		return time.Time{}, 0
	}
	// BSD: "Mmm _d hh:mm:ss" with optional ".frac", optional " yyyy", optional ':'
	if len(b) >= 15 && b[3] == ' ' && b[9] == ':' && b[12] == ':' {
		m := -1
		for i, name := range months {
			if string(b[:3]) == name {
				m = i
			}
		}
		if m < 0 {
			return time.Time{}, 0
		}
		day, err1 := strconv.Atoi(string(bytes.TrimSpace(b[4:6])))
		hh, err2 := strconv.Atoi(string(b[7:9]))
		mm, err3 := strconv.Atoi(string(b[10:12]))
		ss, err4 := strconv.Atoi(string(b[13:15]))
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			return time.Time{}, 0
		}
		end := 15
		nsec := 0
		if end < len(b) && b[end] == '.' {
			j := end + 1
			frac := 0
			digits := 0
			for j < len(b) && b[j] >= '0' && b[j] <= '9' {
				if digits < 9 {
					frac = frac*10 + int(b[j]-'0')
					digits++
				}
				j++
			}
			for ; digits < 9; digits++ {
				frac *= 10
			}
			nsec = frac
			end = j
		}
		now := timecache.CachedTime().In(sp.loc)
		year := now.Year()
		if end+5 <= len(b) && b[end] == ' ' {
			if y, err := strconv.Atoi(string(b[end+1 : end+5])); err == nil && y > 1970 && (end+5 == len(b) || b[end+5] == ' ' || b[end+5] == ':') {
				year = y
				end += 5
			}
		}
		if end < len(b) && b[end] == ':' {
			end++
		}
		t := time.Date(year, time.Month(m+1), day, hh, mm, ss, nsec, sp.loc)
		if t.After(now.Add(48 * time.Hour)) {
			t = t.AddDate(-1, 0, 0) // December log read in January
		}
		return t, end
	}
	return time.Time{}, 0
}
