package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sync/atomic"
	"testing"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
)

// routeBatch is the number of events per Route call; one op is one event.
const routeBatch = 256

// routeTable is the benchmark's route table: an audit copy of sshd
// failures, firewall denies, web 5xx and case-insensitive errors.
var routeTable = []struct {
	name, filter string
	final        bool
}{
	{"sshd-fail", `sshd\[\d+\]: Failed password for`, false},
	{"firewall", `\b(?:DENY|DROP)\b`, true},
	{"web-5xx", `HTTP/1\.[01]" 5\d\d `, true},
	{"errors", `(?i)error|fatal|panic`, true},
}

// genCorpus returns n lines of about 200 bytes in the shapes of sshd,
// kernel, firewall, web access and application logs; about one in twelve
// matches a route.
func genCorpus(n int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, seed+1))
	users := []string{"root", "admin", "deploy", "ann", "bob", "oracle", "git"}
	paths := []string{"/api/v1/items", "/api/v1/users/42", "/static/app.js", "/healthz", "/login", "/search?q=shoes"}
	words := []string{"request handled", "cache refreshed", "user logged in", "job queued", "session renewed", "config loaded"}
	ip := func() string {
		return fmt.Sprintf("%d.%d.%d.%d", 10+r.IntN(200), r.IntN(256), r.IntN(256), 1+r.IntN(254))
	}
	out := make([][]byte, 0, n)
	for len(out) < n {
		ts := fmt.Sprintf("Nov 22 %02d:%02d:%02d", r.IntN(24), r.IntN(60), r.IntN(60))
		host := fmt.Sprintf("host-%02d", r.IntN(40))
		hit := r.IntN(12) == 0
		var l string
		switch r.IntN(5) {
		case 0: // sshd
			if hit {
				l = fmt.Sprintf("<38>%s %s sshd[%d]: Failed password for invalid user %s from %s port %d ssh2",
					ts, host, 1000+r.IntN(60000), users[r.IntN(len(users))], ip(), 1024+r.IntN(60000))
			} else {
				l = fmt.Sprintf("<38>%s %s sshd[%d]: Accepted publickey for %s from %s port %d ssh2: RSA SHA256:%x",
					ts, host, 1000+r.IntN(60000), users[r.IntN(len(users))], ip(), 1024+r.IntN(60000), r.Uint64())
			}
		case 1: // kernel
			l = fmt.Sprintf("<6>%s %s kernel: [%d.%06d] eth%d: link up, %d Mbps, full duplex, flow control rx/tx, mtu %d",
				ts, host, r.IntN(900000), r.IntN(1000000), r.IntN(4), []int{100, 1000, 10000}[r.IntN(3)], 1500+r.IntN(7500))
		case 2: // firewall
			action := "ACCEPT"
			if hit {
				action = []string{"DENY", "DROP"}[r.IntN(2)]
			}
			l = fmt.Sprintf("<4>%s %s kernel: fw action=%s IN=eth0 OUT= SRC=%s DST=%s LEN=%d PROTO=TCP SPT=%d DPT=%d",
				ts, host, action, ip(), ip(), 40+r.IntN(1400), 1024+r.IntN(60000), []int{22, 80, 443, 3389}[r.IntN(4)])
		case 3: // web access
			status := []int{200, 200, 200, 301, 304, 404}[r.IntN(6)]
			if hit {
				status = 500 + r.IntN(4)
			}
			l = fmt.Sprintf(`%s - - [22/Nov/2026:%s +0000] "GET %s HTTP/1.1" %d %d "-" "Mozilla/5.0 (X11; Linux x86_64)"`,
				ip(), ts[7:], paths[r.IntN(len(paths))], status, r.IntN(50000))
		default: // app
			level, msg := "INFO", words[r.IntN(len(words))]
			if hit {
				level, msg = []string{"ERROR", "Fatal", "error"}[r.IntN(3)], []string{"db timeout", "panic: nil map", "upstream refused"}[r.IntN(3)]
			}
			l = fmt.Sprintf("2026-11-22T%sZ app[%d] %s %s path=%s user=%s took=%dms trace=%016x",
				ts[7:], r.IntN(999), level, msg, paths[r.IntN(len(paths))], users[r.IntN(len(users))], r.IntN(900), r.Uint64())
		}
		for len(l) < 190 {
			l += fmt.Sprintf(" k%d=v%d", r.IntN(100), r.IntN(1000))
		}
		out = append(out, []byte(l))
	}
	return out
}

