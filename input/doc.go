// Package input holds the stream and datagram inputs that turn the bytes
// senders send into engine events: a [Syslog] input (syslog over TCP, TLS
// and UDP) and a [JSONLines] input (JSON lines over TCP or TLS), mounted
// on the listeners of package stream and stream/udp:
//
//	in := eng.NewInput("syslog")
//	sl, err := input.NewSyslog(input.SyslogConfig{Input: in,
//		Parser: syslog.Config{RequireText: true, CEF: true}})
//	tcp, err := stream.New(stream.Config{Name: "syslog", Address: ":514", Handler: sl.ServeConn})
//	udp, err := udp.New(udp.Config{Name: "syslog", Address: ":514", Handler: sl.ServeDatagrams})
//	go tcp.Serve(ctx)
//	go udp.Serve(ctx)
//
// It is the mechanism the relay example's syslog and JSON inputs are
// made of, for importers: framing (RFC 6587 octet counting or LF/NUL
// trailers, decided per connection; a maximum message size, longer frames
// cut and flagged relaykit.FlagTruncated), parsing with syslog.Parser (a
// message it cannot read is handed over raw, flagged
// relaykit.FlagParseError, never dropped), the sender's address as the
// host of an event that names none, per-source statistics and rate limits
// through package sources (a stream connection over its limit is paced,
// its sender held back by TCP flow control; UDP drops the excess), and the
// hand-over to an [engine.Input].
//
// # Hand-over
//
// A stream connection gets a shard of its own (its events stay in order)
// and an engine.Producer: the events parsed from one read are pushed to the
// engine at once, before the connection is read again (Producer.Flush), so
// a connection waiting for data holds none, and a destination that does
// not keep up holds the senders back instead of losing their events. A UDP
// read's datagrams are sharded by sender and handed over without waiting
// (Producer.TryPush): what finds the engine's ring full is dropped and
// counted by the engine (relaykit.ReasonQueueFull). Every event read is in
// the engine's ledger: received, then routed or dropped by reason
// (queue_full, rate_limit, invalid_json, shutdown_unqueued).
//
// # Acknowledgement
//
// A JSONLines input with [JSONLinesConfig].Ack answers each connection,
// before each read, once the lines read since its previous answer are
// finished: the engine's Sink accepted them, which by the contract of
// relaykit.Sink means delivered, durably accepted or dead-lettered. The
// answer's form is the caller's (examples/agent writes "ok N\n"). A
// connection whose lines cannot be finished is closed without an answer
// for them, so its sender sends them again.
//
// # Shutdown
//
// Stop the listeners first and let the inputs hand over what they read,
// with the engine still running; then shut the engine down, then its
// destinations:
//
//  1. End the listeners' Serve context (or Close them): they stop
//     accepting and reading, and each connection's handler hands the
//     frames complete in what it read to the engine (a UDP listener first
//     reads what its socket holds). Serve returns once every handler has.
//  2. engine.Engine.Shutdown(deadline): the engine routes what its rings
//     and collectors hold and ends the reducers' windows.
//  3. delivery.Queue.Close(deadline): what the destination takes by then
//     is delivered, the rest stays in the spool for the next run.
//  4. Close the archives and other sinks.
//
// Ending the listeners' context and the pushes' at the same moment (the
// natural guess) loses every frame read and not yet handed over: the
// pushes then give up at once, and the engine counts those events as
// relaykit.ReasonShutdownUnqueued. The pushes here wait until the engine's
// hard deadline (its Run context, or Shutdown's) or the input's Close.
// The root package's example "SyslogToSentinel" runs this order
// (https://pkg.go.dev/github.com/relaykit/relaykit#example-package-SyslogToSentinel).
//
// # Cost
//
// Once warm, an event costs no allocation on either path: the connection
// states (framer, parser, buffers) are pooled, the events' buffers are
// recycled by the engine, the sender's address is formatted once per
// connection (once per change of sender for UDP), and the counters are
// added to once per read or datagram batch.
//
// # Concurrency
//
// A Syslog or JSONLines is safe for concurrent use: ServeConn runs on its
// connection's goroutine (stream.Listener.Serve starts one per
// connection), ServeDatagrams on the UDP listener's reader goroutines, and
// one input may serve several listeners. It starts no goroutine itself.
//
// # When not to use it
//
// For acknowledged syslog use RELP (stream/relp), for HTTP inputs
// stream/hec and otlp, for Kafka forward/kafka.Consumer: each hands events
// to the engine on its own terms.
package input
