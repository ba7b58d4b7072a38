package parse

import (
	"strings"
	"time"

	"github.com/relaykit/relaykit/internal/calendar"
)

// timeLayout is a Go reference-time layout compiled for a fast path:
// layouts made only of fixed-width numeric elements, month and weekday
// abbreviations, fractions and numeric zones are read here without
// allocating; anything else, and any text the fast path does not accept,
// goes to time.ParseInLocation, so the result is always what the time
// package would return.
type timeLayout struct {
	layout string
	ops    []timeOp // nil: no fast path
}

type timeOpKind uint8

const (
	opLit      timeOpKind = iota
	opYear                // 2006
	opMonth               // 01
	opMonthAbb            // Jan
	opDay                 // 02
	opDayUnder            // _2
	opWeekday             // Mon
	opHour                // 15
	opMinute              // 04
	opSecond              // 05
	opFrac                // .000 (n digits) or ,000
	opFracAny             // .999... or ,999...: optional, any number of digits
	opZone                // -0700, -07:00, Z0700, Z07:00
)

type timeOp struct {
	kind  timeOpKind
	lit   string
	n     int  // fraction digits; zone: with colon (1) or not (0)
	zulu  bool // zone: Z accepted for UTC
	comma bool // fraction: ',' instead of '.'
}

// compileLayout returns the layout with its fast path, if it has one.
func compileLayout(layout string) timeLayout {
	tl := timeLayout{layout: layout}
	var ops []timeOp
	lit := func(s string) {
		if n := len(ops); n > 0 && ops[n-1].kind == opLit {
			ops[n-1].lit += s
			return
		}
		ops = append(ops, timeOp{kind: opLit, lit: s})
	}
	s := layout
	for len(s) > 0 {
		switch {
		case strings.HasPrefix(s, "2006"):
			ops, s = append(ops, timeOp{kind: opYear}), s[4:]
		case strings.HasPrefix(s, "Jan") && !strings.HasPrefix(s, "January"):
			ops, s = append(ops, timeOp{kind: opMonthAbb}), s[3:]
		case strings.HasPrefix(s, "Mon") && !strings.HasPrefix(s, "Monday"):
			ops, s = append(ops, timeOp{kind: opWeekday}), s[3:]
		case strings.HasPrefix(s, "01"):
			ops, s = append(ops, timeOp{kind: opMonth}), s[2:]
		case strings.HasPrefix(s, "02"):
			ops, s = append(ops, timeOp{kind: opDay}), s[2:]
		case strings.HasPrefix(s, "_2") && !strings.HasPrefix(s, "_2006"):
			ops, s = append(ops, timeOp{kind: opDayUnder}), s[2:]
		case strings.HasPrefix(s, "15"):
			ops, s = append(ops, timeOp{kind: opHour}), s[2:]
		case strings.HasPrefix(s, "04"):
			ops, s = append(ops, timeOp{kind: opMinute}), s[2:]
		case strings.HasPrefix(s, "05"):
			ops, s = append(ops, timeOp{kind: opSecond}), s[2:]
		case strings.HasPrefix(s, "Z07:00"):
			ops, s = append(ops, timeOp{kind: opZone, n: 1, zulu: true}), s[6:]
		case strings.HasPrefix(s, "-07:00"):
			ops, s = append(ops, timeOp{kind: opZone, n: 1}), s[6:]
		case strings.HasPrefix(s, "Z0700"):
			ops, s = append(ops, timeOp{kind: opZone, zulu: true}), s[5:]
		case strings.HasPrefix(s, "-0700"):
			ops, s = append(ops, timeOp{kind: opZone}), s[5:]
		case (s[0] == '.' || s[0] == ',') && len(s) > 1 && (s[1] == '0' || s[1] == '9'):
			d := s[1]
			n := 1
			for n+1 < len(s) && s[n+1] == d {
				n++
			}
			if n+1 < len(s) && s[n+1] >= '0' && s[n+1] <= '9' {
				return tl // a fraction followed by a digit is not a fraction element
			}
			if len(ops) == 0 || ops[len(ops)-1].kind != opSecond {
				return tl // a fraction must follow the seconds
			}
			k := opFrac
			if d == '9' {
				k = opFracAny
			}
			ops, s = append(ops, timeOp{kind: k, n: n, comma: s[0] == ','}), s[n+1:]
		default:
			c := s[0]
			// A digit, '_' or a letter that starts an element the fast path
			// does not handle (January, Monday, MST, PM, pm, Z07, 06, 1,
			// 3, __2, ...) leaves the layout to time.Parse alone.
			if c >= '0' && c <= '9' || c == '_' || strings.IndexByte("JMPpZ", c) >= 0 {
				return tl
			}
			lit(s[:1])
			s = s[1:]
		}
	}
	tl.ops = ops
	return tl
}

