package forward_test

import (
	"context"
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
		Delivery: forward.DeliveryConfig{
			OnFailure: func(_ context.Context, f forward.Failure) {
				// Spill f.Events to disk; they are valid only during the call.
			},
		},
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
