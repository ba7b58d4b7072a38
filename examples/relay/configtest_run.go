package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/pipeline/pipelinetest"
	"github.com/relaykit/relaykit/stream/hec"
)

// Report is the outcome of a config test suite.
type Report struct {
	Cases []CaseResult
}

// Failed returns the number of failed cases.
func (r Report) Failed() int {
	n := 0
	for _, c := range r.Cases {
		if !c.Passed() {
			n++
		}
	}
	return n
}

// CaseResult is the outcome of one case.
type CaseResult struct {
	Name, File string
	// Failures are the failed checks, each a header line followed by
	// indented detail lines; empty when the case passed.
	Failures []string
	// Notes say what happened on the way (a line the input refused, the
	// events a route dropped), shown with the failures.
	Notes []string
	// Received is the number of events each destination received.
	Received map[string]int
	Took     time.Duration
}

// Passed reports whether every check of the case held.
func (c CaseResult) Passed() bool { return len(c.Failures) == 0 }

// defaultTestTime is the receive time of a case's first event when its
// input gives none: fixed, so that rows and HEC events (their time
// members) and reduction windows are the same on every run.
var defaultTestTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// defaultTestSource is the sender's address when a case gives none
// (TEST-NET-1, RFC 5737).
const defaultTestSource = "192.0.2.1"

// RunTests runs suite against cfg (a validated config, as LoadConfig
// returns it) without opening a socket or sending anything: each case's
// input is parsed as the relay's input would parse it, routed by routes
// built from the same specs and steps, with every destination replaced by
// a recorder, and the Sentinel rows and HEC events are those the
// destinations' own encoders produce. It returns an error, and no report,
// for what makes the config untestable: a step that cannot be built (a
// missing GeoIP file), a lookup against memcached (it would query the
// servers), a destination whose encoder cannot be built.
func RunTests(cfg *Config, suite []TestCase) (Report, error) {
	tr, err := newTestRunner(cfg)
	if err != nil {
		return Report{}, err
	}
	defer tr.close()
	var rep Report
	for _, tc := range suite {
		rep.Cases = append(rep.Cases, tr.run(tc))
	}
	return rep, nil
}

// testRunner holds what the cases share: the config, the enrichment
// resources and the destinations' encoders.
type testRunner struct {
	cfg      *Config
	loc      *time.Location
	en       *Enrichments
	hec      map[string]*forward.HEC
	sentinel map[string]*forward.Sentinel
}

