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
	t    table[aggState]
	pick picker
	nums []numSpec
	// numFields and numMeta index nums: extracted fields, metadata.
	numFields, numMeta []int
	numMatch           nameMatcher // the names of numFields
	st                 []byte
	rawKey             int // index of FieldRaw in the key, or -1
}

type numSpec struct {
	meta                   selector // for a metadata name
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
// [ErrInvalidConfig] when a number is negative, a Sum, Min or Max name is
// empty, Key lists more than [MaxKeyNames] names, or Sum, Min and Max
// together more than 64 distinct names.
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
	a := &Aggregate{st: []byte(cfg.SourceType), rawKey: -1}
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
		a.nums = append(a.nums, numSpec{name: name,
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
	if len(a.nums) > 64 {
		return nil, fmt.Errorf("%w: aggregate: %d numeric names, more than 64", ErrInvalidConfig, len(a.nums))
	}
	for i := range a.nums {
		switch s := newSelector(a.nums[i].name); s.kind {
		case selField:
			a.numFields = append(a.numFields, i)
			a.numMatch.add(s.key)
		default:
			a.numMeta = append(a.numMeta, i)
			a.nums[i].meta = s
		}
	}
	var err error
	if a.pick, err = newPicker(cfg.Key); err != nil {
		return nil, fmt.Errorf("aggregate: %w", err)
	}
	a.t.init(cfg.Key, cfg.Window, cfg.MaxKeys)
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
	var pk picked
	vals, missing := a.pick.pick(e, &pk)
	h := a.t.hash(vals)
	sh := a.t.shardOf(h)
	sh.mu.Lock()
	if missing != 0 {
		sh.misses++
	}
	tm, win := a.t.at(sh, e.ReceiveTime)
	k, fresh := a.t.lookup(sh, h, vals, win)
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
	a.addNumbers(st, e)
	sh.mu.Unlock()
	return false, nil
}

// addNumbers adds e's numeric values to st: metadata values when not
// empty, extracted fields found in one pass over e's fields (the first of
// a name counts).
func (a *Aggregate) addNumbers(st *aggState, e *relaykit.Event) {
	for _, i := range a.numMeta {
		if v := a.nums[i].meta.get(e); len(v) > 0 {
			st.nums[i].add(v)
		}
	}
	left := len(a.numFields)
	if left == 0 {
		return
	}
	var done uint64 // bit per entry of numFields (at most 64)
	for fi := range e.Fields {
		f := &e.Fields[fi]
		kp := keyPrefix8(f.Key)
		for j, i := range a.numFields {
			if done&(1<<j) != 0 || !a.numMatch.is(j, f.Key, kp) {
				continue
			}
			st.nums[i].add(f.Value)
			done |= 1 << j
			if left--; left == 0 {
				return
			}
		}
	}
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
// leading '+'. isInt reports an integer (no fraction, no exponent) that
// fits in an int64, held in i; f always holds the value, correctly
// rounded. It does not allocate.
func parseNumber(b []byte) (i int64, f float64, isInt, ok bool) {
	p, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg, p = b[0] == '-', 1
	}
	var mant uint64 // up to 19 significant digits
	nd, exp := 0, 0 // significant digits in mant; decimal exponent
	exact := true   // no digit was left out of mant
	ds := p
	for ; p < len(b) && b[p]-'0' <= 9; p++ {
		if nd < 19 {
			mant = mant*10 + uint64(b[p]-'0')
			if mant != 0 {
				nd++
			}
		} else {
			exact = false
			exp++
		}
	}
	if p == ds {
		return 0, 0, false, false
	}
	integer := true
	if p < len(b) && b[p] == '.' {
		integer = false
		p++
		fs := p
		for ; p < len(b) && b[p]-'0' <= 9; p++ {
			if nd < 19 {
				mant = mant*10 + uint64(b[p]-'0')
				if mant != 0 {
					nd++
				}
				exp--
			} else {
				exact = false
			}
		}
		if p == fs {
			return 0, 0, false, false
		}
	}
	if p < len(b) && (b[p] == 'e' || b[p] == 'E') {
		integer = false
		p++
		eneg := false
		if p < len(b) && (b[p] == '-' || b[p] == '+') {
			eneg, p = b[p] == '-', p+1
		}
		es, e := p, 0
		for ; p < len(b) && b[p]-'0' <= 9; p++ {
			if e < 100000 {
				e = e*10 + int(b[p]-'0')
			}
		}
		if p == es {
			return 0, 0, false, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if p != len(b) {
		return 0, 0, false, false
	}
	if integer && exact && (mant <= math.MaxInt64 || neg && mant == 1<<63) {
		i = int64(mant)
		if neg {
			i = -i
		}
		return i, float64(i), true, true
	}
	// Clinger's fast path: both factors exact, so the one rounding of
	// the product or quotient is the correct one.
	if exact && mant < 1<<53 && exp >= -22 && exp <= 22 {
		f = float64(mant)
		if exp < 0 {
			f /= pow10[-exp]
		} else {
			f *= pow10[exp]
		}
		if neg {
			f = -f
		}
		return 0, f, false, true
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, 0, false, false
	}
	return 0, v, false, true
}

var pow10 = [23]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

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
func (a *Aggregate) Stats() StepStats {
	st := a.t.stats()
	st.UnseenKeys = a.pick.unseen()
	return st
}

var _ Reducer = (*Aggregate)(nil)
