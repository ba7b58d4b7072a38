package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/bench/corpus"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/syslog"
)

// The reduction config measured by BenchmarkSentinelReduction (BENCHMARKS.md
// "Sentinel: bytes sent per million events"), the relay routes it stands
// for:
//
//	# firewall and cef-vendors, to CommonSecurityLog
//	- {name: deny, field: act, filter: '^(deny|Drop|reset-both|blocked)$', final: true, destinations: [sentinel], pipeline: [
//	    {type: suppress, key: [host, src, dst, dpt], allow: 1, window: 30s},
//	    {type: rename, field: suppressed_count, to: cnt}]}
//	- {name: flows, field: act, filter: '^(accept|allow|close|Accept|Allowed)$', final: true, destinations: [sentinel], pipeline: [
//	    {type: aggregate, key: [host, src, dst, dpt, act], window: 1m, sum: [out, in]},
//	    {type: rename, field: count, to: cnt}, {type: rename, field: sum_out, to: out}, {type: rename, field: sum_in, to: in}]}
//	- {name: rest, final: true, destinations: [sentinel]}
//	# daemons, to Syslog
//	- {name: dedup, final: true, destinations: [sentinel], pipeline: [
//	    {type: suppress, key: [host, _raw], allow: 1, window: 30s}]}
func reductionRoutes(kind corpus.Kind, sink relaykit.Sink) ([]pipeline.Route, error) {
	if kind == corpus.Daemons {
		sup, err := pipeline.NewSuppress(pipeline.SuppressConfig{Key: []string{"host", "_raw"}, Allow: 1, Window: 30 * time.Second})
		if err != nil {
			return nil, err
		}
		return []pipeline.Route{{Name: "dedup", Final: true, Pipeline: pipeline.NewPipeline(sup), Sinks: []relaykit.Sink{sink}}}, nil
	}
	sup, err := pipeline.NewSuppress(pipeline.SuppressConfig{Key: []string{"host", "src", "dst", "dpt"}, Allow: 1, Window: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	agg, err := pipeline.NewAggregate(pipeline.AggregateConfig{Key: []string{"host", "cef.device_vendor", "cef.device_product", "src", "dst", "dpt", "act"}, Window: time.Minute, Sum: []string{"out", "in"}})
	if err != nil {
		return nil, err
	}
	return []pipeline.Route{
		{Name: "deny", Field: "act", Filter: "^(deny|Drop|reset-both|blocked)$", Final: true, Sinks: []relaykit.Sink{sink},
			Pipeline: pipeline.NewPipeline(sup, pipeline.Rename("suppressed_count", "cnt"))},
		{Name: "flows", Field: "act", Filter: "^(accept|allow|close|Accept|Allowed)$", Final: true, Sinks: []relaykit.Sink{sink},
			Pipeline: pipeline.NewPipeline(agg, pipeline.Rename("count", "cnt"), pipeline.Rename("sum_out", "out"), pipeline.Rename("sum_in", "in"))},
		{Name: "rest", Final: true, Sinks: []relaykit.Sink{sink}},
	}, nil
}

// BenchmarkSentinelReduction sends a generated corpus (package corpus,
// seed 1, 2,000 events per simulated second) through the pipeline's
// router and forward's Sentinel sink to the DCR stand-in over HTTP on
// 127.0.0.1 (gzip, the sink's default), with no reduction (reduce=none:
// one route to the sink) or the reduction config of reductionRoutes
// (reduce=on), windows ended by the simulated clock after each batch of
// 1,000 events and flushed at the end. One op is one input event;
// generating and parsing the lines is outside the timer. It reports per
// million input events the request body bytes before compression
// (body-B/Mev), on the wire (wire-B/Mev), the rows that reached the
// stand-in (rows/Mev) and the requests; the stand-in checks every row
// against the table's schema, so a reduced row that does not fit fails
// the benchmark. Run it with an exact count, e.g.
//
//	go test -run '^$' -bench SentinelReduction -benchtime 1000000x ./
func BenchmarkSentinelReduction(b *testing.B) {
	for _, kind := range corpus.Kinds {
		for _, reduce := range []bool{false, true} {
			name := fmt.Sprintf("corpus=%s/reduce=none", kind)
			if reduce {
				name = fmt.Sprintf("corpus=%s/reduce=on", kind)
			}
			b.Run(name, func(b *testing.B) { benchReduction(b, kind, reduce) })
		}
	}
}

func benchReduction(b *testing.B, kind corpus.Kind, reduce bool) {
	table := forward.SentinelCommonSecurityLog
	if kind == corpus.Daemons {
		table = forward.SentinelSyslog
	}
	srv, err := forwardtest.StartDCRServer(forwardtest.DCRServerConfig{Stream: table.Stream(), DiscardRows: true})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	c := srv.Config()
	ts, err := forward.NewEntraTokenSource(forward.EntraConfig{
		TenantID: c.TenantID, ClientID: c.ClientID, ClientSecret: c.ClientSecret, AuthorityHost: srv.AuthorityHost,
	})
	if err != nil {
		b.Fatal(err)
	}
	sink, err := forward.NewSentinel(forward.SentinelConfig{
		Endpoint: srv.URL, DCRImmutableID: c.DCRImmutableID, Table: table, TokenSource: ts,
		CollectorHostName: "relay-bench",
	})
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	routes := []pipeline.Route{{Name: "all", Final: true, Sinks: []relaykit.Sink{sink}}}
	if reduce {
		if routes, err = reductionRoutes(kind, sink); err != nil {
			b.Fatal(err)
		}
	}
	router, err := pipeline.NewRouter(routes, pipeline.Config{})
	if err != nil {
		b.Fatal(err)
	}

	g := corpus.New(kind, corpus.Config{Seed: 1})
	p := syslog.NewParser(syslog.Config{CEF: true, Location: time.UTC})
	const batchSize = 1000
	batch := make([]relaykit.Event, batchSize)
	var line []byte
	ctx := context.Background()
	var now int64
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(batchSize, b.N-done)
		b.StopTimer()
		for i := range n {
			e := &batch[i]
			e.Reset()
			line, now = g.Next(line[:0])
			e.ReceiveTime = now
			p.Parse(e, line)
		}
		b.StartTimer()
		if err := router.Route(ctx, batch[:n]); err != nil {
			b.Fatal(err)
		}
		if err := router.Flush(ctx, now); err != nil {
			b.Fatal(err)
		}
		done += n
	}
	if err := router.Flush(ctx, pipeline.FlushAll); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()

	st := sink.Stats()
	if len(st.EventsFailed) > 0 {
		for reason, n := range st.EventsFailed {
			if n > 0 {
				b.Fatalf("%d rows failed (%s): the stand-in refused them", n, reason)
			}
		}
	}
	rows := 0
	for _, r := range srv.Requests() {
		rows += r.Rows
	}
	if int64(rows) != st.EventsSent {
		b.Fatalf("stand-in has %d rows, the sink sent %d", rows, st.EventsSent)
	}
	perM := 1e6 / float64(b.N)
	b.ReportMetric(float64(st.BytesSent)*perM, "body-B/Mev")
	b.ReportMetric(float64(st.WireBytes)*perM, "wire-B/Mev")
	b.ReportMetric(float64(st.EventsSent)*perM, "rows/Mev")
	b.ReportMetric(float64(st.Requests)*perM, "requests/Mev")
}
