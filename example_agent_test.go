package relaykit_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
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
	"github.com/relaykit/relaykit/syslog"
)

// Syslog in, Sentinel out: an agent's whole life, startup to shutdown.
// Syslog over TCP is parsed into an engine whose router sends every event
// to Microsoft Sentinel's Syslog table (behind a durable delivery queue)
// and to an archive. forwardtest's Logs Ingestion stand-in plays Azure.
// The shutdown runs in the order that loses nothing a sender sent before
// it began.
func Example_syslogToSentinel() {
	dcr, _ := forwardtest.StartDCRServer(forwardtest.DCRServerConfig{Stream: "Microsoft-Syslog"})
	defer dcr.Close()
	dir, _ := os.MkdirTemp("", "agent")
	defer os.RemoveAll(dir)

	tokens, _ := forward.NewEntraTokenSource(forward.EntraConfig{TenantID: dcr.Config().TenantID,
		ClientID: dcr.Config().ClientID, ClientSecret: dcr.Config().ClientSecret, AuthorityHost: dcr.AuthorityHost})
	sentinel, _ := forward.NewSentinel(forward.SentinelConfig{Endpoint: dcr.URL, DCRImmutableID: dcr.Config().DCRImmutableID,
		Table: forward.SentinelSyslog, TokenSource: tokens})
	queue, _ := delivery.New(sentinel, delivery.Config{Name: "sentinel", Dir: filepath.Join(dir, "spool")})
	go queue.Run(context.Background()) //nolint:errcheck // ends with queue.Close
	archive, _ := storage.NewArchive(storage.ArchiveConfig{Writer: storage.Config{Dir: dir}})
	router, _ := pipeline.NewRouter([]pipeline.Route{
		{Name: "sentinel", Sinks: []relaykit.Sink{queue}},
		{Name: "archive", Final: true, Sinks: []relaykit.Sink{archive}},
	}, pipeline.Config{})
	eng, _ := engine.New(engine.Config{Sink: router})
	hard, deadline := context.WithCancel(context.Background()) // ends at the shutdown deadline
	ran := make(chan error, 1)
	go func() { ran <- eng.Run(hard) }()
	in, _ := input.NewSyslog(input.SyslogConfig{Input: eng.NewInput("syslog"), Parser: syslog.Config{RequireText: true, CEF: true}})
	ln, _ := stream.New(stream.Config{Name: "syslog", Address: "127.0.0.1:0", Handler: in.ServeConn})
	listening, stopListening := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- ln.Serve(listening) }()

	c, _ := net.Dial("tcp", ln.Addr().String())
	msgs := "<34>1 2026-11-28T12:00:00Z web-1 sshd 42 - - Failed password for root\n" +
		"<86>1 2026-11-28T12:00:01Z web-1 sudo 43 - - alice : COMMAND=/bin/ls\n"
	fmt.Fprint(c, msgs)
	for ln.Stats().BytesRead < int64(len(msgs)) { // read; then SIGTERM arrives
		runtime.Gosched()
	}

	defer time.AfterFunc(10*time.Second, deadline).Stop() // what the shutdown may take
	defer deadline()
	// 1. Stop accepting and reading. Serve returns once every connection
	// has handed what it read to the engine, its pushes still waiting for
	// room: ending their context with the listener's would drop them.
	stopListening()
	<-served
	// 2. Route what the engine holds, and end the reducers' windows.
	_ = eng.Shutdown(hard)
	<-ran
	// 3. Deliver what the queue holds; what Sentinel does not take by the
	// deadline stays in the spool for the next run.
	_ = queue.Close(hard)
	// 4. Close the archive: its last writes reach the file.
	_ = archive.Close()
	c.Close()

	for _, row := range dcr.Rows() {
		fmt.Printf("%s %s %s: %s\n", row["Computer"], row["SeverityLevel"], row["ProcessName"], row["SyslogMessage"])
	}
	fmt.Printf("received %d, routed %d, archived %d\n", eng.Stats().Received, eng.Stats().Routed, archive.Stats().Events)
	// Output:
	// web-1 crit sshd: Failed password for root
	// web-1 info sudo: alice : COMMAND=/bin/ls
	// received 2, routed 2, archived 2
}
