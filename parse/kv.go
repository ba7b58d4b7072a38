package parse

import (
	"bytes"
	"fmt"

	"github.com/relaykit/relaykit"
)

// Duplicate says what a step does with a key that occurs more than once in
// the text it parses. A field that existed before the step ran (set by an
// earlier step or the syslog parser) is always replaced by the text's
// value.
type Duplicate uint8

const (
	// DuplicateLast keeps the last value of a repeated key, as the CEF
	// decoder does. The default.
	DuplicateLast Duplicate = iota
	// DuplicateFirst keeps the first value and ignores later ones.
	DuplicateFirst
	// DuplicateJoin keeps every value, joined with a comma in the order
	// of the text.
	DuplicateJoin
)

// String returns "last", "first" or "join".
func (d Duplicate) String() string {
	switch d {
	case DuplicateLast:
		return "last"
	case DuplicateFirst:
		return "first"
	case DuplicateJoin:
		return "join"
	}
	return fmt.Sprintf("Duplicate(%d)", uint8(d))
}

// KVConfig configures [NewKV]. The zero value reads FortiGate's and
// logfmt's layout from the raw message: pairs separated by spaces or tabs,
// key=value, values optionally in double or single quotes.
type KVConfig struct {
	// Field names the value to parse: "" or "_raw" is the raw message;
	// "host", "source", "sourcetype" and "index" are the metadata values;
	// any other name is an extracted field (pipeline.FieldRaw and the
	// other names).
	Field string
	// Delimiters holds the bytes that separate pairs and end a value that
	// is not quoted; any of them, in any number, separates two pairs.
	// Empty means space and tab (" \t"). Check Point's `k:"v"; k2:"v2"`
	// is "; ".
	Delimiters string
	// Separator separates a key from its value; it may be longer than
	// one byte. Empty means "=". Check Point uses ":".
	Separator string
	// Quotes holds the bytes that open a quoted value (the same byte
	// closes it). Empty means both `"` and `'`.
	Quotes string
	// Prefix is prepended to every key stored, e.g. "fgt.". Empty means
	// none.
	Prefix string
	// Duplicate says what to do with a key repeated in the text. The
	// zero value is DuplicateLast.
	Duplicate Duplicate
	// MaxFields caps the fields one event gets from its text; the pairs
	// after that are not stored and the step reports ErrTooManyFields.
	// Zero means [DefaultMaxFields].
	MaxFields int
}

// KVStats is a snapshot of a [KV] step's counters. Every event the step
// saw is in Parsed or NoMatch.
type KVStats struct {
	// Events is the number of events the step processed.
	Events uint64
	// Parsed is the number of events whose text held at least one pair
	// (some of them also counted below).
	Parsed uint64
	// NoMatch is the number of events whose text held no pair
	// (ErrNoMatch).
	NoMatch uint64
	// Unterminated is the number of events with a quoted value that had
	// no closing quote (ErrUnterminated).
	Unterminated uint64
	// TooManyFields is the number of events with more pairs than
	// MaxFields (ErrTooManyFields).
	TooManyFields uint64
}

// KV is the key=value step [NewKV] returns. It is safe for concurrent use
// by multiple goroutines.
type KV struct {
	syn       kvSyntax
	src       source
	prefix    string
	dup       Duplicate
	maxFields int

	events, parsed, noMatch, unterminated, tooMany counter
}

