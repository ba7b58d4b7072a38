// Command corpus writes one of the bench module's generated syslog
// corpora (package corpus), one line per event, to stdout or a file:
//
//	go run ./cmd/corpus -kind firewall -n 1000000 -seed 1 -o firewall.log
//
// The same -kind, -seed, -rate and -n give the same bytes on every run.
// Replay a file into a relay with loggen, nc or the relay bench's tools.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/relaykit/relaykit/bench/corpus"
)

func main() {
	kind := flag.String("kind", "firewall", "corpus: firewall, daemons or cef-vendors")
	n := flag.Int("n", 100000, "lines to write")
	seed := flag.Uint64("seed", 1, "seed")
	rate := flag.Int("rate", 2000, "simulated events per second (the lines' timestamps)")
	out := flag.String("o", "-", "output file, - for stdout")
	flag.Parse()
	if err := run(os.Stdout, *kind, *n, *seed, *rate, *out); err != nil {
		fmt.Fprintln(os.Stderr, "corpus:", err)
		os.Exit(1)
	}
}

func run(stdout io.Writer, kind string, n int, seed uint64, rate int, out string) error {
	var k corpus.Kind = -1
	for _, c := range corpus.Kinds {
		if c.String() == kind {
			k = c
		}
	}
	if k < 0 {
		return fmt.Errorf("unknown -kind %q (want firewall, daemons or cef-vendors)", kind)
	}
	w := stdout
	if out != "-" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	g := corpus.New(k, corpus.Config{Seed: seed, Rate: rate})
	var line []byte
	for range n {
		line, _ = g.Next(line[:0])
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}
