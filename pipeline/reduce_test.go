package pipeline_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
)

const sec = int64(time.Second)

// pending is the now a router passes after each batch: no window ends,
// only the summaries already complete are returned.
const pending = math.MinInt64

// rev returns an event received at ns from host with message raw and the
// given fields.
func rev(ns int64, host, raw string, kv ...string) relaykit.Event {
	e := relaykit.Event{ReceiveTime: ns, Host: []byte(host), Raw: []byte(raw)}
	for i := 0; i+1 < len(kv); i += 2 {
		e.SetFieldString(kv[i], kv[i+1])
	}
	return e
}

func field(e *relaykit.Event, k string) string {
	v, _ := e.Field(k)
	return string(v)
}

func fieldInt(t *testing.T, e *relaykit.Event, k string) int64 {
	t.Helper()
	v, ok := e.Field(k)
	require.True(t, ok, "field %s missing in %s", k, fieldMap(e))
	n, err := strconv.ParseInt(string(v), 10, 64)
	require.NoError(t, err)
	return n
}

// fieldTime parses a first_seen/last_seen value independently of the
// package's layout constant.
func fieldTime(t *testing.T, e *relaykit.Event, k string) int64 {
	t.Helper()
	v, ok := e.Field(k)
	require.True(t, ok, "field %s missing", k)
	require.Len(t, v, len("2006-01-02T15:04:05.000000000Z"), "fixed width: %s", v)
	tm, err := time.Parse(time.RFC3339Nano, string(v))
	require.NoError(t, err)
	require.Equal(t, time.UTC, tm.Location())
	return tm.UnixNano()
}

func floorWin(t, w int64) int64 {
	m := t % w
	if m < 0 {
		m += w
	}
	return t - m
}

// genTimes returns n increasing receive times from start with random gaps,
// some of them zero, and some events exactly on window boundaries.
func genTimes(r *rand.Rand, n int, start, w int64) []int64 {
	ts := make([]int64, n)
	t := start
	for i := range ts {
		switch r.IntN(10) {
		case 0: // same instant as the previous event
		case 1: // exactly the next boundary
			t = floorWin(t, w) + w
		case 2: // one nanosecond before the next boundary
			t = floorWin(t, w) + w - 1
		default:
			t += r.Int64N(w / 4)
		}
		ts[i] = t
	}
	return ts
}

// --- Suppress ---------------------------------------------------------

type supKey struct {
	key string
	win int64
}

type supRef struct {
	seen, suppressed int64
	first, last      int64
	firstN           string
}

func TestSuppressMatchesReference(t *testing.T) {
	const w = 10 * sec
	for _, tc := range []struct {
		name  string
		cfg   pipeline.SuppressConfig
		key   func(e *relaykit.Event) string
		keys  int
		n     int
		flush int // call Flush every flush events (with now = that event's time)
	}{
		{"default key, allow 1", pipeline.SuppressConfig{Window: 10 * time.Second},
			func(e *relaykit.Event) string { return string(e.Host) + "\x00" + string(e.Raw) }, 7, 3000, 50},
		{"allow 3, flushed rarely", pipeline.SuppressConfig{Window: 10 * time.Second, Allow: 3},
			func(e *relaykit.Event) string { return string(e.Host) + "\x00" + string(e.Raw) }, 5, 3000, 700},
		{"field and source key", pipeline.SuppressConfig{Window: 10 * time.Second, Key: []string{"user", "source"}},
			func(e *relaykit.Event) string { return field(e, "user") + "\x00" + string(e.Source) }, 9, 2000, 10},
		{"raw only, never flushed before the end", pipeline.SuppressConfig{Window: 10 * time.Second, Key: []string{"_raw"}, Allow: 2},
			func(e *relaykit.Event) string { return string(e.Raw) }, 4, 2000, 0},
		{"many shards", pipeline.SuppressConfig{Window: 10 * time.Second, MaxKeys: 1 << 20},
			func(e *relaykit.Event) string { return string(e.Host) + "\x00" + string(e.Raw) }, 40, 4000, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.n)))
			s, err := pipeline.NewSuppress(tc.cfg)
			require.NoError(t, err)
			times := genTimes(r, tc.n, 1_700_000_000*sec, w)
			ref := map[supKey]*supRef{}
			var keptRef, kept []string
			var sums []relaykit.Event
			emitted := map[supKey]bool{}
			check := func(out []relaykit.Event, now int64) {
				for i := range out {
					e := &out[i]
					k := supKey{tc.key(e), floorWin(e.ReceiveTime, w)}
					require.LessOrEqual(t, k.win+w, now, "summary before its window ended")
					require.False(t, emitted[k], "two summaries for one window")
					emitted[k] = true
					sums = append(sums, e.Clone())
				}
				// Every window ended by now and holding suppressed
				// events has been emitted.
				for k, v := range ref {
					if v.suppressed > 0 && k.win+w <= now {
						require.True(t, emitted[k], "summary of %v held back past %d", k, now)
					}
				}
			}
			for i, ts := range times {
				kk := r.IntN(tc.keys)
				e := rev(ts, fmt.Sprintf("h%d", kk%3), fmt.Sprintf("msg %d", kk), "user", fmt.Sprintf("u%d", kk%4), "n", strconv.Itoa(i))
				e.Source = fmt.Appendf(nil, "s%d", kk%5)
				// reference
				k := supKey{tc.key(&e), floorWin(ts, w)}
				v := ref[k]
				if v == nil {
					v = &supRef{firstN: strconv.Itoa(i)}
					ref[k] = v
				}
				v.seen++
				allow := int64(max(tc.cfg.Allow, 1))
				if v.seen <= allow {
					keptRef = append(keptRef, strconv.Itoa(i))
				} else {
					v.suppressed++
					if v.suppressed == 1 {
						v.first = ts
					}
					v.last = ts
				}
				keep, err := s.Apply(&e)
				require.NoError(t, err)
				if keep {
					kept = append(kept, field(&e, "n"))
				}
				if tc.flush > 0 && i%tc.flush == 0 {
					check(s.Flush(nil, ts), ts)
				}
			}
			check(s.Flush(nil, pipeline.FlushAll), math.MaxInt64)
			assert.Equal(t, keptRef, kept, "kept events")

			var total int64
			for i := range sums {
				e := &sums[i]
				k := supKey{tc.key(e), floorWin(e.ReceiveTime, w)}
				v := ref[k]
				require.NotNil(t, v, "summary for an unknown window %v", k)
				assert.Equal(t, v.suppressed, fieldInt(t, e, "suppressed_count"), "%v", k)
				assert.Equal(t, v.first, fieldTime(t, e, "first_seen"), "%v", k)
				assert.Equal(t, v.last, fieldTime(t, e, "last_seen"), "%v", k)
				assert.Equal(t, v.firstN, field(e, "n"), "the summary is the window's first event")
				total += v.suppressed
			}
			want := 0
			for _, v := range ref {
				if v.suppressed > 0 {
					want++
				}
			}
			assert.Len(t, sums, want, "one summary per window that suppressed")
			assert.Equal(t, int64(tc.n), int64(len(kept))+total, "kept + suppressed_count = input")
			st := s.Stats()
			assert.Zero(t, st.Keys, "FlushAll forgets every key")
			assert.Equal(t, uint64(len(sums)), st.Summaries)
			assert.Zero(t, st.Evicted)
		})
	}
}