// NewKV returns a step named "parse_kv" that splits a value into
// key/value pairs and stores each pair as an extracted field (the key,
// after Prefix; the value, unquoted and unescaped).
//
// # Grammar
//
// With D the Delimiters, S the Separator and Q the Quotes, the text is read
// from left to right as
//
//	text   = *( 1*D / pair / junk )
//	pair   = key S value
//	key    = 1*( any byte but D, Q, or the start of S )
//	value  = quoted / bare
//	quoted = q *( "\" any / any byte but q ) q     ; q in Q, the same byte both ends
//	bare   = *( any byte but D )
//
// A bare value ends at the first delimiter and may hold S and quotes
// (`url=/a?b=c` is the key "url" with the value "/a?b=c"); only a quote
// that starts a value opens a quoted one. Inside a quoted value a
// backslash before q or before a backslash stands for that byte; a
// backslash before any other byte is kept with it (`"C:\temp"` stays
// C:\temp). An empty bare or quoted value is stored as an empty field.
//
// What does not match is skipped and never becomes a field: a word with no
// separator ("last message repeated"), an empty key (`=x`), bytes glued to
// the closing quote of a value (`k="a"b`) up to the next delimiter. A
// quote where a key would start opens quoted text that is skipped whole,
// and so does a quote after a skipped word's first byte: a field is never
// taken from inside quoted text, so `msg="user srcip=1.2.3.4"` is one
// field, msg, and cannot set srcip (the bug Graylog and Elastic both fixed
// in their key=value parsers). A quoted value without its closing quote
// runs to the end of the text, is stored, and the step reports
// ErrUnterminated.
//
// A text with no pair at all is left alone and reported as ErrNoMatch.
//
// # Fields
//
// Each pair sets the field Prefix+key. A field that existed before the
// step ran is replaced in place; a key repeated within the text follows
// Duplicate. The raw message and the value parsed are never modified, so
// every byte of the text stays in the event; the fields are copies in the
// event's own buffers, and once they are warm the step allocates nothing.
//
// It returns an error wrapping [ErrInvalidConfig] when MaxFields is
// negative, the Separator holds a delimiter or a quote byte, a delimiter
// is also a quote, or Duplicate is unknown.
func NewKV(cfg KVConfig) (*KV, error) {
	syn, err := newKVSyntax(cfg.Delimiters, cfg.Separator, cfg.Quotes)
	if err != nil {
		return nil, fmt.Errorf("%w: parse_kv: %w", ErrInvalidConfig, err)
	}
	if cfg.MaxFields < 0 {
		return nil, fmt.Errorf("%w: parse_kv: negative MaxFields %d", ErrInvalidConfig, cfg.MaxFields)
	}
	if cfg.Duplicate > DuplicateJoin {
		return nil, fmt.Errorf("%w: parse_kv: unknown Duplicate %d", ErrInvalidConfig, cfg.Duplicate)
	}
	if cfg.MaxFields == 0 {
		cfg.MaxFields = DefaultMaxFields
	}
	return &KV{
		syn: syn, src: newSource(cfg.Field), prefix: cfg.Prefix,
		dup: cfg.Duplicate, maxFields: cfg.MaxFields,
	}, nil
}

// Name returns "parse_kv".
func (*KV) Name() string { return "parse_kv" }

// Apply parses the configured value of e into fields; it always keeps the
// event. The error is nil, ErrNoMatch, ErrUnterminated or
// ErrTooManyFields.
func (k *KV) Apply(e *relaykit.Event) (bool, error) {
	k.events.add()
	text, sc := k.src.read(e)
	n, err := k.apply(e, text)
	release(sc)
	if n == 0 {
		k.noMatch.add()
		return true, ErrNoMatch
	}
	k.parsed.add()
	switch err {
	case ErrUnterminated:
		k.unterminated.add()
	case ErrTooManyFields:
		k.tooMany.add()
	}
	return true, err
}

// apply stores the pairs of text and returns how many pairs it read.
func (k *KV) apply(e *relaykit.Event, text []byte) (int, error) {
	var seen keyFilter
	seen.fillSuffix(e, k.prefix)
	n0 := len(e.Fields)
	sc := kvScanner{syn: &k.syn, s: text}
	pairs, added := 0, 0
	var err error
	for sc.next() {
		if len(sc.key) == 0 {
			continue
		}
		pairs++
		h := hashKey(sc.key)
		if seen.has(h) {
			if i := findKey(e, k.prefix, sc.key); i >= 0 {
				f := &e.Fields[i]
				if i >= n0 { // repeated within this text
					switch k.dup {
					case DuplicateFirst:
						continue
					case DuplicateJoin:
						f.Value = appendKVValue(append(f.Value, ','), sc.val, sc.quote)
						continue
					}
				} else {
					// Set before the step ran: it becomes this text's
					// field, so that a repeat later in the text is seen
					// as one.
					f = moveToEnd(e, i)
					n0--
				}
				f.Value = appendKVValue(f.Value[:0], sc.val, sc.quote)
				continue
			}
		}
		if added >= k.maxFields {
			err = ErrTooManyFields
			break
		}
		f := addKey(e, k.prefix, sc.key)
		seen.add(h)
		added++
		f.Value = appendKVValue(f.Value, sc.val, sc.quote)
	}
	if err == nil && sc.unterminated {
		err = ErrUnterminated
	}
	return pairs, err
}

// Stats returns a snapshot of the step's counters.
func (k *KV) Stats() KVStats {
	return KVStats{
		Events: k.events.load(), Parsed: k.parsed.load(), NoMatch: k.noMatch.load(),
		Unterminated: k.unterminated.load(), TooManyFields: k.tooMany.load(),
	}
}

// Byte classes of a key=value grammar.
const (
	kvDelim    = 1 << iota // ends a bare value; separates pairs
	kvQuote                // opens a quoted value
	kvSepStart             // the separator's first byte
)

// kvSyntax holds the byte classes of a key=value grammar.
type kvSyntax struct {
	class [256]uint8
	sep   []byte
}

