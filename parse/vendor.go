package parse

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/evfield"
)

// Names of the vendor steps, for [VendorConfig.Name].
const (
	// VendorFortiGate reads FortiOS key=value logs (traffic, UTM, event).
	VendorFortiGate = "fortigate"
	// VendorPANOS reads PAN-OS syslog in its default CSV formats.
	VendorPANOS = "panos"
	// VendorCiscoASA reads Cisco ASA and Firepower Threat Defense
	// messages (%ASA-, %FTD-, %PIX-).
	VendorCiscoASA = "cisco_asa"
	// VendorCheckPoint reads Check Point Log Exporter's syslog format.
	VendorCheckPoint = "checkpoint"
)

// Vendors returns the names [NewVendor] accepts, sorted.
func Vendors() []string {
	return []string{VendorCheckPoint, VendorCiscoASA, VendorFortiGate, VendorPANOS}
}

// VendorConfig configures [NewVendor].
type VendorConfig struct {
	// Name selects the device format: [VendorFortiGate], [VendorPANOS],
	// [VendorCiscoASA] or [VendorCheckPoint]. Required.
	Name string
	// Field names the value to parse, as in [KVConfig.Field]. Empty means
	// the raw message, which is where the syslog parser leaves the device's
	// text.
	Field string
	// Location is the zone of device timestamps that carry none
	// (FortiGate's date and time without tz, PAN-OS's generated time
	// before 10.0, Check Point's syslog header). Nil means time.Local, as
	// in the syslog package.
	Location *time.Location
}

// VendorStats is a snapshot of a [Vendor] step's counters. Every event is
// in Parsed or NoMatch.
type VendorStats struct {
	// Events is the number of events the step processed.
	Events uint64
	// Parsed is the number of events recognised as the vendor's and
	// mapped (some of them also counted below).
	Parsed uint64
	// NoMatch is the number of events not in the vendor's format
	// (ErrNoMatch): left unchanged, so the CommonSecurityLog encoder
	// writes their raw message to Message.
	NoMatch uint64
	// Unknown is the number of events of a kind the step has no layout
	// for: a Cisco message ID it does not know (the text is kept in
	// msg), a PAN-OS log type without a column list (the columns are
	// kept as column<n>).
	Unknown uint64
	// Mismatch is the number of Cisco messages of a known ID whose text
	// did not have the ID's layout (the text is kept in msg).
	Mismatch uint64
	// Short and Long count PAN-OS lines with fewer columns than the
	// oldest column list the step knows for their type (9.1), or more
	// than the newest (the extra columns are kept as column<n>).
	Short, Long uint64
	// BadTime is the number of events whose device timestamp was
	// missing or unreadable: their time was kept (the receive time when
	// they had none).
	BadTime uint64
	// Unterminated is the number of FortiGate and Check Point lines with a
	// quoted value that was not closed (stored to the end of the line).
	Unterminated uint64
	// TooManyFields is the number of lines with more fields of their own
	// than [DefaultMaxFields]: the first were stored, the header too
	// (ErrTooManyFields).
	TooManyFields uint64
}

// Vendor is the step [NewVendor] returns. It is safe for concurrent use by
// multiple goroutines.
type Vendor struct {
	name string
	kind vendorKind
	src  source
	loc  *time.Location

	events, parsed, noMatch, unknown, mismatch, short, long, badTime, unterminated, tooMany counter
}

type vendorKind uint8

const (
	kindFortiGate vendorKind = iota
	kindPANOS
	kindASA
	kindCheckPoint
)

// errUnknown and errMismatch are counted apart but are not errors of
// Apply: an unknown message ID is a normal event.
var (
	errUnknown  = errors.New("unknown kind")
	errMismatch = errors.New("layout mismatch")
)

