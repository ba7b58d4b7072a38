// Package relaykit is the shared vocabulary of the relaykit streaming
// primitives: the [Event] that flows through a relay, the [Sink] that
// accepts batches of events, and the [Request] a [RequestSink] encodes a
// batch into ahead of sending it (what a queue stores for such a sink).
//
// The subpackages build on it:
//
//   - ringbuffer: a bounded multi-producer single-consumer ring (generic).
//   - batch: a size / bytes / time batch collector with backpressure (generic).
//   - syslog: allocation-free RFC 5424, RFC 3164 and CEF parsers.
//   - pipeline: ordered routes with cached, prefiltered regex filters,
//     pipelines of functions, and reduction steps.
//   - enrich: IP extraction, GeoIP/ASN and keyed lookups behind a cache.
//   - forward: Sinks for Splunk HEC, Microsoft Sentinel and syslog, which
//     make one attempt and classify failures; forward/kafka for Kafka.
//   - otlp: an OTLP logs receiver and exporter.
//   - storage: a rotating file writer and an archive Sink.
//   - spool: the disk queue of batches.
//   - delivery: any Sink behind a queue (memory and spool): the one retry
//     loop, in order, through outages, crashes and disk failures.
//   - engine: inputs to routed batches, with acknowledgements.
//   - stream: stream listeners (framing, per-source limits, deadlines, the
//     PROXY protocol); stream/udp, datagrams; stream/hec and stream/relp,
//     the acknowledging inputs; stream/tlscert, their TLS certificates;
//     stream/streamhttp, net/http on a stream listener.
//   - input: the syslog (TCP, TLS, UDP) and JSON-lines inputs an agent
//     mounts on those listeners, into an engine.
//   - sources: per-source statistics, silence detection, rate limits.
//   - tap: observation points on the data path.
//
// This package imports only the standard library, so any package may depend
// on it without pulling in HTTP, regular expressions or database readers.
//
// # An agent
//
// The example SyslogToSentinel is an agent's whole life in about 60
// lines: syslog over TCP into an engine, routed to Microsoft Sentinel
// behind a delivery queue and to an archive, and the shutdown order that
// loses nothing read (stop the listeners, which hand over what their
// connections read; engine.Engine.Shutdown; delivery.Queue.Close; the
// archive's Close), a comment per step. examples/agent is the same with
// UDP, JSON lines, suppression and acknowledgements, in about 250.
//
// # One shape for siblings
//
// The packages that receive events (stream, stream/udp, stream/relp,
// stream/hec, otlp's Receiver, forward/kafka's Consumer, input) and those
// that send them (forward's sinks, otlp's Exporter) share one shape:
//
//   - Construct with New(cfg Config) (*T, error), or NewT(cfg TConfig) in a
//     package of several types (otlp.NewReceiver, kafka.NewConsumer,
//     input.NewSyslog). Everything is in the Config, the address and the
//     next stage included (stream.Config.Address and Handler,
//     hec.Config.Sink, kafka.ConsumerConfig.Push, input.SyslogConfig.Input);
//     every zero field means a documented default. New starts no
//     goroutine.
//   - Serve: a type that owns its loop has Serve(ctx) error, which blocks
//     until ctx ends (a graceful stop: stop accepting, let what was read
//     be handed over) or Close is called (stream.Listener, udp.Listener,
//     kafka.Consumer). A type mounted in someone else's loop has the
//     mount's method: ServeConn(*stream.Conn) is a stream.Handler
//     (relp.Server, input.Syslog, input.JSONLines), ServeDatagrams a
//     udp.Handler, ServeHTTP an http.Handler.
//   - Stop: Close() error stops at once, is idempotent and returns nil.
//     Where a graceful drain has something to wait for, Shutdown(ctx) error
//     waits for it until ctx ends (hec.Handler, kafka.Consumer, and
//     engine.Engine).
//   - Stats() Stats (TStats in a package of several types): a snapshot of
//     counters.
//   - Config.Hooks: optional funcs run synchronously. A hook that reports
//     events the next stage refused is OnSendError func(err error, events
//     int), the error first, everywhere (engine, forward, otlp's Receiver
//     and Exporter, stream/hec); OnDrop is func(name, reason string,
//     events int) (see the Reason constants).
//   - Config.Name names the instance in logs, errors and hooks;
//     Config.Logger (nil means no logging) hears of state changes, once per
//     episode, never of events or secrets; Config.Clock *clock.Clock (nil
//     means clock.Default) on every type that reads the time for stamps.
//   - HTTP senders name the same settings the same way: Timeout (one
//     request), Token (sent as a bearer token; HEC's is its own), TLS
//     *tls.Config (forward.TLSConfig builds one from files), HTTPClient,
//     GzipLevel, DisableGzip, MaxRequestBytes, and Hooks.OnSend(dest,
//     events, bytes, took) beside OnSendError.
//
// # Configuration errors
//
// The constructors of the receivers, inputs and senders and of the engine
// (stream, stream/udp, stream/relp, stream/hec, otlp, forward,
// forward/kafka, input, engine, storage/deadletter), and the Validate
// methods of their Configs (which check without opening, binding or
// sending anything), report a bad setting as a [*FieldError] that names
// the field by its path in the Config ("BatchSize", "HTTP.Timeout",
// "Tokens[1].Token") and wraps the package's ErrInvalidConfig. A program
// that reads its Configs from a file validates them with the library's
// rules and maps the path to its own key, instead of checking the same
// rules again.
//
// # Ownership
//
// An [Event] owns its byte slices. A [Sink] receives a batch ([]Event) that it
// may read until Send returns and must not retain afterwards; to keep an event,
// copy it with [Event.Clone] or [Event.CopyTo].
//
// # Acknowledgement
//
// A nil error from [Sink.Send] means the batch was delivered, durably
// accepted, or dead-lettered (see the contract on [Sink]); a partial
// failure is reported as a [*BatchError]. Inputs that acknowledge to their
// senders rely on exactly this.
//
// # Times
//
// Times on an Event are int64 nanoseconds since the Unix epoch (UTC), so that
// setting them never allocates and comparing them is one instruction. Zero
// means unknown.
package relaykit
