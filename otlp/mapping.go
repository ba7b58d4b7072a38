package otlp

import (
	"encoding/hex"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/syslogname"
	"github.com/relaykit/relaykit/syslog"
)

// SyslogNames selects the OTLP names of the syslog part of a [Mapping].
type SyslogNames uint8

const (
	// SpecNames are the names of the OpenTelemetry logs data model's
	// syslog mapping (data model appendix A): resource attributes
	// host.name and service.name, log attributes syslog.facility,
	// syslog.procid, syslog.msgid and syslog.structured_data.
	SpecNames SyslogNames = iota
	// CollectorNames are the flat log attributes the OpenTelemetry
	// Collector's syslog receiver writes: hostname, appname, facility,
	// priority, proc_id, msg_id and structured_data, so that events from
	// relaykit and from a Collector's syslog receiver look the same
	// downstream.
	CollectorNames
)

// Names of the fields a [Mapping] gives an [relaykit.Event] decoded from
// an OTLP log record, for routes and pipeline steps to select on. See the
// package documentation for the whole table.
const (
	// FieldPrefixResource starts the field of each resource attribute:
	// "resource.<key>" (except those the mapping turns into Host and
	// Source).
	FieldPrefixResource = "resource."
	// FieldScopeName and FieldScopeVersion hold the instrumentation
	// scope's name and version; FieldPrefixScopeAttr starts the field of
	// each scope attribute.
	FieldScopeName       = "scope.name"
	FieldScopeVersion    = "scope.version"
	FieldPrefixScopeAttr = "scope.attr."
	// FieldPrefixEscaped starts the field of a log attribute whose key
	// would otherwise be read as one of the mapping's names: "attr.<key>"
	// for a key that starts with "attr.", "resource.", "scope.", "otel."
	// or "sd.", that is "procid" or "msgid", or that is an attribute the
	// mapping reads (syslog.facility, relaykit.index, ...) but whose value
	// it could not take (a wrong type, an inconsistent priority).
	FieldPrefixEscaped = "attr."

	// FieldSeverityNumber (decimal) and FieldSeverityText hold the
	// record's severity when it is not a syslog priority.
	FieldSeverityNumber = "otel.severity_number"
	FieldSeverityText   = "otel.severity_text"
	// FieldTraceID and FieldSpanID hold the record's trace and span ids
	// in lower-case hex; FieldFlags its flags (decimal); FieldEventName
	// its event name; FieldDroppedAttributes its dropped attributes count.
	FieldTraceID           = "otel.trace_id"
	FieldSpanID            = "otel.span_id"
	FieldFlags             = "otel.flags"
	FieldEventName         = "otel.event_name"
	FieldDroppedAttributes = "otel.dropped_attributes_count"
	// FieldResourceSchemaURL, FieldResourceDropped, FieldScopeSchemaURL
	// and FieldScopeDropped hold the schema URLs and dropped attributes
	// counts of the record's resource and scope.
	FieldResourceSchemaURL = "otel.resource.schema_url"
	FieldResourceDropped   = "otel.resource.dropped_attributes_count"
	FieldScopeSchemaURL    = "otel.scope.schema_url"
	FieldScopeDropped      = "otel.scope.dropped_attributes_count"
	// FieldTypes lists the fields (and the body) whose text encodes a
	// value that is not a string, as "<type>:<key>" entries separated by
	// ';' ('%' and ';' in a key escaped as %25 and %3B); the body is
	// named "otel.body". Types are int, double, bool, bytes, empty, json
	// and otlpjson; see the package documentation.
	FieldTypes = "otel.types"
)

// Log attributes that carry [relaykit.Event] properties the OTel data
// model has no place for, so that a relayed event keeps them.
const (
	AttrSourceType = "relaykit.source_type" // Event.SourceType
	AttrIndex      = "relaykit.index"       // Event.Index
	AttrFlags      = "relaykit.flags"       // Event.Flags without FlagPriority, an int
)

// Mapping converts between relaykit events and OTLP log records: the one
// mapping of this package, used by [Receiver] and [Exporter] and
// available to importers with their own transports. The zero value is
// the default: the specification's syslog names, and relaykit's event
// metadata carried in relaykit.* attributes. A Mapping is a plain value,
// safe for concurrent use.
type Mapping struct {
	// Names selects the syslog attribute names; zero means [SpecNames].
	Names SyslogNames
	// OmitEventMeta leaves out the attributes [AttrSourceType],
	// [AttrIndex] and [AttrFlags] when encoding, for a destination that
	// should see only OTel names. Decoding reads them either way.
	OmitEventMeta bool
}

