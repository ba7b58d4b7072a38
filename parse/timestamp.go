package parse

import (
	"fmt"
	"time"

	"github.com/relaykit/relaykit"
)

// Layouts of [TimestampConfig.Layout] that are not Go reference-time
// layouts: integers (with an optional fraction for LayoutUnix) counting
// from the Unix epoch.
const (
	LayoutUnix   = "unix"    // seconds, optionally with a fraction: 1545937675, 1545937675.25
	LayoutUnixMs = "unix_ms" // milliseconds
	LayoutUnixUs = "unix_us" // microseconds
	LayoutUnixNs = "unix_ns" // nanoseconds
)

// TimestampConfig configures [NewTimestamp].
type TimestampConfig struct {
	// Fields names the values that hold the timestamp, in order; several
	// are joined with Separator before parsing (FortiGate's "date" and
	// "time": Fields {"date", "time"}, Layout "2006-01-02 15:04:05").
	// Names are read as in [KVConfig.Field] ("" is the raw message).
	// Required.
	Fields []string
	// Separator joins the values of several Fields. Empty means one
	// space.
	Separator string
	// Layout is a Go reference-time layout (time.Parse's), or
	// [LayoutUnix], [LayoutUnixMs], [LayoutUnixUs] or [LayoutUnixNs].
	// Empty means RFC 3339 with an optional fraction (time.RFC3339Nano).
	Layout string
	// Location is the zone of a timestamp whose layout has none. Nil means
	// time.Local, as in the syslog package.
	Location *time.Location
	// ZoneField names a field holding the offset from UTC of a timestamp
	// whose layout has no zone ("+0100", "-05:00", "Z"; FortiGate's "tz"),
	// which then takes the place of Location. Empty means none; a missing
	// or unreadable zone falls back to Location.
	ZoneField string
}

// TimestampStats is a snapshot of a [Timestamp] step's counters. Every
// event is in Parsed, Missing or Failed.
type TimestampStats struct {
	// Events is the number of events the step processed.
	Events uint64
	// Parsed is the number of events whose time the step set.
	Parsed uint64
	// Missing is the number of events without (one of) the Fields, or
	// with an empty one; their time was kept.
	Missing uint64
	// Failed is the number of events whose timestamp did not match the
	// Layout or lay outside years 1678 to 2261; their time was kept.
	Failed uint64
}

// Timestamp is the step [NewTimestamp] returns. It is safe for concurrent
// use by multiple goroutines.
type Timestamp struct {
	srcs   []source
	sep    string
	layout timeLayout
	unit   int64 // Unix layouts: nanoseconds per unit; 0 otherwise
	frac   bool  // LayoutUnix: a fraction may follow
	loc    *time.Location
	zone   source
	zoned  bool

	events, parsed, missing, failed counter
}

// NewTimestamp returns a step named "parse_timestamp" that reads the
// event's own time from one or more fields and stores it in
// relaykit.Event.Time, which Sentinel writes to TimeGenerated and HEC to
// its time. When a field is missing or empty (ErrTimestamp, counted as
// Missing), or the text does not match the layout (ErrTimestamp, counted
// as Failed), the event keeps the time it had: the syslog header's, or
// none, and then sinks use the receive time.
//
// Go layouts made of numeric elements (2006 01 02 _2 15 04 05, fractions
// .000 and .999, numeric zones -0700 -07:00 Z0700 Z07:00), the month and
// weekday abbreviations Jan and Mon, and punctuation are read without
// allocating; every other layout, and any text that fast path does not
// accept, is read by time.ParseInLocation, with the same result and an
// allocation or two.
//
// It returns an error wrapping [ErrInvalidConfig] when Fields is empty.
func NewTimestamp(cfg TimestampConfig) (*Timestamp, error) {
	if len(cfg.Fields) == 0 {
		return nil, fmt.Errorf("%w: parse_timestamp: no Fields", ErrInvalidConfig)
	}
	t := &Timestamp{sep: cfg.Separator, loc: cfg.Location}
	if t.sep == "" {
		t.sep = " "
	}
	if t.loc == nil {
		t.loc = time.Local
	}
	for _, f := range cfg.Fields {
		t.srcs = append(t.srcs, newSource(f))
	}
	if cfg.ZoneField != "" {
		t.zone, t.zoned = newSource(cfg.ZoneField), true
	}
	switch cfg.Layout {
	case LayoutUnix:
		t.unit, t.frac = 1e9, true
	case LayoutUnixMs:
		t.unit = 1e6
	case LayoutUnixUs:
		t.unit = 1e3
	case LayoutUnixNs:
		t.unit = 1
	case "":
		t.layout = compileLayout(time.RFC3339Nano)
	default:
		t.layout = compileLayout(cfg.Layout)
	}
	return t, nil
}