// NewVendor returns the step that parses one vendor's device format and
// names its fields as the vendor's own CEF output does, so that the
// forward package's CommonSecurityLog encoder (forward.SentinelCommonSecurityLog)
// places them in the columns it places CEF's in: src, dst, spt, dpt,
// proto, act, app, suser, duser, request, deviceExternalId, ... and the CEF
// header fields "cef.device_vendor", "cef.device_product",
// "cef.device_event_class_id" (DeviceEventClassID), "cef.name" (Activity)
// and "cef.severity" (LogSeverity). Fields without a CEF name keep the
// vendor's (prefixed as the vendor's CEF output prefixes them) and reach
// AdditionalExtensions. The event's time becomes the device's timestamp
// (Sentinel's TimeGenerated) when it has one that reads.
//
// The step is named "parse_" + Name ("parse_fortigate", ...). An event
// not in the vendor's format is left unchanged and reported as ErrNoMatch:
// it has no CEF header fields, so the CommonSecurityLog encoder keeps its
// raw message in Message and nothing is lost. The raw message is never
// modified. Once the event's buffers are warm the steps do not allocate.
// See the package documentation for each vendor's grammar and fields.
//
// It returns an error wrapping [ErrInvalidConfig] for an unknown Name.
func NewVendor(cfg VendorConfig) (*Vendor, error) {
	v := &Vendor{name: cfg.Name, src: newSource(cfg.Field), loc: cfg.Location}
	if v.loc == nil {
		v.loc = time.Local
	}
	switch cfg.Name {
	case VendorFortiGate:
		v.kind = kindFortiGate
	case VendorPANOS:
		v.kind = kindPANOS
	case VendorCiscoASA:
		v.kind = kindASA
	case VendorCheckPoint:
		v.kind = kindCheckPoint
	default:
		return nil, fmt.Errorf("%w: vendor: unknown name %q (known: %v)", ErrInvalidConfig, cfg.Name, Vendors())
	}
	return v, nil
}

// Name returns "parse_" followed by the vendor's name.
func (v *Vendor) Name() string { return "parse_" + v.name }

// Apply parses the configured value of e; it always keeps the event. The
// error is nil, ErrNoMatch (the event is unchanged), or ErrUnterminated,
// ErrTooManyFields or ErrTimestamp (the event was mapped; see
// [VendorStats]).
func (v *Vendor) Apply(e *relaykit.Event) (bool, error) {
	v.events.add()
	text, sc := v.src.read(e)
	var w fieldWriter
	w.init(e)
	var err error
	// A switch, not a func value: the writer then stays on the stack.
	switch v.kind {
	case kindFortiGate:
		err = parseFortiGate(v, &w, text)
	case kindPANOS:
		err = parsePANOS(v, &w, text)
	case kindASA:
		err = parseASA(v, &w, text)
	case kindCheckPoint:
		err = parseCheckPoint(v, &w, text)
	}
	release(sc)
	switch err {
	case ErrNoMatch:
		v.noMatch.add()
		return true, err
	case errUnknown:
		v.unknown.add()
	case errMismatch:
		v.mismatch.add()
	}
	// Each condition is counted; the error returned is, in this order of
	// precedence, ErrUnterminated, ErrTooManyFields, ErrTimestamp.
	err = nil
	if w.badTime {
		v.badTime.add()
		err = ErrTimestamp
	}
	if w.over {
		v.tooMany.add()
		err = ErrTooManyFields
	}
	if w.unterminated {
		v.unterminated.add()
		err = ErrUnterminated
	}
	v.parsed.add()
	return true, err
}

// Stats returns a snapshot of the step's counters.
func (v *Vendor) Stats() VendorStats {
	return VendorStats{
		Events: v.events.load(), Parsed: v.parsed.load(), NoMatch: v.noMatch.load(),
		Unknown: v.unknown.load(), Mismatch: v.mismatch.load(), Short: v.short.load(), Long: v.long.load(),
		BadTime: v.badTime.load(), Unterminated: v.unterminated.load(), TooManyFields: v.tooMany.load(),
	}
}

// fieldWriter sets fields of one event, looking for an existing field of a
// key only when a Bloom filter of the event's keys says it may be there. A
// key set twice keeps the last value.
type fieldWriter struct {
	e    *relaykit.Event
	seen keyFilter
	n0   int // fields before the step ran
	// capped limits the fields added to DefaultMaxFields: set while a
	// step stores a line's own fields, so that a hostile line cannot
	// make lookups quadratic; over records that the limit was reached
	// (the fields beyond it went to trash).
	capped, over bool
	added        int
	trash        relaykit.Field
	// badTime and unterminated are what the step met besides its
	// result: a timestamp that did not read, a quote left open.
	badTime, unterminated bool
}

func (w *fieldWriter) init(e *relaykit.Event) {
	w.e, w.n0 = e, len(e.Fields)
	w.seen.fill(e)
}

// slot returns the field named prefix+key with an empty value, adding it
// if needed; h is the FNV-1a hash of prefix+key.
func (w *fieldWriter) slot(prefix string, key []byte, h uint32) *relaykit.Field {
	if w.seen.has(h) {
		if i := findKey(w.e, prefix, key); i >= 0 {
			f := &w.e.Fields[i]
			f.Value = f.Value[:0]
			return f
		}
	}
	if w.capped && w.added >= DefaultMaxFields {
		w.over = true
		w.trash.Value = w.trash.Value[:0]
		return &w.trash
	}
	w.added++
	w.seen.add(h)
	return addKey(w.e, prefix, key)
}

