package syslog

import "github.com/relaykit/relaykit/internal/calendar"

// Timestamp parsing for the syslog parser, by hand: time.Parse allocates a
// zone for every numeric offset and is several times slower than reading
// fixed positions. Dates are converted to Unix time with the civil-date
// algorithm (days since 1970-01-01 of a proleptic Gregorian date).

// civil is a timestamp as written: a calendar date, a time of day, a
// fraction and, when zoned, the offset from UTC.
type civil struct {
	year, month, day  int
	hour, minute, sec int
	nsec              int
	zoned             bool
	offset            int // seconds east of UTC, when zoned
	hasYear           bool
	bsd               bool // "Mmm dd hh:mm:ss" family
}

// Limits of int64 nanoseconds since the epoch (years 1677-2262), in seconds.
const (
	minUnixSec = -9223372036
	maxUnixSec = 9223372035
)

// localSeconds returns the civil date and time of c as seconds since
// 1970-01-01T00:00:00 on the same wall clock (no zone applied).
func (c *civil) localSeconds() int64 {
	return calendar.DaysFromEpoch(c.year, c.month, c.day)*86400 + int64(c.hour*3600+c.minute*60+c.sec)
}

func digit(c byte) (int, bool) { return int(c - '0'), c >= '0' && c <= '9' }

// num2 reads two decimal digits at b[i:].
func num2(b []byte, i int) (int, bool) {
	if i+2 > len(b) {
		return 0, false
	}
	d1, ok1 := digit(b[i])
	d2, ok2 := digit(b[i+1])
	return d1*10 + d2, ok1 && ok2
}

// num4 reads four decimal digits at b[i:].
func num4(b []byte, i int) (int, bool) {
	h, ok1 := num2(b, i)
	l, ok2 := num2(b, i+2)
	return h*100 + l, ok1 && ok2
}

// fraction reads ".d..." at b[i:] (b[i] == '.'); it returns the
// nanoseconds (digits after the ninth are read and ignored), the number of
// digits and the index after them.
func fraction(b []byte, i int) (nsec, digits, end int) {
	j := i + 1
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		if digits < 9 {
			nsec = nsec*10 + int(b[j]-'0')
		}
		digits++
		j++
	}
	for k := min(digits, 9); k < 9; k++ {
		nsec *= 10
	}
	return nsec, digits, j
}

// parseISO reads an RFC 3339 timestamp at the start of b:
// YYYY-MM-DDThh:mm:ss[.frac](Z|±hh:mm). strict follows RFC 5424 section
// 6.2.3 (the 'T', 1 to 6 fraction digits and the offset are required).
// Otherwise it also accepts a space for the 'T', up to 9 fraction digits
// (further digits are ignored), ±hhmm, and no zone at all (ISO 8601 local
// time, as loggen and many appliances send). It returns the number of
// bytes read, 0 if b does not start with such a timestamp.
func parseISO(b []byte, strict bool, c *civil) int {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || b[13] != ':' || b[16] != ':' {
		return 0
	}
	if b[10] != 'T' && (strict || b[10] != ' ') {
		return 0
	}
	var ok [6]bool
	c.year, ok[0] = num4(b, 0)
	c.month, ok[1] = num2(b, 5)
	c.day, ok[2] = num2(b, 8)
	c.hour, ok[3] = num2(b, 11)
	c.minute, ok[4] = num2(b, 14)
	c.sec, ok[5] = num2(b, 17)
	if ok != [6]bool{true, true, true, true, true, true} ||
		c.month < 1 || c.month > 12 || c.day < 1 || c.day > calendar.DaysIn(c.month, c.year) ||
		c.hour > 23 || c.minute > 59 || c.sec > 59 {
		return 0
	}
	c.hasYear = true
	i := 19
	if i < len(b) && b[i] == '.' {
		ns, digits, end := fraction(b, i)
		if digits == 0 || strict && digits > 6 {
			return 0
		}
		c.nsec, i = ns, end
	}
	if i < len(b) && b[i] == 'Z' {
		c.zoned = true
		return i + 1
	}
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		oh, ok1 := num2(b, i+1)
		j := i + 3
		if j < len(b) && b[j] == ':' {
			j++
		} else if strict {
			return 0
		}
		om, ok2 := num2(b, j)
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return 0
		}
		c.offset = oh*3600 + om*60
		if b[i] == '-' {
			c.offset = -c.offset
		}
		c.zoned = true
		return j + 2
	}
	if strict {
		return 0
	}
	return i
}

