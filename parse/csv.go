package parse

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/relaykit/relaykit"
)

// CSVConfig configures [NewCSV]. The zero value names the comma-separated
// columns of the raw message "column1", "column2", ...
type CSVConfig struct {
	// Field names the value to parse, as in [KVConfig.Field]; "" is the
	// raw message.
	Field string
	// Separator separates the columns. Zero means ','. It cannot be '"',
	// '\r' or '\n'.
	Separator byte
	// Columns names the columns in order: the first value is stored as
	// the field Columns[0], and so on. A name "" or "-" skips its column
	// (PAN-OS's FUTURE_USE columns). With Select, these are the names of
	// lines whose selecting value has no set of its own.
	Columns []string
	// Select names the column (one of Columns) whose value chooses the
	// column names of the line from Sets: PAN-OS's "type" (TRAFFIC,
	// THREAT, SYSTEM, ...), the fourth column. Empty means every line
	// uses Columns.
	Select string
	// Sets maps a value of the Select column to the names of the whole
	// line, that column included. A line whose value is not a key uses
	// Columns (and is counted in CSVStats.Unselected).
	Sets map[string][]string
	// Prefix is prepended to every name stored. Empty means none.
	Prefix string
	// ExtraPrefix names the values past the last named column: the value
	// in column n (counting from 1) is stored as Prefix+ExtraPrefix+n.
	// Empty means "column".
	ExtraPrefix string
	// KeepEmpty stores empty values as empty fields. By default a column
	// with an empty value sets no field (PAN-OS leaves most columns
	// empty, and a field per empty column would only fill
	// AdditionalExtensions with "name=").
	KeepEmpty bool
	// Braces makes a value that starts with '{' run to its matching '}'
	// before the next separator counts, so that the commas inside are not
	// separators: PAN-OS writes its Link Switches column as a braced list
	// of comma-separated values, unquoted. A '{' without its matching
	// '}' is an ordinary byte.
	Braces bool
	// MaxFields caps the fields one event gets; the columns after that
	// are not stored and the step reports ErrTooManyFields. Zero means
	// [DefaultMaxFields].
	MaxFields int
}

// CSVStats is a snapshot of a [CSV] step's counters. Every event is in
// Parsed or NoMatch.
type CSVStats struct {
	// Events is the number of events the step processed.
	Events uint64
	// Parsed is the number of events whose text held at least one value.
	Parsed uint64
	// NoMatch is the number of events with an empty text (ErrNoMatch).
	NoMatch uint64
	// Short is the number of events with fewer values than their column
	// names (the missing trailing columns set no field).
	Short uint64
	// Long is the number of events with more values than their column
	// names (the extra values are stored under ExtraPrefix names).
	Long uint64
	// Unselected is the number of events whose Select value has no set
	// in Sets, or that have no Select column at all.
	Unselected uint64
	// Unterminated is the number of events whose last value opened a
	// quote it did not close (ErrUnterminated).
	Unterminated uint64
	// TooManyFields is the number of events with more values to store
	// than MaxFields (ErrTooManyFields).
	TooManyFields uint64
}

// CSV is the step [NewCSV] returns. It is safe for concurrent use by
// multiple goroutines.
type CSV struct {
	src       source
	sep       byte
	braces    bool
	keepEmpty bool
	maxFields int
	prefix    string
	extra     string // Prefix+ExtraPrefix
	def       columnSet
	selIdx    int // -1: no selection
	sets      map[string]*columnSet

	events, parsed, noMatch, short, long, unselected, unterminated, tooMany counter
}

// columnSet is a list of column names with their keys and hashes
// precomputed; an empty key skips its column.
type columnSet struct {
	keys   []string
	hashes []uint32
}

func newColumnSet(prefix string, names []string) (columnSet, error) {
	cs := columnSet{keys: make([]string, len(names)), hashes: make([]uint32, len(names))}
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		if n == "" || n == "-" {
			continue
		}
		if seen[n] {
			return cs, fmt.Errorf("column name %q repeated", n)
		}
		seen[n] = true
		cs.keys[i] = prefix + n
		cs.hashes[i] = fnvString(fnvOffset, cs.keys[i])
	}
	return cs, nil
}

