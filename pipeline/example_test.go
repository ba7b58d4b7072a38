package pipeline_test

import (
	"context"
	"fmt"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/pipeline"
)

// printer is a sink that prints what it receives.
type printer string

func (p printer) Send(_ context.Context, batch []relaykit.Event) error {
	for i := range batch {
		e := &batch[i]
		fmt.Printf("%s: %s", p, e.Raw)
		for _, f := range e.Fields {
			fmt.Printf(" %s=%s", f.Key, f.Value)
		}
		fmt.Println()
	}
	return nil
}

// A route table: a non-final audit route takes a copy of every sshd failure,
// errors of any case go to an alert sink after masking card numbers, and
// JSON messages are parsed; the rest goes to the archive.
func Example() {
	mask, err := pipeline.Mask("", `\b\d{4}-\d{4}-\d{4}-\d{4}\b`, "XXXX")
	if err != nil {
		panic(err)
	}
	parse, err := pipeline.ParseJSON(pipeline.JSONConfig{})
	if err != nil {
		panic(err)
	}
	routes := []pipeline.Route{
		{
			Name:     "audit",
			Filter:   `sshd\[\d+\]: Failed password`,
			Pipeline: pipeline.NewPipeline(pipeline.Set("index", "security")),
			Sinks:    []relaykit.Sink{printer("audit")},
		},
		{
			Name:     "alerts",
			Filter:   `(?i)error|fatal|panic`,
			Pipeline: pipeline.NewPipeline(mask),
			Sinks:    []relaykit.Sink{printer("alerts")},
			Final:    true,
		},
		{
			Name:     "json",
			Filter:   `^\{`,
			Pipeline: pipeline.NewPipeline(parse, pipeline.Remove("debug")),
			Sinks:    []relaykit.Sink{printer("json")},
			Final:    true,
		},
	}
	r, err := pipeline.NewRouter(routes, pipeline.Config{Default: printer("archive")})
	if err != nil {
		panic(err)
	}
	lines := []string{
		`sshd[42]: Failed password for root from 192.0.2.7`,
		`app: FATAL card 1234-5678-9012-3456 declined`,
		`{"user":{"id":7,"name":"ann"},"debug":true}`,
		`kernel: eth0 link up`,
	}
	batch := make([]relaykit.Event, len(lines))
	for i, l := range lines {
		batch[i].Raw = []byte(l)
	}
	if err := r.Route(context.Background(), batch); err != nil {
		panic(err)
	}
	st := r.Stats()
	fmt.Println("in:", st.In, "audit:", st.Routes[0].Matched, "alerts:", st.Routes[1].Matched)
	// Output:
	// audit: sshd[42]: Failed password for root from 192.0.2.7
	// alerts: app: FATAL card XXXX declined
	// json: {"user":{"id":7,"name":"ann"},"debug":true} user.id=7 user.name=ann
	// archive: sshd[42]: Failed password for root from 192.0.2.7
	// archive: kernel: eth0 link up
	// in: 4 audit: 1 alerts: 1
}

// Reloading: build a new Router and swap it in; batches already running
// finish on the old one, with no lock on the routing path.
func ExampleSwapper() {
	build := func(filter string) *pipeline.Router {
		r, err := pipeline.NewRouter([]pipeline.Route{
			{Name: "alerts", Filter: filter, Sinks: []relaykit.Sink{printer("alerts")}, Final: true},
		}, pipeline.Config{})
		if err != nil {
			panic(err)
		}
		return r
	}
	sw := pipeline.NewSwapper(build(`(?i)fatal`))
	batch := []relaykit.Event{{Raw: []byte("FATAL: disk full")}, {Raw: []byte("warning: disk 90% full")}}
	_ = sw.Route(context.Background(), batch)

	old := sw.Swap(build(`(?i)fatal|warning`))
	fmt.Println("old router saw", old.Stats().In, "events, routed", old.Stats().Routes[0].Out)
	_ = sw.Route(context.Background(), batch)
	// Output:
	// alerts: FATAL: disk full
	// old router saw 2 events, routed 1
	// alerts: FATAL: disk full
	// alerts: warning: disk 90% full
}

