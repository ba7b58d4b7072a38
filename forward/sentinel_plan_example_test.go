package forward_test

import (
	"fmt"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/forward"
)

// A custom table with the Auxiliary plan takes TimeGenerated with 6
// fractional digits and no dynamic column; the same event for an Analytics
// (or Basic) table has 7.
func ExampleSentinelPlan() {
	var e relaykit.Event
	e.Time = time.Date(2026, 11, 27, 10, 0, 0, 123456789, time.UTC).UnixNano()
	e.Host = []byte("fw01")
	e.Raw = []byte("deny tcp 198.51.100.7 -> 10.0.0.2:22")
	for _, plan := range []forward.SentinelPlan{forward.SentinelAnalytics, forward.SentinelAuxiliary} {
		s, err := forward.NewSentinel(forward.SentinelConfig{
			Endpoint: "https://dce.example.com", DCRImmutableID: "dcr-00000000000000000000000000000001",
			Stream: "Custom-FirewallRaw_CL", TokenSource: forward.StaticToken("t"), Plan: plan,
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-9s %s\n", plan, s.AppendEvent(nil, &e))
		_ = s.Close()
	}
	// Output:
	// Analytics {"TimeGenerated":"2026-11-27T10:00:00.1234567Z","RawData":"deny tcp 198.51.100.7 -> 10.0.0.2:22","Computer":"fw01"}
	// Auxiliary {"TimeGenerated":"2026-11-27T10:00:00.123456Z","RawData":"deny tcp 198.51.100.7 -> 10.0.0.2:22","Computer":"fw01"}
}