// counter is a Sink counting events.
type counter struct{ n atomic.Int64 }

func (c *counter) Send(_ context.Context, b []relaykit.Event) error {
	c.n.Add(int64(len(b)))
	return nil
}

// router is the shape both implementations share: route one batch.
type router interface {
	Route(ctx context.Context, batch []relaykit.Event) error
}

// naiveRouter is the baseline: the same routes, Final and clone semantics
// and per-sink batching, with each filter a regexp compiled once and run
// on every event (no literal prefilter).
type naiveRouter struct {
	res    []*regexp.Regexp
	final  []bool
	sinks  []relaykit.Sink
	def    relaykit.Sink
	sub    [][]relaykit.Event
	defSub []relaykit.Event
	clones []relaykit.Event
}

func newNaive(sinks []relaykit.Sink, def relaykit.Sink) *naiveRouter {
	n := &naiveRouter{sinks: sinks, def: def, sub: make([][]relaykit.Event, len(sinks))}
	for _, rt := range routeTable {
		n.res = append(n.res, regexp.MustCompile(rt.filter))
		n.final = append(n.final, rt.final)
	}
	return n
}

func (n *naiveRouter) Route(ctx context.Context, batch []relaykit.Event) error {
	nc := 0
	for i := range batch {
		e := &batch[i]
		consumed := false
		for ri, re := range n.res {
			if !re.Match(e.Raw) {
				continue
			}
			if n.final[ri] {
				n.sub[ri] = append(n.sub[ri], *e)
				consumed = true
				break
			}
			if nc == len(n.clones) {
				n.clones = append(n.clones, relaykit.Event{})
			}
			e.CopyTo(&n.clones[nc])
			n.sub[ri] = append(n.sub[ri], n.clones[nc])
			nc++
		}
		if !consumed {
			n.defSub = append(n.defSub, *e)
		}
	}
	for k, s := range n.sub {
		if len(s) > 0 {
			if err := n.sinks[k].Send(ctx, s); err != nil {
				return err
			}
			n.sub[k] = s[:0]
		}
	}
	if len(n.defSub) > 0 {
		if err := n.def.Send(ctx, n.defSub); err != nil {
			return err
		}
		n.defSub = n.defSub[:0]
	}
	return nil
}

// expectCounts returns, per route and for the default (last), how many of
// the first n events of the cycling corpus each gets, by a plain regexp
// loop.
func expectCounts(corpus [][]byte, n int) []int64 {
	res := make([]*regexp.Regexp, len(routeTable))
	for i, rt := range routeTable {
		res[i] = regexp.MustCompile(rt.filter)
	}
	per := make([][]int64, len(corpus)) // decisions per corpus line
	for j, l := range corpus {
		per[j] = make([]int64, len(routeTable)+1)
		consumed := false
		for i, re := range res {
			if re.Match(l) {
				per[j][i] = 1
				if routeTable[i].final {
					consumed = true
					break
				}
			}
		}
		if !consumed {
			per[j][len(routeTable)] = 1
		}
	}
	want := make([]int64, len(routeTable)+1)
	for k := range n {
		for i, v := range per[k%len(corpus)] {
			want[i] += v
		}
	}
	return want
}

func BenchmarkRoute(b *testing.B) {
	corpus := genCorpus(4096, 1)
	impls := []struct {
		name string
		make func(sinks []relaykit.Sink, def relaykit.Sink) router
	}{
		{"router", func(sinks []relaykit.Sink, def relaykit.Sink) router {
			routes := make([]pipeline.Route, len(routeTable))
			for i, rt := range routeTable {
				routes[i] = pipeline.Route{Name: rt.name, Filter: rt.filter, Final: rt.final, Sinks: []relaykit.Sink{sinks[i]}}
			}
			r, err := pipeline.NewRouter(routes, pipeline.Config{Default: def})
			if err != nil {
				b.Fatal(err)
			}
			return r
		}},
		{"naive", func(sinks []relaykit.Sink, def relaykit.Sink) router { return newNaive(sinks, def) }},
	}
	for _, impl := range impls {
		b.Run(fmt.Sprintf("batch=%d/impl=%s", routeBatch, impl.name), func(b *testing.B) {
			counters := make([]*counter, len(routeTable)+1)
			sinks := make([]relaykit.Sink, len(routeTable))
			for i := range counters {
				counters[i] = &counter{}
				if i < len(sinks) {
					sinks[i] = counters[i]
				}
			}
			r := impl.make(sinks, counters[len(routeTable)])
			runRoute(b, r, corpus)
			want := expectCounts(corpus, b.N)
			for i, c := range counters {
				if got := c.n.Load(); got != want[i] {
					b.Fatalf("impl %s: sink %d got %d events, want %d (b.N %d)", impl.name, i, got, want[i], b.N)
				}
			}
		})
	}
}

