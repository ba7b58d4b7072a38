package forward

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/relaykit/relaykit"
)

// SyslogFormat selects the message format of a [Syslog] sink.
type SyslogFormat int

const (
	// SyslogRFC5424 is the syslog protocol of RFC 5424: PRI, version,
	// RFC 3339 timestamp (UTC, microseconds), HOSTNAME, APP-NAME, PROCID,
	// MSGID, STRUCTURED-DATA and MSG. It is the default.
	SyslogRFC5424 SyslogFormat = iota
	// SyslogRFC3164 is the legacy BSD format of RFC 3164:
	// "<PRI>Mmm dd hh:mm:ss HOSTNAME TAG[PROCID]: MSG", with the timestamp in
	// UTC. It has no year, no fraction and no structured data.
	SyslogRFC3164
)

// String returns "rfc5424" or "rfc3164".
func (f SyslogFormat) String() string {
	switch f {
	case SyslogRFC5424:
		return "rfc5424"
	case SyslogRFC3164:
		return "rfc3164"
	default:
		return "SyslogFormat(" + strconv.Itoa(int(f)) + ")"
	}
}

// SyslogFraming selects how messages are delimited on the stream transports
// (tcp and tls) of a [Syslog] sink. UDP always sends one message per
// datagram.
type SyslogFraming int

const (
	// SyslogOctetCounting prefixes each message with its length in bytes
	// and a space (RFC 6587 section 3.4.1, RFC 5425 section 4.3). Messages
	// may contain any bytes, newlines included. It is the default.
	SyslogOctetCounting SyslogFraming = iota
	// SyslogNonTransparent ends each message with a line feed (RFC 6587
	// section 3.4.2), as traditional TCP syslog does. Line feeds inside a
	// message are replaced by spaces so they cannot split it.
	SyslogNonTransparent
)

// String returns "octet-counting" or "non-transparent".
func (f SyslogFraming) String() string {
	switch f {
	case SyslogOctetCounting:
		return "octet-counting"
	case SyslogNonTransparent:
		return "non-transparent"
	default:
		return "SyslogFraming(" + strconv.Itoa(int(f)) + ")"
	}
}

// Field length limits of the RFC 5424 header (section 6).
const (
	maxHostname = 255
	maxAppName  = 48
	maxProcID   = 128
	maxMsgID    = 32
	maxSDName   = 32
	maxTag3164  = 32
)

// syslogEncoder formats events as syslog messages. It is immutable after
// construction and safe for concurrent use.
type syslogEncoder struct {
	format      SyslogFormat
	defaultPRI  uint8
	hostname    []byte
	appName     []byte
	procIDField string
	msgIDField  string
	sdID        string
	sdFields    []string
	lfFraming   bool // replace LF in MSG (non-transparent framing)
}