// NewCSV returns a step named "parse_csv" that splits a value into
// columns and stores each under its column's name.
//
// # Grammar
//
// The value is one record of RFC 4180, with the Separator in place of the
// comma, read as encoding/csv reads a line with LazyQuotes set: a value
// that starts with '"' is quoted, runs to the '"' followed by the
// separator or by the end of the text, and holds `""` for one '"'; a
// '"' inside a quoted value followed by anything else is kept as it is,
// and so is a '"' inside an unquoted value. A quoted value without its
// closing quote runs to the end of the text and the step reports
// ErrUnterminated. Line breaks are ordinary bytes (an event holds one
// line). Spaces are kept. An empty text has no values: the event is left
// alone and the step reports ErrNoMatch.
//
// # Columns
//
// The values are named by position: by the set that Select's value picks
// from Sets, else by Columns. Fewer values than names leave the missing
// trailing columns unset (CSVStats.Short); more values than names are
// stored as Prefix+ExtraPrefix+n (CSVStats.Long), so nothing is dropped.
// A field that existed before the step ran is replaced in place. Empty
// values set no field unless KeepEmpty is set. The raw message is never
// modified, the fields are copies in the event's own buffers, and once
// they are warm the step allocates nothing.
//
// It returns an error wrapping [ErrInvalidConfig] for a Separator that is
// '"', '\r' or '\n', a name repeated within a set, a Select that is not
// one of Columns, Sets without Select, or a negative MaxFields.
func NewCSV(cfg CSVConfig) (*CSV, error) {
	bad := func(format string, a ...any) (*CSV, error) {
		return nil, fmt.Errorf("%w: parse_csv: %s", ErrInvalidConfig, fmt.Sprintf(format, a...))
	}
	if cfg.Separator == 0 {
		cfg.Separator = ','
	}
	if cfg.Separator == '"' || cfg.Separator == '\r' || cfg.Separator == '\n' {
		return bad("separator %q", cfg.Separator)
	}
	if cfg.MaxFields < 0 {
		return bad("negative MaxFields %d", cfg.MaxFields)
	}
	if cfg.MaxFields == 0 {
		cfg.MaxFields = DefaultMaxFields
	}
	if cfg.ExtraPrefix == "" {
		cfg.ExtraPrefix = "column"
	}
	c := &CSV{
		src: newSource(cfg.Field), sep: cfg.Separator, braces: cfg.Braces, keepEmpty: cfg.KeepEmpty,
		maxFields: cfg.MaxFields, prefix: cfg.Prefix, extra: cfg.Prefix + cfg.ExtraPrefix, selIdx: -1,
	}
	var err error
	if c.def, err = newColumnSet(cfg.Prefix, cfg.Columns); err != nil {
		return bad("Columns: %v", err)
	}
	if cfg.Select == "" {
		if len(cfg.Sets) > 0 {
			return bad("Sets without Select")
		}
		return c, nil
	}
	for i, n := range cfg.Columns {
		if n == cfg.Select {
			c.selIdx = i
		}
	}
	if c.selIdx < 0 {
		return bad("Select %q is not one of Columns", cfg.Select)
	}
	c.sets = make(map[string]*columnSet, len(cfg.Sets))
	for v, names := range cfg.Sets {
		cs, err := newColumnSet(cfg.Prefix, names)
		if err != nil {
			return bad("Sets[%q]: %v", v, err)
		}
		c.sets[v] = &cs
	}
	return c, nil
}

// Name returns "parse_csv".
func (*CSV) Name() string { return "parse_csv" }

// Apply parses the configured value of e into fields; it always keeps the
// event. The error is nil, ErrNoMatch, ErrUnterminated or
// ErrTooManyFields.
func (c *CSV) Apply(e *relaykit.Event) (bool, error) {
	c.events.add()
	text, sc := c.src.read(e)
	err := c.apply(e, text)
	release(sc)
	switch err {
	case ErrNoMatch:
		c.noMatch.add()
		return true, err
	case ErrUnterminated:
		c.unterminated.add()
	case ErrTooManyFields:
		c.tooMany.add()
	}
	c.parsed.add()
	return true, err
}