// runRoute feeds the cycling corpus to r in batches of routeBatch, one op
// per event; the batch is routed when its last event's op runs. Events are
// refilled from the corpus before each batch (outside the count of nothing:
// the copy is part of the op, as a collector would fill the batch).
func runRoute(b *testing.B, r router, corpus [][]byte) {
	ctx := context.Background()
	batch := make([]relaykit.Event, routeBatch)
	next := 0
	fill := func(k int) {
		for j := range batch[:k] {
			batch[j].Reset()
			batch[j].Raw = append(batch[j].Raw, corpus[next%len(corpus)]...)
			next++
		}
	}
	b.ReportAllocs()
	b.SetBytes(200)
	i := 0
	for b.Loop() {
		i++
		if i == routeBatch {
			fill(routeBatch)
			if err := r.Route(ctx, batch); err != nil {
				b.Fatal(err)
			}
			i = 0
		}
	}
	if i > 0 { // the events of the last, partial batch
		fill(i)
		if err := r.Route(ctx, batch[:i]); err != nil {
			b.Fatal(err)
		}
	}
}

// genJSONCorpus mixes the routing corpus with JSON application events that
// carry a card number to mask.
func genJSONCorpus(n int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, seed+2))
	base := genCorpus(n, seed)
	for i := range base {
		if r.IntN(3) != 0 {
			continue
		}
		base[i] = fmt.Appendf(nil, `{"ts":"2026-11-22T02:11:%02d.%03dZ","level":"info","msg":"payment accepted","user":{"id":%d,"name":"user%d","card":"%04d-%04d-%04d-%04d"},"amount":%d.%02d,"tags":["web","eu"]}`,
			r.IntN(60), r.IntN(1000), r.IntN(100000), r.IntN(1000), r.IntN(10000), r.IntN(10000), r.IntN(10000), r.IntN(10000), r.IntN(1000), r.IntN(100))
	}
	return base
}

// BenchmarkPipeline routes the mixed corpus through the route table plus a
// JSON route that parses the message into fields and masks the card
// number field (a regexp replacement on every JSON event).
func BenchmarkPipeline(b *testing.B) {
	corpus := genJSONCorpus(4096, 3)
	parse, err := pipeline.ParseJSON(pipeline.JSONConfig{})
	if err != nil {
		b.Fatal(err)
	}
	mask, err := pipeline.Mask("user.card", `^\d{4}-\d{4}-\d{4}-(\d{4})$`, "XXXX-XXXX-XXXX-$1")
	if err != nil {
		b.Fatal(err)
	}
	jsonSink, other := &counter{}, &counter{}
	var masked atomic.Int64
	check := relaykit.SinkFunc(func(ctx context.Context, batch []relaykit.Event) error {
		for i := range batch {
			if v, ok := batch[i].Field("user.card"); ok && len(v) == 19 && string(v[:15]) == "XXXX-XXXX-XXXX-" {
				masked.Add(1)
			}
		}
		return jsonSink.Send(ctx, batch)
	})
	routes := []pipeline.Route{{Name: "json", Filter: `^\{`, Final: true, Pipeline: pipeline.NewPipeline(parse, mask), Sinks: []relaykit.Sink{check}}}
	for _, rt := range routeTable {
		routes = append(routes, pipeline.Route{Name: rt.name, Filter: rt.filter, Final: rt.final, Sinks: []relaykit.Sink{other}})
	}
	r, err := pipeline.NewRouter(routes, pipeline.Config{Default: other})
	if err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("batch=%d/impl=router", routeBatch), func(b *testing.B) {
		jsonSink.n.Store(0)
		masked.Store(0)
		runRoute(b, r, corpus)
		var want int64
		for k := range b.N {
			if corpus[k%len(corpus)][0] == '{' {
				want++
			}
		}
		if got := jsonSink.n.Load(); got != want || masked.Load() != want {
			b.Fatalf("json events: got %d, masked %d, want %d", got, masked.Load(), want)
		}
	})
}
