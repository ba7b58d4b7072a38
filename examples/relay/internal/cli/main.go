package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/configtest"
	"github.com/relaykit/relaykit/examples/relay/internal/service"
)

// mainCtx is main without the process: it runs until ctx ends and returns
// the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "tap" {
		return tapMain(ctx, args[1:], stdout, stderr) // tap.go
	}
	if len(args) > 0 && args[0] == "test" {
		return configtest.Command(ctx, args[1:], stdout, stderr) // package configtest
	}
	if len(args) > 0 && args[0] == "top" {
		return topMain(ctx, args[1:], stdout, stderr) // top.go
	}
	fs := flag.NewFlagSet("relay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "YAML config `file` (default: the embedded default config)")
	stats := fs.Duration("stats", 0, "print a one-line ledger summary to stderr every `interval` (e.g. 5s)")
	check := fs.Bool("check", false, "validate the config, print the summary and exit")
	printDefault := fs.Bool("print-default-config", false, "print the embedded default config and exit")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `file` (go tool pprof)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *printDefault {
		stdout.Write(config.DefaultYAML)
		return 0
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg, err := config.LoadConfig(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "relay: config: %v\n", err)
		return 2
	}
	if *stats > 0 {
		cfg.StatsInterval = *stats
	}
	fmt.Fprintln(stderr, cfg.Summary())
	if *check {
		return 0
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "relay: cpuprofile: %v\n", err)
			return 2
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	if err := run(ctx, cfg, *configPath, log, stderr); err != nil {
		fmt.Fprintf(stderr, "relay: %v\n", err)
		return 1
	}
	return 0
}

// run starts the relay with cfg and serves until ctx ends. SIGHUP reloads
// the TLS inputs' certificate files, then the routes and the sources
// section's policy from configPath (when set). The final ledger goes to
// out.
func run(ctx context.Context, cfg config.Config, configPath string, log *slog.Logger, out io.Writer) error {
	r, err := service.NewRelay(cfg, log)
	if err != nil {
		return err
	}
	r.StatsOut = out
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- r.Run(ctx) }()
	for {
		select {
		case err := <-done:
			fmt.Fprintf(out, "final ledger after %s: %s\n", time.Since(start).Round(time.Millisecond), r.Ledger())
			return err
		case <-hup:
			// The TLS inputs' certificate files, whatever the config.
			if err := r.ReloadCertificates(); err != nil {
				log.Error("reload of certificates failed, keeping the ones in use", "err", err)
			}
			if configPath == "" {
				log.Info("SIGHUP: no -config file, so no routes or sources to reload")
				continue
			}
			nc, err := config.LoadConfig(configPath)
			if err == nil {
				err = r.ReloadRoutes(nc.Routes)
			}
			if err != nil {
				log.Error("reload failed, keeping the current routes", "err", err)
				continue
			}
			if err := r.ReloadSources(nc.Sources); err != nil {
				log.Error("reload of sources failed, keeping the current sources settings", "err", err)
			}
		}
	}
}