func newTestRunner(cfg *Config) (_ *testRunner, err error) {
	loc, err := time.LoadLocation(cfg.Timezone)
	if err != nil {
		return nil, fmt.Errorf("timezone: %w", err)
	}
	log := slog.New(slog.DiscardHandler)
	tr := &testRunner{cfg: cfg, loc: loc, en: NewEnrichments(log), hec: map[string]*forward.HEC{}, sentinel: map[string]*forward.Sentinel{}}
	defer func() {
		if err != nil {
			tr.close()
		}
	}()
	// The encoders of the destinations, built as the relay builds its
	// sinks; building one opens nothing (no connection, no token request).
	env := SinkEnv{Loc: loc, Log: log}
	for _, name := range slices.Sorted(maps.Keys(cfg.Destinations)) {
		var s DestSink
		switch spec := cfg.Destinations[name].Spec.(type) {
		case *HECDestination:
			s, err = spec.NewSink(env, name)
			if err == nil {
				tr.hec[name] = s.(*forward.HEC)
			}
		case *SentinelDestination:
			s, err = spec.NewSink(env, name)
			if err == nil {
				tr.sentinel[name] = s.(*forward.Sentinel)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("destinations.%s: %w", name, err)
		}
	}
	// Every route's steps build (a case builds its own router, with fresh
	// reduction state).
	if _, err := tr.router(map[string]*pipelinetest.Recorder{}, nil); err != nil {
		return nil, err
	}
	return tr, nil
}

func (tr *testRunner) close() {
	for _, h := range tr.hec {
		_ = h.Close()
	}
	for _, s := range tr.sentinel {
		_ = s.Close()
	}
	_ = tr.en.Close()
}

// step builds a route step as the relay does, refusing what would reach
// out of the process.
func (tr *testRunner) step(sc StepConfig) (pipeline.Function, error) {
	if sc.Type == "lookup" && len(sc.Memcached) > 0 {
		return nil, errors.New("lookup: memcached lookups would query the servers; relay test runs csv lookups only")
	}
	return tr.en.Step(sc)
}

// router builds the config's routes with recorders (made on demand, by
// destination name) as the destinations; onDrop, when set, observes the
// router's drops.
func (tr *testRunner) router(recs map[string]*pipelinetest.Recorder, onDrop func(name, reason string, n int)) (*pipeline.Router, error) {
	specs, _, err := Specs(tr.cfg.Routes, tr.step, func(name string) (relaykit.Sink, bool) {
		if _, ok := tr.cfg.Destinations[name]; !ok {
			return nil, false
		}
		if recs[name] == nil {
			recs[name] = pipelinetest.NewRecorder(name)
		}
		return recs[name], true
	})
	if err != nil {
		return nil, err
	}
	return pipeline.NewRouter(specs, pipeline.Config{Hooks: pipeline.Hooks{OnDrop: onDrop}})
}

// run runs one case.
func (tr *testRunner) run(tc TestCase) (res CaseResult) {
	start := time.Now()
	res = CaseResult{Name: tc.Name, File: tc.File, Received: map[string]int{}}
	defer func() { res.Took = time.Since(start) }()
	fail := func(format string, args ...any) { res.Failures = append(res.Failures, fmt.Sprintf(format, args...)) }

	events, notes, err := tr.inputEvents(tc.Input)
	res.Notes = notes
	if err != nil {
		fail("input: %v", err)
		return res
	}
	recs := map[string]*pipelinetest.Recorder{}
	drops := map[string]int{}
	rt, err := tr.router(recs, func(name, reason string, n int) {
		if name != "" {
			reason += " at route " + name
		}
		drops[reason] += n
	})
	if err != nil { // checked when the runner was built
		fail("routes: %v", err)
		return res
	}
	ctx := context.Background()
	_ = rt.Route(ctx, events)            // recorders never fail
	_ = rt.Flush(ctx, pipeline.FlushAll) // the summaries of every window
	for _, k := range slices.Sorted(maps.Keys(drops)) {
		res.Notes = append(res.Notes, fmt.Sprintf("dropped %d: %s", drops[k], k))
	}
	got := map[string][]relaykit.Event{}
	for name, r := range recs {
		if evs := r.Events(); len(evs) > 0 {
			got[name] = evs
			res.Received[name] = len(evs)
		}
	}
	for i, x := range tc.Expect {
		tr.check(&res, x, got, len(tc.Expect) > 1, i)
	}
	return res
}

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

// inputEvents parses a case's input as the relay's input would: the
// events, and notes on what the input refused.
func (tr *testRunner) inputEvents(in TestInput) ([]relaykit.Event, []string, error) {
	kind, settings, err := tr.inputKind(in)
	if err != nil {
		return nil, nil, err
	}
	base := defaultTestTime
	if in.Time != "" {
		if base, err = time.Parse(time.RFC3339Nano, in.Time); err != nil {
			return nil, nil, fmt.Errorf("time: %w", err)
		}
	}
	source := in.Source
	if source == "" {
		source = defaultTestSource
	}
	lines := in.Lines
	if in.Line != "" {
		lines = []string{in.Line}
	}
	var events []relaykit.Event
	var notes []string
	switch kind {
	case "syslog":
		sp := NewSyslogParser(tr.loc)
		for i, l := range lines {
			var ev relaykit.Event
			frame := []byte(l)
			cut := settings.maxMessage > 0 && len(frame) > settings.maxMessage
			if cut {
				frame = frame[:settings.maxMessage]
			}
			// syslogParser.Parse with the case's receive time (the
			// reference of a timestamp without a year) for the clock's.
			ev.ReceiveTime = base.Add(time.Duration(i) * time.Millisecond).UnixNano()
			sp.Parser.Parse(&ev, frame)
			if len(ev.Host) == 0 {
				ev.Host = append(ev.Host, source...)
			}
			if cut {
				ev.Flags |= relaykit.FlagTruncated
			}
			events = append(events, ev)
		}
	case "json":
		for i, l := range lines {
			if settings.maxMessage > 0 && len(l) > settings.maxMessage {
				notes = append(notes, fmt.Sprintf("line %d is longer than %d bytes, dead-lettered", i+1, settings.maxMessage))
				continue
			}
			if err := fastjson.Validate(l); err != nil {
				notes = append(notes, fmt.Sprintf("line %d is not valid JSON, dead-lettered: %v", i+1, err))
				continue
			}
			var ev relaykit.Event
			FillJSONEvent(&ev, []byte(l), source)
			events = append(events, ev)
		}
	default: // hec, hec_raw
		events, notes, err = tr.hecEvents(kind, settings.hec, in, lines, source)
		if err != nil {
			return nil, nil, err
		}
	}
	for i := range events {
		events[i].ReceiveTime = base.Add(time.Duration(i) * time.Millisecond).UnixNano()
	}
	return events, notes, nil
}

// inputSettings are the settings of a named input that change what its
// parser makes of a line.
type inputSettings struct {
	maxMessage int             // syslog: frames are cut at this size; json: longer lines are refused; 0 means no limit
	hec        *HECInputConfig // hec: the tokens and body limit
}

// inputKind resolves a case's input kind and the settings of its named
// input.
func (tr *testRunner) inputKind(in TestInput) (string, inputSettings, error) {
	kind, s := in.Kind, inputSettings{}
	if in.Name != "" {
		// The named input's kind, from the input registry: how relay test
		// reads its lines, and its line limit.
		found := ""
		for _, sec := range tr.cfg.Inputs.Sections() {
			if sec.InputName() != in.Name || sec.Summary() == "" {
				continue
			}
			k, _ := KindOf(sec.Key())
			if k == nil || k.Test == nil {
				return "", s, fmt.Errorf("name: %q is a %s input; relay test reads syslog, relp, json_tcp and hec inputs", in.Name, sec.Key())
			}
			found, s.maxMessage = k.Test(sec)
			if h, ok := sec.(*HECInputConfig); ok {
				s.hec = h
			}
		}
		switch {
		case found == "":
			return "", s, fmt.Errorf("name: no syslog, relp, json_tcp or hec input is named %q", in.Name)
		case kind == "":
			kind = found
		case kind != found && !(kind == "hec_raw" && found == "hec"):
			return "", s, fmt.Errorf("kind: %s, but input %q takes %s", kind, in.Name, found)
		}
	}
	switch kind {
	case "":
		kind = "syslog"
	case "syslog", "json":
	case "hec", "hec_raw":
		if s.hec == nil && len(tr.cfg.Inputs.HEC) > 0 {
			s.hec = &tr.cfg.Inputs.HEC[0]
		}
	default:
		return "", s, fmt.Errorf("kind: unknown kind %q (want syslog, hec, hec_raw or json)", kind)
	}
	return kind, s, nil
}

// testChannel is the HEC channel of a case's requests.
const testChannel = "00000000-0000-4000-8000-000000000000"

// hecEvents decodes each line as one request body to the input's HEC
// handler (its tokens' defaults and routes; acknowledgement off), served
// in process.
func (tr *testRunner) hecEvents(kind string, cfg *HECInputConfig, in TestInput, lines []string, source string) ([]relaykit.Event, []string, error) {
	hc := hec.Config{RouteField: HECRouteField}
	if cfg != nil {
		hc.Tokens, hc.MaxBodyBytes = HECTokens(cfg.Tokens), int64(cfg.MaxBodySize)
	} else {
		hc.Tokens = []hec.Token{{Name: "relay-test", Token: "relay-test"}}
	}
	token := ""
	for i := range hc.Tokens {
		hc.Tokens[i].Ack = false // answered once the events are taken: here, at once
		if in.Token == "" && i == 0 || hc.Tokens[i].Name == in.Token {
			token = hc.Tokens[i].Token
		}
	}
	if token == "" {
		return nil, nil, fmt.Errorf("token: the input has no token named %q", in.Token)
	}
	var events []relaykit.Event
	hc.Sink = relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error {
		for i := range batch {
			events = append(events, batch[i].Clone())
		}
		return nil
	})
	h, err := hec.New(hc)
	if err != nil {
		return nil, nil, err
	}
	defer h.Close()
	path := "/services/collector/event"
	if kind == "hec_raw" {
		path = "/services/collector/raw"
	}
	remote := source
	if _, _, err := net.SplitHostPort(source); err != nil {
		remote = net.JoinHostPort(source, "50000")
	}
	var notes []string
	for i, body := range lines {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.RemoteAddr = remote
		req.Header.Set("Authorization", "Splunk "+token)
		req.Header.Set("X-Splunk-Request-Channel", testChannel)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			notes = append(notes, fmt.Sprintf("request %d answered %d %s", i+1, w.Code, strings.TrimSpace(w.Body.String())))
		}
	}
	return events, notes, nil
}