// With evictions the exact reference would be the LRU itself; what must
// hold is that nothing is lost: per key, kept + suppressed_count = input.
func TestSuppressEvictionLosesNothing(t *testing.T) {
	for _, maxKeys := range []int{1, 3, 17} {
		t.Run(fmt.Sprint("max_keys=", maxKeys), func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, uint64(maxKeys)))
			s, err := pipeline.NewSuppress(pipeline.SuppressConfig{Key: []string{"_raw"}, MaxKeys: maxKeys, Window: time.Minute})
			require.NoError(t, err)
			in, got := map[string]int64{}, map[string]int64{}
			var out []relaykit.Event
			ts := int64(0)
			for i := range 5000 {
				ts += r.Int64N(sec / 10)
				raw := fmt.Sprintf("k%d", min(r.IntN(40), r.IntN(40))) // skewed
				e := rev(ts, "h", raw)
				in[raw]++
				keep, err := s.Apply(&e)
				require.NoError(t, err)
				if keep {
					got[raw]++
				}
				if i%100 == 0 {
					out = s.Flush(out[:0], pending)
					for j := range out {
						got[string(out[j].Raw)] += fieldInt(t, &out[j], "suppressed_count")
					}
					assert.LessOrEqual(t, s.Stats().Keys, maxKeys)
				}
			}
			out = s.Flush(out[:0], pipeline.FlushAll)
			for j := range out {
				got[string(out[j].Raw)] += fieldInt(t, &out[j], "suppressed_count")
			}
			assert.Equal(t, in, got)
			assert.Positive(t, s.Stats().Evicted)
		})
	}
}

// --- Aggregate --------------------------------------------------------

type aggRef struct {
	count       int64
	first, last int64
	isum        int64
	fsum        float64
	anyFloat    bool
	n, bad      int64
	min, max    float64
	dmin, dmax  float64
	dn          int64
	index       string
}

func TestAggregateMatchesReference(t *testing.T) {
	const w = time.Minute
	for _, tc := range []struct {
		name  string
		key   []string
		flush int
		float bool // some byte values are not integers
	}{
		{"by src dst", []string{"src", "dst"}, 40, false},
		{"by host, floats", []string{"host"}, 7, true},
		{"one group", nil, 300, true},
		{"by src, flushed at the end", []string{"src"}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, uint64(len(tc.name))))
			a, err := pipeline.NewAggregate(pipeline.AggregateConfig{
				Key: tc.key, Window: w, Sum: []string{"bytes"}, Min: []string{"bytes", "dur"}, Max: []string{"bytes", "dur"},
				SourceType: "fw:summary",
			})
			require.NoError(t, err)
			keyOf := func(e *relaykit.Event) string {
				var b strings.Builder
				for _, k := range tc.key {
					if k == "host" {
						b.WriteString(string(e.Host))
					} else {
						b.WriteString(field(e, k))
					}
					b.WriteByte(0)
				}
				return b.String()
			}
			ref := map[supKey]*aggRef{}
			var sums []relaykit.Event
			const n = 4000
			times := genTimes(r, n, 1_700_000_000*sec, int64(w))
			for i, ts := range times {
				src := fmt.Sprintf("10.0.0.%d", min(r.IntN(6), r.IntN(6)))
				dst := fmt.Sprintf("192.0.2.%d", r.IntN(3))
				e := rev(ts, fmt.Sprintf("fw%d", r.IntN(2)), "flow", "src", src, "dst", dst)
				e.Index = fmt.Appendf(nil, "idx%d", i)
				var bytes string
				switch x := r.IntN(20); {
				case x == 0: // missing
				case x == 1:
					bytes = "n/a"
				case x == 2 && tc.float:
					bytes = strconv.FormatFloat(float64(r.IntN(1000))/8, 'f', -1, 64)
				default:
					bytes = strconv.Itoa(r.IntN(3000) - 100)
				}
				if bytes != "" || r.IntN(2) == 0 {
					if bytes != "" {
						e.SetFieldString("bytes", bytes)
					}
				}
				dur := float64(r.IntN(100000)) / 1000
				e.SetFieldString("dur", strconv.FormatFloat(dur, 'f', -1, 64))

				k := supKey{keyOf(&e), floorWin(ts, int64(w))}
				v := ref[k]
				if v == nil {
					v = &aggRef{first: ts, index: string(e.Index)}
					ref[k] = v
				}
				v.count++
				v.last = ts
				if bytes != "" {
					if f, err := strconv.ParseFloat(bytes, 64); err == nil {
						if v.n == 0 {
							v.min, v.max = f, f
						}
						v.n++
						v.min, v.max = math.Min(v.min, f), math.Max(v.max, f)
						v.fsum += f
						if i, err := strconv.ParseInt(bytes, 10, 64); err == nil {
							v.isum += i
						} else {
							v.anyFloat = true
						}
					} else {
						v.bad++
					}
				}
				if v.dn == 0 {
					v.dmin, v.dmax = dur, dur
				}
				v.dn++
				v.dmin, v.dmax = math.Min(v.dmin, dur), math.Max(v.dmax, dur)

				keep, err := a.Apply(&e)
				require.NoError(t, err)
				require.False(t, keep, "aggregate consumes every event")
				if tc.flush > 0 && i%tc.flush == 0 {
					out := a.Flush(nil, ts)
					for j := range out {
						require.LessOrEqual(t, out[j].Time+int64(w), ts, "summary before its window ended")
						sums = append(sums, out[j].Clone())
					}
				}
			}
			for _, s := range a.Flush(nil, pipeline.FlushAll) {
				sums = append(sums, s.Clone())
			}
			require.Len(t, sums, len(ref), "one summary per group and window")
			var total int64
			seen := map[supKey]bool{}
			for i := range sums {
				e := &sums[i]
				k := supKey{keyOf(e), e.Time}
				require.False(t, seen[k], "duplicate summary %v", k)
				seen[k] = true
				v := ref[k]
				require.NotNil(t, v, "summary for unknown group %q at %d", k.key, k.win)
				assert.Equal(t, v.count, fieldInt(t, e, "count"))
				total += v.count
				assert.Equal(t, v.first, fieldTime(t, e, "first_seen"))
				assert.Equal(t, v.last, fieldTime(t, e, "last_seen"))
				assert.Equal(t, v.last, e.ReceiveTime)
				assert.Equal(t, "fw:summary", string(e.SourceType))
				assert.Equal(t, v.index, string(e.Index), "the group's first event's index")
				if v.n > 0 {
					if v.anyFloat {
						got, err := strconv.ParseFloat(field(e, "sum_bytes"), 64)
						require.NoError(t, err)
						assert.Equal(t, v.fsum, got)
					} else {
						assert.Equal(t, v.isum, fieldInt(t, e, "sum_bytes"))
					}
					gmin, err := strconv.ParseFloat(field(e, "min_bytes"), 64)
					require.NoError(t, err)
					gmax, err := strconv.ParseFloat(field(e, "max_bytes"), 64)
					require.NoError(t, err)
					assert.Equal(t, v.min, gmin)
					assert.Equal(t, v.max, gmax)
				} else {
					assert.NotContains(t, fieldMap(e), "sum_bytes")
				}
				if v.bad > 0 {
					assert.Equal(t, v.bad, fieldInt(t, e, "nonnumeric_bytes"))
				} else {
					assert.NotContains(t, fieldMap(e), "nonnumeric_bytes")
				}
				dmin, _ := strconv.ParseFloat(field(e, "min_dur"), 64)
				dmax, _ := strconv.ParseFloat(field(e, "max_dur"), 64)
				assert.Equal(t, v.dmin, dmin)
				assert.Equal(t, v.dmax, dmax)
				assert.NotContains(t, fieldMap(e), "sum_dur", "dur is not summed")
				assert.Contains(t, string(e.Raw), "count="+field(e, "count"))
			}
			assert.Equal(t, int64(n), total, "counts add up to the input")
			assert.Zero(t, a.Stats().Keys)
		})
	}
}