// ParseJSON flattens nested objects into dotted field names.
func ExampleParseJSON() {
	parse, err := pipeline.ParseJSON(pipeline.JSONConfig{Prefix: "j."})
	if err != nil {
		panic(err)
	}
	e := relaykit.Event{Raw: []byte(`{"level":"warn","http":{"status":503,"path":"/api"},"tags":["a","b"]}`)}
	if _, err := parse.Apply(&e); err != nil {
		panic(err)
	}
	for _, f := range e.Fields {
		fmt.Printf("%s=%s\n", f.Key, f.Value)
	}
	// Output:
	// j.level=warn
	// j.http.status=503
	// j.http.path=/api
	// j.tags=["a","b"]
}

// Parse an RFC 5424 message with structured data into an event.
func ExampleSyslogParser() {
	p := pipeline.NewSyslogParser(pipeline.SyslogConfig{Location: time.UTC})
	var ev relaykit.Event
	f := p.Parse(&ev, []byte(`<13>1 2026-11-23T09:00:00.5+01:00 vm myapp 4242 LOGIN [origin@32473 ip="10.1.2.3"] sd test`))
	fac, _ := ev.Facility()
	sev, _ := ev.Severity()
	fmt.Println(f, fac, sev, time.Unix(0, ev.Time).UTC().Format(time.RFC3339Nano))
	fmt.Printf("host=%s source=%s sourcetype=%s message=%q\n", ev.Host, ev.Source, ev.SourceType, ev.Raw)
	for _, fl := range ev.Fields {
		fmt.Printf("%s=%s\n", fl.Key, fl.Value)
	}
	// Output:
	// rfc5424 1 5 2026-11-23T08:00:00.5Z
	// host=vm source=myapp sourcetype=syslog message="sd test"
	// procid=4242
	// msgid=LOGIN
	// sd.origin@32473.ip=10.1.2.3
}

// A message without PRI is user.notice, as RFC 3164 section 4.3.3 tells a
// relay; FlagPriorityAssumed tells it from a message that said so.
func ExampleSyslogParser_noPRI() {
	p := pipeline.NewSyslogParser(pipeline.SyslogConfig{Location: time.UTC})
	for _, msg := range []string{"sshd[99]: Accepted key", "<13>sshd[99]: Accepted key"} {
		var ev relaykit.Event
		p.Parse(&ev, []byte(msg))
		fac, _ := ev.Facility()
		sev, _ := ev.Severity()
		fmt.Printf("facility=%d severity=%d assumed=%v source=%s message=%q\n",
			fac, sev, ev.Flags&relaykit.FlagPriorityAssumed != 0, ev.Source, ev.Raw)
	}
	// Output:
	// facility=1 severity=5 assumed=true source=sshd message="Accepted key"
	// facility=1 severity=5 assumed=false source=sshd message="Accepted key"
}

// A BSD syslog variant carrying CEF: one call extracts both.
func ExampleSyslogParser_cef() {
	p := pipeline.NewSyslogParser(pipeline.SyslogConfig{Location: time.UTC, CEF: true})
	ev := relaykit.Event{ReceiveTime: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC).UnixNano()}
	f := p.Parse(&ev, []byte(`<134>Mar 7 2008 19:06:53 fw01 CEF:0|Security|threatmanager|1.0|100|detected a \| in message|10|src=10.0.0.1 act=blocked a \= dst=1.1.1.1`))
	fmt.Println(f, string(ev.Host), string(ev.SourceType), time.Unix(0, ev.Time).UTC().Format(time.RFC3339))
	for _, k := range []string{"cef.device_vendor", "cef.name", "cef.severity", "src", "act", "dst"} {
		v, _ := ev.Field(k)
		fmt.Printf("%s=%s\n", k, v)
	}
	// Output:
	// rfc3164 fw01 cef 2008-03-07T19:06:53Z
	// cef.device_vendor=Security
	// cef.name=detected a | in message
	// cef.severity=10
	// src=10.0.0.1
	// act=blocked a =
	// dst=1.1.1.1
}
