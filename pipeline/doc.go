// Package pipeline routes events to sinks: an ordered table of routes, each
// with a filter, a pipeline of functions and one or more sinks, in the style
// of Cribl Stream.
//
// A [Router] is built once from a []Route and a [Config] and then only read:
// [Router.Route] takes a batch of events, decides for every event which
// routes take it, runs those routes' pipelines, and hands each sink its
// share of the batch in a single Send. To change the table, build a new
// Router and install it with a [Swapper]; batches already running finish on
// the old one.
//
// # Evaluation order and Final
//
// For each event, routes are evaluated in the order given. When a route's
// filter matches:
//
//   - a Final route consumes the event: its pipeline runs on the event
//     itself, the result goes to the route's sinks, and no later route sees
//     the event;
//   - a non-final route takes a copy (a clone): its pipeline runs on the
//     copy, the copy goes to the route's sinks, and evaluation continues
//     with the original, unchanged by that pipeline.
//
// An event no Final route consumed — it matched nothing, or only non-final
// routes — goes, unchanged, to Config.Default; without a default it is
// dropped and counted as relaykit.ReasonUnrouted. A pipeline function may
// drop an event; the drop is counted as relaykit.ReasonFiltered, and by the
// function's name in RouteStats.DroppedBy. Nothing is lost without a
// count: see [Stats] for the ledger.
//
// # Cloning
//
// Copies for non-final routes come from a pool of events owned by the
// router and are filled with relaykit.Event.CopyTo, which reuses their
// buffers: once the pool is warm, routing allocates nothing, copies
// included. A copy lives until the sinks' Send calls of the current batch
// return. Final routes and the default work on the caller's events, so
// Route may modify the batch it is given.
//
// # Filters and the literal prefilter
//
// A filter is "" or "true" (every event) or a Go regular expression (RE2
// syntax) matched anywhere in one value of the event: the raw message by
// default, or host, source, sourcetype, index, or an extracted field (see
// [Route.Field]). Each distinct pattern is compiled once in a process-wide
// cache ([CompileFilter]) and shared by all routes, functions and reloads.
//
// Go's regexp package takes microseconds on a 200-byte line for patterns
// such as (?i)error|fatal|panic, while searching for a literal takes tens of
// nanoseconds. So, from the parsed pattern (regexp/syntax), a Filter derives
// literals every match must contain: the longest literal of a
// concatenation, the set of alternatives of an alternation (any one of them
// must occur), small character classes and optional parts expanded (DENY|DROP
// and colou?r give two literals each). Under (?i) the literals are searched
// ASCII case-insensitively, after lower-casing the value eight bytes at a
// time. If no literal occurs, the event cannot match and the regular
// expression does not run. If the pattern is nothing more than a literal or
// an alternation of literals, finding one is the answer and the regular
// expression never runs.
//
// The prefilter never changes a result. Letters whose case-folding reaches
// outside ASCII ('k' matches the Kelvin sign U+212A under (?i), 's' the long
// s U+017F) and U+FFFD (which matches invalid UTF-8) are never part of a
// searched literal; anchors, word boundaries and classes make a pattern
// non-pure, so the regular expression confirms. A pattern with no required
// literal, such as \d+ or ^$, simply runs the regular expression.
//
// # Pipelines
//
// A [Pipeline] is an ordered list of [Function] values, each processing an
// event in place and returning whether to keep it. The built-ins are
// [ParseJSON] (object members into fields, nested keys dotted), [Set],
// [Rename], [Remove], [Mask] (regular expression replacement), [Drop] (by
// filter) and [Sample] (keep one in n); [Func] adapts a plain function.
// The syslog package's ParseCEF is a Function too (CEF header and
// extension into fields). A
// function error is counted and reported to [Hooks.OnFunctionError]; the
// event is kept.
//
// # Sinks and errors
//
// Each sink gets one Send per Route call with the events of that call that
// reached it, in batch order, whichever routes they came through. Sends run
// one after another on the caller's goroutine. A failed Send does not stop
// the others; its events are counted as failed, handed to
// [Hooks.OnSendError] — the place to spill or retry them — and Route returns
// a [*SinkError] for it. A caller that ignores both loses those events, so a
// relay should always set OnSendError.
//
// # Concurrency
//
// Router, Swapper, Pipeline, Filter and the built-in functions are safe for
// concurrent use by multiple goroutines. Each Route call works on its own
// batch; counters are summed per call and added to the shared totals once,
// so workers routing in parallel do not contend per event.
package pipeline
