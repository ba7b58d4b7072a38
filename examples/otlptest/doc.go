// Package otlptest holds the tests of package otlp against real
// OpenTelemetry clients and servers, kept in a module of their own so that
// the library's module does not require the OpenTelemetry SDK or the
// Collector:
//
//   - the OpenTelemetry Go SDK's log exporters (otlploghttp, protobuf,
//     and otlploggrpc) export to an otlp.Receiver: every record arrives,
//     with its attributes;
//   - the otlp.Exporter exports, over OTLP/HTTP (protobuf and JSON) and
//     OTLP/gRPC, to the OpenTelemetry Collector's own OTLP receiver
//     (otlpreceiver, running in-process with a consumertest sink): every
//     record arrives field for field;
//   - the example relay (examples/relay), built and run as a process
//     (its module stays at go 1.25.9, below what the SDK and Collector
//     modules here require): the SDK's exporters send to its OTLP input
//     and it sends on to the Collector's otlpreceiver through its OTLP
//     destination, every record with its attributes, field for field;
//     killed with SIGKILL while senders send and started again, every
//     record it answered 200 is in its archive and reaches the Collector.
//
// It has no code of its own beyond this comment.
package otlptest
