// Command agent is the smallest relaykit agent worth copying: it receives
// syslog over UDP and TCP and JSON lines over TCP, routes every event to a
// rotating archive on disk and the alerts among them (syslog severity err
// or worse, JSON "level" error or fatal), repeats suppressed, to Splunk
// HEC behind a durable delivery queue. An outage of HEC, or a crash of the
// agent during one, costs nothing it had archived. On SIGINT or SIGTERM it
// shuts down in the order that loses nothing it read.
//
//	syslog UDP, TCP ─▶ input.Syslog    ─┐                 ┌─ "syslog-alerts" (severity <= err) ─┬─ suppress ─▶ delivery.Queue ─▶ forward.HEC
//	JSON lines TCP  ─▶ input.JSONLines ─┴▶ engine.Engine ─▶ pipeline.Router ─┼─ "json-alerts" (level error|fatal) ─┘
//	                   (a Producer per     (ring → batch,  └─ "archive" (all, final) ─▶ storage.Archive
//	                    connection)         inline flush)
//
// # Acknowledgements
//
// With -ack the agent answers on each JSON-lines connection, after each
// read, with one line "ok N\n" once the N lines it read since its previous
// answer (blank and refused ones too) are durable: written to the archive
// and, for alerts, in HEC's spool (or delivered). When they cannot be (the
// archive's disk fails, or shutdown ran out of -drain), it closes the
// connection without answering for them: a sender that keeps each line
// until an answer covers it, and sends the rest again on a new connection,
// loses nothing to a crash of the agent, a full disk or a restart.
//
// Without -hec it starts a local HEC stand-in (forwardtest) and prints what
// it indexed, so it runs with no Splunk at hand. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
	"github.com/relaykit/relaykit/input"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/storage"
	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/udp"
	"github.com/relaykit/relaykit/syslog"
)

// config is what the flags set.
type config struct {
	Syslog, JSON, HECURL, HECToken, Dir string
	Drain                               time.Duration
	Ack                                 bool
}

// summary is the agent's ledger: read == refused (JSON lines that are not
// JSON) + archived, and the alerts that reached HEC's queue were sent, are
// spooled for the next run, or failed there (and are in the archive
// anyway).
type summary struct{ Read, Refused, Archived, Alerts, HECSent, HECSpooled, HECFailed int64 }

func main() {
	var cfg config
	flag.StringVar(&cfg.Syslog, "syslog", "127.0.0.1:5514", `address to receive syslog on, over UDP and TCP ("" for none)`)
	flag.StringVar(&cfg.JSON, "json", "127.0.0.1:5170", `TCP address to receive JSON lines on ("" for none)`)
	flag.BoolVar(&cfg.Ack, "ack", false, `answer "ok N" on each JSON connection once its N lines since the last answer are durable`)
	flag.StringVar(&cfg.HECURL, "hec", "", "Splunk HEC base URL (default: a local stand-in that prints what it indexed)")
	flag.StringVar(&cfg.HECToken, "hec-token", os.Getenv("HEC_TOKEN"), "HEC token (default: $HEC_TOKEN)")
	flag.StringVar(&cfg.Dir, "dir", "agent-data", "archive directory")
	flag.DurationVar(&cfg.Drain, "drain", 10*time.Second, "how long shutdown may take to deliver what is queued")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if cfg.HECURL == "" {
		hec, err := forwardtest.StartHECServer(forwardtest.HECServerConfig{})
		if err != nil {
			fail(err)
		}
		defer func() {
			for _, e := range hec.Events() {
				fmt.Printf("HEC indexed: sourcetype=%s %s\n", e.SourceType, e.Event)
			}
			hec.Close()
		}()
		cfg.HECURL, cfg.HECToken = hec.URL, hec.Token()
	}
	sum, err := run(ctx, cfg)
	fmt.Printf("read %d, refused %d, archived %d in %s, alerts %d: sent to HEC %d, spooled %d, failed %d\n",
		sum.Read, sum.Refused, sum.Archived, cfg.Dir, sum.Alerts, sum.HECSent, sum.HECSpooled, sum.HECFailed)
	if err != nil {
		fail(err)
	}
}

func fail(err error) { fmt.Fprintln(os.Stderr, "agent:", err); os.Exit(1) }

// run wires the packages, serves until ctx is done, then shuts down in
// order (see shutdown) and returns the ledger. Without a listener it
// delivers what HEC's spool holds and returns.
func run(ctx context.Context, cfg config) (sum summary, err error) {
	hec, err := forward.NewHEC(forward.HECConfig{URL: cfg.HECURL, Token: cfg.HECToken,
		HTTP: forward.HTTPConfig{Logger: slog.Default()}}) // one attempt per request: the queue retries
	if err != nil {
		return sum, err
	}
	defer hec.Close()
	// Every alert batch is on disk before the router's Send returns, and is
	// sent from memory; through an outage, or after a crash, from disk.
	queue, err := delivery.New(hec, delivery.Config{Name: "hec", Dir: filepath.Join(cfg.Dir, "spool", "hec"), Logger: slog.Default()})
	if err != nil {
		return sum, err
	}
	go queue.Run(context.WithoutCancel(ctx)) //nolint:errcheck // ends with queue.Close
	archive, err := storage.NewArchive(storage.ArchiveConfig{
		Writer: storage.Config{Dir: cfg.Dir, Layout: "agent-2006-01-02.log", MaxBytes: 64 << 20, MaxFiles: 14},
	}) // one line per event, its message as received
	if err != nil {
		return sum, err
	}
	router, err := newRouter(queue, archive)
	if err != nil {
		return sum, err
	}
	// hard ends cfg.Drain after ctx: the deadline of every wait below (a
	// push for room, an acknowledgement, the engine's routing).
	hard, cancelHard := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHard()
	defer context.AfterFunc(ctx, func() { time.AfterFunc(cfg.Drain, cancelHard) })()
	// A batch the router's Send refused (the archive's disk failing) is
	// counted in eng.Stats(), and its JSON lines are not acknowledged.
	eng, err := engine.New(engine.Config{Sink: router, BatchMaxEvents: 500, BatchMaxWait: 200 * time.Millisecond})
	if err != nil {
		return sum, err
	}
	ran := make(chan error, 1)
	go func() { ran <- eng.Run(hard) }()

	listeners, err := listen(cfg, eng)
	var served sync.WaitGroup
	for _, l := range listeners {
		served.Go(func() { _ = l.Serve(ctx) })
	}
	served.Wait() // once ctx ends, after every connection handed over what it read
	err = errors.Join(err, shutdown(hard, eng, ran, queue, archive))

	es, qs := eng.Stats(), queue.Stats()
	sum = summary{Read: es.Received, Refused: es.Dropped[relaykit.ReasonInvalidJSON], Archived: archive.Stats().Events, Alerts: qs.In,
		HECSent: qs.Delivered, HECSpooled: qs.Pending, HECFailed: qs.In + qs.Recovered - qs.Delivered - qs.Pending}
	return sum, err
}