// Name returns "parse_timestamp".
func (*Timestamp) Name() string { return "parse_timestamp" }

// Apply sets e.Time from the configured fields; it always keeps the event.
// The error is nil or ErrTimestamp.
func (t *Timestamp) Apply(e *relaykit.Event) (bool, error) {
	t.events.add()
	var buf [96]byte
	var v []byte
	if len(t.srcs) == 1 {
		v = t.srcs[0].sel.Value(e)
		if len(v) == 0 {
			t.missing.add()
			return true, ErrTimestamp
		}
	} else {
		v = buf[:0]
		for i, s := range t.srcs {
			x := s.sel.Value(e)
			if len(x) == 0 {
				t.missing.add()
				return true, ErrTimestamp
			}
			if i > 0 {
				v = append(v, t.sep...)
			}
			v = append(v, x...)
		}
	}
	ns, ok := t.parse(e, v)
	if !ok {
		t.failed.add()
		return true, ErrTimestamp
	}
	e.Time = ns
	t.parsed.add()
	return true, nil
}

func (t *Timestamp) parse(e *relaykit.Event, v []byte) (int64, bool) {
	if t.unit != 0 {
		return parseUnix(v, t.unit, t.frac)
	}
	if t.zoned {
		if off, ok := parseOffset(t.zone.sel.Value(e)); ok {
			ns, ok := t.layout.parse(v, time.UTC)
			return ns - int64(off)*1e9, ok
		}
	}
	return t.layout.parse(v, t.loc)
}

// Stats returns a snapshot of the step's counters.
func (t *Timestamp) Stats() TimestampStats {
	return TimestampStats{Events: t.events.load(), Parsed: t.parsed.load(), Missing: t.missing.load(), Failed: t.failed.load()}
}

// parseUnix reads a decimal count of units (ns per unit) since the epoch,
// optionally negative and, with frac, followed by a fraction of a unit.
func parseUnix(v []byte, unit int64, frac bool) (int64, bool) {
	neg := len(v) > 0 && v[0] == '-'
	if neg {
		v = v[1:]
	}
	i, n := 0, uint64(0)
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		if n > (1<<63-1)/10 {
			return 0, false
		}
		n = n*10 + uint64(v[i]-'0')
		i++
	}
	if i == 0 || n > uint64((1<<63-1)/unit) {
		return 0, false
	}
	ns := int64(n) * unit
	if i < len(v) {
		if !frac || v[i] != '.' || i+1 == len(v) {
			return 0, false
		}
		scale := unit / 10
		for _, c := range v[i+1:] {
			if c < '0' || c > '9' {
				return 0, false
			}
			ns += int64(c-'0') * scale
			scale /= 10
		}
		if ns < 0 {
			return 0, false
		}
	}
	if neg {
		ns = -ns
	}
	return ns, true
}

// parseOffset reads a zone offset from UTC, in seconds: "Z", "UTC", "GMT",
// or a sign, two digits of hours and optionally (with or without a colon)
// two of minutes: "+01", "+0100", "-05:30".
func parseOffset(v []byte) (int, bool) {
	switch string(v) {
	case "Z", "UTC", "GMT", "z":
		return 0, true
	}
	if len(v) < 3 || (v[0] != '+' && v[0] != '-') {
		return 0, false
	}
	h, ok := digits(v, 1, 2)
	if !ok || h > 23 {
		return 0, false
	}
	m := 0
	switch rest := v[3:]; len(rest) {
	case 0:
	case 2:
		if m, ok = digits(rest, 0, 2); !ok {
			return 0, false
		}
	case 3:
		if rest[0] != ':' {
			return 0, false
		}
		if m, ok = digits(rest, 1, 2); !ok {
			return 0, false
		}
	default:
		return 0, false
	}
	if m > 59 {
		return 0, false
	}
	off := h*3600 + m*60
	if v[0] == '-' {
		off = -off
	}
	return off, true
}