// severityNumbers maps syslog severities (0-7) to SeverityNumber as the
// data model's appendix B and the Collector's syslog parser do.
var severityNumbers = [8]plog.SeverityNumber{
	plog.SeverityNumberFatal,  // emerg
	plog.SeverityNumberError3, // alert
	plog.SeverityNumberError2, // crit
	plog.SeverityNumberError,  // err
	plog.SeverityNumberWarn,   // warning
	plog.SeverityNumberInfo2,  // notice
	plog.SeverityNumberInfo,   // info
	plog.SeverityNumberDebug,  // debug
}

// names holds the OTLP names of one SyslogNames choice.
type names struct {
	hostResource, sourceResource string // resource attribute, or ""
	hostAttr, sourceAttr         string // log attribute, or ""
	facility, priority           string // priority "" when not written
	procID, msgID, sd            string
}

var (
	specNames = names{
		hostResource: "host.name", sourceResource: "service.name",
		facility: "syslog.facility", procID: "syslog.procid", msgID: "syslog.msgid", sd: "syslog.structured_data",
	}
	collectorNames = names{
		hostAttr: "hostname", sourceAttr: "appname",
		facility: "facility", priority: "priority", procID: "proc_id", msgID: "msg_id", sd: "structured_data",
	}
)

func (m Mapping) names() *names {
	if m.Names == CollectorNames {
		return &collectorNames
	}
	return &specNames
}

// AppendEvents appends one event per log record of ld to dst, in order,
// and returns the extended slice. The events beyond len(dst) are reset
// and refilled, reusing the buffers of dst's spare capacity, so a caller
// that passes dst[:0] of the same slice each time does not allocate for
// them once warm. ReceiveTime is each record's observed timestamp, or now
// (ns since the epoch) when it has none.
func (m Mapping) AppendEvents(dst []relaykit.Event, ld plog.Logs, now int64) []relaykit.Event {
	var d decoder
	d.m = m
	return d.appendEvents(dst, ld, now)
}

// decoder holds scratch buffers for decoding; one per goroutine.
type decoder struct {
	m     Mapping
	types []byte
	sd    []byte

	// The direct decoder's (protodec.go) current resource, scope and
	// record, read from the request.
	res wireResource
	sc  wireScope
	rec wireRecord
}

func (d *decoder) appendEvents(dst []relaykit.Event, ld plog.Logs, now int64) []relaykit.Event {
	rls := ld.ResourceLogs()
	for i := range rls.Len() {
		rl := rls.At(i)
		sls := rl.ScopeLogs()
		for j := range sls.Len() {
			sl := sls.At(j)
			lrs := sl.LogRecords()
			for k := range lrs.Len() {
				var e *relaykit.Event
				dst, e = extend(dst)
				e.Reset()
				d.decode(e, rl, sl, lrs.At(k), now)
			}
		}
	}
	return dst
}

