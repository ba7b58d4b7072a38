package enrich_test

import (
	"context"
	"fmt"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/enrich"
)

// Enrichers compose with Chain, and EnricherFunc turns a plain function into
// one, like http.HandlerFunc. Here a function copies the first IP address of
// the raw message into a field, then a table lookup names the host behind
// it. Missing data is not an error: the event just gets no field.
func ExampleChain() {
	srcIP := enrich.EnricherFunc(func(_ context.Context, e *relaykit.Event) error {
		if ip, ok := enrich.FirstIP(e.Raw); ok {
			e.SetField("src_ip", ip.AppendTo(nil))
		}
		return nil
	})
	hosts := enrich.NewTable(map[string]string{"192.0.2.10": "build-server"})
	names, err := enrich.NewLookupEnricher(hosts, enrich.LookupEnricherConfig{
		Source: enrich.Source{Field: "src_ip"},
		Target: "src_host",
	})
	if err != nil {
		panic(err)
	}
	chain := enrich.Chain(srcIP, names)

	for _, raw := range []string{
		"Failed password for root from 192.0.2.10 port 52113 ssh2",
		"Failed password for root from 198.51.100.7 port 40022 ssh2",
		"no address here",
	} {
		e := relaykit.Event{Raw: []byte(raw)}
		if err := chain.Enrich(context.Background(), &e); err != nil {
			panic(err)
		}
		ip, _ := e.Field("src_ip")
		host, _ := e.Field("src_host")
		fmt.Printf("src_ip=%q src_host=%q\n", ip, host)
	}
	// Output:
	// src_ip="192.0.2.10" src_host="build-server"
	// src_ip="198.51.100.7" src_host=""
	// src_ip="" src_host=""
}
