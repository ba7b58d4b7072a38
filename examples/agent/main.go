// Command agent is the smallest relaykit agent worth copying: it reads JSON
// lines from standard input or a TCP socket, queues them in a ring, batches
// them, and routes every batch: error and fatal events to Splunk HEC, and
// every event to a rotating archive on disk. HEC sits behind a durable
// delivery queue, so an outage of HEC, or a crash of the agent during one,
// costs nothing but the batch still open. On end of input, SIGINT or
// SIGTERM it shuts down in the order that loses nothing.
//
//	input ─▶ ringbuffer.MPSC ─▶ batch.Collector ─▶ pipeline.Router ─┬─ "alerts" (error|fatal) ─▶ delivery.Queue ─▶ forward.HEC
//	                                                                └─ "archive" (all, final)  ─▶ storage.Archive
//
// Without -hec it starts a local HEC stand-in (forwardtest) and prints what
// it indexed, so it runs with no Splunk at hand. See README.md.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agilira/go-timecache"
	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/batch"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/ringbuffer"
	"github.com/relaykit/relaykit/storage"
)

// config is what the flags set.
type config struct {
	Listen, HECURL, HECToken, Dir string
	Drain                         time.Duration
}

// summary is the agent's ledger: read == archived, and the alerts among
// them were sent to HEC, are spooled for the next run, or failed there
// (and are in the archive anyway).
type summary struct{ Read, Archived, Alerts, HECSent, HECSpooled, HECFailed int64 }

func main() {
	var cfg config
	flag.StringVar(&cfg.Listen, "listen", "", "TCP address to read JSON lines from, e.g. 127.0.0.1:5170 (default: standard input)")
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
	sum, err := run(ctx, cfg, os.Stdin)
	fmt.Printf("read %d, archived %d in %s, alerts %d: sent to HEC %d, spooled %d, failed %d\n",
		sum.Read, sum.Archived, cfg.Dir, sum.Alerts, sum.HECSent, sum.HECSpooled, sum.HECFailed)
	if err != nil {
		fail(err)
	}
}

func fail(err error) { fmt.Fprintln(os.Stderr, "agent:", err); os.Exit(1) }

// run wires the packages, reads until the input ends or ctx is done, then
// shuts down: the ring is closed and drained, the last batch flushed, the
// sinks closed. It returns the ledger.
func run(ctx context.Context, cfg config, stdin io.Reader) (summary, error) {
	var sum summary
	ring, _ := ringbuffer.NewMPSC[relaykit.Event](4096) // a valid power of two
	hec, err := forward.NewHEC(forward.HECConfig{
		URL: cfg.HECURL, Token: cfg.HECToken, SourceType: "_json",
		HTTP: forward.HTTPConfig{Logger: slog.Default()}, // one attempt per request: the queue retries
	})
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
	}) // one line per event, as received
	if err != nil {
		return sum, err
	}
	parse, _ := pipeline.ParseJSON(pipeline.JSONConfig{}) // the zero config is valid
	router, err := pipeline.NewRouter([]pipeline.Route{
		{Name: "alerts", Filter: `"level":\s*"(error|fatal)"`, Pipeline: pipeline.NewPipeline(parse), Sinks: []relaykit.Sink{queue}},
		{Name: "archive", Final: true, Sinks: []relaykit.Sink{archive}},
	}, pipeline.Config{})
	if err != nil {
		return sum, err
	}
	coll, err := batch.NewCollector(batch.Config[relaykit.Event]{
		MaxEvents: 500, MaxWait: 200 * time.Millisecond, DrainTimeout: cfg.Drain,
		Size: func(e relaykit.Event) int { return e.Size() },
	}, router.Route) // a flush error (the archive's disk failing) is counted in coll.Stats()
	if err != nil {
		return sum, err
	}

	// Pump owns the consumer side; stopping it is the shutdown signal.
	pumpCtx, stopPump := context.WithCancel(context.WithoutCancel(ctx))
	pumped := make(chan error, 1)
	go func() { pumped <- coll.Pump(pumpCtx, ring) }()

	var read atomic.Int64
	inErr := readInput(ctx, cfg.Listen, stdin, ring, &read)
	stopPump() // input has stopped: close the ring, drain it, flush the last batch
	err = errors.Join(inErr, <-pumped, archive.Close())
	drain, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Drain)
	defer cancel()
	err = errors.Join(err, queue.Close(drain)) // what HEC did not take by then waits on disk

	rs, qs := router.Stats(), queue.Stats()
	sum = summary{Read: read.Load(), Archived: archive.Stats().Events, Alerts: int64(rs.Routes[0].Matched),
		HECSent: qs.Delivered, HECSpooled: qs.Pending, HECFailed: qs.In + qs.Recovered - qs.Delivered - qs.Pending}
	return sum, err
}

// readInput pushes one event per line of stdin, or of every connection to
// listen, into ring until the input ends or ctx is done. Events are copies
// the ring owns: one allocation per line.
func readInput(ctx context.Context, listen string, stdin io.Reader, ring *ringbuffer.MPSC[relaykit.Event], n *atomic.Int64) error {
	if listen == "" {
		host, _ := os.Hostname()
		done := make(chan error, 1) // a read of stdin cannot be interrupted: leave it behind on ctx
		go func() { done <- readLines(ctx, stdin, host, ring, n) }()
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return nil
		}
	}
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	slog.Info("reading JSON lines", "listen", l.Addr().String())
	defer context.AfterFunc(ctx, func() { _ = l.Close() })()
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		c, err := l.Accept()
		if ctx.Err() != nil {
			return nil // the listener was closed at the end of ctx
		} else if err != nil {
			return err
		}
		conns.Go(func() {
			defer context.AfterFunc(ctx, func() { _ = c.Close() })()
			defer c.Close()
			peer, _, _ := net.SplitHostPort(c.RemoteAddr().String())
			if err := readLines(ctx, c, peer, ring, n); err != nil && ctx.Err() == nil {
				slog.Warn("connection", "peer", peer, "err", err)
			}
		})
	}
}

// readLines reads LF-terminated lines of up to 1 MiB into events. From a
// connection, a last line without its LF was cut off (the connection
// closed mid-line) and is dropped; from standard input it is kept.
func readLines(ctx context.Context, r io.Reader, host string, ring *ringbuffer.MPSC[relaykit.Event], n *atomic.Int64) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if _, conn := r.(net.Conn); conn {
		sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				return i + 1, bytes.TrimSuffix(data[:i], []byte("\r")), nil
			}
			if atEOF {
				return len(data), nil, nil // a cut line
			}
			return 0, nil, nil
		})
	}
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		e := relaykit.Event{ReceiveTime: timecache.CachedTimeNano(), Host: []byte(host), Raw: append([]byte(nil), sc.Bytes()...)}
		if err := ring.Push(ctx, e); err != nil {
			return nil // shutdown: ctx ended or the ring is closed
		}
		n.Add(1)
	}
	return sc.Err()
}
