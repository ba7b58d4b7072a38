package configtest

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline/pipelinetest"
)

// check evaluates one expectation block against what the destinations
// received.
func (tr *testRunner) check(res *CaseResult, x Expectation, got map[string][]relaykit.Event, many bool, i int) {
	prefix := ""
	if many {
		prefix = fmt.Sprintf("expect[%d] ", i)
	}
	fail := func(format string, args ...any) {
		res.Failures = append(res.Failures, prefix+fmt.Sprintf(format, args...))
	}
	if x.Destinations != nil {
		for _, n := range *x.Destinations {
			if _, ok := tr.cfg.Destinations[n]; !ok {
				fail("destinations: %q is not a destination of the config", n)
			}
		}
		want := slices.Compact(slices.Sorted(slices.Values(*x.Destinations)))
		have := slices.Sorted(maps.Keys(got))
		if !slices.Equal(want, have) {
			fail("destinations: want %s, got %s", listOrNone(want), receivedList(have, got))
		}
	}
	scope := got
	if x.Destination != "" {
		if _, ok := tr.cfg.Destinations[x.Destination]; !ok {
			fail("destination: %q is not a destination of the config", x.Destination)
			return
		}
		scope = map[string][]relaykit.Event{x.Destination: got[x.Destination]}
	}
	names := slices.Sorted(maps.Keys(scope))
	total := 0
	for _, n := range names {
		total += len(scope[n])
	}
	if x.Count != nil && *x.Count != total {
		where := "all destinations"
		if x.Destination != "" {
			where = x.Destination
		}
		fail("count: want %d events at %s, got %d", *x.Count, where, total)
	}
	// pos numbers an event of scope[n] as received: "event 2 of 3".
	first, of := map[string]int{}, map[string]int{}
	for _, n := range names {
		of[n] = len(scope[n])
	}
	pos := func(n string, j int) string { return fmt.Sprintf("event %d of %d", first[n]+j+1, of[n]) }
	if x.Event != 0 {
		// Only the chosen event of each destination is checked below.
		picked := map[string][]relaykit.Event{}
		for _, n := range names {
			evs := scope[n]
			j := x.Event - 1
			if x.Event < 0 {
				j = len(evs) + x.Event
			}
			if j < 0 || j >= len(evs) {
				fail("event: %d: %s received %d events", x.Event, n, len(evs))
				continue
			}
			picked[n], first[n] = evs[j:j+1], j
		}
		scope, total = picked, len(picked)
		names = slices.Sorted(maps.Keys(picked))
	}
	if len(x.Fields) > 0 {
		if total == 0 {
			fail("fields: no event received to check")
		}
		want := wants(x.Fields)
		for _, n := range names {
			for j := range scope[n] {
				if mm := pipelinetest.CompareEvent(&scope[n][j], want); mm != nil {
					fail("fields at %s, %s:%s", n, pos(n, j), diffLines(mm, eventSummary(&scope[n][j])))
				}
			}
		}
	}
	if len(x.Sentinel) > 0 {
		tr.checkEncoded(fail, pos, "sentinel", "row", x.Sentinel, scope, names, func(n string, e *relaykit.Event) ([]byte, bool, error) {
			st, ok := tr.sentinel[n]
			if !ok {
				return nil, false, nil
			}
			return st.AppendEvent(nil, e), true, nil
		})
	}
	if len(x.HEC) > 0 {
		tr.checkEncoded(fail, pos, "hec", "event", x.HEC, scope, names, func(n string, e *relaykit.Event) ([]byte, bool, error) {
			h, ok := tr.hec[n]
			if !ok {
				return nil, false, nil
			}
			b, err := h.AppendEvent(nil, e)
			return b, true, err
		})
	}
}

// checkEncoded checks the JSON object encode makes of each event a
// destination of kind received (encode reports false for a destination of
// another kind).
func (tr *testRunner) checkEncoded(fail func(string, ...any), pos func(string, int) string, kind, what string, x map[string]WantValue, scope map[string][]relaykit.Event,
	names []string, encode func(string, *relaykit.Event) ([]byte, bool, error)) {
	want := wants(x)
	checked := 0
	for _, n := range names {
		for j := range scope[n] {
			b, ok, err := encode(n, &scope[n][j])
			if !ok {
				break
			}
			checked++
			if err != nil {
				fail("%s %s at %s, %s: not sent: %v", kind, what, n, pos(n, j), err)
				continue
			}
			values, err := jsonValues(b)
			if err != nil {
				fail("%s %s at %s, %s: %v", kind, what, n, pos(n, j), err)
				continue
			}
			mm := pipelinetest.Compare(want, func(k string) (string, bool) { v, ok := values[k]; return v, ok })
			if mm != nil {
				fail("%s %s at %s, %s:%s", kind, what, n, pos(n, j), diffLines(mm, what+": "+string(b)))
			}
		}
	}
	if checked == 0 {
		fail("%s: no %s destination received an event", kind, map[string]string{"sentinel": "Sentinel", "hec": "HEC"}[kind])
	}
}

// wants unwraps a file's conditions.
func wants(m map[string]WantValue) map[string]pipelinetest.Want {
	out := make(map[string]pipelinetest.Want, len(m))
	for k, v := range m {
		out[k] = v.Want
	}
	return out
}

// diffLines renders mismatches, one per indented line, then what was got.
func diffLines(mm []pipelinetest.Mismatch, got string) string {
	var b strings.Builder
	for _, m := range mm {
		b.WriteString("\n    ")
		b.WriteString(m.String())
	}
	b.WriteString("\n    ")
	b.WriteString(got)
	return b.String()
}

// eventSummary describes an event on one line: metadata and fields.
func eventSummary(e *relaykit.Event) string {
	var b strings.Builder
	b.WriteString("event:")
	for _, m := range []struct{ k, v string }{{"host", string(e.Host)}, {"source", string(e.Source)},
		{"sourcetype", string(e.SourceType)}, {"index", string(e.Index)}, {"_raw", string(e.Raw)}} {
		if m.v != "" {
			fmt.Fprintf(&b, " %s=%s", m.k, strconv.Quote(m.v))
		}
	}
	for _, f := range e.Fields {
		fmt.Fprintf(&b, " %s=%s", f.Key, strconv.Quote(string(f.Value)))
	}
	return b.String()
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// receivedList names the destinations that received events, with counts.
func receivedList(names []string, got map[string][]relaykit.Event) string {
	if len(names) == 0 {
		return "none"
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s (%d)", n, len(got[n]))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// jsonValues flattens a JSON object: each member by name, and the members
// of an object member as "name.member" (recursively). A string reads as
// its text, any other value as its JSON.
func jsonValues(b []byte) (map[string]string, error) {
	v, err := fastjson.ParseBytes(b)
	if err != nil {
		return nil, fmt.Errorf("encoded %s is not JSON: %w", b, err)
	}
	out := map[string]string{}
	var walk func(prefix string, v *fastjson.Value)
	walk = func(prefix string, v *fastjson.Value) {
		o, err := v.Object()
		if err != nil {
			return
		}
		o.Visit(func(k []byte, m *fastjson.Value) {
			name := prefix + string(k)
			if m.Type() == fastjson.TypeString {
				out[name] = string(m.GetStringBytes())
			} else {
				out[name] = m.String()
			}
			walk(name+".", m)
		})
	}
	walk("", v)
	return out, nil
}