// setString sets the field n to value.
func (w *fieldWriter) setString(n hashed, value string) {
	f := w.field(n)
	f.Value = append(f.Value, value...)
}

// setBytes sets the field n to value.
func (w *fieldWriter) setBytes(n hashed, value []byte) {
	f := w.field(n)
	f.Value = append(f.Value, value...)
}

// rollback removes the fields added since init. Fields that existed before
// and were overwritten keep their new value.
func (w *fieldWriter) rollback() { evfield.Truncate(w.e, w.n0) }

// nameMap maps a vendor's key to the field name the step stores it
// under and a tag the step acts on, looked up by the key's FNV-1a hash
// (which the steps compute for the Bloom filter anyway): open addressing,
// built once and only read.
type nameMap struct {
	slots []nameSlot
	mask  uint32
}

type nameSlot struct {
	key  string
	name string // "": the step's prefix followed by the key
	hash uint32 // of name
	tag  uint8
	used bool
}

// nameEntry is one key of a nameMap: its name and tag.
type nameEntry struct {
	name string
	tag  uint8
}

func newNameMap(m map[string]nameEntry) nameMap {
	size := 64
	for size < 4*len(m) {
		size *= 2
	}
	nm := nameMap{slots: make([]nameSlot, size), mask: uint32(size - 1)}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		i := fnvString(fnvOffset, k) & nm.mask
		for nm.slots[i].used {
			i = (i + 1) & nm.mask
		}
		e := m[k]
		nm.slots[i] = nameSlot{key: k, name: e.name, hash: fnvString(fnvOffset, e.name), tag: e.tag, used: true}
	}
	return nm
}

// lookup returns the slot of key (whose hash is h), or nil.
func (nm *nameMap) lookup(key []byte, h uint32) *nameSlot {
	for i := h & nm.mask; nm.slots[i].used; i = (i + 1) & nm.mask {
		if s := &nm.slots[i]; s.key == string(key) {
			return s
		}
	}
	return nil
}

// names builds a nameMap entry list from key → name pairs, untagged.
func names(pairs map[string]string) map[string]nameEntry {
	m := make(map[string]nameEntry, len(pairs))
	for k, v := range pairs {
		m[k] = nameEntry{name: v}
	}
	return m
}

// hashed is a field name with its FNV-1a hash.
type hashed struct {
	name string
	hash uint32
}

func hash(name string) hashed { return hashed{name, fnvString(fnvOffset, name)} }

// Header field names, hashed.
var (
	hVendor   = hash(FieldCEFDeviceVendor)
	hProduct  = hash(FieldCEFDeviceProduct)
	hVersion  = hash(FieldCEFDeviceVersion)
	hClassID  = hash(FieldCEFDeviceEventClassID)
	hName     = hash(FieldCEFName)
	hSeverity = hash(FieldCEFSeverity)
)

// field returns the field n with an empty value, adding it if needed.
func (w *fieldWriter) field(n hashed) *relaykit.Field { return w.slot(n.name, nil, n.hash) }

// stripPRI removes a syslog "<PRI>" from the start of b, for text handed
// to a step without the syslog parser.
func stripPRI(b []byte) []byte {
	if len(b) < 3 || b[0] != '<' {
		return b
	}
	for i := 1; i < len(b) && i <= 4; i++ {
		if b[i] == '>' {
			if i == 1 {
				return b
			}
			return b[i+1:]
		}
		if b[i] < '0' || b[i] > '9' {
			return b
		}
	}
	return b
}

// epochNanos reads an integer count since the Unix epoch whose unit
// follows from its number of digits: up to 10 seconds, 13 milliseconds,
// 16 microseconds, 19 nanoseconds.
func epochNanos(v []byte) (int64, bool) {
	var unit int64
	switch n := len(v); {
	case n >= 1 && n <= 10:
		unit = 1e9
	case n == 13:
		unit = 1e6
	case n == 16:
		unit = 1e3
	case n == 19:
		unit = 1
	default:
		return 0, false
	}
	return parseUnix(v, unit, false)
}

// appendMillis appends ns as decimal epoch milliseconds.
func appendMillis(dst []byte, ns int64) []byte {
	return strconv.AppendInt(dst, ns/1e6, 10)
}

// trimBytes removes leading and trailing spaces.
func trimBytes(b []byte) []byte { return bytes.Trim(b, " ") }
