package otlp

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/syslogname"
	"github.com/relaykit/relaykit/syslog"
)

// AppendLogs appends one log record per event of batch to ld, in order.
// Consecutive events with the same resource (Host and Source under
// [SpecNames], the resource.* fields) share one ResourceLogs, and within
// it consecutive events with the same scope share one ScopeLogs. It does
// not retain batch.
func (m Mapping) AppendLogs(ld plog.Logs, batch []relaykit.Event) {
	var enc encoder
	enc.reset(m, ld)
	for i := range batch {
		enc.add(&batch[i])
	}
}

// encoder appends events to a plog.Logs, grouping consecutive events by
// resource and scope. One per goroutine; reset before each use.
type encoder struct {
	m  Mapping
	n  *names
	ld plog.Logs
	rl plog.ResourceLogs
	sl plog.ScopeLogs

	resKey, scopeKey, key []byte
	have                  bool // rl and sl are set
	sdKey                 []byte
	s                     strArena
}

func (c *encoder) reset(m Mapping, ld plog.Logs) {
	c.m, c.n, c.ld, c.have = m, m.names(), ld, false
}

// added says what encoder.add created besides the record.
type added struct {
	resource, scope bool
}

// add appends e as a log record and returns it, with whether it opened a
// new ResourceLogs or ScopeLogs for it.
func (c *encoder) add(e *relaykit.Event) (plog.LogRecord, added) {
	var a added
	c.key = c.resourceKey(c.key[:0], e)
	if !c.have || !bytes.Equal(c.key, c.resKey) {
		c.resKey, c.key = c.key, c.resKey
		c.rl = c.ld.ResourceLogs().AppendEmpty()
		c.fillResource(e)
		a.resource = true
	}
	c.key = scopeKey(c.key[:0], e)
	if a.resource || !bytes.Equal(c.key, c.scopeKey) {
		c.scopeKey, c.key = c.key, c.scopeKey
		c.sl = c.rl.ScopeLogs().AppendEmpty()
		c.fillScope(e)
		a.scope = true
	}
	c.have = true
	lr := c.sl.LogRecords().AppendEmpty()
	c.fillRecord(lr, e)
	return lr, a
}