func TestParseNumber(t *testing.T) {
	for _, tc := range []struct {
		in    string
		i     int64
		f     float64
		isInt bool
		ok    bool
	}{
		{"0", 0, 0, true, true},
		{"42", 42, 42, true, true},
		{"-7", -7, -7, true, true},
		{"+7", 7, 7, true, true},
		{"1.5", 0, 1.5, false, true},
		{"-2e3", 0, -2000, false, true},
		{"2E-1", 0, 0.2, false, true},
		{"9223372036854775807", math.MaxInt64, math.MaxInt64, true, true},
		{"-9223372036854775808", math.MinInt64, math.MinInt64, true, true},
		{"9223372036854775808", 0, 9223372036854775808, false, true},
		{"123456789012345678", 123456789012345678, 123456789012345678, true, true},
		{"", 0, 0, false, false},
		{"-", 0, 0, false, false},
		{"abc", 0, 0, false, false},
		{"1.", 0, 0, false, false},
		{".5", 0, 0, false, false},
		{"1e", 0, 0, false, false},
		{"0x10", 0, 0, false, false},
		{"1_000", 0, 0, false, false},
		{"NaN", 0, 0, false, false},
		{"Inf", 0, 0, false, false},
		{"1e400", 0, 0, false, false},
		{" 1", 0, 0, false, false},
		{"1 ", 0, 0, false, false},
	} {
		i, f, isInt, ok := pipeline.ParseNumber([]byte(tc.in))
		assert.Equal(t, tc.ok, ok, "%q ok", tc.in)
		assert.Equal(t, tc.isInt, isInt, "%q isInt", tc.in)
		if tc.ok {
			assert.Equal(t, tc.f, f, "%q float", tc.in)
			if tc.isInt {
				assert.Equal(t, tc.i, i, "%q int", tc.in)
			}
		}
	}
}

// Random decimal numbers in JSON syntax parse to exactly what
// strconv.ParseFloat and ParseInt return.
func TestParseNumberMatchesStrconv(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + r.IntN(10))
		}
		return string(b)
	}
	for range 200000 {
		s := ""
		switch r.IntN(3) {
		case 0:
			s = "-"
		case 1:
			s = "+"
		}
		s += digits(1 + r.IntN(22))
		isInt := true
		if r.IntN(2) == 0 {
			s += "." + digits(1+r.IntN(20))
			isInt = false
		}
		if r.IntN(3) == 0 {
			s += []string{"e", "E", "e-", "e+"}[r.IntN(4)] + digits(1+r.IntN(3))
			isInt = false
		}
		i, f, gotInt, ok := pipeline.ParseNumber([]byte(s))
		want, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(want, 0) {
			assert.False(t, ok, "%s", s)
			continue
		}
		require.True(t, ok, "%s", s)
		require.Equal(t, want, f, "%s", s)
		wi, ierr := strconv.ParseInt(s, 10, 64)
		require.Equal(t, isInt && ierr == nil, gotInt, "%s", s)
		if gotInt {
			require.Equal(t, wi, i, "%s", s)
		}
	}
}

// A sum that overflows int64 switches to float instead of wrapping.
func TestAggregateSumOverflow(t *testing.T) {
	a, err := pipeline.NewAggregate(pipeline.AggregateConfig{Sum: []string{"v"}})
	require.NoError(t, err)
	for _, v := range []string{"9223372036854775807", "1"} {
		e := rev(sec, "h", "x", "v", v)
		_, _ = a.Apply(&e)
	}
	out := a.Flush(nil, pipeline.FlushAll)
	require.Len(t, out, 1)
	got, err := strconv.ParseFloat(field(&out[0], "sum_v"), 64)
	require.NoError(t, err)
	assert.Equal(t, 9223372036854775808.0, got)
}

// Key values land where they belong: metadata names in metadata (except
// sourcetype, a field), others as fields, and Raw is the rendering unless
// the raw message is part of the key.
func TestAggregateSummaryShape(t *testing.T) {
	a, err := pipeline.NewAggregate(pipeline.AggregateConfig{Key: []string{"host", "sourcetype", "user", "index"}, Window: time.Minute})
	require.NoError(t, err)
	e := rev(61*sec, "fw1", "x", "user", "bob smith", "other", "o")
	e.SourceType, e.Index, e.Source = []byte("cisco:asa"), []byte("net"), []byte("asa")
	_, _ = a.Apply(&e)
	out := a.Flush(nil, pipeline.FlushAll)
	require.Len(t, out, 1)
	s := &out[0]
	assert.Equal(t, "fw1", string(s.Host))
	assert.Equal(t, "net", string(s.Index))
	assert.Empty(t, s.Source, "not in the key")
	assert.Equal(t, "relaykit:aggregate", string(s.SourceType))
	assert.Equal(t, 60*sec, s.Time, "the window's start")
	assert.Equal(t, []string{"sourcetype", "user", "count", "first_seen", "last_seen"}, fieldKeys(s))
	assert.Equal(t, "cisco:asa", field(s, "sourcetype"))
	assert.Equal(t, `host=fw1 index=net sourcetype=cisco:asa user="bob smith" count=1 first_seen=1970-01-01T00:01:01.000000000Z last_seen=1970-01-01T00:01:01.000000000Z`, string(s.Raw))

	a, err = pipeline.NewAggregate(pipeline.AggregateConfig{Key: []string{"_raw"}})
	require.NoError(t, err)
	e = rev(sec, "h", "the message")
	_, _ = a.Apply(&e)
	out = a.Flush(out[:0], pipeline.FlushAll)
	require.Len(t, out, 1)
	assert.Equal(t, "the message", string(out[0].Raw))
}

// --- Sample -----------------------------------------------------------