// appendMessage appends the syslog message for e (without framing) to dst.
// now is used by RFC 3164 for events without a time (in ns since the epoch).
func (enc *syslogEncoder) appendMessage(dst []byte, e *relaykit.Event, now int64) []byte {
	pri := enc.defaultPRI
	if e.Flags&relaykit.FlagPriority != 0 {
		pri = e.Priority
	}
	if pri > 191 {
		pri = 191 // facility 23, severity 7: the largest valid PRI
	}
	dst = append(dst, '<')
	dst = strconv.AppendUint(dst, uint64(pri), 10)
	dst = append(dst, '>')

	host := e.Host
	if len(host) == 0 {
		host = enc.hostname
	}
	app := e.Source
	if len(app) == 0 {
		app = enc.appName
	}
	var procID, msgID []byte
	if enc.procIDField != "" {
		procID, _ = e.Field(enc.procIDField)
	}
	if enc.msgIDField != "" {
		msgID, _ = e.Field(enc.msgIDField)
	}
	ts := e.Time
	if ts == 0 {
		ts = e.ReceiveTime
	}

	if enc.format == SyslogRFC3164 {
		if ts == 0 {
			ts = now
		}
		dst = appendStamp3164(dst, ts)
		dst = append(dst, ' ')
		dst = appendHeaderField(dst, host, maxHostname)
		dst = append(dst, ' ')
		dst = appendTag3164(dst, app)
		if len(procID) > 0 {
			dst = append(dst, '[')
			dst = appendTag3164(dst, procID)
			dst = append(dst, ']')
		}
		dst = append(dst, ':', ' ')
		return enc.appendMsg(dst, e.Raw)
	}

	dst = append(dst, '1', ' ')
	if ts == 0 {
		dst = append(dst, '-')
	} else {
		dst = appendTimestamp(dst, ts, 6)
	}
	dst = append(dst, ' ')
	dst = appendHeaderField(dst, host, maxHostname)
	dst = append(dst, ' ')
	dst = appendHeaderField(dst, app, maxAppName)
	dst = append(dst, ' ')
	dst = appendHeaderField(dst, procID, maxProcID)
	dst = append(dst, ' ')
	dst = appendHeaderField(dst, msgID, maxMsgID)
	dst = append(dst, ' ')
	dst = enc.appendSD(dst, e)
	if len(e.Raw) > 0 {
		dst = append(dst, ' ')
		dst = enc.appendMsg(dst, e.Raw)
	}
	return dst
}

// appendSD appends the STRUCTURED-DATA part: one SD-ELEMENT with the
// configured fields present in e, or the NILVALUE "-" when there are none.
func (enc *syslogEncoder) appendSD(dst []byte, e *relaykit.Event) []byte {
	open := false
	for _, name := range enc.sdFields {
		v, ok := e.Field(name)
		if !ok {
			continue
		}
		if !open {
			dst = append(dst, '[')
			dst = append(dst, enc.sdID...)
			open = true
		}
		dst = append(dst, ' ')
		dst = append(dst, name...)
		dst = append(dst, '=', '"')
		dst = appendSDValue(dst, v)
		dst = append(dst, '"')
	}
	if !open {
		return append(dst, '-')
	}
	return append(dst, ']')
}

func (enc *syslogEncoder) appendMsg(dst, msg []byte) []byte {
	if !enc.lfFraming {
		return append(dst, msg...)
	}
	for len(msg) > 0 {
		i := indexByte(msg, '\n')
		if i < 0 {
			return append(dst, msg...)
		}
		dst = append(dst, msg[:i]...)
		dst = append(dst, ' ')
		msg = msg[i+1:]
	}
	return dst
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// appendHeaderField appends v as an RFC 5424 header field: NILVALUE "-"
// when empty, otherwise at most max bytes with every byte outside
// PRINTUSASCII (33-126) replaced by '_'.
func appendHeaderField(dst, v []byte, max int) []byte {
	if len(v) == 0 {
		return append(dst, '-')
	}
	if len(v) > max {
		v = v[:max]
	}
	for _, c := range v {
		if c < 33 || c > 126 {
			c = '_'
		}
		dst = append(dst, c)
	}
	return dst
}

// appendTag3164 appends v as an RFC 3164 TAG or PROCID: at most 32 bytes,
// with bytes outside PRINTUSASCII and the delimiters '[', ']' and ':'
// replaced by '_'; "-" when empty.
func appendTag3164(dst, v []byte) []byte {
	if len(v) == 0 {
		return append(dst, '-')
	}
	if len(v) > maxTag3164 {
		v = v[:maxTag3164]
	}
	for _, c := range v {
		if c < 33 || c > 126 || c == '[' || c == ']' || c == ':' {
			c = '_'
		}
		dst = append(dst, c)
	}
	return dst
}

// appendSDValue appends v as an RFC 5424 PARAM-VALUE: '"', '\' and ']' are
// escaped with a backslash (section 6.3.3) and invalid UTF-8 is replaced by
// U+FFFD, so the value is always a valid UTF-8-STRING.
func appendSDValue(dst, v []byte) []byte {
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			if c == '"' || c == '\\' || c == ']' {
				dst = append(dst, '\\')
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(v[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, v[i:i+size]...)
		}
		i += size
	}
	return dst
}

// validSDName reports whether s is an RFC 5424 SD-NAME: 1-32 PRINTUSASCII
// characters except '=', ' ', ']' and '"'.
func validSDName(s string) bool {
	if len(s) == 0 || len(s) > maxSDName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 33 || c > 126 || c == '=' || c == ']' || c == '"' {
			return false
		}
	}
	return true
}

