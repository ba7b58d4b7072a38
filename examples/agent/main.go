// Command agent is the smallest relaykit agent worth copying: it reads JSON
// lines from standard input or a TCP socket into an engine, which batches
// them and routes every batch: error and fatal events to Splunk HEC, and
// every event to a rotating archive on disk. HEC sits behind a durable
// delivery queue, so an outage of HEC, or a crash of the agent during one,
// costs nothing it had archived. On end of input, SIGINT or SIGTERM it
// shuts down in the order that loses nothing.
//
//	stdin, TCP ─▶ engine.Input ─▶ engine.Engine ─▶ pipeline.Router ─┬─ "alerts" (error|fatal) ─▶ delivery.Queue ─▶ forward.HEC
//	              (a Producer     (ring → batch,                    └─ "archive" (all, final)  ─▶ storage.Archive
//	               per shard)      inline flush)
//
// # Acknowledgements
//
// With -ack the agent answers on each TCP connection, after each read, with
// one line "ok N\n" once the N lines it read since its previous answer are
// durable: written to the archive and, for alerts, in HEC's spool (or
// delivered); written means in the operating system, so they survive
// kill -9 (fsync both for a power loss). N counts LF-terminated lines,
// blank ones too. When they cannot be (the archive's disk fails, or
// shutdown ran out of -drain), it closes the connection without answering
// for them. A sender that keeps each line until an answer covers it, and
// sends what is left again on a new connection, loses nothing to a crash
// of the agent, a full disk or a restart; lines may then be archived
// twice. Without -ack the agent never writes to a connection (nc and the
// TCP outputs of log shippers read nothing back), and kill -9 costs the
// batch still open.
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
	"syscall"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/delivery"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/forwardtest"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/storage"
)

// config is what the flags set.
type config struct {
	Listen, HECURL, HECToken, Dir string
	Drain                         time.Duration
	Ack                           bool
}

// summary is the agent's ledger: read == archived, and the alerts among
// them were sent to HEC, are spooled for the next run, or failed there
// (and are in the archive anyway).
type summary struct{ Read, Archived, Alerts, HECSent, HECSpooled, HECFailed int64 }

func main() {
	var cfg config
	flag.StringVar(&cfg.Listen, "listen", "", "TCP address to read JSON lines from, e.g. 127.0.0.1:5170 (default: standard input)")
	flag.BoolVar(&cfg.Ack, "ack", false, `answer "ok N" on each TCP connection once its N lines since the last answer are durable`)
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
// shuts down: the inputs stop, the engine routes what they read, the sinks
// are closed. It returns the ledger.
func run(ctx context.Context, cfg config, stdin io.Reader) (summary, error) {
	var sum summary
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
	// A batch the router's Send refused (the archive's disk failing) is
	// counted in eng.Stats(), and its lines are not acknowledged.
	eng, err := engine.New(engine.Config{Sink: router, BatchMaxEvents: 500, BatchMaxWait: 200 * time.Millisecond})
	if err != nil {
		return sum, err
	}
	// hard ends cfg.Drain after the input stopped (ctx ended, or the input
	// did): the engine's deadline for routing what was read, and the
	// connections' for their last answer.
	hard, cancelHard := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHard()
	startDrain := sync.OnceFunc(func() { time.AfterFunc(cfg.Drain, cancelHard) })
	defer context.AfterFunc(ctx, startDrain)()
	ran := make(chan struct{})
	go func() { _ = eng.Run(hard); close(ran) }()

	in := eng.NewInput("json-lines")
	inErr := readInput(ctx, hard, cfg, stdin, in)
	startDrain()
	// The engine routes what it holds (Shutdown returns Run's error, or
	// does Run's work if Run had not begun), then the sinks close.
	err = errors.Join(inErr, eng.Shutdown(hard), archive.Close())
	<-ran
	drain, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.Drain)
	defer cancel()
	err = errors.Join(err, queue.Close(drain)) // what HEC did not take by then waits on disk

	rs, qs := router.Stats(), queue.Stats()
	sum = summary{Read: in.Stats().Received, Archived: archive.Stats().Events, Alerts: int64(rs.Routes[0].Matched),
		HECSent: qs.Delivered, HECSpooled: qs.Pending, HECFailed: qs.In + qs.Recovered - qs.Delivered - qs.Pending}
	return sum, err
}