func TestSampleMatchesReference(t *testing.T) {
	const w = 10 * sec
	for _, tc := range []struct {
		name string
		cfg  pipeline.SampleConfig
	}{
		{"overall 1 in 3", pipeline.SampleConfig{N: 3}},
		{"per key 1 in 4", pipeline.SampleConfig{N: 4, Key: []string{"host"}}},
		{"per key and field 1 in 2", pipeline.SampleConfig{N: 2, Key: []string{"host", "user"}}},
		{"dynamic per key", pipeline.SampleConfig{Dynamic: true, Key: []string{"host"}, Window: 10 * time.Second, MinEvents: 5}},
		{"dynamic capped", pipeline.SampleConfig{Dynamic: true, Key: []string{"host"}, Window: 10 * time.Second, MinEvents: 5, MaxRate: 3}},
		{"dynamic overall, default min events", pipeline.SampleConfig{Dynamic: true, Window: 10 * time.Second}},
		{"keep all", pipeline.SampleConfig{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(9, uint64(len(tc.name))))
			s, err := pipeline.NewSample(tc.cfg)
			require.NoError(t, err)
			type wk struct {
				key string
				win int64
			}
			counts := map[string]int64{} // per key, fixed modes
			winCount := map[wk]int64{}   // per key and window, dynamic
			rates := map[wk]int64{}      // rate of a key's window
			input := map[string]int64{}  // events per key
			scaled := map[string]int64{} // sum of sample_rate per key
			var ts int64 = 1_700_000_000 * sec
			for i := range 6000 {
				ts += r.Int64N(w / 50)
				host := fmt.Sprintf("h%d", min(r.IntN(8), r.IntN(8), r.IntN(8))) // skewed
				if r.IntN(50) == 0 {
					ts += 2 * w // a gap: some keys skip a window
				}
				user := fmt.Sprintf("u%d", r.IntN(2))
				e := rev(ts, host, "m", "user", user, "n", strconv.Itoa(i))
				var key string
				for _, k := range tc.cfg.Key {
					if k == "host" {
						key += host + "/"
					} else {
						key += field(&e, k) + "/"
					}
				}
				input[key]++
				var want bool
				var rate int64
				switch {
				case tc.cfg.Dynamic:
					k := wk{key, floorWin(ts, w)}
					if _, ok := rates[k]; !ok {
						prev := winCount[wk{key, k.win - w}]
						minEv := int64(tc.cfg.MinEvents)
						if minEv == 0 {
							minEv = 30
						}
						rate = 1
						if prev >= minEv {
							rate = int64(math.Ceil(math.Log(float64(prev))))
							if tc.cfg.MaxRate > 0 && rate > int64(tc.cfg.MaxRate) {
								rate = int64(tc.cfg.MaxRate)
							}
						}
						rates[k] = rate
					}
					rate = rates[k]
					winCount[k]++
					want = (winCount[k]-1)%rate == 0
				default:
					rate = int64(max(tc.cfg.N, 1))
					counts[key]++
					want = (counts[key]-1)%rate == 0
				}
				keep, err := s.Apply(&e)
				require.NoError(t, err)
				require.Equal(t, want, keep, "event %d key %q", i, key)
				if keep {
					assert.Equal(t, rate, fieldInt(t, &e, "sample_rate"), "event %d", i)
					scaled[key] += rate
				}
			}
			for k, n := range input {
				// Each kept event stands for rate events: the scaled
				// count is within one rate of the input.
				assert.InDelta(t, n, scaled[k], 200, "key %q", k)
				assert.GreaterOrEqual(t, scaled[k], n, "key %q: the first of each run is kept", k)
			}
			if tc.cfg.Dynamic {
				var maxRate int64
				for _, r := range rates {
					maxRate = max(maxRate, r)
				}
				assert.Greater(t, maxRate, int64(1), "some windows were sampled")
			}
		})
	}
}

// An earlier sampler's rate is multiplied in.
func TestSampleRateMultiplies(t *testing.T) {
	s, err := pipeline.NewSample(pipeline.SampleConfig{N: 3})
	require.NoError(t, err)
	e := rev(sec, "h", "m", "sample_rate", "4")
	keep, err := s.Apply(&e)
	require.NoError(t, err)
	require.True(t, keep)
	assert.Equal(t, "12", field(&e, "sample_rate"))
	assert.Len(t, e.Fields, 1)
}

// Sample (the original) keeps its behaviour: no field, exactly ceil(n/N).
func TestSampleUnchanged(t *testing.T) {
	s := pipeline.Sample(3)
	kept := 0
	for range 10 {
		e := rev(sec, "h", "m")
		if k, _ := s.Apply(&e); k {
			kept++
			assert.Empty(t, e.Fields)
		}
	}
	assert.Equal(t, 4, kept)
}

func TestSampleEviction(t *testing.T) {
	s, err := pipeline.NewSample(pipeline.SampleConfig{N: 10, Key: []string{"host"}, MaxKeys: 2})
	require.NoError(t, err)
	apply := func(host string) bool {
		e := rev(sec, host, "m")
		k, err := s.Apply(&e)
		require.NoError(t, err)
		return k
	}
	assert.True(t, apply("a"))
	assert.False(t, apply("a"))
	assert.True(t, apply("b"))
	assert.True(t, apply("c"), "evicts a")
	assert.True(t, apply("a"), "a starts afresh: its first event is kept")
	st := s.Stats()
	assert.Equal(t, uint64(2), st.Evicted)
	assert.Equal(t, 2, st.Keys)
}

// --- Keep -------------------------------------------------------------

func TestKeep(t *testing.T) {
	for _, tc := range []struct {
		name string
		keep []string
		want []string
	}{
		{"listed, in event order", []string{"c", "a"}, []string{"a", "c"}},
		{"prefix", []string{"json.*"}, []string{"json.x", "json.y"}},
		{"all", []string{"*"}, []string{"a", "json.x", "b", "json.y", "c"}},
		{"none", nil, nil},
		{"metadata names change nothing", []string{"host", "_raw", "b"}, []string{"b"}},
		{"missing names are fine", []string{"zzz", "c"}, []string{"c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEvent("raw", "a", "1", "json.x", "2", "b", "3", "json.y", "4", "c", "5")
			keep, err := pipeline.Keep(tc.keep...).Apply(&e)
			require.NoError(t, err)
			assert.True(t, keep)
			assert.Equal(t, tc.want, fieldKeys(&e))
			want := map[string]string{"a": "1", "json.x": "2", "b": "3", "json.y": "4", "c": "5"}
			for k, v := range fieldMap(&e) {
				assert.Equal(t, want[k], v, "value of %s", k)
			}
			assert.Equal(t, "raw", string(e.Raw))
			assert.Equal(t, "h1", string(e.Host))
			// The removed fields' buffers are reused.
			e.SetFieldString("new", "v")
			assert.Equal(t, "v", field(&e, "new"))
		})
	}
}

