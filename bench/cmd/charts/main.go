// Command charts draws the SVG charts shown in README.md and BENCHMARKS.md
// from the benchmark results recorded in bench/results, so that every chart
// can be regenerated from data committed beside it.
//
// Run it from the bench module:
//
//	go run ./cmd/charts                 # reads results/, writes charts/
//	go run ./cmd/charts -results DIR -out DIR
//
// Inputs (a missing file skips its chart with a note; a malformed one is an
// error naming the file and line):
//
//   - results/ring.txt: go test benchmark output (the format benchstat
//     reads) of BenchmarkRingSPSC and BenchmarkRingMPSC. Each benchmark's
//     ns/op is reduced to its median over all its lines, so the output of
//     `go test -run '^$' -bench Ring -benchmem -cpu 2 -count 10 ./...` can
//     replace the file as it is. Draws charts/ring.svg: ns per item by
//     implementation and producer count.
//   - results/relay.tsv: one row per end-to-end relay run of a scenario
//     (bench/relay/run.sh), tab-separated, with a header line; the columns
//     are described in results/README.md. Draws charts/relay.svg: events per
//     CPU-second of the relay and of rsyslog per scenario.
//   - results/outage-timeline.tsv: the relay during a destination outage,
//     one row per sample: seconds since the load started, events received
//     (cumulative), events delivered to the destination (cumulative), and
//     events waiting in the destination's spool at that moment. A comment
//     line "# outage: FROM TO" (seconds) marks when the destination was
//     down. Draws charts/outage.svg.
//
// Lines starting with '#' in the TSV files are comments.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	results := flag.String("results", "results", "directory holding the recorded benchmark results")
	out := flag.String("out", "charts", "directory the SVG charts are written to")
	flag.Parse()
	if err := run(*results, *out, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "charts:", err)
		os.Exit(1)
	}
}

// chart is one SVG drawn from one input file.
type chart struct {
	input  string // file name in the results directory
	output string // file name in the output directory
	draw   func(in, out string) error
}

var charts = []chart{
	{"ring.txt", "ring.svg", drawRing},
	{"relay.tsv", "relay.svg", drawRelay},
	{"outage-timeline.tsv", "outage.svg", drawOutage},
}

// run draws every chart whose input exists in resultsDir into outDir and
// reports each chart written or skipped to log.
func run(resultsDir, outDir string, log io.Writer) error {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	for _, c := range charts {
		in := resultsDir + "/" + c.input
		out := outDir + "/" + c.output
		if _, err := os.Stat(in); os.IsNotExist(err) {
			fmt.Fprintf(log, "skip %s: %s not recorded\n", c.output, in)
			continue
		}
		if err := c.draw(in, out); err != nil {
			return fmt.Errorf("%s: %w", c.output, err)
		}
		fmt.Fprintf(log, "wrote %s from %s\n", out, in)
	}
	return nil
}