// decode fills the reset event e from one log record.
func (d *decoder) decode(e *relaykit.Event, rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord, now int64) {
	n := d.m.names()
	d.types = d.types[:0]
	e.Time = int64(lr.Timestamp())
	e.ReceiveTime = int64(lr.ObservedTimestamp())
	if e.ReceiveTime == 0 {
		e.ReceiveTime = now
	}

	// Resource.
	res := rl.Resource()
	for k, v := range res.Attributes().All() {
		if v.Type() == pcommon.ValueTypeStr && n.hostResource != "" {
			switch {
			case k == n.hostResource && len(e.Host) == 0:
				e.Host = append(e.Host, v.Str()...)
				continue
			case k == n.sourceResource && len(e.Source) == 0:
				e.Source = append(e.Source, v.Str()...)
				continue
			}
		}
		d.addValue(e, FieldPrefixResource, k, v)
	}
	if c := res.DroppedAttributesCount(); c != 0 {
		addUint(e, FieldResourceDropped, uint64(c))
	}
	if s := rl.SchemaUrl(); s != "" {
		addString(e, "", FieldResourceSchemaURL, s)
	}

	// Scope.
	sc := sl.Scope()
	if s := sc.Name(); s != "" {
		addString(e, "", FieldScopeName, s)
	}
	if s := sc.Version(); s != "" {
		addString(e, "", FieldScopeVersion, s)
	}
	for k, v := range sc.Attributes().All() {
		d.addValue(e, FieldPrefixScopeAttr, k, v)
	}
	if c := sc.DroppedAttributesCount(); c != 0 {
		addUint(e, FieldScopeDropped, uint64(c))
	}
	if s := sl.SchemaUrl(); s != "" {
		addString(e, "", FieldScopeSchemaURL, s)
	}

	// Severity: a syslog priority when the facility (and, with the
	// Collector's names, the priority) attribute agree with it exactly.
	attrs := lr.Attributes()
	prio := d.priority(lr, attrs, n)
	if prio >= 0 {
		e.SetPriority(uint8(prio>>3), uint8(prio&7))
	} else {
		if s := lr.SeverityNumber(); s != 0 {
			addUint(e, FieldSeverityNumber, uint64(s))
		}
		if s := lr.SeverityText(); s != "" {
			addString(e, "", FieldSeverityText, s)
		}
	}

	// Log attributes.
	for k, v := range attrs.All() {
		isStr := v.Type() == pcommon.ValueTypeStr
		switch {
		case k == n.facility || (n.priority != "" && k == n.priority):
			if prio >= 0 {
				continue
			}
		case k == n.procID && isStr:
			addString(e, "", syslog.FieldProcID, v.Str())
			continue
		case k == n.msgID && isStr:
			addString(e, "", syslog.FieldMsgID, v.Str())
			continue
		case k == n.sd && d.structuredData(e, v):
			continue
		case n.hostAttr != "" && k == n.hostAttr && isStr && len(e.Host) == 0:
			e.Host = append(e.Host, v.Str()...)
			continue
		case n.sourceAttr != "" && k == n.sourceAttr && isStr && len(e.Source) == 0:
			e.Source = append(e.Source, v.Str()...)
			continue
		case k == AttrSourceType && isStr && len(e.SourceType) == 0:
			e.SourceType = append(e.SourceType, v.Str()...)
			continue
		case k == AttrIndex && isStr && len(e.Index) == 0:
			e.Index = append(e.Index, v.Str()...)
			continue
		case k == AttrFlags && v.Type() == pcommon.ValueTypeInt && v.Int() >= 0 && v.Int() <= 0xffffffff &&
			relaykit.Flags(v.Int())&relaykit.FlagPriority == 0:
			e.Flags |= relaykit.Flags(v.Int())
			continue
		}
		if escaped(k, n) {
			d.addValue(e, FieldPrefixEscaped, k, v)
		} else {
			d.addValue(e, "", k, v)
		}
	}

	// The rest of the record.
	if id := lr.TraceID(); !id.IsEmpty() {
		f := newField(e, "", FieldTraceID)
		f.Value = hex.AppendEncode(f.Value, id[:])
	}
	if id := lr.SpanID(); !id.IsEmpty() {
		f := newField(e, "", FieldSpanID)
		f.Value = hex.AppendEncode(f.Value, id[:])
	}
	if fl := lr.Flags(); fl != 0 {
		addUint(e, FieldFlags, uint64(fl))
	}
	if s := lr.EventName(); s != "" {
		addString(e, "", FieldEventName, s)
	}
	if c := lr.DroppedAttributesCount(); c != 0 {
		addUint(e, FieldDroppedAttributes, uint64(c))
	}
	var tag string
	e.Raw, tag = appendValue(e.Raw, lr.Body())
	if tag != "" {
		d.types = appendTypeEntry(d.types, tag, "", bodyTypeKey)
	}
	if len(d.types) > 0 {
		f := newField(e, "", FieldTypes)
		f.Value = append(f.Value, d.types...)
	}
}

// priority returns the syslog priority the record carries, or -1: its
// facility attribute is an int 0-23, its severity text a syslog severity
// name (emerg ... debug) with the matching severity number, and with the
// Collector's names its priority attribute is facility*8+severity.
func (d *decoder) priority(lr plog.LogRecord, attrs pcommon.Map, n *names) int {
	sev, ok := syslogname.SeverityCode([]byte(lr.SeverityText()))
	if !ok || lr.SeverityNumber() != severityNumbers[sev] {
		return -1
	}
	fv, ok := attrs.Get(n.facility)
	if !ok || fv.Type() != pcommon.ValueTypeInt || fv.Int() < 0 || fv.Int() > 23 {
		return -1
	}
	prio := int(fv.Int())<<3 | int(sev)
	if n.priority != "" {
		pv, ok := attrs.Get(n.priority)
		if !ok || pv.Type() != pcommon.ValueTypeInt || pv.Int() != int64(prio) {
			return -1
		}
	}
	return prio
}