func TestKeepDoesNotAllocate(t *testing.T) {
	skipIfRace(t)
	k := pipeline.Keep("b", "json.*")
	src := newEvent("raw", "a", "1", "json.x", "2", "b", "3", "c", "5")
	var e relaykit.Event
	allocs := testing.AllocsPerRun(200, func() {
		src.CopyTo(&e)
		_, _ = k.Apply(&e)
	})
	assert.Zero(t, allocs)
	assert.Equal(t, []string{"json.x", "b"}, fieldKeys(&e))
}

// --- Windows ----------------------------------------------------------

func TestWindowEdges(t *testing.T) {
	const w = 10 * sec
	newSup := func(t *testing.T, maxKeys int) *pipeline.Suppress {
		s, err := pipeline.NewSuppress(pipeline.SuppressConfig{Key: []string{"host"}, Window: 10 * time.Second, MaxKeys: maxKeys})
		require.NoError(t, err)
		return s
	}
	apply := func(t *testing.T, f pipeline.Function, e relaykit.Event) bool {
		t.Helper()
		k, err := f.Apply(&e)
		require.NoError(t, err)
		return k
	}

	t.Run("an event at the boundary counts once, in the later window", func(t *testing.T) {
		s := newSup(t, 0)
		assert.True(t, apply(t, s, rev(0, "a", "1")))
		assert.False(t, apply(t, s, rev(w-1, "a", "2")))
		out := s.Flush(nil, w-1)
		assert.Empty(t, out, "the window ends at w, not before")
		assert.True(t, apply(t, s, rev(w, "a", "3")), "first of the next window")
		assert.False(t, apply(t, s, rev(w+1, "a", "4")))
		out = s.Flush(out, w)
		require.Len(t, out, 1)
		assert.Equal(t, int64(1), fieldInt(t, &out[0], "suppressed_count"))
		assert.Equal(t, w-1, fieldTime(t, &out[0], "last_seen"))
		assert.Equal(t, "1", string(out[0].Raw))
		out = s.Flush(out[:0], 2*w)
		require.Len(t, out, 1)
		assert.Equal(t, int64(1), fieldInt(t, &out[0], "suppressed_count"))
		assert.Equal(t, w+1, fieldTime(t, &out[0], "first_seen"))
		assert.Equal(t, "3", string(out[0].Raw))

		a, err := pipeline.NewAggregate(pipeline.AggregateConfig{Window: 10 * time.Second})
		require.NoError(t, err)
		for _, ts := range []int64{0, w - 1, w} {
			apply(t, a, rev(ts, "a", "x"))
		}
		out = a.Flush(out[:0], w)
		require.Len(t, out, 1)
		assert.Equal(t, int64(2), fieldInt(t, &out[0], "count"))
		assert.Equal(t, int64(0), out[0].Time)
		out = a.Flush(out[:0], pipeline.FlushAll)
		require.Len(t, out, 1)
		assert.Equal(t, int64(1), fieldInt(t, &out[0], "count"))
		assert.Equal(t, w, out[0].Time)
	})

	t.Run("a key quiet for a whole window emits nothing", func(t *testing.T) {
		s := newSup(t, 0)
		for _, ts := range []int64{1, 2, 3} {
			apply(t, s, rev(ts*sec, "a", "m"))
		}
		out := s.Flush(nil, w)
		require.Len(t, out, 1)
		assert.Equal(t, "a", string(out[0].Host))
		assert.Zero(t, s.Stats().Keys, "the ended window is forgotten")
		for _, ts := range []int64{11, 12} {
			apply(t, s, rev(ts*sec, "b", "m"))
		}
		out = s.Flush(out[:0], 2*w)
		require.Len(t, out, 1, "b only: a was quiet")
		assert.Equal(t, "b", string(out[0].Host))
		out = s.Flush(out[:0], 3*w)
		assert.Empty(t, out)
		assert.Equal(t, uint64(2), s.Stats().Summaries)
	})

	t.Run("an evicted key emits its summary and starts afresh", func(t *testing.T) {
		s := newSup(t, 2)
		assert.True(t, apply(t, s, rev(1*sec, "a", "1")))
		assert.False(t, apply(t, s, rev(2*sec, "a", "2")))
		assert.True(t, apply(t, s, rev(3*sec, "b", "3")))
		assert.True(t, apply(t, s, rev(4*sec, "c", "4")), "evicts a, the least recently used")
		out := s.Flush(nil, pending)
		require.Len(t, out, 1, "a's summary is out before its window ends")
		assert.Equal(t, "a", string(out[0].Host))
		assert.Equal(t, int64(1), fieldInt(t, &out[0], "suppressed_count"))
		assert.Equal(t, uint64(1), s.Stats().Evicted)
		assert.True(t, apply(t, s, rev(5*sec, "a", "5")), "a starts afresh (and evicts b)")
		assert.False(t, apply(t, s, rev(6*sec, "a", "6")))
		out = s.Flush(out[:0], pending)
		assert.Empty(t, out, "b suppressed nothing")
		st := s.Stats()
		assert.Equal(t, uint64(2), st.Evicted)
		assert.Equal(t, 2, st.Keys)
		out = s.Flush(out[:0], pipeline.FlushAll)
		require.Len(t, out, 1)
		assert.Equal(t, "5", string(out[0].Raw))
		assert.Equal(t, int64(1), fieldInt(t, &out[0], "suppressed_count"))

		a, err := pipeline.NewAggregate(pipeline.AggregateConfig{Key: []string{"host"}, MaxKeys: 1})
		require.NoError(t, err)
		apply(t, a, rev(sec, "a", "x"))
		apply(t, a, rev(sec, "a", "x"))
		apply(t, a, rev(sec, "b", "x"))
		out = a.Flush(out[:0], pending)
		require.Len(t, out, 1)
		assert.Equal(t, "a", string(out[0].Host))
		assert.Equal(t, int64(2), fieldInt(t, &out[0], "count"))
		assert.Equal(t, uint64(1), a.Stats().Evicted)
	})

	t.Run("an event of a later window closes its key's window", func(t *testing.T) {
		s := newSup(t, 0)
		apply(t, s, rev(1*sec, "a", "1"))
		apply(t, s, rev(2*sec, "a", "2"))
		assert.Empty(t, s.Flush(nil, pending))
		assert.True(t, apply(t, s, rev(25*sec, "a", "3")))
		out := s.Flush(nil, pending)
		require.Len(t, out, 1, "ready without waiting for the ticker")
		assert.Equal(t, "1", string(out[0].Raw))
	})

	t.Run("a late event counts in the window open at the last flush", func(t *testing.T) {
		a, err := pipeline.NewAggregate(pipeline.AggregateConfig{Window: 10 * time.Second})
		require.NoError(t, err)
		apply(t, a, rev(5*sec, "a", "x"))
		out := a.Flush(nil, 15*sec)
		require.Len(t, out, 1)
		assert.Equal(t, int64(0), out[0].Time)
		apply(t, a, rev(6*sec, "a", "late"))
		out = a.Flush(out[:0], 15*sec)
		assert.Empty(t, out, "counted in [10s, 20s), still open")
		out = a.Flush(out[:0], 20*sec)
		require.Len(t, out, 1)
		assert.Equal(t, 10*sec, out[0].Time)
		assert.Equal(t, 6*sec, fieldTime(t, &out[0], "first_seen"), "first_seen keeps the true receive time")
	})

	t.Run("an event without receive time uses the latest known time", func(t *testing.T) {
		a, err := pipeline.NewAggregate(pipeline.AggregateConfig{Window: 10 * time.Second})
		require.NoError(t, err)
		apply(t, a, rev(12*sec, "a", "x"))
		apply(t, a, rev(0, "a", "x"))
		out := a.Flush(nil, pipeline.FlushAll)
		require.Len(t, out, 1)
		assert.Equal(t, int64(2), fieldInt(t, &out[0], "count"))
		assert.Equal(t, 12*sec, fieldTime(t, &out[0], "first_seen"))
		a.Flush(nil, 47*sec) // the ticker's time is known too
		apply(t, a, rev(0, "b", "x"))
		out = a.Flush(out[:0], pipeline.FlushAll)
		require.Len(t, out, 1)
		assert.Equal(t, 40*sec, out[0].Time)
	})
}

