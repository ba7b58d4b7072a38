// Command relaykit imports every relaykit package, reads nothing, and
// prints the CPU it used while idle (see bench/clock_test.go).
package main

import (
	"flag"

	_ "github.com/relaykit/relaykit/batch"
	_ "github.com/relaykit/relaykit/clock"
	_ "github.com/relaykit/relaykit/delivery"
	_ "github.com/relaykit/relaykit/engine"
	_ "github.com/relaykit/relaykit/enrich"
	_ "github.com/relaykit/relaykit/forward"
	_ "github.com/relaykit/relaykit/forward/kafka"
	_ "github.com/relaykit/relaykit/otlp"
	_ "github.com/relaykit/relaykit/pipeline"
	_ "github.com/relaykit/relaykit/sources"
	_ "github.com/relaykit/relaykit/spool"
	_ "github.com/relaykit/relaykit/storage"
	_ "github.com/relaykit/relaykit/stream"
	_ "github.com/relaykit/relaykit/stream/hec"
	_ "github.com/relaykit/relaykit/stream/relp"
	_ "github.com/relaykit/relaykit/stream/udp"
	_ "github.com/relaykit/relaykit/syslog"
	_ "github.com/relaykit/relaykit/tap"

	"github.com/relaykit/relaykit/bench/internal/idle"
)

func main() {
	window := flag.Duration("window", 3e9, "how long to stay idle")
	flag.Parse()
	idle.Measure(*window)
}
