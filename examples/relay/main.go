// Command relay is a syslog relay built from the relaykit packages: syslog
// over UDP, TCP and TLS and JSON lines in; routes, pipelines and enrichment;
// Microsoft Sentinel, Splunk HEC, syslog and a local archive out; failed
// batches spooled to disk and replayed. `relay tap` prints the events at a
// point of a running relay (its operator API, api: in the config). See
// README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/relaykit/relaykit/examples/relay/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