var monthAbbrs = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
var weekdayAbbrs = [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

// parse returns v as nanoseconds since the Unix epoch, read in loc when
// the layout has no zone, and whether it is a valid time of the layout
// within the range of int64 nanoseconds.
func (tl *timeLayout) parse(v []byte, loc *time.Location) (int64, bool) {
	if tl.ops != nil {
		ns, ok, sure := tl.fast(v, loc)
		if ok || sure {
			return ns, ok
		}
	}
	// string(v) copies: the time package may keep the text in its error,
	// and v may be a caller's stack buffer.
	t, err := time.ParseInLocation(tl.layout, string(v), loc)
	if err != nil {
		return 0, false
	}
	return unixNano(t)
}

// unixNano returns t in nanoseconds and whether it is within the range of
// int64 nanoseconds (years 1678 to 2262).
func unixNano(t time.Time) (int64, bool) {
	sec := t.Unix()
	if sec < minUnixSec || sec > maxUnixSec {
		return 0, false
	}
	return t.UnixNano(), true
}

// Limits of int64 nanoseconds since the epoch, in seconds.
const (
	minUnixSec = -9223372036
	maxUnixSec = 9223372035
)

func digits(v []byte, i, n int) (int, bool) {
	if i+n > len(v) {
		return 0, false
	}
	x := 0
	for _, c := range v[i : i+n] {
		if c < '0' || c > '9' {
			return 0, false
		}
		x = x*10 + int(c-'0')
	}
	return x, true
}

// fast reads v with the compiled ops. When v has the layout's shape but an
// element out of range (month 13, hour 25, February 30), time.Parse would
// reject it too: fast reports ok false and sure true. For anything else it
// does not read exactly as time.Parse would, it reports both false (the
// caller then asks time.Parse).
func (tl *timeLayout) fast(v []byte, loc *time.Location) (ns int64, ok, sure bool) {
	year, month, day := 0, 1, 1 // time.Parse's values for omitted elements
	hour, minute, sec, nsec := 0, 0, 0, 0
	zoned, offset := false, 0
	i := 0
	outOfRange := false
	for _, op := range tl.ops {
		switch op.kind {
		case opLit:
			if len(v)-i < len(op.lit) || string(v[i:i+len(op.lit)]) != op.lit {
				return 0, false, false
			}
			i += len(op.lit)
		case opYear:
			if year, ok = digits(v, i, 4); !ok {
				return 0, false, false
			}
			i += 4
		case opMonth:
			if month, ok = digits(v, i, 2); !ok {
				return 0, false, false
			}
			outOfRange = outOfRange || month < 1 || month > 12
			i += 2
		case opMonthAbb:
			if len(v)-i < 3 {
				return 0, false, false
			}
			month = 0
			for m, a := range monthAbbrs {
				if string(v[i:i+3]) == a {
					month = m + 1
				}
			}
			if month == 0 {
				return 0, false, false
			}
			i += 3
		case opWeekday:
			if len(v)-i < 3 {
				return 0, false, false
			}
			found := false
			for _, a := range weekdayAbbrs {
				found = found || string(v[i:i+3]) == a
			}
			if !found {
				return 0, false, false
			}
			i += 3
		case opDay:
			if day, ok = digits(v, i, 2); !ok {
				return 0, false, false
			}
			i += 2
		case opDayUnder:
			// "_2": a space and one digit, or two digits.
			if i < len(v) && v[i] == ' ' {
				if day, ok = digits(v, i+1, 1); !ok {
					return 0, false, false
				}
				if i+2 < len(v) && v[i+2] >= '0' && v[i+2] <= '9' {
					return 0, false, false // " 12": leave it to time.Parse
				}
				i += 2
			} else {
				if day, ok = digits(v, i, 2); !ok {
					return 0, false, false
				}
				i += 2
			}
		case opHour:
			if hour, ok = digits(v, i, 2); !ok {
				return 0, false, false
			}
			outOfRange = outOfRange || hour > 23
			i += 2
		case opMinute:
			if minute, ok = digits(v, i, 2); !ok {
				return 0, false, false
			}
			outOfRange = outOfRange || minute > 59
			i += 2
		case opSecond:
			if sec, ok = digits(v, i, 2); !ok {
				return 0, false, false
			}
			outOfRange = outOfRange || sec > 59
			i += 2
		case opFrac, opFracAny:
			sepc := byte('.')
			if op.comma {
				sepc = ','
			}
			if i >= len(v) || v[i] != sepc {
				if op.kind == opFracAny {
					continue
				}
				return 0, false, false
			}
			j := i + 1
			for j < len(v) && v[j] >= '0' && v[j] <= '9' {
				j++
			}
			n := j - i - 1
			if n == 0 || n > 9 || (op.kind == opFrac && n != op.n) {
				return 0, false, false
			}
			f, _ := digits(v, i+1, n)
			for k := n; k < 9; k++ {
				f *= 10
			}
			nsec = f
			i = j
		case opZone:
			if op.zulu && i < len(v) && v[i] == 'Z' {
				zoned, offset = true, 0
				i++
				continue
			}
			if i >= len(v) || (v[i] != '+' && v[i] != '-') {
				return 0, false, false
			}
			hh, ok1 := digits(v, i+1, 2)
			j := i + 3
			if op.n == 1 {
				if j >= len(v) || v[j] != ':' {
					return 0, false, false
				}
				j++
			}
			mm, ok2 := digits(v, j, 2)
			if !ok1 || !ok2 || hh > 23 || mm > 59 {
				return 0, false, false
			}
			offset = hh*3600 + mm*60
			if v[i] == '-' {
				offset = -offset
			}
			zoned = true
			i = j + 2
		}
	}
	if i != len(v) {
		return 0, false, false // trailing text (time.Parse may still read a fraction)
	}
	if outOfRange || day < 1 || month < 1 || month > 12 || day > calendar.DaysIn(month, year) {
		return 0, false, true
	}
	var sec64 int64
	if zoned {
		sec64 = calendar.DaysFromEpoch(year, month, day)*86400 + int64(hour*3600+minute*60+sec) - int64(offset)
	} else if loc == time.UTC {
		sec64 = calendar.DaysFromEpoch(year, month, day)*86400 + int64(hour*3600+minute*60+sec)
	} else {
		sec64 = time.Date(year, time.Month(month), day, hour, minute, sec, 0, loc).Unix()
	}
	if sec64 < minUnixSec || sec64 > maxUnixSec {
		return 0, false, true
	}
	return sec64*1e9 + int64(nsec), true, true
}
