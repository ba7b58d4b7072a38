package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
)

// recorder is a Sink that keeps deep copies of what it receives, one entry
// per Send.
type recorder struct {
	mu      sync.Mutex
	batches [][]relaykit.Event
	err     error
}

func (r *recorder) Send(_ context.Context, batch []relaykit.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	cp := make([]relaykit.Event, len(batch))
	for i := range batch {
		cp[i] = batch[i].Clone()
	}
	r.batches = append(r.batches, cp)
	return r.err
}

func (r *recorder) raws() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, b := range r.batches {
		for i := range b {
			out = append(out, string(b[i].Raw))
		}
	}
	return out
}

func (r *recorder) sends() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.batches)
}

func batchOf(raws ...string) []relaykit.Event {
	b := make([]relaykit.Event, len(raws))
	for i, r := range raws {
		b[i] = newEvent(r)
	}
	return b
}

func TestRouteOrderAndFinal(t *testing.T) {
	first, second, def := &recorder{}, &recorder{}, &recorder{}
	r, err := pipeline.NewRouter([]pipeline.Route{
		{Name: "first", Filter: "error", Sinks: []relaykit.Sink{first}, Final: true},
		{Name: "second", Filter: "error|warn", Sinks: []relaykit.Sink{second}, Final: true},
	}, pipeline.Config{Default: def})
	require.NoError(t, err)
	require.NoError(t, r.Route(t.Context(), batchOf("an error", "a warn", "info", "error and warn")))
	assert.Equal(t, []string{"an error", "error and warn"}, first.raws(), "first matching Final route wins")
	assert.Equal(t, []string{"a warn"}, second.raws())
	assert.Equal(t, []string{"info"}, def.raws())

	st := r.Stats()
	assert.Equal(t, uint64(4), st.In)
	assert.Equal(t, uint64(2), st.Routes[0].Matched)
	assert.Equal(t, uint64(1), st.Routes[1].Matched)
	assert.Equal(t, []string{"first[0]", "second[0]", "default"}, []string{st.Sinks[0].Name, st.Sinks[1].Name, st.Sinks[2].Name})
	assert.Equal(t, uint64(1), st.Sinks[2].Sent)
}

// A cloned event mutated by one pipeline does not change the event other
// routes see, nor the caller's event.
func TestCloneIsolation(t *testing.T) {
	copySink, finalSink, def := &recorder{}, &recorder{}, &recorder{}
	mutate := pipeline.Func(func(e *relaykit.Event) (bool, error) {
		e.Raw = append(e.Raw[:0], "MUTATED"...)
		e.Host[0] = 'X' // write into the buffer itself
		e.SetFieldString("tag", "copy")
		return true, nil
	})
	r, err := pipeline.NewRouter([]pipeline.Route{
		{Name: "copy", Filter: "sshd", Pipeline: pipeline.NewPipeline(mutate), Sinks: []relaykit.Sink{copySink}},
		{Name: "final", Filter: "Failed", Pipeline: pipeline.NewPipeline(pipeline.Set("index", "sec")), Sinks: []relaykit.Sink{finalSink}, Final: true},
	}, pipeline.Config{Default: def})
	require.NoError(t, err)
	batch := batchOf("sshd: Failed password", "sshd: Accepted", "other")
	require.NoError(t, r.Route(t.Context(), batch))

	require.Equal(t, 1, copySink.sends())
	got := copySink.batches[0]
	require.Len(t, got, 2)
	for i := range got {
		assert.Equal(t, "MUTATED", string(got[i].Raw))
		assert.Equal(t, "X1", string(got[i].Host))
	}
	require.Equal(t, []string{"sshd: Failed password"}, finalSink.raws(), "the final route saw the original")
	fe := finalSink.batches[0][0]
	assert.Equal(t, "h1", string(fe.Host))
	assert.Equal(t, "sec", string(fe.Index))
	_, tagged := fe.Field("tag")
	assert.False(t, tagged)
	assert.Equal(t, []string{"sshd: Accepted", "other"}, def.raws(), "originals not consumed go to the default")
	assert.Equal(t, "h1", string(batch[1].Host), "the caller's event is untouched by a clone's pipeline")
	assert.Equal(t, "sec", string(batch[0].Index), "final pipelines run in place")
	st := r.Stats()
	assert.Equal(t, uint64(2), st.Default)
	checkLedger(t, st)
}