func TestFlushAllEndsEverything(t *testing.T) {
	s, err := pipeline.NewSuppress(pipeline.SuppressConfig{Key: []string{"_raw"}, Window: time.Minute, MaxKeys: 1 << 16})
	require.NoError(t, err)
	var kept int64
	for i := range 1000 {
		// keys in windows from the past to the far future
		e := rev(int64(i%17)*int64(time.Hour)*1000, "h", fmt.Sprintf("k%d", i%100))
		for range 2 {
			if k, _ := s.Apply(&e); k {
				kept++
			}
		}
	}
	require.Positive(t, s.Stats().Keys)
	out := s.Flush(nil, pipeline.FlushAll)
	total := kept
	for i := range out {
		total += fieldInt(t, &out[i], "suppressed_count")
	}
	assert.Equal(t, int64(2000), total)
	assert.Zero(t, s.Stats().Keys)
	assert.Empty(t, s.Flush(nil, pipeline.FlushAll))
	for i := 1; i < len(out); i++ {
		assert.LessOrEqual(t, out[i-1].ReceiveTime, out[i].ReceiveTime, "in time order")
	}
}

func TestReduceConfigErrors(t *testing.T) {
	for name, err := range map[string]error{
		"suppress allow":      second(pipeline.NewSuppress(pipeline.SuppressConfig{Allow: -1})),
		"suppress window":     second(pipeline.NewSuppress(pipeline.SuppressConfig{Window: -time.Second})),
		"suppress max keys":   second(pipeline.NewSuppress(pipeline.SuppressConfig{MaxKeys: -1})),
		"aggregate window":    second(pipeline.NewAggregate(pipeline.AggregateConfig{Window: -1})),
		"aggregate empty sum": second(pipeline.NewAggregate(pipeline.AggregateConfig{Sum: []string{""}})),
		"aggregate max keys":  second(pipeline.NewAggregate(pipeline.AggregateConfig{MaxKeys: -5})),
		"sample n":            second(pipeline.NewSample(pipeline.SampleConfig{N: -1})),
		"sample dynamic n":    second(pipeline.NewSample(pipeline.SampleConfig{N: 5, Dynamic: true})),
		"sample min events":   second(pipeline.NewSample(pipeline.SampleConfig{Dynamic: true, MinEvents: -1})),
		"sample window":       second(pipeline.NewSample(pipeline.SampleConfig{Dynamic: true, Window: -1})),
		"suppress long key":   second(pipeline.NewSuppress(pipeline.SuppressConfig{Key: make([]string, pipeline.MaxKeyNames+1)})),
		"aggregate long key":  second(pipeline.NewAggregate(pipeline.AggregateConfig{Key: make([]string, pipeline.MaxKeyNames+1)})),
		"sample long key":     second(pipeline.NewSample(pipeline.SampleConfig{N: 2, Key: make([]string, pipeline.MaxKeyNames+1)})),
	} {
		assert.ErrorIs(t, err, pipeline.ErrInvalidConfig, name)
	}
	_, err := pipeline.NewSuppress(pipeline.SuppressConfig{})
	assert.NoError(t, err, "the zero config is valid")
	_, err = pipeline.NewAggregate(pipeline.AggregateConfig{})
	assert.NoError(t, err)
	_, err = pipeline.NewSample(pipeline.SampleConfig{})
	assert.NoError(t, err)
}

func second[T any](_ T, err error) error { return err }

// --- Pipeline.Flush ---------------------------------------------------

func TestPipelineFlushRunsLaterSteps(t *testing.T) {
	s, err := pipeline.NewSuppress(pipeline.SuppressConfig{Window: time.Minute})
	require.NoError(t, err)
	p := pipeline.NewPipeline(s, pipeline.Set("index", "summaries"), must(pipeline.Drop("host", "^noisy$")))
	for _, h := range []string{"a", "a", "a", "noisy", "noisy"} {
		e := rev(sec, h, "m")
		_, err := p.Run(&e)
		require.NoError(t, err)
	}
	out, err := p.Flush(nil, pipeline.FlushAll)
	require.NoError(t, err)
	require.Len(t, out, 1, "noisy's summary is dropped by the later drop step")
	assert.Equal(t, "a", string(out[0].Host))
	assert.Equal(t, "summaries", string(out[0].Index))
	assert.Equal(t, int64(2), fieldInt(t, &out[0], "suppressed_count"))
}

// --- Router -----------------------------------------------------------

