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
// dropped and counted as [ReasonUnrouted]. A pipeline function may drop an
// event; the drop is counted under the function's name. Nothing is lost
// without a count: see [Stats] for the ledger.
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
// [ParseJSON] (object members into fields, nested keys dotted), [ParseCEF]
// (CEF header and extension into fields), [Set],
// [Rename], [Remove], [Mask] (regular expression replacement), [Drop] (by
// filter) and [Sample] (keep one in n); [Func] adapts a plain function. A
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
// # Parsing syslog and CEF
//
// [SyslogParser] fills an event from one syslog message in place, without
// allocating once the event's buffers are warm (about 0.2 µs of CPU for a
// 200-byte RFC 5424 message with structured data; BENCHMARKS.md). Inputs
// call it at the listener; agents can use it on their own. It reads:
//
//   - RFC 5424 (VERSION 1 to 999): TIMESTAMP with zone and fraction, and
//     every STRUCTURED-DATA parameter as the field "sd.<SD-ID>.<PARAM-NAME>"
//     (escapes \" \\ \] decoded), tolerating what rsyslog tolerates there
//     (its pmrfc5424 takes everything up to "] " as STRUCTURED-DATA): SP
//     around '=' (eventSource= "Application", a test message of rsyslog's
//     and other parsers' suites), several SP between parameters, SP before
//     ']'; PROCID and MSGID as the fields "procid" and "msgid".
//   - On every path but an unparsed message (kept whole), the UTF-8 BOM
//     that starts MSG is removed: after the header of RFC 5424, after
//     STRUCTURED-DATA kept in the message (it ends at "] " there, as in
//     rsyslog), after the TAG of RFC 3164 and lenient messages. go-syslog,
//     the test oracle, rejects the spaces above; the bench module's
//     TestSyslogLeniency checks that such a message is read as go-syslog
//     reads it without them.
//   - RFC 3164 ("<34>Oct 11 22:14:15 mymachine su: ...") and the variants
//     rsyslog's pmrfc3164 and syslog-ng's BSD parser accept: a month in any
//     case ("AUG 10 22:18:24"), an unpadded day ("Mar 7"), the year after
//     the day ("Mar 7 2008 19:06:53", Cisco ASA) or after the time, a
//     fraction of a second, "UTC"/"GMT" after the time, a colon after the
//     timestamp ("Mar 7 19:06:53: host"), a space after the PRI
//     ("<167> Mar  7 ..."), no hostname before the tag ("su: ..."), a
//     Cisco IOS sequence number and '*' or '.' clock marks
//     ("52: *Mar  1 18:46:11.123: %LINK-3-UPDOWN: ..."), Cisco tags
//     ("%ASA-6-302013: ", also after "host : "), messages without PRI.
//   - ISO 8601 / RFC 3339 timestamps in place of the BSD one, with or
//     without zone (loggen's default "<38>2026-11-22T01:39:01 host prog[1]:").
//
// A timestamp without zone is read in [SyslogConfig.Location]; one without
// year gets the year of the receive time (December logs read in January
// stay in December). What is not recognised stays in the message. Only a malformed PRI or an empty message (and,
// with [SyslogConfig.RequireText], binary input) leave the input whole in
// Raw with relaykit.FlagParseError.
//
// [DecodeCEF] and the [ParseCEF] step read ArcSight CEF
// ("CEF:0|Vendor|Product|Version|ID|Name|Severity|k=v ..."): the header into
// "cef.version", "cef.device_vendor", "cef.device_product",
// "cef.device_version", "cef.device_event_class_id", "cef.name" and
// "cef.severity", each extension key under its own name ("src", "act",
// "cs1Label", ...). With [SyslogConfig.CEF] the syslog parser does this
// for every message starting with "CEF:" after the syslog header and sets
// SourceType to "cef". Raw is never modified.
//
// go-syslog (github.com/leodido/go-syslog), the parser the example relay
// used before, is the test oracle: a differential fuzz test in the bench
// module checks that both extract the same values from every message
// go-syslog accepts as RFC 5424.
//
// # Concurrency
//
// Router, Swapper, Pipeline, Filter and the built-in functions are safe for
// concurrent use by multiple goroutines; a SyslogParser is not (use one per
// goroutine). Each Route call works on its own
// batch; counters are summed per call and added to the shared totals once,
// so workers routing in parallel do not contend per event.
package pipeline