func TestUnroutedAndDrops(t *testing.T) {
	kept := &recorder{}
	var mu sync.Mutex
	drops := map[string]int{}
	r, err := pipeline.NewRouter([]pipeline.Route{
		{Name: "app", Filter: "app", Pipeline: pipeline.NewPipeline(must(pipeline.Drop("", "debug")), pipeline.Sample(2)), Sinks: []relaykit.Sink{kept}, Final: true},
		{Name: "void", Filter: "void", Final: true},
	}, pipeline.Config{Hooks: pipeline.Hooks{OnDrop: func(route, reason string, n int) {
		mu.Lock()
		drops[route+"/"+reason] += n
		mu.Unlock()
	}}})
	require.NoError(t, err)
	batch := batchOf("app debug", "app 1", "app 2", "app 3", "void", "nothing", "nothing")
	require.NoError(t, r.Route(t.Context(), batch))
	assert.Equal(t, []string{"app 1", "app 3"}, kept.raws())
	st := r.Stats()
	assert.Equal(t, uint64(7), st.In)
	assert.Equal(t, uint64(2), st.Unrouted)
	assert.Equal(t, map[string]uint64{relaykit.ReasonUnrouted: 2, relaykit.ReasonFiltered: 2, relaykit.ReasonNoSink: 1}, st.Dropped)
	assert.Equal(t, map[string]uint64{relaykit.ReasonFiltered: 2}, st.Routes[0].Dropped)
	assert.Equal(t, map[string]uint64{"drop": 1, "sample": 1}, st.Routes[0].DroppedBy, "the steps stay known")
	assert.Equal(t, map[string]uint64{relaykit.ReasonNoSink: 1}, st.Routes[1].Dropped)
	assert.Empty(t, st.Routes[1].DroppedBy)
	assert.Equal(t, uint64(4), st.Routes[0].Matched)
	assert.Equal(t, uint64(2), st.Routes[0].Out)
	assert.Equal(t, map[string]int{"/unrouted": 2, "app/filtered": 2, "void/no_sink": 1}, drops)

	checkLedger(t, st)
}

// checkLedger asserts the Stats ledger balances: every input event is
// consumed by a Final route (sent, dropped or reduced), sent to the
// default, or dropped unrouted, with the summaries reducers produced on
// the input side; and every route's matches and summaries are sent,
// dropped or reduced.
func checkLedger(t *testing.T, st pipeline.Stats) {
	t.Helper()
	sum := st.Default + st.Unrouted
	var produced uint64
	for _, rs := range st.Routes {
		var dropped, reduced, prod uint64
		for _, n := range rs.Dropped {
			dropped += n
		}
		for _, n := range rs.Reduced {
			reduced += n
		}
		for _, n := range rs.Produced {
			prod += n
		}
		assert.Equal(t, rs.Matched+prod, rs.Out+dropped+reduced, "route %s", rs.Name)
		if rs.Final {
			sum += rs.Out + dropped + reduced
			produced += prod
		}
	}
	assert.Equal(t, st.In+produced, sum, "ledger")
}

// A sink listed by several routes gets one Send per batch, in batch order.
func TestOneSendPerSink(t *testing.T) {
	shared, other := &recorder{}, &recorder{}
	r, err := pipeline.NewRouter([]pipeline.Route{
		{Name: "a", Filter: "a", Sinks: []relaykit.Sink{shared}},
		{Name: "b", Filter: "b", Sinks: []relaykit.Sink{shared, other}, Final: true},
	}, pipeline.Config{Default: shared})
	require.NoError(t, err)
	require.NoError(t, r.Route(t.Context(), batchOf("ab", "b", "a", "c")))
	assert.Equal(t, 1, shared.sends())
	assert.Equal(t, []string{"ab", "ab", "b", "a", "a", "c"}, shared.raws())
	assert.Equal(t, []string{"ab", "b"}, other.raws())
	st := r.Stats()
	require.Len(t, st.Sinks, 2)
	assert.Equal(t, uint64(6), st.Sinks[0].Sent)
	assert.Equal(t, uint64(1), st.Sinks[0].Batches)

	require.NoError(t, r.Route(t.Context(), batchOf("zzz")))
	assert.Equal(t, 2, shared.sends())
	assert.Equal(t, 1, other.sends(), "no Send for a sink with no events")
}