// newRouter routes the alerts, each of their kind's repeats within 30 s
// suppressed, to queue (the route parses a JSON alert's members into
// fields, which HEC indexes) and every event to archive.
func newRouter(queue, archive relaykit.Sink) (*pipeline.Router, error) {
	parse, _ := pipeline.ParseJSON(pipeline.JSONConfig{}) // the zero config is valid
	severe := pipeline.Func(func(e *relaykit.Event) (bool, error) {
		sev, ok := e.Severity()
		return ok && sev <= 3, nil // emerg, alert, crit, err
	})
	var suppress [2]*pipeline.Suppress
	for i := range suppress {
		var err error
		if suppress[i], err = pipeline.NewSuppress(pipeline.SuppressConfig{}); err != nil {
			return nil, err
		}
	}
	return pipeline.NewRouter([]pipeline.Route{
		{Name: "syslog-alerts", Field: pipeline.FieldSourceType, Filter: `^(syslog|cef)$`,
			Pipeline: pipeline.NewPipeline(severe, suppress[0]), Sinks: []relaykit.Sink{queue}},
		{Name: "json-alerts", Filter: `"level":\s*"(error|fatal)"`, Pipeline: pipeline.NewPipeline(parse, suppress[1]), Sinks: []relaykit.Sink{queue}},
		{Name: "archive", Final: true, Sinks: []relaykit.Sink{archive}},
	}, pipeline.Config{})
}

// listener is what the library's listeners have in common (stream and
// stream/udp): Serve until the context ends, Close to release one that
// never served.
type listener interface {
	Serve(ctx context.Context) error
	Close() error
}

// listen opens the listeners of cfg, on the library's inputs; on error it
// closes those it opened.
func listen(cfg config, eng *engine.Engine) (ls []listener, err error) {
	defer func() {
		if err != nil {
			for _, l := range ls {
				_ = l.Close()
			}
			ls = nil
		}
	}()
	if cfg.Syslog != "" {
		in, err := input.NewSyslog(input.SyslogConfig{Input: eng.NewInput("syslog"), Parser: syslog.Config{RequireText: true, CEF: true}, Logger: slog.Default()})
		if err != nil {
			return ls, err
		}
		dgram, err := udp.New(udp.Config{Name: "syslog", Address: cfg.Syslog, Handler: in.ServeDatagrams, Logger: slog.Default()})
		if err != nil {
			return ls, err
		}
		ls = append(ls, dgram)
		tcp, err := stream.New(stream.Config{Name: "syslog", Address: cfg.Syslog, Handler: in.ServeConn, Logger: slog.Default()})
		if err != nil {
			return ls, err
		}
		ls = append(ls, tcp)
		slog.Info("receiving syslog", "tcp", tcp.Addr().String(), "udp", dgram.Addr().String())
	}
	if cfg.JSON != "" {
		// Reads of up to 256 KiB: with -ack, one answer and one group commit per read.
		jc := input.JSONLinesConfig{Input: eng.NewInput("json"), SourceType: "_json", ReadSize: 256 << 10, Logger: slog.Default()}
		if cfg.Ack {
			jc.Ack = func(c *stream.Conn, lines int) error { _, err := fmt.Fprintf(c, "ok %d\n", lines); return err }
		}
		in, err := input.NewJSONLines(jc)
		if err != nil {
			return ls, err
		}
		tcp, err := stream.New(stream.Config{Name: "json", Address: cfg.JSON, Handler: in.ServeConn, Logger: slog.Default()})
		if err != nil {
			return ls, err
		}
		ls = append(ls, tcp)
		slog.Info("receiving JSON lines", "tcp", tcp.Addr().String(), "ack", cfg.Ack)
	}
	return ls, nil
}

// shutdown runs once the listeners' Serve have returned: they stopped
// reading, and every connection handed what it read to the engine, its
// pushes waiting for room until hard (ending them with the listeners
// would drop what was read). Then, each step within hard:
func shutdown(hard context.Context, eng *engine.Engine, ran <-chan error, queue *delivery.Queue, archive *storage.Archive) error {
	// the engine routes what its rings and collectors hold, and ends the
	// suppress windows (their summaries go to HEC's queue);
	err := eng.Shutdown(hard)
	<-ran
	// the queue delivers what HEC takes by then; the rest waits on disk
	// for the next run;
	err = errors.Join(err, queue.Close(hard))
	// the archive's last writes reach the file.
	return errors.Join(err, archive.Close())
}
