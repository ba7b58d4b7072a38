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
// [Rename], [Remove], [Keep], [Mask] (regular expression replacement),
// [Drop] (by filter) and [Sample] (keep one in n), and the reduction
// steps below; [Func] adapts a plain function.
// The syslog package's ParseCEF is a Function too (CEF header and
// extension into fields), and so are the parse package's steps
// (key=value, CSV, regex, grok, timestamps, types, and the FortiGate,
// PAN-OS, Cisco ASA and Check Point mappings into CEF's names). A
// function error is counted and reported to [Hooks.OnFunctionError]; the
// event is kept.
//
// # Reduction
//
// Four steps cut what reaches a destination (and what a SIEM bills):
//
//   - [NewSuppress]: per key (host and message by default), the first
//     Allow events of each window pass; the rest are absorbed, and when
//     the window ends one summary event (a copy of the window's first
//     event with suppressed_count, first_seen and last_seen) stands for
//     them;
//   - [NewAggregate]: every event is absorbed; per key and window one
//     summary event carries count, sum_/min_/max_ of numeric fields,
//     first_seen and last_seen;
//   - [NewSample]: one in N overall or per key, or per key at a rate
//     derived from the key's volume in the previous window (dynamic,
//     logarithmic); kept events carry sample_rate;
//   - [Keep]: only the listed fields survive (the projection beside
//     [Remove]).
//
// Suppress and Aggregate are [Reducer]s: stateful steps whose summaries
// come later. Their windows are tumbling, aligned to the Unix epoch, and
// assigned from each event's ReceiveTime; the steps never read the clock.
// A window ends when a caller says so: [Router.Flush] (or
// [Pipeline.Flush] outside a router) with the current time, called from a
// ticker, sends the summaries of every window ended by then through the
// rest of their route's pipeline to its sinks, so a key that went quiet
// is not held back by its silence; Router.Flush(ctx, FlushAll) at
// shutdown and, after a reload, on the previous router ends them all. An
// event of a key's later window also ends the key's earlier one, and its
// summary leaves with the Route call that saw that event.
//
// State is bounded: each step holds at most MaxKeys keys (default
// [DefaultMaxKeys]); when full, the least recently used key is evicted,
// its summary leaves with the current Route call, and [StepStats] counts
// the eviction. A known key costs no allocation: keys are hashed with
// hash/maphash and compared byte for byte on a hit.
//
// # The ledger with reduction
//
// An event a reducer absorbs is not dropped: the router counts it as
// reduced, per route and step ([RouteStats].Reduced, [Hooks.OnReduce]),
// and counts each summary as a produced event ([RouteStats].Produced,
// [Hooks.OnProduce]) that is then sent, dropped or reduced like any
// other. The ledger balances as in + produced = sent + dropped + reduced
// (see [Stats] for the exact identities). Samplers drop: what they do
// not keep is a drop of the step "sample", and sample_rate on the events
// kept scales the counts back.
//
// # Acknowledgement and reduction
//
// An input that acknowledges its senders on a nil error from Route (HEC,
// RELP, Kafka commits) treats an absorbed event as finished when Route
// returns: the event itself will never be sent, and only the summary
// that stands for it is still to come. The state behind that summary is
// in memory only. A crash (kill -9, power loss) before a window's
// summary is sent loses that summary: for Suppress, the suppressed_count,
// first_seen and last_seen of the events absorbed in that window (the
// events let through were sent and are not affected); for Aggregate, the
// count, sums, minima, maxima and times of that window. What is lost is
// at most one window's summary per key, plus the summaries collected but
// not yet accepted by a sink, which fail like any Send (see
// [Hooks.OnSendFailure]). A graceful shutdown that calls
// Router.Flush(ctx, FlushAll) before the sinks close loses nothing. A
// relay that cannot accept this loss sends full-fidelity events to a
// durable destination (an archive route, non-final) beside the reduced
// route.
//
// # Sinks and errors
//
// Each sink gets one Send per Route call with the events of that call that
// reached it, in batch order, whichever routes they came through. Sends run
// one after another on the caller's goroutine. A failed Send does not stop
// the others; its events are counted as failed, handed to
// [Hooks.OnSendFailure] — the place to spill or retry them — and Route
// returns a [*SinkError] for it. A caller that ignores both loses those events, so a
// relay should always set OnSendFailure.
//
// # Observing a route
//
// A route's [Route].Observer (a live tap point, *tap.Point) is shown the
// events the route took, after its pipeline and before its sinks, once per
// Route or Flush call; while it is not [Observer].Active that costs one
// call per route per batch and nothing else.
//
// # Concurrency
//
// Router, Swapper, Pipeline, Filter and the built-in functions are safe for
// concurrent use by multiple goroutines. Each Route call works on its own
// batch; counters are summed per call and added to the shared totals once,
// so workers routing in parallel do not contend per event. The keyed
// steps (Suppress, Aggregate, keyed Sample) lock one shard of their state
// per event: up to eight shards, one per 1024 keys of MaxKeys.
//
// # When not to use reduction
//
// Do not suppress, aggregate or sample events that must reach the
// destination one by one (audit trails, events a detection rule counts
// individually); route a full-fidelity copy elsewhere if the reduced
// stream is the only one a SIEM sees.
package pipeline