func TestSendErrors(t *testing.T) {
	bad := &recorder{err: errors.New("connection refused")}
	good := &recorder{}
	var failures []pipeline.SendFailure
	r, err := pipeline.NewRouter([]pipeline.Route{
		{Name: "all", Sinks: []relaykit.Sink{pipeline.Named("hec", bad), good}, Final: true},
	}, pipeline.Config{Hooks: pipeline.Hooks{OnSendFailure: func(_ context.Context, f pipeline.SendFailure) {
		evs := make([]relaykit.Event, len(f.Events))
		for i := range f.Events {
			evs[i] = f.Events[i].Clone()
		}
		f.Events = evs
		failures = append(failures, f)
	}}})
	require.NoError(t, err)
	err = r.Route(t.Context(), batchOf("one", "two"))
	var se *pipeline.SinkError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "hec", se.Sink)
	assert.Equal(t, 2, se.Events)
	assert.ErrorIs(t, err, bad.err)
	assert.Equal(t, []string{"one", "two"}, good.raws(), "other sinks still get their events")
	require.Len(t, failures, 1)
	assert.Equal(t, "hec", failures[0].Sink)
	require.Len(t, failures[0].Events, 2)
	assert.Equal(t, "two", string(failures[0].Events[1].Raw))
	st := r.Stats()
	assert.Equal(t, pipeline.SinkStats{Name: "hec", Batches: 1, Failed: 2, Errors: 1}, st.Sinks[0])
	assert.Equal(t, pipeline.SinkStats{Name: "all[1]", Batches: 1, Sent: 2}, st.Sinks[1])
}

func TestFunctionErrors(t *testing.T) {
	sink := &recorder{}
	var got []string
	parse := must(pipeline.ParseJSON(pipeline.JSONConfig{}))
	r, err := pipeline.NewRouter([]pipeline.Route{
		{Name: "json", Pipeline: pipeline.NewPipeline(parse), Sinks: []relaykit.Sink{sink}, Final: true},
	}, pipeline.Config{Hooks: pipeline.Hooks{OnFunctionError: func(route, fn string, err error) {
		got = append(got, route+"/"+fn)
	}}})
	require.NoError(t, err)
	require.NoError(t, r.Route(t.Context(), batchOf(`{"a":`, `{"a":1}`, `text`)))
	assert.Equal(t, []string{"json/parse_json"}, got)
	assert.Equal(t, uint64(1), r.Stats().Routes[0].Errors)
	assert.Len(t, sink.raws(), 3, "a function error keeps the event")
}

func TestFieldSelectors(t *testing.T) {
	tests := []struct {
		field, filter string
		want          bool
	}{
		{"", "^msg$", true}, {"_raw", "msg", true}, {"host", "^h1$", true}, {"source", "^src$", true},
		{"sourcetype", "^st$", true}, {"index", "^main$", true}, {"app", "^web$", true},
		{"missing", "^$", true}, {"missing", "x", false}, {"host", "msg", false},
	}
	for _, tt := range tests {
		t.Run(tt.field+"~"+tt.filter, func(t *testing.T) {
			sink := &recorder{}
			r, err := pipeline.NewRouter([]pipeline.Route{
				{Name: "r", Field: tt.field, Filter: tt.filter, Sinks: []relaykit.Sink{sink}, Final: true},
			}, pipeline.Config{})
			require.NoError(t, err)
			b := []relaykit.Event{newEvent("msg", "app", "web")}
			require.NoError(t, r.Route(t.Context(), b))
			assert.Equal(t, tt.want, len(sink.raws()) == 1)
		})
	}
}

