// Command timecache imports github.com/agilira/go-timecache, reads
// nothing, and prints the CPU it used while idle (see bench/clock_test.go).
package main

import (
	"flag"

	_ "github.com/agilira/go-timecache"

	"github.com/relaykit/relaykit/bench/internal/idle"
)

func main() {
	window := flag.Duration("window", 3e9, "how long to stay idle")
	flag.Parse()
	idle.Measure(*window)
}
