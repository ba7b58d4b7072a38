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
//     record arrives field for field.
//
// It has no code of its own beyond this comment.
package otlptest
