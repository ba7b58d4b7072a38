package configtest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
)

// testMain is `relay test -config relay.yaml tests.yaml [more.yaml...]`:
// it runs the test files' cases against the config (RunTests: nothing is
// opened or sent) and prints the failures, or a JUnit XML report with
// -format junit, to stdout or the -o file. The exit status is 0 when every
// case passed, 1 when one failed, 2 for a config or test file that cannot
// be read.
func Command(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("relay test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: relay test [-config relay.yaml] [-format text|junit] [-o file] [-v] tests.yaml [more.yaml...]")
		fs.PrintDefaults()
	}
	configPath := fs.String("config", "", "YAML config `file` to test (default: the embedded default config)")
	format := fs.String("format", "text", "report `format`: text or junit")
	outPath := fs.String("o", "", "write the report to `file` instead of stdout")
	verbose := fs.Bool("v", false, "text: list the cases that passed too")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	if *format != "text" && *format != "junit" {
		fmt.Fprintf(stderr, "relay test: -format %q: want text or junit\n", *format)
		return 2
	}
	cfg, err := config.LoadConfig(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "relay test: config: %v\n", err)
		return 2
	}
	suite, err := LoadTests(fs.Args()...)
	if err != nil {
		fmt.Fprintf(stderr, "relay test: tests: %v\n", err)
		return 2
	}
	rep, err := RunTests(&cfg, suite)
	if err != nil {
		fmt.Fprintf(stderr, "relay test: config: %v\n", err)
		return 2
	}
	write := func(w io.Writer) error {
		if *format == "junit" {
			return rep.WriteJUnit(w)
		}
		return rep.WriteText(w, *verbose)
	}
	if *outPath == "" {
		err = write(stdout)
	} else {
		var f *os.File
		if f, err = os.Create(*outPath); err == nil {
			err = errors.Join(write(f), f.Close())
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "relay test: report: %v\n", err)
		return 2
	}
	if *outPath != "" && rep.Failed() > 0 {
		// The report is in the file; say so where the operator looks.
		fmt.Fprintf(stderr, "relay test: %d of %d cases failed (report in %s)\n", rep.Failed(), len(rep.Cases), *outPath)
	}
	if rep.Failed() > 0 {
		return 1
	}
	return 0
}
