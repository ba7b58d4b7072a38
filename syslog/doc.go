// Package syslog fills relaykit events from syslog messages and CEF, in
// place and without allocating once the event's buffers are warm: RFC 5424
// (with STRUCTURED-DATA), RFC 3164 and the variants devices send, a lenient
// path for anything else, and ArcSight CEF (Common Event Format) in the
// message or on its own.
//
// Inputs call a [Parser] as they read (the example relay parses at the
// listener, before the event reaches the engine's ring); agents can use it
// on their own, and [ParseCEF] is a pipeline step for events that carry CEF
// in Raw. The field names the parsers set ([FieldProcID], [FieldMsgID],
// [SDFieldPrefix], the cef.* names) are the ones the forwarders read back
// (forward.Syslog writes PROCID and MSGID from them; Sentinel's Syslog and
// CommonSecurityLog tables take their columns from them).
//
// # What the parser reads
//
// [Parser] fills an event from one syslog message in place, without
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
// A timestamp without zone is read in [Config.Location]; one without
// year gets the year of the receive time (December logs read in January
// stay in December). What is not recognised stays in the message. Only a malformed PRI or an empty message (and,
// with [Config.RequireText], binary input) leave the input whole in
// Raw with relaykit.FlagParseError.
//
// [DecodeCEF] and the [ParseCEF] pipeline step read ArcSight CEF
// ("CEF:0|Vendor|Product|Version|ID|Name|Severity|k=v ..."): the header into
// "cef.version", "cef.device_vendor", "cef.device_product",
// "cef.device_version", "cef.device_event_class_id", "cef.name" and
// "cef.severity", each extension key under its own name ("src", "act",
// "cs1Label", ...). With [Config.CEF] the syslog parser does this
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
// A [Parser] holds small caches and must not be used from concurrent
// goroutines: use one per goroutine (per connection or listener).
// [DecodeCEF] and the [ParseCEF] step are safe for concurrent use.
package syslog