func TestNewRouterErrors(t *testing.T) {
	s := &recorder{}
	tests := []struct {
		name   string
		routes []pipeline.Route
		msg    string
	}{
		{"bad regex", []pipeline.Route{{Name: "sshd", Filter: `sshd[`}}, `route "sshd": filter "sshd["`},
		{"no name", []pipeline.Route{{Filter: "x"}}, "route 0 has no name"},
		{"duplicate", []pipeline.Route{{Name: "a"}, {Name: "a"}}, `duplicate route name "a"`},
		{"nil sink", []pipeline.Route{{Name: "a", Sinks: []relaykit.Sink{s, nil}}}, `route "a": sink 1 is nil`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pipeline.NewRouter(tt.routes, pipeline.Config{})
			require.ErrorIs(t, err, pipeline.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

type countSink struct{ n atomic.Int64 }

func (c *countSink) Send(_ context.Context, b []relaykit.Event) error {
	c.n.Add(int64(len(b)))
	return nil
}

func TestRouteDoesNotAllocate(t *testing.T) {
	skipIfRace(t)
	sink := &countSink{}
	r, err := pipeline.NewRouter(benchRoutes(sink), pipeline.Config{Default: sink})
	require.NoError(t, err)
	batch := make([]relaykit.Event, 0, 64)
	for _, l := range realLines(rand.New(rand.NewPCG(7, 8)), 64) {
		batch = append(batch, relaykit.Event{Raw: l})
	}
	ctx := t.Context()
	require.NoError(t, r.Route(ctx, batch)) // warm the pools
	allocs := testing.AllocsPerRun(100, func() {
		_ = r.Route(ctx, batch)
	})
	assert.Zero(t, allocs)
	assert.Positive(t, r.Stats().Routes[0].Matched)
}

func benchRoutes(sink relaykit.Sink) []pipeline.Route {
	return []pipeline.Route{
		{Name: "audit", Filter: `sshd\[\d+\]: Failed password`, Pipeline: pipeline.NewPipeline(pipeline.Set("index", "security")), Sinks: []relaykit.Sink{sink}},
		{Name: "firewall", Filter: `DENY|DROP`, Sinks: []relaykit.Sink{sink}, Final: true},
		{Name: "errors", Filter: `(?i)error|fatal|panic`, Sinks: []relaykit.Sink{sink}, Final: true},
	}
}

// The router's decisions equal a plain loop of regexp.Match over the same
// routes, on real-shaped and random lines.
func TestRouterMatchesRegexpLoopNoRace(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	lines := realLines(r, 1500)
	for range 500 {
		lines = append(lines, randomLine(r))
	}
	rounds := 16
	if testing.Short() || raceEnabled {
		rounds = 6
	}
	for round := range rounds {
		// A random table of 1-6 routes from the property patterns.
		n := 1 + r.IntN(6)
		routes := make([]pipeline.Route, n)
		sinks := make([]*recorder, n)
		res := make([]*regexp.Regexp, n)
		for i := range routes {
			p := filterPatterns[r.IntN(len(filterPatterns))]
			sinks[i] = &recorder{}
			routes[i] = pipeline.Route{Name: fmt.Sprint("r", i), Filter: p, Sinks: []relaykit.Sink{sinks[i]}, Final: r.IntN(2) == 0}
			res[i] = regexp.MustCompile(p)
		}
		def := &recorder{}
		router, err := pipeline.NewRouter(routes, pipeline.Config{Default: def})
		require.NoError(t, err)
		batch := make([]relaykit.Event, len(lines))
		for i, l := range lines {
			batch[i] = relaykit.Event{Raw: l}
		}
		require.NoError(t, router.Route(t.Context(), batch))

		want := make([][]string, n)
		var wantDef []string
		for _, l := range lines {
			consumed := false
			for i := range routes {
				if res[i].Match(l) {
					want[i] = append(want[i], string(l))
					if routes[i].Final {
						consumed = true
						break
					}
				}
			}
			if !consumed {
				wantDef = append(wantDef, string(l))
			}
		}
		for i := range routes {
			require.Equal(t, want[i], sinks[i].raws(), "round %d route %d %q", round, i, routes[i].Filter)
		}
		require.Equal(t, wantDef, def.raws(), "round %d default", round)
		checkLedger(t, router.Stats())
	}
}

// Reload under concurrent routing: every batch runs entirely on one router,
// and the counters of all routers account for every event.
func TestSwapperReloadUnderLoad(t *testing.T) {
	const workers, batches, size = 4, 300, 16
	sinkA, sinkB := &batchSink{}, &batchSink{}
	mk := func(s relaykit.Sink) *pipeline.Router {
		r, err := pipeline.NewRouter([]pipeline.Route{
			{Name: "all", Pipeline: pipeline.NewPipeline(pipeline.Set("index", "x")), Sinks: []relaykit.Sink{s}, Final: true},
		}, pipeline.Config{})
		require.NoError(t, err)
		return r
	}
	sw := pipeline.NewSwapper(mk(sinkA))
	routers := []*pipeline.Router{sw.Load()}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range workers {
		wg.Go(func() {
			b := make([]relaykit.Event, size)
			for i := range batches {
				for j := range b {
					b[j].Reset()
					b[j].Raw = fmt.Appendf(b[j].Raw, "w%d-b%d", w, i)
				}
				assert.NoError(t, sw.Route(t.Context(), b))
			}
		})
	}
	swapper := make(chan struct{})
	go func() {
		defer close(swapper)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			next := mk(sinkB)
			if i%2 == 1 {
				next = mk(sinkA)
			}
			routers = append(routers, next)
			sw.Swap(next)
		}
	}()
	wg.Wait()
	close(stop)
	<-swapper

	var in uint64
	for _, r := range routers {
		in += r.Stats().In
	}
	assert.Equal(t, uint64(workers*batches*size), in)
	seen := map[string]int{}
	for _, s := range []*batchSink{sinkA, sinkB} {
		for _, tag := range s.tags {
			seen[tag.tag] += tag.n
			assert.Equal(t, size, tag.n, "batch %s split across routers", tag.tag)
		}
	}
	assert.Len(t, seen, workers*batches)
}

type batchTag struct {
	tag string
	n   int
}

// batchSink records, per Send, the batch tag and the event count, and
// checks every event of a Send has the same tag.
type batchSink struct {
	mu   sync.Mutex
	tags []batchTag
}

func (s *batchSink) Send(_ context.Context, b []relaykit.Event) error {
	tag := string(b[0].Raw)
	for i := range b {
		if string(b[i].Raw) != tag || string(b[i].Index) != "x" {
			return fmt.Errorf("mixed batch: %q in %q", b[i].Raw, tag)
		}
	}
	s.mu.Lock()
	s.tags = append(s.tags, batchTag{tag: tag, n: len(b)})
	s.mu.Unlock()
	return nil
}

func TestSwapperPanicsOnNil(t *testing.T) {
	assert.Panics(t, func() { pipeline.NewSwapper(nil) })
	r, err := pipeline.NewRouter(nil, pipeline.Config{})
	require.NoError(t, err)
	sw := pipeline.NewSwapper(r)
	assert.Panics(t, func() { sw.Swap(nil) })
	assert.Same(t, r, sw.Swap(r))
}

// wrapper is comparable by type but may hold an incomparable value.
type wrapper struct{ relaykit.Sink }

func TestSinkIdentity(t *testing.T) {
	var n atomic.Int64
	fn := relaykit.SinkFunc(func(_ context.Context, b []relaykit.Event) error { n.Add(int64(len(b))); return nil })
	shared := &recorder{}
	r, err := pipeline.NewRouter([]pipeline.Route{
		{Name: "a", Sinks: []relaykit.Sink{fn, wrapper{fn}, shared}},
		{Name: "b", Sinks: []relaykit.Sink{fn, wrapper{fn}, shared}, Final: true},
	}, pipeline.Config{})
	require.NoError(t, err)
	require.NoError(t, r.Route(t.Context(), batchOf("x")))
	assert.Len(t, r.Stats().Sinks, 5, "funcs are never merged; the same pointer is")
	assert.Equal(t, int64(4), n.Load())
	assert.Equal(t, 1, shared.sends())
}

// TestSharedSubBatches covers sinks that receive the same events (listed
// by the same routes) and so share one sub-batch, next to sinks that do
// not, a sink listed twice by a route, a failing sink among sharers, and
// the default sink.
func TestSharedSubBatches(t *testing.T) {
	hec, archive, extra, twice, def := &recorder{}, &recorder{}, &recorder{}, &recorder{}, &recorder{}
	failing := &recorder{err: errors.New("down")}
	var failed []string
	r, err := pipeline.NewRouter([]pipeline.Route{
		{Name: "copy", Filter: "warn", Sinks: []relaykit.Sink{extra, twice, twice}},
		{Name: "auth", Filter: "sshd", Sinks: []relaykit.Sink{hec, failing, archive}, Final: true},
		{Name: "fw", Filter: "DROP", Sinks: []relaykit.Sink{archive, hec, failing, extra}, Final: true},
	}, pipeline.Config{Default: def, Hooks: pipeline.Hooks{OnSendFailure: func(_ context.Context, f pipeline.SendFailure) {
		for i := range f.Events {
			failed = append(failed, f.Sink+":"+string(f.Events[i].Raw))
		}
	}}})
	require.NoError(t, err)
	err = r.Route(t.Context(), batchOf("sshd 1", "DROP 2", "info 3", "warn sshd 4", "warn 5", "DROP warn 6"))
	require.Error(t, err)
	assert.Equal(t, []string{"sshd 1", "DROP 2", "warn sshd 4", "DROP warn 6"}, hec.raws())
	assert.Equal(t, hec.raws(), archive.raws())
	assert.Equal(t, []string{"DROP 2", "warn sshd 4", "warn 5", "DROP warn 6", "DROP warn 6"}, extra.raws())
	assert.Equal(t, []string{"warn sshd 4", "warn sshd 4", "warn 5", "warn 5", "DROP warn 6", "DROP warn 6"}, twice.raws())
	assert.Equal(t, []string{"info 3", "warn 5"}, def.raws())
	assert.Len(t, failed, 4)
	for _, s := range []*recorder{hec, archive, extra, twice, def, failing} {
		assert.Equal(t, 1, s.sends())
	}
	st := r.Stats()
	checkLedger(t, st)
	sent := map[string]uint64{}
	for _, s := range st.Sinks {
		sent[s.Name] = s.Sent + s.Failed
	}
	assert.Equal(t, uint64(4), sent["auth[1]"])
	assert.Equal(t, uint64(5), sent["copy[0]"])
}

// TestSharedReducerRefused: one reducer in two routes' pipelines (or twice
// in one) is refused, naming both routes; its windows would mix the
// routes' events, and a final route's event would be absorbed as a
// repeat of the non-final route's copy.
func TestSharedReducerRefused(t *testing.T) {
	sup, err := pipeline.NewSuppress(pipeline.SuppressConfig{})
	require.NoError(t, err)
	agg, err := pipeline.NewAggregate(pipeline.AggregateConfig{Key: []string{pipeline.FieldHost}})
	require.NoError(t, err)
	sink := relaykit.SinkFunc(func(context.Context, []relaykit.Event) error { return nil })
	shared := pipeline.NewPipeline(sup)
	_, err = pipeline.NewRouter([]pipeline.Route{
		{Name: "copy", Pipeline: shared, Sinks: []relaykit.Sink{sink}},
		{Name: "archive", Final: true, Pipeline: pipeline.NewPipeline(sup), Sinks: []relaykit.Sink{sink}},
	}, pipeline.Config{})
	require.ErrorIs(t, err, pipeline.ErrInvalidConfig)
	assert.ErrorContains(t, err, `route "archive": its suppress step is also a step of route "copy"`)

	_, err = pipeline.NewRouter([]pipeline.Route{
		{Name: "twice", Final: true, Pipeline: pipeline.NewPipeline(agg, agg), Sinks: []relaykit.Sink{sink}},
	}, pipeline.Config{})
	require.ErrorIs(t, err, pipeline.ErrInvalidConfig)

	// A pipeline without reducers may serve several routes; each route its
	// own reducer is fine.
	other, err := pipeline.NewSuppress(pipeline.SuppressConfig{})
	require.NoError(t, err)
	keep := pipeline.NewPipeline(pipeline.Func(func(*relaykit.Event) (bool, error) { return true, nil }))
	_, err = pipeline.NewRouter([]pipeline.Route{
		{Name: "a", Pipeline: keep, Sinks: []relaykit.Sink{sink}},
		{Name: "b", Pipeline: keep, Sinks: []relaykit.Sink{sink}},
		{Name: "c", Pipeline: pipeline.NewPipeline(sup), Sinks: []relaykit.Sink{sink}},
		{Name: "d", Final: true, Pipeline: pipeline.NewPipeline(other), Sinks: []relaykit.Sink{sink}},
	}, pipeline.Config{})
	require.NoError(t, err)
}