// appendKeyPart appends b length-prefixed, so that concatenated parts
// cannot be confused.
func appendKeyPart(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

func (c *encoder) resourceKey(dst []byte, e *relaykit.Event) []byte {
	if c.n.hostResource != "" {
		dst = appendKeyPart(dst, e.Host)
		dst = appendKeyPart(dst, e.Source)
	}
	types, _ := fieldValue(e, FieldTypes)
	for i := range e.Fields {
		f := &e.Fields[i]
		if hasPrefix(f.Key, FieldPrefixResource) || hasPrefix(f.Key, "otel.resource.") {
			dst = appendKeyPart(dst, f.Key)
			dst = appendKeyPart(dst, f.Value)
			dst = append(dst, typeOf(types, f.Key)...)
		}
	}
	return dst
}

func scopeKey(dst []byte, e *relaykit.Event) []byte {
	types, _ := fieldValue(e, FieldTypes)
	for i := range e.Fields {
		f := &e.Fields[i]
		if isScopeField(f.Key) {
			dst = appendKeyPart(dst, f.Key)
			dst = appendKeyPart(dst, f.Value)
			dst = append(dst, typeOf(types, f.Key)...)
		}
	}
	return dst
}

func isScopeField(k []byte) bool {
	return string(k) == FieldScopeName || string(k) == FieldScopeVersion ||
		hasPrefix(k, FieldPrefixScopeAttr) || hasPrefix(k, "otel.scope.")
}

func (c *encoder) fillResource(e *relaykit.Event) {
	res := c.rl.Resource()
	attrs := res.Attributes()
	if c.n.hostResource != "" {
		if len(e.Host) > 0 {
			attrs.PutStr(c.n.hostResource, c.s.str(e.Host))
		}
		if len(e.Source) > 0 {
			attrs.PutStr(c.n.sourceResource, c.s.str(e.Source))
		}
	}
	types, _ := fieldValue(e, FieldTypes)
	for i := range e.Fields {
		f := &e.Fields[i]
		switch {
		case hasPrefix(f.Key, FieldPrefixResource):
			setValue(attrs.PutEmpty(c.s.str(f.Key[len(FieldPrefixResource):])), typeOf(types, f.Key), f.Value, &c.s)
		case string(f.Key) == FieldResourceDropped:
			if n, ok := parseUint32(f.Value); ok {
				res.SetDroppedAttributesCount(n)
			}
		case string(f.Key) == FieldResourceSchemaURL:
			c.rl.SetSchemaUrl(c.s.str(f.Value))
		}
	}
}

func (c *encoder) fillScope(e *relaykit.Event) {
	sc := c.sl.Scope()
	types, _ := fieldValue(e, FieldTypes)
	for i := range e.Fields {
		f := &e.Fields[i]
		switch {
		case string(f.Key) == FieldScopeName:
			sc.SetName(c.s.str(f.Value))
		case string(f.Key) == FieldScopeVersion:
			sc.SetVersion(c.s.str(f.Value))
		case hasPrefix(f.Key, FieldPrefixScopeAttr):
			setValue(sc.Attributes().PutEmpty(c.s.str(f.Key[len(FieldPrefixScopeAttr):])), typeOf(types, f.Key), f.Value, &c.s)
		case string(f.Key) == FieldScopeDropped:
			if n, ok := parseUint32(f.Value); ok {
				sc.SetDroppedAttributesCount(n)
			}
		case string(f.Key) == FieldScopeSchemaURL:
			c.sl.SetSchemaUrl(c.s.str(f.Value))
		}
	}
}

func parseUint32(b []byte) (uint32, bool) {
	n, err := strconv.ParseUint(string(b), 10, 32)
	return uint32(n), err == nil
}

func (c *encoder) fillRecord(lr plog.LogRecord, e *relaykit.Event) {
	n := c.n
	lr.SetTimestamp(pcommon.Timestamp(e.Time))
	lr.SetObservedTimestamp(pcommon.Timestamp(e.ReceiveTime))
	attrs := lr.Attributes()
	attrs.EnsureCapacity(len(e.Fields) + 6)
	if fac, ok := e.Facility(); ok {
		sev, _ := e.Severity()
		lr.SetSeverityNumber(severityNumbers[sev])
		lr.SetSeverityText(syslogname.Severity(sev))
		attrs.PutInt(n.facility, int64(fac))
		if n.priority != "" {
			attrs.PutInt(n.priority, int64(e.Priority))
		}
	}
	if n.hostAttr != "" {
		if len(e.Host) > 0 {
			attrs.PutStr(n.hostAttr, c.s.str(e.Host))
		}
		if len(e.Source) > 0 {
			attrs.PutStr(n.sourceAttr, c.s.str(e.Source))
		}
	}
	if !c.m.OmitEventMeta {
		if len(e.SourceType) > 0 {
			attrs.PutStr(AttrSourceType, c.s.str(e.SourceType))
		}
		if len(e.Index) > 0 {
			attrs.PutStr(AttrIndex, c.s.str(e.Index))
		}
		if fl := e.Flags &^ relaykit.FlagPriority; fl != 0 {
			attrs.PutInt(AttrFlags, int64(fl))
		}
	}
	types, _ := fieldValue(e, FieldTypes)
	var sd pcommon.Map
	haveSD := false
	for i := range e.Fields {
		f := &e.Fields[i]
		k := f.Key
		switch {
		case hasPrefix(k, FieldPrefixEscaped):
			setValue(attrs.PutEmpty(c.s.str(k[len(FieldPrefixEscaped):])), typeOf(types, k), f.Value, &c.s)
		case hasPrefix(k, FieldPrefixResource), hasPrefix(k, "otel.resource."), isScopeField(k),
			string(k) == FieldTypes:
			// Written with the resource or scope, or read above.
		case hasPrefix(k, "otel.") && c.recordField(lr, f):
		case string(k) == syslog.FieldProcID:
			attrs.PutStr(n.procID, c.s.str(f.Value))
		case string(k) == syslog.FieldMsgID:
			attrs.PutStr(n.msgID, c.s.str(f.Value))
		case hasPrefix(k, syslog.SDFieldPrefix) && c.sdParam(&sd, &haveSD, attrs, f):
		default:
			setValue(attrs.PutEmpty(c.s.str(k)), typeOf(types, k), f.Value, &c.s)
		}
	}
	setValue(lr.Body(), typeOf(types, []byte(bodyTypeKey)), e.Raw, &c.s)
}

// recordField sets the record property an otel.* field holds, and
// reports false for a field that is not one (or does not parse), which
// is then written as an attribute.
func (c *encoder) recordField(lr plog.LogRecord, f *relaykit.Field) bool {
	switch string(f.Key) {
	case FieldSeverityNumber:
		n, err := strconv.ParseInt(string(f.Value), 10, 32)
		if err != nil {
			return false
		}
		lr.SetSeverityNumber(plog.SeverityNumber(n))
	case FieldSeverityText:
		lr.SetSeverityText(c.s.str(f.Value))
	case FieldTraceID:
		var id pcommon.TraceID
		if hex.DecodedLen(len(f.Value)) != len(id) {
			return false
		}
		if _, err := hex.Decode(id[:], f.Value); err != nil {
			return false
		}
		lr.SetTraceID(id)
	case FieldSpanID:
		var id pcommon.SpanID
		if hex.DecodedLen(len(f.Value)) != len(id) {
			return false
		}
		if _, err := hex.Decode(id[:], f.Value); err != nil {
			return false
		}
		lr.SetSpanID(id)
	case FieldFlags:
		n, ok := parseUint32(f.Value)
		if !ok {
			return false
		}
		lr.SetFlags(plog.LogRecordFlags(n))
	case FieldEventName:
		lr.SetEventName(c.s.str(f.Value))
	case FieldDroppedAttributes:
		n, ok := parseUint32(f.Value)
		if !ok {
			return false
		}
		lr.SetDroppedAttributesCount(n)
	default:
		return false
	}
	return true
}

// sdParam adds a "sd.<id>.<param>" field (or "sd.<id>" with an empty
// value: an element without parameters) to the structured-data map
// attribute, creating it at the first. It reports false for an "sd.<id>"
// field with a value, which is written as an attribute of its own.
func (c *encoder) sdParam(sd *pcommon.Map, have *bool, attrs pcommon.Map, f *relaykit.Field) bool {
	rest := f.Key[len(syslog.SDFieldPrefix):]
	id, param, hasParam := bytes.Cut(rest, []byte{'.'})
	if !hasParam && len(f.Value) > 0 {
		return false
	}
	if !*have {
		*sd = attrs.PutEmptyMap(c.n.sd)
		*have = true
	}
	c.sdKey = append(c.sdKey[:0], id...)
	el, ok := sd.Get(string(c.sdKey))
	if !ok {
		el = sd.PutEmpty(c.s.str(c.sdKey))
		el.SetEmptyMap()
	}
	if hasParam {
		el.Map().PutStr(c.s.str(param), c.s.str(f.Value))
	}
	return true
}

// undo removes the record add appended last, with the ResourceLogs and
// ScopeLogs it opened, and makes the next add open new ones.
func (c *encoder) undo() {
	lrs := c.sl.LogRecords()
	last := lrs.Len() - 1
	i := 0
	lrs.RemoveIf(func(plog.LogRecord) bool { i++; return i-1 == last })
	if lrs.Len() == 0 {
		sls := c.rl.ScopeLogs()
		last, i = sls.Len()-1, 0
		sls.RemoveIf(func(plog.ScopeLogs) bool { i++; return i-1 == last })
		if sls.Len() == 0 {
			rls := c.ld.ResourceLogs()
			last, i = rls.Len()-1, 0
			rls.RemoveIf(func(plog.ResourceLogs) bool { i++; return i-1 == last })
		}
	}
	c.have = false
}
