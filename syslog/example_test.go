package syslog_test

import (
	"fmt"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/syslog"
)

// Parse an RFC 5424 message with structured data into an event.
func ExampleParser() {
	p := syslog.NewParser(syslog.Config{Location: time.UTC})
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
func ExampleParser_noPRI() {
	p := syslog.NewParser(syslog.Config{Location: time.UTC})
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
func ExampleParser_cef() {
	p := syslog.NewParser(syslog.Config{Location: time.UTC, CEF: true})
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
