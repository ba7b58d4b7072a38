package pipeline

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/evfield"
)

// AggregateConfig configures [NewAggregate]. The zero value counts all
// events per minute into one summary.
type AggregateConfig struct {
	// Key names the values to group by (KQL's "by" clause): extracted
	// fields, or the names of metadata ([FieldHost], [FieldSource],
	// [FieldSourceType], [FieldIndex], [FieldRaw]). A missing field reads
	// as empty, so events without it form one group. Empty means one
	// group for all events.
	Key []string
	// Window is the length of the tumbling windows, aligned to the Unix
	// epoch (a 1m window starts at each minute). Zero means one minute.
	Window time.Duration
	// Sum, Min and Max name numeric values to total, and to take the
	// least and greatest of, per group: extracted fields or metadata
	// names, as for Key.
	Sum, Min, Max []string
	// SourceType is the sourcetype of the summary events. Empty means
	// "relaykit:aggregate".
	SourceType string
	// MaxKeys bounds the groups held at once. Zero means [DefaultMaxKeys].
	// When it is reached, the least recently used group is evicted and
	// its summary emitted early (see [Suppress] for the sharding).
	MaxKeys int
}

// Aggregate is a [Reducer] named "aggregate" that absorbs every event
// and emits, per group and tumbling window, one summary event: KQL's
// summarize count(), sum(bytes) by src, dst, bin(TimeGenerated, 1m).
// Build it with [NewAggregate].
//
// A summary event has:
//
//   - the group's key values: a metadata name in Key sets that metadata
//     (its Host, Source, Index or Raw), except sourcetype, which becomes
//     an extracted field "sourcetype"; any other name becomes an
//     extracted field of that name; in Key order;
//   - count: the number of events of the group in the window;
//   - sum_<name>, min_<name>, max_<name> for each name of Sum, Min and
//     Max that had at least one numeric value; nonnumeric_<name> when
//     some values of that name were not numbers (see below);
//   - first_seen, last_seen: the ReceiveTimes of the group's first and
//     last events, formatted with [TimeLayout];
//   - Time: the window's start (the bin); ReceiveTime: last_seen;
//     SourceType: AggregateConfig.SourceType; Index: the group's first
//     event's, unless Key names index;
//   - Raw: unless Key names the raw message, the summary's values as
//     space-separated name=value pairs (host, source and index first when
//     Key names them, then the fields in order), so that destinations
//     which need a message, such as Splunk HEC, get a readable one.
//
// # Numbers
//
// A value is numeric when it is a decimal number as JSON writes it, with
// an optional leading '+': 42, -7, 1.5, 2e3. Anything else — empty,
// text, hexadecimal, NaN, Inf, spaces around the number — is counted in
// nonnumeric_<name> and left out of the sum, min and max; a missing field
// counts nowhere. Values are parsed without allocating. While every value
// is an integer and the sum fits in an int64, sums, minima and maxima are
// exact integers; otherwise they are float64, written in the shortest
// decimal form that reads back the same.
//
// Windows, late events, keys and eviction work as for [Suppress]. Apply
// does not allocate for a group it holds. It is safe for concurrent use.
type Aggregate struct {
	t       table[aggState]
	nums    []numSpec
	st      []byte
	rawKey  int // index of FieldRaw in the key, or -1
	keyName []string
}

type numSpec struct {
	sel                    selector
	name                   string
	sum, min, max          bool
	sumKey, minKey, maxKey string
	badKey                 string
}

type aggState struct {
	count       int64
	first, last int64
	index       []byte
	nums        []numAgg
}

// numAgg accumulates one numeric value of a group.
type numAgg struct {
	n, bad     int64 // numeric values, non-numeric values
	isum       int64
	fsum       float64
	sumFloat   bool // the sum is a float: a non-integer value, or int64 overflow
	anyFloat   bool // some value was not an integer
	imin, imax int64
	fmin, fmax float64
}