func (c *CSV) apply(e *relaykit.Event, text []byte) error {
	if len(text) == 0 {
		return ErrNoMatch
	}
	set := &c.def
	if c.selIdx >= 0 {
		sc := csvScanner{s: text, sep: c.sep, braces: c.braces}
		var v []byte
		var quoted, found bool
		for j := 0; j <= c.selIdx && sc.next(); j++ {
			v, quoted, found = sc.val, sc.quoted, j == c.selIdx
		}
		var s *columnSet
		if found && !quoted {
			s = c.sets[string(v)] // no allocation: the conversion is only a map key
		} else if found {
			var buf [64]byte
			s = c.sets[string(appendCSVValue(buf[:0], v, true))]
		}
		if s != nil {
			set = s
		} else {
			c.unselected.add()
		}
	}
	var seen keyFilter
	seen.fill(e)
	sc := csvScanner{s: text, sep: c.sep, braces: c.braces}
	n, added := 0, 0
	var err error
	var kb [64]byte
	for sc.next() {
		j := n
		n++
		if len(sc.val) == 0 && !c.keepEmpty {
			continue
		}
		// A named column's key is a string, an extra column's key bytes
		// built in kb: findKey and addKey take both as prefix+key.
		var name string
		var key []byte
		var h uint32
		if j < len(set.keys) {
			if name = set.keys[j]; name == "" {
				continue
			}
			h = set.hashes[j]
		} else {
			key = strconv.AppendInt(append(kb[:0], c.extra...), int64(j+1), 10)
			h = fnvAdd(fnvOffset, key)
		}
		if seen.has(h) {
			if i := findKey(e, name, key); i >= 0 {
				f := &e.Fields[i]
				f.Value = appendCSVValue(f.Value[:0], sc.val, sc.quoted)
				continue
			}
		}
		if added >= c.maxFields {
			err = ErrTooManyFields
			break
		}
		f := addKey(e, name, key)
		seen.add(h)
		added++
		f.Value = appendCSVValue(f.Value, sc.val, sc.quoted)
	}
	if len(set.keys) > 0 && err == nil {
		switch {
		case n < len(set.keys):
			c.short.add()
		case n > len(set.keys):
			c.long.add()
		}
	}
	if err == nil && sc.unterminated {
		err = ErrUnterminated
	}
	return err
}

// Stats returns a snapshot of the step's counters.
func (c *CSV) Stats() CSVStats {
	return CSVStats{
		Events: c.events.load(), Parsed: c.parsed.load(), NoMatch: c.noMatch.load(),
		Short: c.short.load(), Long: c.long.load(), Unselected: c.unselected.load(),
		Unterminated: c.unterminated.load(), TooManyFields: c.tooMany.load(),
	}
}

// csvScanner walks the values of one CSV record (see [NewCSV]). After next
// returns true, val is the value's raw bytes, without its enclosing quotes
// when quoted is set (decode it with appendCSVValue).
type csvScanner struct {
	s            []byte
	i            int
	sep          byte
	braces       bool
	done         bool
	val          []byte
	quoted       bool
	unterminated bool
}

func (sc *csvScanner) next() bool {
	if sc.done {
		return false
	}
	s, i, sep := sc.s, sc.i, sc.sep
	if i < len(s) && s[i] == '"' {
		// Quoted: to the '"' followed by the separator or the end.
		start := i + 1
		j := start
		for {
			for j < len(s) && s[j] != '"' {
				j++
			}
			if j == len(s) {
				sc.val, sc.quoted, sc.unterminated, sc.done = s[start:], true, true, true
				return true
			}
			j++
			switch {
			case j < len(s) && s[j] == '"':
				j++ // "" is one quote
			case j == len(s):
				sc.val, sc.quoted, sc.done = s[start:j-1], true, true
				return true
			case s[j] == sep:
				sc.val, sc.quoted, sc.i = s[start:j-1], true, j+1
				return true
			}
			// A bare quote inside a quoted value is kept (LazyQuotes).
		}
	}
	j := i
	if sc.braces && i < len(s) && s[i] == '{' {
		if end := closeBrace(s, i); end > 0 {
			j = end
		}
	}
	// A byte loop: values are short, shorter than what makes
	// bytes.IndexByte pay for its call.
	for j < len(s) && s[j] != sep {
		j++
	}
	if j == len(s) {
		sc.val, sc.quoted, sc.done = s[i:], false, true
		return true
	}
	sc.val, sc.quoted, sc.i = s[i:j], false, j+1
	return true
}

// closeBrace returns the index just past the '}' matching the '{' at s[i],
// or 0 when there is none.
func closeBrace(s []byte, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return 0
}

// appendCSVValue appends v, with each `""` of a quoted value decoded to one
// '"'.
func appendCSVValue(dst, v []byte, quoted bool) []byte {
	if !quoted {
		return append(dst, v...)
	}
	for {
		j := bytes.IndexByte(v, '"')
		if j < 0 || j+1 == len(v) {
			return append(dst, v...)
		}
		if v[j+1] == '"' {
			dst = append(dst, v[:j+1]...)
			v = v[j+2:]
			continue
		}
		dst = append(dst, v[:j+1]...)
		v = v[j+1:]
	}
}
