// Package pipelinetest helps test routes and pipelines without a network:
// a [Recorder] is a [relaykit.Sink] that keeps a copy of every event it is
// sent, so a [pipeline.Router] built with Recorders in place of its real
// sinks shows which sink each event reached and what it looked like there;
// a [Want] is a condition on one value (equal to a string, matching a
// regular expression, or absent), and [Compare] and [CompareEvent] check a
// set of them and return every [Mismatch], in name order, ready to print
// as a diff. A [Harness] puts them together for one case: recorders by
// sink name, a batch routed and every reduction window ended after it
// (summaries included), and the drops counted by reason and route.
//
// It is the mechanism behind the example relay's `relay test`, which runs
// a config's routes over test inputs and checks the events, Sentinel rows
// and HEC events that would be sent; any program that builds a Router
// from a file of its own can test that file the same way.
//
// # Values
//
// [EventValue] reads an event's value by the field names of
// [pipeline.Route.Field]: "_raw" (or "") the message, "host", "source",
// "sourcetype", "index" the metadata (present when not empty), any other
// name an extracted field (present when the event has it, even empty).
// [Compare] takes any lookup function instead, for values that are not an
// event's: the columns of an encoded row, the members of a JSON object.
//
// # Concurrency and ownership
//
// A Recorder is safe for concurrent use by multiple goroutines; it copies
// what it is sent (the Sink contract: a sink must not retain the batch),
// and [Recorder.Events] returns copies the caller owns. A Want is an
// immutable value, safe for concurrent use.
//
// # When not to use it
//
// It records everything in memory and costs a copy per event: it is for
// tests and dry runs of a few thousand events, not a data path. To watch
// a running relay's events, use package tap.
package pipelinetest