// NewAggregate returns an Aggregate step. It returns an error wrapping
// [ErrInvalidConfig] when a number is negative or a Sum, Min or Max name
// is empty.
func NewAggregate(cfg AggregateConfig) (*Aggregate, error) {
	if err := validateKeyed("aggregate", cfg.Window, cfg.MaxKeys); err != nil {
		return nil, err
	}
	if cfg.Window == 0 {
		cfg.Window = time.Minute
	}
	if cfg.SourceType == "" {
		cfg.SourceType = "relaykit:aggregate"
	}
	a := &Aggregate{st: []byte(cfg.SourceType), rawKey: -1, keyName: append([]string(nil), cfg.Key...)}
	for i, k := range cfg.Key {
		if newSelector(k).kind == selRaw {
			a.rawKey = i
		}
	}
	find := func(name string) *numSpec {
		for i := range a.nums {
			if a.nums[i].name == name {
				return &a.nums[i]
			}
		}
		a.nums = append(a.nums, numSpec{sel: newSelector(name), name: name,
			sumKey: "sum_" + name, minKey: "min_" + name, maxKey: "max_" + name, badKey: "nonnumeric_" + name})
		return &a.nums[len(a.nums)-1]
	}
	for _, l := range []struct {
		names []string
		what  string
	}{{cfg.Sum, "sum"}, {cfg.Min, "min"}, {cfg.Max, "max"}} {
		for _, name := range l.names {
			if name == "" {
				return nil, fmt.Errorf("%w: aggregate: empty %s field name", ErrInvalidConfig, l.what)
			}
			n := find(name)
			switch l.what {
			case "sum":
				n.sum = true
			case "min":
				n.min = true
			default:
				n.max = true
			}
		}
	}
	a.t.init("aggregate", cfg.Key, cfg.Window, cfg.MaxKeys)
	a.t.summarize = a.summarize
	nn := len(a.nums)
	a.t.reset = func(k *keyState[aggState]) {
		st := &k.st
		st.count, st.first, st.last = 0, 0, 0
		st.index = st.index[:0]
		if cap(st.nums) < nn {
			st.nums = make([]numAgg, nn)
		}
		st.nums = st.nums[:nn]
		clear(st.nums)
	}
	return a, nil
}

// Name returns "aggregate".
func (a *Aggregate) Name() string { return "aggregate" }

// Apply absorbs e into its group's window. It always returns false.
func (a *Aggregate) Apply(e *relaykit.Event) (bool, error) {
	h := a.t.hash(e)
	sh := a.t.shardOf(h)
	sh.mu.Lock()
	tm, win := a.t.at(sh, e.ReceiveTime)
	k, fresh := a.t.lookup(sh, h, e, win)
	if !fresh && win > k.win {
		a.t.roll(sh, k, win)
	}
	st := &k.st
	st.count++
	if st.count == 1 {
		st.first, st.last = tm, tm
		st.index = append(st.index[:0], e.Index...)
	} else {
		st.first, st.last = min(st.first, tm), max(st.last, tm)
	}
	for i := range a.nums {
		v, ok := a.nums[i].value(e)
		if ok {
			st.nums[i].add(v)
		}
	}
	sh.mu.Unlock()
	return false, nil
}

// value returns the value the spec reads and whether it is present.
func (n *numSpec) value(e *relaykit.Event) ([]byte, bool) {
	if n.sel.kind == selField {
		return e.Field(n.sel.key)
	}
	v := n.sel.get(e)
	return v, len(v) > 0
}

func (g *numAgg) add(v []byte) {
	i, f, isInt, ok := parseNumber(v)
	if !ok {
		g.bad++
		return
	}
	g.n++
	if !isInt {
		g.anyFloat, g.sumFloat = true, true
	}
	g.fsum += f
	if !g.sumFloat {
		s := g.isum + i
		if (s > g.isum) != (i > 0) {
			g.sumFloat = true // overflow: the float sum takes over
		}
		g.isum = s
	}
	if g.n == 1 {
		g.fmin, g.fmax, g.imin, g.imax = f, f, i, i
		return
	}
	g.fmin, g.fmax = min(g.fmin, f), max(g.fmax, f)
	if isInt {
		g.imin, g.imax = min(g.imin, i), max(g.imax, i)
	}
}

// parseNumber parses a decimal number in JSON syntax with an optional
// leading '+'. isInt reports an integer that fits in an int64 (i holds
// it); f always holds the value. It does not allocate.
func parseNumber(b []byte) (i int64, f float64, isInt, ok bool) {
	p := 0
	neg := false
	if p < len(b) && (b[p] == '-' || b[p] == '+') {
		neg = b[p] == '-'
		p++
	}
	ds := p
	for p < len(b) && b[p] >= '0' && b[p] <= '9' {
		p++
	}
	nd := p - ds
	if nd == 0 {
		return 0, 0, false, false
	}
	if p == len(b) && nd <= 18 {
		var u int64
		for _, c := range b[ds:p] {
			u = u*10 + int64(c-'0')
		}
		if neg {
			u = -u
		}
		return u, float64(u), true, true
	}
	// Validate the rest of the JSON number grammar before ParseFloat,
	// which would also take hex, underscores, Inf and NaN.
	if p < len(b) && b[p] == '.' {
		p++
		fs := p
		for p < len(b) && b[p] >= '0' && b[p] <= '9' {
			p++
		}
		if p == fs {
			return 0, 0, false, false
		}
	}
	if p < len(b) && (b[p] == 'e' || b[p] == 'E') {
		p++
		if p < len(b) && (b[p] == '-' || b[p] == '+') {
			p++
		}
		es := p
		for p < len(b) && b[p] >= '0' && b[p] <= '9' {
			p++
		}
		if p == es {
			return 0, 0, false, false
		}
	}
	if p != len(b) {
		return 0, 0, false, false
	}
	if nd == len(b)-ds { // 19 or more digits, no fraction or exponent
		if v, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			return v, float64(v), true, true
		}
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, 0, false, false
	}
	return 0, v, false, true
}