func TestRouterFlushDeliversThroughLaterSteps(t *testing.T) {
	agg, err := pipeline.NewAggregate(pipeline.AggregateConfig{Key: []string{"host"}, Window: time.Minute, Sum: []string{"bytes"}})
	require.NoError(t, err)
	sink, other := &recorder{}, &recorder{}
	var mu sync.Mutex
	hooks := map[string]int{}
	count := func(kind string) func(route, step string, n int) {
		return func(route, step string, n int) {
			mu.Lock()
			hooks[kind+"/"+route+"/"+step] += n
			mu.Unlock()
		}
	}
	r, err := pipeline.NewRouter([]pipeline.Route{
		{Name: "flows", Filter: "flow", Final: true, Sinks: []relaykit.Sink{sink},
			Pipeline: pipeline.NewPipeline(agg, pipeline.Set("index", "summary"), must(pipeline.Drop("host", "^drop$")))},
		{Name: "rest", Final: true, Sinks: []relaykit.Sink{other}},
	}, pipeline.Config{Hooks: pipeline.Hooks{OnReduce: count("reduce"), OnProduce: count("produce"), OnDrop: count("drop")}})
	require.NoError(t, err)
	ctx := t.Context()

	batch := []relaykit.Event{
		rev(1*sec, "keep", "flow", "bytes", "10"),
		rev(2*sec, "drop", "flow", "bytes", "20"),
		rev(3*sec, "keep", "flow", "bytes", "30"),
		rev(4*sec, "keep", "other"),
	}
	require.NoError(t, r.Route(ctx, batch))
	assert.Zero(t, sink.sends(), "everything was absorbed")
	assert.Equal(t, []string{"other"}, other.raws())

	require.NoError(t, r.Flush(ctx, 30*sec))
	assert.Zero(t, sink.sends(), "the window is still open")
	require.NoError(t, r.Flush(ctx, 60*sec))
	require.Equal(t, 1, sink.sends())
	got := sink.batches[0]
	require.Len(t, got, 1, "drop's summary was dropped by the later step")
	assert.Equal(t, "keep", string(got[0].Host))
	assert.Equal(t, "summary", string(got[0].Index), "later steps ran")
	assert.Equal(t, "2", field(&got[0], "count"))
	assert.Equal(t, "40", field(&got[0], "sum_bytes"))

	// An event of a later window closes the key's window: its summary
	// leaves with that Route call, in the same Send.
	require.NoError(t, r.Route(ctx, []relaykit.Event{rev(61*sec, "keep", "flow"), rev(125*sec, "keep", "flow")}))
	require.Equal(t, 2, sink.sends())
	require.Len(t, sink.batches[1], 1)
	assert.Equal(t, "1", field(&sink.batches[1][0], "count"))
	assert.Equal(t, 60*sec, sink.batches[1][0].Time)

	require.NoError(t, r.Flush(ctx, pipeline.FlushAll))
	require.Equal(t, 3, sink.sends())

	st := r.Stats()
	rs := st.Routes[0]
	assert.Equal(t, uint64(5), rs.Matched)
	assert.Equal(t, map[string]uint64{"aggregate": 5}, rs.Reduced)
	assert.Equal(t, map[string]uint64{"aggregate": 4}, rs.Produced)
	assert.Equal(t, map[string]uint64{relaykit.ReasonFiltered: 1}, rs.Dropped)
	assert.Equal(t, map[string]uint64{"drop": 1}, rs.DroppedBy, "the step that dropped it")
	assert.Equal(t, uint64(3), rs.Out)
	assert.Equal(t, map[string]uint64{"aggregate": 5}, st.Reduced)
	assert.Equal(t, map[string]uint64{"aggregate": 4}, st.Produced)
	checkLedger(t, st)
	mu.Lock()
	assert.Equal(t, map[string]int{"reduce/flows/aggregate": 5, "produce/flows/aggregate": 4, "drop/flows/filtered": 1}, hooks)
	mu.Unlock()
}

func TestRouterFlushSendError(t *testing.T) {
	s, err := pipeline.NewSuppress(pipeline.SuppressConfig{})
	require.NoError(t, err)
	sink := &recorder{err: fmt.Errorf("down")}
	var failed []string
	r, err := pipeline.NewRouter([]pipeline.Route{{Name: "r", Final: true, Pipeline: pipeline.NewPipeline(s),
		Sinks: []relaykit.Sink{pipeline.Named("hec", sink)}}},
		pipeline.Config{Hooks: pipeline.Hooks{OnSendFailure: func(_ context.Context, f pipeline.SendFailure) {
			for i := range f.Events {
				failed = append(failed, field(&f.Events[i], "suppressed_count"))
			}
		}}})
	require.NoError(t, err)
	batch := []relaykit.Event{rev(sec, "h", "m"), rev(sec, "h", "m"), rev(sec, "h", "m")}
	var se *pipeline.SinkError
	require.ErrorAs(t, r.Route(t.Context(), batch), &se)
	err = r.Flush(t.Context(), pipeline.FlushAll)
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "hec", se.Sink)
	assert.Equal(t, 1, se.Events)
	assert.Equal(t, []string{"", "2"}, failed, "the event let through, then the summary")

	plain, err := pipeline.NewRouter([]pipeline.Route{{Name: "r", Final: true}}, pipeline.Config{})
	require.NoError(t, err)
	assert.NoError(t, plain.Flush(t.Context(), pipeline.FlushAll), "no reducers: nothing to do")

	// A Swapper flushes its current router.
	sw := pipeline.NewSwapper(r)
	sink.err = nil
	require.NoError(t, sw.Route(t.Context(), batch))
	require.NoError(t, sw.Flush(t.Context(), pipeline.FlushAll))
	assert.Equal(t, "2", field(&sink.batches[len(sink.batches)-1][0], "suppressed_count"))
}

// Several goroutines route while one flushes on a ticker of its own; at
// the end nothing is lost: per host, what the sinks got (kept events plus
// suppressed_count, or count) equals what was routed, and the router's
// ledger balances.
func TestReducersConcurrentRouteAndFlush(t *testing.T) {
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprint("shards=", shards), func(t *testing.T) {
			defer pipeline.SetShardCount(shards)()
			sup, err := pipeline.NewSuppress(pipeline.SuppressConfig{Key: []string{"host", "_raw"}, Window: 50 * time.Millisecond, MaxKeys: 64})
			require.NoError(t, err)
			agg, err := pipeline.NewAggregate(pipeline.AggregateConfig{Key: []string{"host"}, Window: 20 * time.Millisecond, Sum: []string{"v"}, MaxKeys: 8})
			require.NoError(t, err)
			smp, err := pipeline.NewSample(pipeline.SampleConfig{Dynamic: true, Key: []string{"host"}, Window: 10 * time.Millisecond, MinEvents: 3})
			require.NoError(t, err)
			supSink, aggSink := newTally(), newTally()
			r, err := pipeline.NewRouter([]pipeline.Route{
				{Name: "sup", Filter: "^sup", Final: true, Pipeline: pipeline.NewPipeline(sup, pipeline.Set("index", "s")), Sinks: []relaykit.Sink{supSink}},
				{Name: "agg", Filter: "^agg", Final: true, Pipeline: pipeline.NewPipeline(pipeline.Keep("v"), agg), Sinks: []relaykit.Sink{aggSink}},
				{Name: "smp", Filter: "^smp", Final: true, Pipeline: pipeline.NewPipeline(smp)},
			}, pipeline.Config{})
			require.NoError(t, err)

			var clock atomic.Int64
			clock.Store(1_700_000_000 * sec)
			const workers, batches, size = 4, 150, 64
			if testing.Short() {
				t.Skip("stress")
			}
			var mu sync.Mutex
			supIn, aggIn, aggSum := map[string]int64{}, map[string]int64{}, map[string]int64{}
			var wg, fwg sync.WaitGroup
			done := make(chan struct{})
			fwg.Add(1)
			go func() {
				defer fwg.Done()
				for {
					select {
					case <-done:
						return
					default:
					}
					assert.NoError(t, r.Flush(t.Context(), clock.Load()))
				}
			}()
			for g := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rnd := rand.New(rand.NewPCG(uint64(g), 77))
					batch := make([]relaykit.Event, size)
					sIn, aIn, aSum := map[string]int64{}, map[string]int64{}, map[string]int64{}
					for range batches {
						for i := range batch {
							host := fmt.Sprintf("h%d", rnd.IntN(12))
							ts := clock.Add(rnd.Int64N(int64(time.Millisecond)))
							switch rnd.IntN(3) {
							case 0:
								batch[i] = rev(ts, host, fmt.Sprintf("sup %d", rnd.IntN(3)))
								sIn[host]++
							case 1:
								v := rnd.Int64N(100)
								batch[i] = rev(ts, host, "agg", "v", strconv.FormatInt(v, 10), "x", "y")
								aIn[host]++
								aSum[host] += v
							default:
								batch[i] = rev(ts, host, "smp")
							}
						}
						assert.NoError(t, r.Route(t.Context(), batch))
					}
					mu.Lock()
					for k, v := range sIn {
						supIn[k] += v
					}
					for k, v := range aIn {
						aggIn[k] += v
						aggSum[k] += aSum[k]
					}
					mu.Unlock()
				}()
			}
			wg.Wait()
			close(done)
			fwg.Wait()
			require.NoError(t, r.Flush(t.Context(), pipeline.FlushAll))

			assert.Equal(t, supIn, supSink.by("suppressed_count"), "suppress: kept + suppressed_count")
			assert.Equal(t, aggIn, aggSink.by("count"), "aggregate: count")
			assert.Equal(t, aggSum, aggSink.by("sum_v"), "aggregate: sum")
			st := r.Stats()
			checkLedger(t, st)
			assert.Positive(t, st.Reduced["suppress"])
			assert.Equal(t, st.Routes[0].Out, uint64(supSink.events()))
			assert.Positive(t, agg.Stats().Evicted, "8 keys for 12 hosts")
			assert.Zero(t, sup.Stats().Keys)
			assert.Zero(t, agg.Stats().Keys)
		})
	}
}