// readInput reads standard input, or every connection to cfg.Listen (each
// its own shard: its lines stay in order), into in until the input ends or
// ctx is done.
func readInput(ctx, hard context.Context, cfg config, stdin io.Reader, in *engine.Input) error {
	if cfg.Listen == "" {
		host, _ := os.Hostname()
		r := &lineReader{r: stdin, p: in.NewProducer(0), hard: hard}
		done := make(chan error, 1) // a read of stdin cannot be interrupted: leave it behind on ctx
		go func() { done <- r.run(host, bufio.ScanLines) }()
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return nil
		}
	}
	l, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	slog.Info("reading JSON lines", "listen", l.Addr().String(), "ack", cfg.Ack)
	defer context.AfterFunc(ctx, func() { _ = l.Close() })()
	var conns sync.WaitGroup
	defer conns.Wait()
	for shard := uint64(1); ; shard++ {
		c, err := l.Accept()
		if ctx.Err() != nil {
			return nil // the listener was closed at the end of ctx
		} else if err != nil {
			return err
		}
		conns.Go(func() {
			defer c.Close()
			// Stop reading at the end of ctx; the last answer may follow.
			defer context.AfterFunc(ctx, func() { _ = c.SetReadDeadline(time.Now()) })()
			r := &lineReader{r: c, p: in.NewProducer(shard), hard: hard}
			if cfg.Ack {
				r.ack = c
			}
			peer, _, _ := net.SplitHostPort(c.RemoteAddr().String())
			if err := r.run(peer, scanWholeLines); err != nil && ctx.Err() == nil {
				slog.Warn("connection closed", "peer", peer, "err", err)
			}
		})
	}
}

// lineReader reads one stream of LF-terminated lines of up to 1 MiB into
// the engine, one event per non-blank line, through its own producer.
type lineReader struct {
	r    io.Reader
	p    *engine.Producer
	hard context.Context // pushes wait for room, and answers for delivery, until it ends
	ack  io.Writer       // where to answer "ok N"; nil: never
	n    int             // lines read since the last answer
	last engine.Mark     // the producer's mark at the last answer
	err  error           // the first failure: nothing is answered after it
}

// run reads until the stream ends or fails, then settles what it read.
func (r *lineReader) run(host string, split bufio.SplitFunc) error {
	defer r.p.Release()
	r.last = r.p.Mark()
	// Reads of up to 256 KiB: one flush per read, and with -ack one batch
	// and one answer, so the answers cost little per line under load.
	sc := bufio.NewScanner(r) // r.Read settles before each read of r.r
	sc.Buffer(make([]byte, 256<<10), 1<<20)
	sc.Split(split)
	for r.err == nil && sc.Scan() {
		r.n++
		if len(sc.Bytes()) == 0 {
			continue
		}
		ev := r.p.Event() // recycled buffers: reset and refill
		ev.Reset()
		ev.Host = append(ev.Host, host...)
		ev.Raw = append(ev.Raw, sc.Bytes()...)
		if r.p.Full() {
			_ = r.p.Push(r.hard) // a failure returns from the next Flush
		}
	}
	if r.settle(); r.err != nil {
		return r.err
	}
	return sc.Err()
}

// Read reads from the stream for the scanner, which calls it only when the
// lines it holds are used up. Before the read, which may wait, the lines
// parsed so far go to the engine and, acknowledging, are answered for
// once they are finished: one flush per read, and per answer.
func (r *lineReader) Read(b []byte) (int, error) {
	if r.settle(); r.err != nil {
		return 0, r.err
	}
	return r.r.Read(b)
}

// settle pushes what was parsed and, acknowledging, waits until it is
// finished and answers "ok N". A failure (the Sink refused a batch, the
// drain deadline passed) is kept in r.err: the caller closes the
// connection, and the lines since the last answer are not acknowledged.
func (r *lineReader) settle() {
	if r.err != nil {
		return
	}
	if r.err = r.p.Flush(r.hard); r.err != nil || r.ack == nil || r.n == 0 {
		return
	}
	m := r.p.Mark()
	if r.err = m.Since(r.last).Wait(r.hard); r.err != nil {
		return
	}
	_, r.err = fmt.Fprintf(r.ack, "ok %d\n", r.n)
	r.n, r.last = 0, m
}

// scanWholeLines splits a connection's stream into lines without their
// LF (and CR). A last line without its LF was cut off (the connection
// closed mid-line) and is dropped; from standard input it is kept.
func scanWholeLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, bytes.TrimSuffix(data[:i], []byte("\r")), nil
	}
	if atEOF {
		return len(data), nil, nil // a cut line
	}
	return 0, nil, nil
}