func newKVSyntax(delims, sep, quotes string) (kvSyntax, error) {
	var s kvSyntax
	if delims == "" {
		delims = " \t"
	}
	if sep == "" {
		sep = "="
	}
	if quotes == "" {
		quotes = `"'`
	}
	for i := 0; i < len(delims); i++ {
		s.class[delims[i]] |= kvDelim
	}
	for i := 0; i < len(quotes); i++ {
		if s.class[quotes[i]]&kvDelim != 0 {
			return s, fmt.Errorf("quote %q is also a delimiter", quotes[i])
		}
		if quotes[i] == '\\' {
			return s, fmt.Errorf("a backslash cannot be a quote")
		}
		s.class[quotes[i]] |= kvQuote
	}
	for i := 0; i < len(sep); i++ {
		if s.class[sep[i]]&(kvDelim|kvQuote) != 0 {
			return s, fmt.Errorf("separator %q holds a delimiter or quote byte", sep)
		}
	}
	s.class[sep[0]] |= kvSepStart
	s.sep = []byte(sep)
	return s, nil
}

// sepAt reports whether the separator starts at s[i], whose byte is the
// separator's first.
func (syn *kvSyntax) sepAt(s []byte, i int) bool {
	return len(syn.sep) == 1 || len(s)-i >= len(syn.sep) && string(s[i:i+len(syn.sep)]) == string(syn.sep)
}

// kvScanner walks the pairs of a text; see [NewKV] for the grammar. After
// next returns true, key and val are the pair's raw bytes (val without its
// quotes, escapes not yet decoded) and quote is the quote byte, or 0 for
// a bare value. A pair with an empty key is returned too (the caller skips
// it), so that the scanner's result is the grammar's.
type kvScanner struct {
	syn          *kvSyntax
	s            []byte
	i            int
	key, val     []byte
	quote        byte
	unterminated bool
}

func (sc *kvScanner) next() bool {
	s, syn := sc.s, sc.syn
	i := sc.i
	for i < len(s) {
		c := syn.class[s[i]]
		if c&kvDelim != 0 {
			i++
			continue
		}
		if c&kvQuote != 0 {
			i = sc.skipJunk(i) // quoted text where a key would start
			continue
		}
		ks := i
		for {
			for i < len(s) && syn.class[s[i]] == 0 {
				i++
			}
			if i < len(s) && syn.class[s[i]] == kvSepStart && !syn.sepAt(s, i) {
				i++ // the separator's first byte alone is a key byte
				continue
			}
			break
		}
		if i == len(s) || syn.class[s[i]]&kvSepStart == 0 || !syn.sepAt(s, i) {
			i = sc.skipJunk(i) // a word without separator
			continue
		}
		sc.key = s[ks:i]
		i += len(syn.sep)
		if i < len(s) && syn.class[s[i]]&kvQuote != 0 {
			q := s[i]
			end, ok := closeQuote(s, i+1, q)
			sc.quote = q
			if !ok {
				sc.val = s[i+1:]
				sc.unterminated = true
				sc.i = len(s)
				return true
			}
			sc.val = s[i+1 : end]
			sc.i = sc.skipJunk(end + 1) // bytes glued to the closing quote
			return true
		}
		vs := i
		for i < len(s) && syn.class[s[i]]&kvDelim == 0 {
			i++
		}
		sc.val, sc.quote, sc.i = s[vs:i], 0, i
		return true
	}
	sc.i = i
	return false
}

// skipJunk skips from i to the next delimiter outside quoted text, and
// returns its index (or len(s)). A quote opens quoted text that is skipped
// to its closing quote, or to the end of the text.
func (sc *kvScanner) skipJunk(i int) int {
	s, syn := sc.s, sc.syn
	for i < len(s) {
		c := syn.class[s[i]]
		if c&kvDelim != 0 {
			break
		}
		if c&kvQuote != 0 {
			end, ok := closeQuote(s, i+1, s[i])
			if !ok {
				sc.unterminated = true
				return len(s)
			}
			i = end
		}
		i++
	}
	return i
}

// closeQuote returns the index of the quote byte q that closes quoted text
// starting at s[i], skipping backslash escapes, and whether there is one.
// A byte loop: quoted values are short, shorter than what makes
// bytes.IndexByte pay for its call.
func closeQuote(s []byte, i int, q byte) (int, bool) {
	for i < len(s) {
		switch s[i] {
		case q:
			return i, true
		case '\\':
			i += 2
			continue
		}
		i++
	}
	return len(s), false
}

// appendKVValue appends v, decoding the escapes of a quoted value (quote
// is its quote byte; 0 for a bare value, which has none).
func appendKVValue(dst, v []byte, quote byte) []byte {
	if quote == 0 {
		return append(dst, v...)
	}
	for {
		j := bytes.IndexByte(v, '\\')
		if j < 0 {
			return append(dst, v...)
		}
		dst = append(dst, v[:j]...)
		if j+1 < len(v) && (v[j+1] == quote || v[j+1] == '\\') {
			dst = append(dst, v[j+1])
			v = v[j+2:]
			continue
		}
		dst = append(dst, '\\')
		v = v[j+1:]
	}
}