// structuredData adds the fields "sd.<id>.<param>" (and "sd.<id>" for an
// element without parameters) from a structured-data attribute shaped as
// the Collector's syslog receiver writes it: a map of SD-IDs to maps of
// string parameters. It reports false, adding nothing, for any other
// shape.
func (d *decoder) structuredData(e *relaykit.Event, v pcommon.Value) bool {
	if v.Type() != pcommon.ValueTypeMap {
		return false
	}
	for _, el := range v.Map().All() {
		if el.Type() != pcommon.ValueTypeMap {
			return false
		}
		for _, p := range el.Map().All() {
			if p.Type() != pcommon.ValueTypeStr {
				return false
			}
		}
	}
	for id, el := range v.Map().All() {
		if el.Map().Len() == 0 {
			newField(e, syslog.SDFieldPrefix, id)
			continue
		}
		for param, p := range el.Map().All() {
			d.sd = append(append(append(d.sd[:0], id...), '.'), param...)
			f := newFieldBytes(e, syslog.SDFieldPrefix, d.sd)
			f.Value = append(f.Value, p.Str()...)
		}
	}
	return true
}

// escaped reports whether a log attribute key must be stored under
// [FieldPrefixEscaped]: it would be read back as something else.
func escaped(k string, n *names) bool {
	switch k {
	case syslog.FieldProcID, syslog.FieldMsgID, n.facility, n.procID, n.msgID, n.sd,
		AttrSourceType, AttrIndex, AttrFlags:
		return true
	case "":
		return false
	}
	if (n.priority != "" && k == n.priority) || (n.hostAttr != "" && (k == n.hostAttr || k == n.sourceAttr)) {
		return true
	}
	for _, p := range reservedPrefixes {
		if len(k) >= len(p) && k[:len(p)] == p {
			return true
		}
	}
	return false
}

var reservedPrefixes = [...]string{FieldPrefixEscaped, FieldPrefixResource, "scope.", "otel.", syslog.SDFieldPrefix}

// addValue adds the field prefix+k holding v's text, and notes its type.
func (d *decoder) addValue(e *relaykit.Event, prefix, k string, v pcommon.Value) {
	f := newField(e, prefix, k)
	var tag string
	f.Value, tag = appendValue(f.Value, v)
	if tag != "" {
		d.types = appendTypeEntry(d.types, tag, prefix, k)
	}
}

func addString(e *relaykit.Event, prefix, k, v string) {
	f := newField(e, prefix, k)
	f.Value = append(f.Value, v...)
}

func addUint(e *relaykit.Event, k string, v uint64) {
	f := newField(e, "", k)
	f.Value = strconv.AppendUint(f.Value, v, 10)
}

// newField appends a field named prefix+k with an empty value, reusing
// the buffers Reset left, and returns it. Keys may repeat.
func newField(e *relaykit.Event, prefix, k string) *relaykit.Field {
	var f *relaykit.Field
	e.Fields, f = extend(e.Fields)
	f.Key = append(append(f.Key[:0], prefix...), k...)
	f.Value = f.Value[:0]
	return f
}

func newFieldBytes(e *relaykit.Event, prefix string, k []byte) *relaykit.Field {
	var f *relaykit.Field
	e.Fields, f = extend(e.Fields)
	f.Key = append(append(f.Key[:0], prefix...), k...)
	f.Value = f.Value[:0]
	return f
}

// extend lengthens s by one element, reusing spare capacity (whose
// element keeps its buffers), and returns it with that element.
func extend[T any](s []T) ([]T, *T) {
	n := len(s)
	if n < cap(s) {
		s = s[:n+1]
	} else {
		var zero T
		s = append(s, zero)
	}
	return s, &s[n]
}

// hasPrefix reports whether b starts with p.
func hasPrefix(b []byte, p string) bool {
	return len(b) >= len(p) && string(b[:len(p)]) == p
}

// fieldValue returns the value of the first field named key.
func fieldValue(e *relaykit.Event, key string) ([]byte, bool) {
	for i := range e.Fields {
		if string(e.Fields[i].Key) == key {
			return e.Fields[i].Value, true
		}
	}
	return nil, false
}