// summarize appends the summary of k's window.
func (a *Aggregate) summarize(dst []relaykit.Event, k *keyState[aggState]) []relaykit.Event {
	st := &k.st
	if st.count == 0 {
		return dst
	}
	dst, e := nextSlot(dst)
	e.Time = k.win
	e.ReceiveTime = st.last
	e.SourceType = append(e.SourceType, a.st...)
	e.Index = append(e.Index, st.index...)
	for i, s := range a.t.sels {
		v := keyValue(k.key, i)
		switch s.kind {
		case selField, selSourceType:
			name := s.key
			if s.kind == selSourceType {
				name = FieldSourceType
			}
			f := evfield.SlotString(e, name)
			f.Value = append(f.Value, v...)
		default:
			p := s.ptr(e)
			*p = append((*p)[:0], v...)
		}
	}
	setInt(e, FieldCount, st.count)
	for i := range a.nums {
		n, g := &a.nums[i], &st.nums[i]
		if g.n > 0 {
			if n.sum {
				f := evfield.SlotString(e, n.sumKey)
				if g.sumFloat {
					f.Value = appendFloat(f.Value, g.fsum)
				} else {
					f.Value = strconv.AppendInt(f.Value, g.isum, 10)
				}
			}
			if n.min {
				f := evfield.SlotString(e, n.minKey)
				f.Value = g.appendExtreme(f.Value, g.imin, g.fmin)
			}
			if n.max {
				f := evfield.SlotString(e, n.maxKey)
				f.Value = g.appendExtreme(f.Value, g.imax, g.fmax)
			}
		}
		if g.bad > 0 {
			setInt(e, n.badKey, g.bad)
		}
	}
	setTime(e, FieldFirstSeen, st.first)
	setTime(e, FieldLastSeen, st.last)
	if a.rawKey < 0 {
		e.Raw = a.appendRaw(e.Raw[:0], e)
	}
	st.count = 0
	return dst
}

func (g *numAgg) appendExtreme(dst []byte, i int64, f float64) []byte {
	if g.anyFloat {
		return appendFloat(dst, f)
	}
	return strconv.AppendInt(dst, i, 10)
}

// appendFloat writes f in the shortest form that reads back the same,
// without an exponent below 1e21 (as JavaScript does).
func appendFloat(dst []byte, f float64) []byte {
	if math.Abs(f) < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// appendRaw renders the summary as name=value pairs: host, source and
// index when the key names them, then every field. A value with a space,
// a quote, an '=' or a control byte, or an empty one, is quoted.
func (a *Aggregate) appendRaw(dst []byte, e *relaykit.Event) []byte {
	pair := func(k, v []byte) {
		if len(dst) > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, k...)
		dst = append(dst, '=')
		if needsQuote(v) {
			dst = strconv.AppendQuote(dst, string(v))
		} else {
			dst = append(dst, v...)
		}
	}
	for _, s := range a.t.sels {
		switch s.kind {
		case selHost:
			pair([]byte(FieldHost), e.Host)
		case selSource:
			pair([]byte(FieldSource), e.Source)
		case selIndex:
			pair([]byte(FieldIndex), e.Index)
		}
	}
	for i := range e.Fields {
		pair(e.Fields[i].Key, e.Fields[i].Value)
	}
	return dst
}

func needsQuote(v []byte) bool {
	if len(v) == 0 {
		return true
	}
	for _, c := range v {
		if c <= ' ' || c == '"' || c == '=' || c == 0x7f {
			return true
		}
	}
	return false
}

// Flush appends the summaries of the windows ended at or before now; see
// [Reducer].
func (a *Aggregate) Flush(dst []relaykit.Event, now int64) []relaykit.Event {
	return a.t.flush(dst, now)
}

// Stats returns the step's groups and counters.
func (a *Aggregate) Stats() StepStats { return a.t.stats() }

var _ Reducer = (*Aggregate)(nil)