// validSDID reports whether s is an SD-ID: an SD-NAME that is either
// name@digits (a private enterprise number, RFC 5424 section 7.2.2) or a
// name without '@' (reserved for IANA-registered IDs).
func validSDID(s string) bool {
	if !validSDName(s) {
		return false
	}
	at := -1
	for i := 0; i < len(s); i++ {
		if s[i] == '@' {
			if at >= 0 {
				return false
			}
			at = i
		}
	}
	if at < 0 {
		return true
	}
	if at == 0 || at == len(s)-1 {
		return false
	}
	for i := at + 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// appendTimestamp appends ns (nanoseconds since the Unix epoch) as an RFC 3339
// UTC timestamp with exactly digits (1-9) fractional digits, e.g.
// "2026-01-02T15:04:05.123456Z". Years are written with four digits. It
// does not allocate.
func appendTimestamp(dst []byte, ns int64, digits int) []byte {
	t := time.Unix(0, ns).UTC()
	year, month, day := t.Date()
	hour, min, sec := t.Clock()
	var b [30]byte
	y := uint(year)
	b[0], b[1], b[2], b[3] = byte('0'+y/1000%10), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10)
	b[4] = '-'
	put2(b[5:], uint(month))
	b[7] = '-'
	put2(b[8:], uint(day))
	b[10] = 'T'
	put2(b[11:], uint(hour))
	b[13] = ':'
	put2(b[14:], uint(min))
	b[16] = ':'
	put2(b[17:], uint(sec))
	b[19] = '.'
	frac := uint(t.Nanosecond())
	for i := 9; i > digits; i-- {
		frac /= 10
	}
	for i := 19 + digits; i > 19; i-- {
		b[i] = byte('0' + frac%10)
		frac /= 10
	}
	b[20+digits] = 'Z'
	return append(dst, b[:21+digits]...)
}

// put2 writes v (0-99) as two decimal digits.
func put2(b []byte, v uint) {
	b[0], b[1] = byte('0'+v/10), byte('0'+v%10)
}

const months3164 = "JanFebMarAprMayJunJulAugSepOctNovDec"

// appendStamp3164 appends ns as an RFC 3164 TIMESTAMP in UTC:
// "Mmm dd hh:mm:ss" with the day padded by a space.
func appendStamp3164(dst []byte, ns int64) []byte {
	t := time.Unix(0, ns).UTC()
	_, month, day := t.Date()
	hour, min, sec := t.Clock()
	m := (int(month) - 1) * 3
	dst = append(dst, months3164[m:m+3]...)
	dst = append(dst, ' ')
	if day < 10 {
		dst = append(dst, ' ')
	}
	dst = strconv.AppendUint(dst, uint64(day), 10)
	dst = append(dst, ' ')
	dst = appendPad(dst, uint64(hour), 2)
	dst = append(dst, ':')
	dst = appendPad(dst, uint64(min), 2)
	dst = append(dst, ':')
	return appendPad(dst, uint64(sec), 2)
}

// appendPad appends v in decimal, left-padded with zeros to width digits.
func appendPad(dst []byte, v uint64, width int) []byte {
	var b [20]byte
	i := len(b)
	for v > 0 || width > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		width--
	}
	if i == len(b) {
		i--
		b[i] = '0'
	}
	return append(dst, b[i:]...)
}
