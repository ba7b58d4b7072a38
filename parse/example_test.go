package parse_test

import (
	"fmt"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/parse"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/syslog"
)

func printFields(e *relaykit.Event, keys ...string) {
	for _, k := range keys {
		v, _ := e.Field(k)
		fmt.Printf("%s=%s\n", k, v)
	}
}

// A FortiGate line through the syslog parser and the FortiGate step, as a
// relay runs them: the fields have CEF's names and the time is the
// device's.
func Example() {
	fortigate, err := parse.NewVendor(parse.VendorConfig{Name: parse.VendorFortiGate})
	if err != nil {
		panic(err)
	}
	p := pipeline.NewPipeline(fortigate)

	var e relaykit.Event
	syslog.NewParser(syslog.Config{}).Parse(&e, []byte(`<189>date=2026-11-28 time=12:58:59 tz="+0100" `+
		`devname="FGT-1" logid="0000000013" type="traffic" subtype="forward" level="notice" srcip=10.1.1.5 `+
		`srcport=51234 dstip=203.0.113.7 dstport=443 proto=6 action="deny" url="/a?srcip=1.2.3.4"`))
	if _, err := p.Run(&e); err != nil {
		panic(err)
	}
	printFields(&e, "src", "spt", "dst", "dpt", "act", "request", "cef.device_event_class_id", "cef.name", "cef.severity")
	fmt.Println(e.EventTime())
	// Output:
	// src=10.1.1.5
	// spt=51234
	// dst=203.0.113.7
	// dpt=443
	// act=deny
	// request=/a?srcip=1.2.3.4
	// cef.device_event_class_id=00013
	// cef.name=traffic:forward deny
	// cef.severity=3
	// 2026-11-28 11:58:59 +0000 UTC
}

// Key=value pairs in Check Point's layout; the text inside a quoted value
// never becomes a field.
func ExampleNewKV() {
	kv, err := parse.NewKV(parse.KVConfig{Delimiters: "; ", Separator: ":", Quotes: `"`, Prefix: "cp."})
	if err != nil {
		panic(err)
	}
	e := relaykit.Event{Raw: []byte(`action:"Accept"; src:"10.0.0.1"; resource:"http://x/?src=6.6.6.6"; service:"443";`)}
	_, err = kv.Apply(&e)
	fmt.Println(err)
	for _, f := range e.Fields {
		fmt.Printf("%s=%s\n", f.Key, f.Value)
	}
	// Output:
	// <nil>
	// cp.action=Accept
	// cp.src=10.0.0.1
	// cp.resource=http://x/?src=6.6.6.6
	// cp.service=443
}

// CSV columns named by the log type in the fourth column, as PAN-OS
// writes them; the quoted value holds a comma.
func ExampleNewCSV() {
	csv, err := parse.NewCSV(parse.CSVConfig{
		Columns: []string{"-", "receive_time", "serial", "type"},
		Select:  "type",
		Sets: map[string][]string{
			"SYSTEM": {"-", "receive_time", "serial", "type", "subtype", "-", "-", "vsys", "eventid", "object",
				"-", "-", "module", "severity", "opaque"},
		},
	})
	if err != nil {
		panic(err)
	}
	e := relaykit.Event{Raw: []byte(`1,2026/11/28 12:58:59,0128,SYSTEM,general,0,2026/11/28 12:58:58,,` +
		`auth-fail,,0,0,general,medium,"failed login, user admin"`)}
	_, err = csv.Apply(&e)
	fmt.Println(err)
	printFields(&e, "type", "eventid", "severity", "opaque")
	fmt.Printf("%+v\n", csv.Stats())
	// Output:
	// <nil>
	// type=SYSTEM
	// eventid=auth-fail
	// severity=medium
	// opaque=failed login, user admin
	// {Events:1 Parsed:1 NoMatch:0 Short:0 Long:0 Unselected:0 Unterminated:0 TooManyFields:0}
}

// FortiGate's date and time, in the zone its tz field gives, become the
// event's time.
func ExampleNewTimestamp() {
	ts, err := parse.NewTimestamp(parse.TimestampConfig{
		Fields: []string{"date", "time"}, Layout: "2006-01-02 15:04:05", ZoneField: "tz", Location: time.UTC,
	})
	if err != nil {
		panic(err)
	}
	var e relaykit.Event
	e.SetFieldString("date", "2026-11-28")
	e.SetFieldString("time", "12:58:59")
	e.SetFieldString("tz", "-0800")
	_, err = ts.Apply(&e)
	fmt.Println(err, e.EventTime())
	// Output:
	// <nil> 2026-11-28 20:58:59 +0000 UTC
}

// A grok expression over go-grok's pattern library.
func ExampleNewGrok() {
	g, err := parse.NewGrok(parse.GrokConfig{
		Pattern: `%{SYSLOGTIMESTAMP:timestamp} %{SYSLOGHOST:host.name} %{DATA:process.name}\[%{POSINT:process.pid}\]: %{GREEDYDATA:message}`,
	})
	if err != nil {
		panic(err)
	}
	e := relaykit.Event{Raw: []byte("Nov 28 12:58:59 web-1 sshd[4242]: Failed password for root")}
	_, err = g.Apply(&e)
	fmt.Println(err)
	printFields(&e, "host.name", "process.name", "process.pid", "message")
	// Output:
	// <nil>
	// host.name=web-1
	// process.name=sshd
	// process.pid=4242
	// message=Failed password for root
}

// A Cisco ASA message, read by its message ID; an ID the step does not
// know keeps its text.
func ExampleNewVendor() {
	asa, err := parse.NewVendor(parse.VendorConfig{Name: parse.VendorCiscoASA})
	if err != nil {
		panic(err)
	}
	p := syslog.NewParser(syslog.Config{Location: time.UTC})
	for _, line := range []string{
		`<166>Nov 28 2026 12:58:59: %ASA-6-302013: Built outbound TCP connection 9 for outside:198.51.100.7/443 (198.51.100.7/443) to inside:10.0.0.5/51234 (203.0.113.1/40001)`,
		`<165>Nov 28 2026 12:59:16: %ASA-5-111008: User 'enable_15' executed the 'write memory' command.`,
	} {
		var e relaykit.Event
		p.Parse(&e, []byte(line))
		_, err := asa.Apply(&e)
		fmt.Println(err)
		printFields(&e, "cef.device_event_class_id", "act", "src", "spt", "sourceTranslatedAddress", "dst", "dpt", "msg")
	}
	fmt.Printf("%+v\n", asa.Stats())
	// Output:
	// <nil>
	// cef.device_event_class_id=302013
	// act=Built
	// src=10.0.0.5
	// spt=51234
	// sourceTranslatedAddress=203.0.113.1
	// dst=198.51.100.7
	// dpt=443
	// msg=Built outbound TCP connection 9 for outside:198.51.100.7/443 (198.51.100.7/443) to inside:10.0.0.5/51234 (203.0.113.1/40001)
	// <nil>
	// cef.device_event_class_id=111008
	// act=
	// src=
	// spt=
	// sourceTranslatedAddress=
	// dst=
	// dpt=
	// msg=User 'enable_15' executed the 'write memory' command.
	// {Events:2 Parsed:2 NoMatch:0 Unknown:1 Mismatch:0 Short:0 Long:0 BadTime:0 Unterminated:0 TooManyFields:0}
}