// monthIndex returns 1-12 for a three-letter English month name in any
// case, 0 otherwise.
func monthIndex(b []byte) int {
	if len(b) < 3 {
		return 0
	}
	k := uint32(b[0]|0x20)<<16 | uint32(b[1]|0x20)<<8 | uint32(b[2]|0x20)
	switch k {
	case 'j'<<16 | 'a'<<8 | 'n':
		return 1
	case 'f'<<16 | 'e'<<8 | 'b':
		return 2
	case 'm'<<16 | 'a'<<8 | 'r':
		return 3
	case 'a'<<16 | 'p'<<8 | 'r':
		return 4
	case 'm'<<16 | 'a'<<8 | 'y':
		return 5
	case 'j'<<16 | 'u'<<8 | 'n':
		return 6
	case 'j'<<16 | 'u'<<8 | 'l':
		return 7
	case 'a'<<16 | 'u'<<8 | 'g':
		return 8
	case 's'<<16 | 'e'<<8 | 'p':
		return 9
	case 'o'<<16 | 'c'<<8 | 't':
		return 10
	case 'n'<<16 | 'o'<<8 | 'v':
		return 11
	case 'd'<<16 | 'e'<<8 | 'c':
		return 12
	}
	return 0
}

// parseBSD reads an RFC 3164 TIMESTAMP and the variants rsyslog's and
// syslog-ng's BSD parsers accept, at the start of b:
//
//	Mmm dd hh:mm:ss          RFC 3164 (day space-padded: "Mar  7")
//	MMM d hh:mm:ss           any case of the month, unpadded day
//	Mmm dd yyyy hh:mm:ss     year after the day (Cisco ASA, "Mar 7 2008 ...")
//	Mmm dd hh:mm:ss yyyy     year after the time
//	Mmm dd hh:mm:ss.fff      fraction (Cisco IOS "service timestamps msec")
//	Mmm dd hh:mm:ss UTC      "UTC" or "GMT" after the time (Cisco IOS)
//	... followed by ':'      colon after the timestamp (Cisco)
//
// It returns the number of bytes read (0: none); the timestamp must be
// followed by a space or the end of b.
func parseBSD(b []byte, c *civil) int {
	c.month = monthIndex(b)
	if c.month == 0 || len(b) < 14 || b[3] != ' ' {
		return 0
	}
	i := 4
	if b[i] == ' ' {
		i++
	}
	d, ok := digit(b[i])
	if !ok {
		return 0
	}
	i++
	if d2, ok := digit(b[i]); ok {
		d = d*10 + d2
		i++
	}
	if i >= len(b) || b[i] != ' ' || d < 1 || d > 31 {
		return 0
	}
	c.day = d
	i++
	if y, ok := num4(b, i); ok && i+4 < len(b) && b[i+4] == ' ' {
		c.year, c.hasYear = y, true
		i += 5
	}
	if i+8 > len(b) || b[i+2] != ':' || b[i+5] != ':' {
		return 0
	}
	var ok3 [3]bool
	c.hour, ok3[0] = num2(b, i)
	c.minute, ok3[1] = num2(b, i+3)
	c.sec, ok3[2] = num2(b, i+6)
	if ok3 != [3]bool{true, true, true} || c.hour > 23 || c.minute > 59 || c.sec > 60 {
		return 0
	}
	if c.sec == 60 {
		c.sec = 59 // a leap second, as time.Date cannot hold it
	}
	i += 8
	if i < len(b) && b[i] == '.' {
		ns, digits, end := fraction(b, i)
		if digits == 0 {
			return 0
		}
		c.nsec, i = ns, end
	}
	if !c.hasYear && i+5 <= len(b) && b[i] == ' ' {
		if y, ok := num4(b, i+1); ok && (i+5 == len(b) || b[i+5] == ' ' || b[i+5] == ':') {
			c.year, c.hasYear = y, true
			i += 5
		}
	}
	if i+4 <= len(b) && b[i] == ' ' && (string(b[i+1:i+4]) == "UTC" || string(b[i+1:i+4]) == "GMT") &&
		(i+4 == len(b) || b[i+4] == ' ' || b[i+4] == ':') {
		c.zoned = true
		i += 4
	}
	if i < len(b) && b[i] == ':' {
		i++
	}
	if i < len(b) && b[i] != ' ' {
		return 0
	}
	if c.day > calendar.DaysIn(c.month, 2000) || c.hasYear && c.day > calendar.DaysIn(c.month, c.year) {
		return 0
	}
	c.bsd = true
	return i
}