// tally is a Sink that adds up, per host, a numeric field of each event
// it receives (1 for an event without it).
type tally struct {
	mu  sync.Mutex
	evs []relaykit.Event
}

func newTally() *tally { return &tally{} }

func (s *tally) Send(_ context.Context, b []relaykit.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range b {
		s.evs = append(s.evs, b[i].Clone())
	}
	return nil
}

func (s *tally) events() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.evs)
}

func (s *tally) by(f string) map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]int64{}
	for i := range s.evs {
		e := &s.evs[i]
		n := int64(1)
		if v, ok := e.Field(f); ok {
			n, _ = strconv.ParseInt(string(v), 10, 64)
		}
		m[string(e.Host)] += n
	}
	return m
}

// --- Allocations ------------------------------------------------------

func TestReduceDoesNotAllocate(t *testing.T) {
	skipIfRace(t)
	mk := func(f pipeline.Function, err error) pipeline.Function {
		require.NoError(t, err)
		return f
	}
	for _, tc := range []struct {
		name string
		fn   pipeline.Function
		keep bool
	}{
		{"suppress/suppressed", mk(pipeline.NewSuppress(pipeline.SuppressConfig{})), false},
		{"suppress/field key, suppressed", mk(pipeline.NewSuppress(pipeline.SuppressConfig{Key: []string{"src", "dst", "host"}, MaxKeys: 100000})), false},
		{"sample/overall", mk(pipeline.NewSample(pipeline.SampleConfig{N: 2})), false},
		{"sample/key", mk(pipeline.NewSample(pipeline.SampleConfig{N: 2, Key: []string{"host"}})), false},
		{"sample/dynamic", mk(pipeline.NewSample(pipeline.SampleConfig{Dynamic: true, Key: []string{"host"}})), false},
		{"aggregate", mk(pipeline.NewAggregate(pipeline.AggregateConfig{Key: []string{"src", "dst"}, Sum: []string{"bytes"}, Max: []string{"dur"}})), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := rev(1_700_000_000*sec, "fw1", "DENY tcp 203.0.113.9:4444 -> 10.0.0.5:22", "src", "203.0.113.9", "dst", "10.0.0.5", "bytes", "1200", "dur", "0.25")
			var e relaykit.Event
			for range 3 { // the key is known, the event's buffers grown
				src.CopyTo(&e)
				_, _ = tc.fn.Apply(&e)
			}
			kept := 0
			allocs := testing.AllocsPerRun(1000, func() {
				src.CopyTo(&e)
				if k, _ := tc.fn.Apply(&e); k {
					kept++
				}
			})
			assert.Zero(t, allocs)
			if strings.HasPrefix(tc.name, "sample/") && !strings.Contains(tc.name, "dynamic") {
				assert.Positive(t, kept, "kept events (with sample_rate) are measured too")
			}
		})
	}
}

func TestRouteWithReducersDoesNotAllocate(t *testing.T) {
	skipIfRace(t)
	sup, err := pipeline.NewSuppress(pipeline.SuppressConfig{})
	require.NoError(t, err)
	sink := &countSink{}
	r, err := pipeline.NewRouter([]pipeline.Route{
		{Name: "sup", Final: true, Pipeline: pipeline.NewPipeline(sup), Sinks: []relaykit.Sink{sink}},
	}, pipeline.Config{})
	require.NoError(t, err)
	batch := make([]relaykit.Event, 64)
	for i := range batch {
		batch[i] = rev(1_700_000_000*sec, fmt.Sprintf("h%d", i%8), "message repeated")
	}
	ctx := t.Context()
	require.NoError(t, r.Route(ctx, batch))
	allocs := testing.AllocsPerRun(100, func() {
		_ = r.Route(ctx, batch)
	})
	assert.Zero(t, allocs)
	assert.Equal(t, int64(8), sink.n.Load(), "one per host passed")
	// Route ran 102 times (AllocsPerRun warms up once).
	assert.Equal(t, uint64(102*64-8), r.Stats().Reduced["suppress"])
}

// TestKeyMissesAndUnseenKeys: a key naming a field no event has (a typo,
// "message" for the raw message) is counted per event and reported as
// unseen; a field some events have is only counted where it is missing.
func TestKeyMissesAndUnseenKeys(t *testing.T) {
	sup, err := pipeline.NewSuppress(pipeline.SuppressConfig{Key: []string{"src", "message"}})
	require.NoError(t, err)
	agg, err := pipeline.NewAggregate(pipeline.AggregateConfig{Key: []string{"src", pipeline.FieldHost}})
	require.NoError(t, err)
	smp, err := pipeline.NewSample(pipeline.SampleConfig{N: 2, Key: []string{"dst"}})
	require.NoError(t, err)
	for i := range 10 {
		e := relaykit.Event{Host: []byte("fw"), Raw: []byte("x")}
		if i%2 == 0 {
			e.SetFieldString("src", "10.0.0.1")
		}
		_, err := sup.Apply(&e)
		require.NoError(t, err)
		_, err = agg.Apply(&e)
		require.NoError(t, err)
		_, err = smp.Apply(&e)
		require.NoError(t, err)
	}
	s := sup.Stats()
	assert.EqualValues(t, 10, s.KeyMisses, "every event lacks message")
	assert.Equal(t, []string{"message"}, s.UnseenKeys)
	a := agg.Stats()
	assert.EqualValues(t, 5, a.KeyMisses, "half the events lack src; host is not an extracted field")
	assert.Nil(t, a.UnseenKeys)
	m := smp.Stats()
	assert.EqualValues(t, 10, m.KeyMisses)
	assert.Equal(t, []string{"dst"}, m.UnseenKeys)
}
