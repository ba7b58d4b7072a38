// Package parse extracts fields from what devices send instead of CEF:
// pipeline steps (each a pipeline.Function) for key=value pairs, CSV with
// named column sets, regular expression captures, grok, timestamps and
// types, and four vendor mappings — FortiGate, PAN-OS, Cisco ASA/FTD and
// Check Point — that name the fields as the vendor's own CEF output does,
// so that the forward package's CommonSecurityLog encoder places them in
// the columns it places CEF's in.
//
// The steps run after the syslog parser, on the raw message it leaves
// (relaykit.Event.Raw) or on any other value: a metadata value or an
// extracted field, named as in pipeline.Route.Field. They never modify the
// raw message: every byte received stays in the event whatever a step
// makes of it, and an event a step does not recognise is left unchanged,
// reported with an error the router counts (pipeline.Hooks.OnFunctionError)
// and counted in the step's Stats. No step drops an event.
//
// # Primitives
//
//   - [NewKV]: key=value pairs with configurable delimiters and
//     separator (FortiGate's `k=v k="v w"`, Check Point's `k:"v";`,
//     auditd, logfmt), single and double quotes with backslash escapes, a
//     key prefix, a policy for repeated keys, and the rule that no field is
//     ever taken from inside quoted text.
//   - [NewCSV]: one RFC 4180 record, read as encoding/csv reads a line with
//     LazyQuotes, its columns named by a list, or by one of several lists
//     chosen by the value of one column (PAN-OS's log type); missing and
//     extra trailing columns tolerated and counted.
//   - [NewRegex]: named groups of a Go regular expression (RE2).
//   - [NewGrok]: grok expressions over go-grok's pattern library
//     (github.com/elastic/go-grok), expanded as go-grok expands them.
//   - [NewTimestamp]: the event's time from one field or several joined
//     (FortiGate's date and time), with a layout and a zone; a timestamp
//     that does not read leaves the time the event had (counted).
//   - [NewConvert]: the text of fields rewritten as canonical int, float,
//     bool or IP address, so that typed columns take them.
//
// KV and CSV allocate nothing once the event's buffers are warm (fields are
// copies in the event's own buffers, which relaykit.Event.Reset keeps), and
// neither do Timestamp on its fast path, Convert, or the vendor steps.
// Regex and Grok cost one allocation per matching event, the submatch
// indexes package regexp returns.
//
// # Vendor steps
//
// [NewVendor] returns one vendor's step. Each sets the CEF header fields
// "cef.device_vendor", "cef.device_product", "cef.device_event_class_id",
// "cef.name" and "cef.severity" (DeviceVendor, DeviceProduct,
// DeviceEventClassID, Activity and LogSeverity in CommonSecurityLog) and
// names the device's fields with CEF keys where its CEF output has them;
// the rest keep the device's names and land in AdditionalExtensions. Only
// a line the step recognises gets header fields: the encoder writes the raw
// message of any other to Message.
//
// FortiGate ([VendorFortiGate]) reads FortiOS's key=value lines
// (FortiOS Log Message Reference: traffic, UTM and event logs), pairs
// separated by spaces, values in double quotes when they hold spaces,
// with \" and \\ escapes; a line needs a logid pair. The mapping is
// FortiOS's CEF one ("FortiOS to CEF log field mapping guidelines"):
// srcip→src, srcport→spt, srcintf→deviceInboundInterface, srcname→shost,
// srcmac→smac, dstip→dst, dstport→dpt, dstintf→deviceOutboundInterface,
// dstname→dhost, dstmac→dmac, sessionid→externalId, proto, action→act,
// service→app, transip/transport→sourceTranslatedAddress/Port,
// tranip/tranport→destinationTranslatedAddress/Port, sentbyte→out,
// rcvdbyte→in, msg, user→duser, status→outcome, reason, ui→sproc,
// role→sourceServiceName, cookies→requestCookies, url→request,
// hostname→dhost, agent→requestClientApplication, filename→fname,
// count→cnt, devid→deviceExternalId and devname→dvchost; every other key
// is stored as "FTNTFGT"+key (FTNTFGTlogid, FTNTFGTsubtype, FTNTFGTlevel,
// FTNTFGTapp, ...). The header: Fortinet, Fortigate, the last five digits
// of logid, "type:subtype [eventtype] [action] [status]" (also in cat) and
// the level reversed as FortiOS writes it (information 2, notice 3,
// warning 4, alert 7: 8 minus the syslog severity). The time is date and
// time, with tz ("+0100") when present, else in [VendorConfig.Location];
// else eventtime (seconds to nanoseconds, by length). date and time are
// not stored unless neither reads (then FTNTFGTdate and FTNTFGTtime, and
// ErrTimestamp).
//
// PAN-OS ([VendorPANOS]) reads the default CSV syslog formats of the
// "Syslog Field Descriptions" for TRAFFIC, THREAT (all subtypes), SYSTEM
// and CONFIG, in their PAN-OS 9.1 column lists and in the longer lists of
// 10.1 to 11.x (each extends the one before at its end, so one list reads
// both; a line shorter than the 9.1 list or longer than the 11.x one is
// counted, the extra columns kept as column<n>). A line needs a receive
// time "2006/01/02 15:04:05" in its second column and a type in capitals
// in its fourth; when the syslog parser took the first columns for a
// hostname (PAN-OS sends none by default), the step puts them back. Other
// types keep their common columns and column<n> names (counted as
// Unknown). Names follow PAN-OS's CEF templates: receive_time→rt,
// serial→deviceExternalId, src, dst, natsrc/natdst→source/
// destinationTranslatedAddress, rule→cs1 (cs1Label Rule), srcuser→suser,
// dstuser→duser, app, vsys→cs3, from→cs4, to→cs5, inbound_if and
// outbound_if→deviceInbound/OutboundInterface, logset→cs6, sessionid→cn1,
// repeatcnt→cnt, sport→spt, dport→dpt, natsport/natdport→
// source/destinationTranslatedPort, flags→flexString1, proto, action→act,
// bytes→flexNumber1, bytes_sent→in, bytes_received→out, packets→cn2,
// elapsed→cn3, category→cs2, seqno→externalId, session_end_reason→reason,
// device_name→dvchost, action_source→cat (traffic), misc→request,
// threatid→cat, direction→flexString2 (threat), eventid→cat,
// object→fname, opaque→msg (system), host→shost, cmd→act, admin→duser,
// path→msg (config), the PanOS* keys of the templates (PanOSDGl1,
// PanOSVsysName, PanOSRuleUUID, ...), and PAN-OS's own field names for the
// columns the templates leave out (srcloc, high_res_timestamp,
// src_category, ...); FUTURE_USE columns are not kept. The header: Palo
// Alto Networks, PAN-OS, the subtype (CONFIG: the result), the type, and
// the severity: 1 for TRAFFIC and CONFIG, the severity column as
// informational 1, low 2, medium 3, high 4, critical 5 for THREAT and
// SYSTEM. The time is high_res_timestamp (10.0 and later, with its zone),
// else the generated time in [VendorConfig.Location]; start holds it in
// epoch milliseconds (StartTime). The host, when the event has none, is the
// device name.
//
// Cisco ASA and FTD ([VendorCiscoASA]) read "%ASA-6-302013: text" (and
// %FTD-, %PIX-), from the syslog parser's msgid field and the message it
// leaves, or from the tag anywhere in the text. Every message gets Cisco,
// the product (ASA, FTD, PIX), the message ID (DeviceEventClassID, as the
// Azure Monitor Agent maps it), the tag's severity (LogSeverity) and its
// text in msg (Message). The IDs 106001, 106002, 106006, 106007, 106010,
// 106014, 106015, 106021, 106023, 106100, 302013-302016, 302020, 302021,
// 305011, 305012, 313001, 313004, 710002, 710003, 710005 and 733100 are
// read by their layout in Cisco's syslog messages guide into an Activity
// name and src, spt, dst, dpt, proto, act (the message's own verb: Built,
// Teardown, Deny, denied, permitted, ...), deviceDirection (0 inbound, 1
// outbound), deviceInboundInterface, deviceOutboundInterface,
// source/destinationTranslatedAddress and Port, suser, duser, externalId
// (the connection ID), cs1 (the ACL, cs1Label "Access List"), cnt (hit
// count), reason, duration, bytes, icmp_type, icmp_code, tcp_flags.
// Built messages name the "to" side the source when outbound (the side
// that opened the connection), Teardown messages the "for" side. Other IDs
// keep only their text (counted as Unknown), and so does a known ID whose
// text does not have its layout (counted as Mismatch).
//
// Check Point ([VendorCheckPoint]) reads Log Exporter's syslog format:
// `<134>1 2026-11-28 12:58:59 gw CheckPoint 13752 - [action:"Accept";
// src:"10.0.0.1"; ...]`, whose timestamp holds a space the syslog parser
// cannot read (it then leaves the line from VERSION on in the raw message,
// and the step reads the header itself: host, application, PROCID), or
// the pairs alone after a header the syslog parser read. The pairs are
// key:"value" separated by ';', values with \" escapes. The mapping is Log
// Exporter's CEF one: s_port→spt, service→dpt, action→act, ifdir→
// deviceDirection (inbound 0, outbound 1), rule_name→cs2 (cs2Label "Rule
// Name"), xlatesrc, xlatedst, xlatesport, xlatedport→source/destination
// TranslatedAddress/Port, src_user_name→suser, dst_user_name→duser,
// src_machine_name→shost, dst_machine_name→dhost, resource→request,
// file_name→fname, time→rt (epoch milliseconds); the other keys keep their
// names. The header: Check Point, the product field (default Check Point),
// Check Point, the protection type or Log, the protection name, the
// service_id or Log, and the severity field or Unknown. The time is the
// time pair (epoch seconds), else the header's, in
// [VendorConfig.Location].
//
// # Concurrency
//
// Every step is safe for concurrent use by multiple goroutines, each with
// its own event, and keeps only counters between calls.
package parse
