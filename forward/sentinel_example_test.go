package forward_test

import (
	"fmt"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
)

// A Sentinel sink for a data collection rule, authenticated as an Entra ID
// service principal, and the row it sends for an event. Send fetches a
// token on first use.
func ExampleSentinel() {
	tokens, err := forward.NewEntraTokenSource(forward.EntraConfig{
		TenantID:     "00000000-0000-0000-0000-000000000001",
		ClientID:     "11111111-1111-1111-1111-111111111111",
		ClientSecret: "from-a-secret-store",
	})
	if err != nil {
		panic(err)
	}
	sink, err := forward.NewSentinel(forward.SentinelConfig{
		Endpoint:       "https://relay-dce-a1b2.westeurope-1.ingest.monitor.azure.com",
		DCRImmutableID: "dcr-00000000000000000000000000000001",
		Stream:         "Custom-RelayLogs_CL",
		TokenSource:    tokens,
		Columns:        forward.SentinelColumns{Message: "SyslogMessage", Host: "HostName", Severity: "SeverityLevel"},
		Fields:         []forward.SentinelField{{Field: "user", Column: "UserName"}},
		HTTP:           forward.HTTPConfig{Name: "sentinel-prod", Concurrency: 2},
	})
	if err != nil {
		panic(err)
	}
	defer sink.Close()

	var e relaykit.Event
	e.Time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()
	e.Host = []byte("web1")
	e.SetPriority(4, 6)
	e.SetFieldString("user", "alice")
	e.Raw = []byte("Accepted publickey for alice")
	fmt.Println(string(sink.AppendEvent(nil, &e)))
	// Output:
	// {"TimeGenerated":"2026-01-02T03:04:05.0000000Z","SyslogMessage":"Accepted publickey for alice","HostName":"web1","SeverityLevel":6,"UserName":"alice"}
}

// Rows for Sentinel's built-in tables: a CEF event (fields as the pipeline
// package's CEF parser names them) in CommonSecurityLog, and a syslog event
// in the Syslog table. The streams default to Microsoft-CommonSecurityLog
// and Microsoft-Syslog.
func ExampleSentinelTable() {
	newSink := func(table forward.SentinelTable) *forward.Sentinel {
		s, err := forward.NewSentinel(forward.SentinelConfig{
			Endpoint:       "https://relay-dce-a1b2.westeurope-1.ingest.monitor.azure.com",
			DCRImmutableID: "dcr-00000000000000000000000000000001",
			Table:          table,
			TokenSource:    forward.StaticToken("token"),
		})
		if err != nil {
			panic(err)
		}
		return s
	}
	cef := newSink(forward.SentinelCommonSecurityLog)
	defer cef.Close()
	syslog := newSink(forward.SentinelSyslog)
	defer syslog.Close()

	var e relaykit.Event
	e.Time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()
	e.Host = []byte("fw1")
	for _, kv := range [][2]string{
		{"cef.device_vendor", "Palo Alto Networks"}, {"cef.device_product", "PAN-OS"}, {"cef.device_version", "11.1"},
		{"cef.device_event_class_id", "THREAT"}, {"cef.name", "url"}, {"cef.severity", "5"},
		{"src", "192.0.2.55"}, {"dpt", "443"}, {"act", "block-url"}, {"PanOSRuleUUID", "a1b2"},
	} {
		e.SetFieldString(kv[0], kv[1])
	}
	fmt.Println(string(cef.AppendEvent(nil, &e)))

	e.Reset()
	e.Time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()
	e.Host, e.Source, e.Raw = []byte("web1"), []byte("sshd"), []byte("Accepted publickey for alice")
	e.SetPriority(10, 6) // authpriv.info
	e.SetFieldString("procid", "4242")
	fmt.Println(string(syslog.AppendEvent(nil, &e)))
	// Output:
	// {"TimeGenerated":"2026-01-02T03:04:05.0000000Z","Computer":"fw1","DeviceVendor":"Palo Alto Networks","DeviceProduct":"PAN-OS","DeviceVersion":"11.1","DeviceEventClassID":"THREAT","Activity":"url","LogSeverity":"5","SourceIP":"192.0.2.55","DestinationPort":443,"DeviceAction":"block-url","AdditionalExtensions":"PanOSRuleUUID=a1b2"}
	// {"TimeGenerated":"2026-01-02T03:04:05.0000000Z","EventTime":"2026-01-02T03:04:05.0000000Z","Computer":"web1","HostName":"web1","Facility":"authpriv","SeverityLevel":"info","SyslogMessage":"Accepted publickey for alice","ProcessName":"sshd","ProcessID":4242}
}
