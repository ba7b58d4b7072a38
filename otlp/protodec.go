package otlp

import (
	"encoding/hex"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/syslogname"
	"github.com/relaykit/relaykit/syslog"
)

// The direct decoder: from the protobuf bytes of an
// ExportLogsServiceRequest (opentelemetry-proto collector/logs/v1) to
// events, without pdata in between. It produces the events
// [Mapping.AppendEvents] produces from the pdata of the same bytes, and
// fails where pdata's UnmarshalProto fails; the tests hold it to both with
// pdata as the oracle. It keeps no copy of the request: strings are
// sub-slices of it until they are appended to an event's buffers.
//
// The wire rules it follows are pdata's (v1.65): a message field sent
// twice is merged (the attributes of two resource fields add up, an
// AnyValue takes the last value set), a scalar sent twice keeps the
// last; ResourceLogs field 1000 (the deprecated
// instrumentation_library_logs) stands in for scope_logs when there are
// none; strings are not checked for valid UTF-8 (pdata does not check
// them either: the bytes go into the event as they came).

// Field numbers of AnyValue's oneof, the kinds of an anyVal.
const (
	anyNone     = 0
	anyString   = 1
	anyBool     = 2
	anyInt      = 3
	anyDouble   = 4
	anyArray    = 5
	anyKvlist   = 6
	anyBytes    = 7
	anyStrindex = 8 // profiles' string table index: an empty value to logs
)

// anyVal is an AnyValue as read from the wire: the kind of the value set
// last, its number (bool, int, double bits) or its bytes (string, bytes,
// the encoded ArrayValue or KeyValueList).
type anyVal struct {
	kind uint8
	num  uint64
	data []byte
}

// wkv is one KeyValue.
type wkv struct {
	key []byte
	val anyVal
}

type wireResource struct {
	attrs   []wkv
	dropped uint32
	schema  []byte // ResourceLogs.schema_url
}

type wireScope struct {
	name, version []byte
	attrs         []wkv
	dropped       uint32
	schema        []byte // ScopeLogs.schema_url
}

type wireRecord struct {
	time, observed uint64
	sevNum         int32
	sevText        []byte
	body           anyVal
	attrs          []wkv
	dropped, flags uint32
	traceID        [16]byte
	spanID         [8]byte
	eventName      []byte
}

// appendEventsProto appends one event per log record of the encoded
// ExportLogsServiceRequest b to dst, as appendEvents does for its pdata,
// and returns the extended slice. On an error (b is not a valid request
// as pdata reads it) it returns dst as it was, with the error.
func (d *decoder) appendEventsProto(dst []relaykit.Event, b []byte, now int64) ([]relaykit.Event, error) {
	start := len(dst)
	dst, err := d.request(dst, b, now)
	d.clearRefs()
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

func (d *decoder) request(dst []relaykit.Event, b []byte, now int64) ([]relaykit.Event, error) {
	pos := 0
	for pos < len(b) {
		f, wt, p, err := consumeTag(b, pos)
		if err != nil {
			return dst, err
		}
		if f == 1 {
			if wt != wireLen {
				return dst, wrongWireType("ResourceLogs", wt)
			}
			var seg []byte
			if seg, p, err = consumeBytes(b, p); err == nil {
				dst, err = d.resourceLogs(dst, seg, now)
			}
		} else {
			p, err = consumeUnknown(b, p, wt)
		}
		if err != nil {
			return dst, err
		}
		pos = p
	}
	return dst, nil
}

// clearRefs drops the decoder's references into the request bytes, so
// that a pooled decoder does not keep a request alive.
func (d *decoder) clearRefs() {
	clear(d.res.attrs)
	clear(d.sc.attrs)
	clear(d.rec.attrs)
	d.res = wireResource{attrs: d.res.attrs[:0]}
	d.sc = wireScope{attrs: d.sc.attrs[:0]}
	d.rec = wireRecord{attrs: d.rec.attrs[:0]}
}

// resourceLogs decodes one ResourceLogs: first its resource and schema
// URL, which may come after its scopes, then its scopes.
func (d *decoder) resourceLogs(dst []relaykit.Event, b []byte, now int64) ([]relaykit.Event, error) {
	d.res = wireResource{attrs: d.res.attrs[:0]}
	hasScopes := false
	for pos := 0; pos < len(b); {
		f, wt, p, err := consumeTag(b, pos)
		if err != nil {
			return dst, err
		}
		switch f {
		case 1, 2, 3, 1000:
			if wt != wireLen {
				return dst, wrongWireType("ResourceLogs", wt)
			}
			var seg []byte
			if seg, p, err = consumeBytes(b, p); err != nil {
				return dst, err
			}
			switch f {
			case 1:
				err = d.resource(seg)
			case 2:
				hasScopes = true
			case 3:
				d.res.schema = seg
			}
		default:
			p, err = consumeUnknown(b, p, wt)
		}
		if err != nil {
			return dst, err
		}
		pos = p
	}
	// The fields were all read once: no tag or length fails now.
	for pos := 0; pos < len(b); {
		f, wt, p, _ := consumeTag(b, pos)
		if wt != wireLen || (f != 2 && f != 1000) {
			pos, _ = consumeUnknown(b, p, wt)
			continue
		}
		seg, p, _ := consumeBytes(b, p)
		pos = p
		var err error
		// pdata reads the deprecated scopes, and drops them when there
		// are current ones.
		dst, err = d.scopeLogs(dst, seg, now, f == 2 || !hasScopes)
		if err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// resource merges one Resource message into d.res.
func (d *decoder) resource(b []byte) error {
	for pos := 0; pos < len(b); {
		f, wt, p, err := consumeTag(b, pos)
		if err != nil {
			return err
		}
		switch f {
		case 1:
			if wt != wireLen {
				return wrongWireType("Attributes", wt)
			}
			d.res.attrs, p, err = appendKeyValue(d.res.attrs, b, p)
		case 2:
			if wt != wireVarint {
				return wrongWireType("DroppedAttributesCount", wt)
			}
			var n uint64
			n, p, err = consumeVarint(b, p)
			d.res.dropped = uint32(n)
		case 3:
			if wt != wireLen {
				return wrongWireType("EntityRefs", wt)
			}
			var seg []byte
			if seg, p, err = consumeBytes(b, p); err == nil {
				err = checkEntityRef(seg)
			}
		default:
			p, err = consumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
		pos = p
	}
	return nil
}

// checkEntityRef reads an EntityRef (four string fields) for errors only.
func checkEntityRef(b []byte) error {
	for pos := 0; pos < len(b); {
		f, wt, p, err := consumeTag(b, pos)
		if err != nil {
			return err
		}
		if f >= 1 && f <= 4 {
			if wt != wireLen {
				return wrongWireType("EntityRef", wt)
			}
			_, p, err = consumeLen(b, p)
		} else {
			p, err = consumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
		pos = p
	}
	return nil
}

// scopeLogs decodes one ScopeLogs, its scope first, and appends an event
// per record when emit (else it only reads them for errors).
func (d *decoder) scopeLogs(dst []relaykit.Event, b []byte, now int64, emit bool) ([]relaykit.Event, error) {
	d.sc = wireScope{attrs: d.sc.attrs[:0]}
	for pos := 0; pos < len(b); {
		f, wt, p, err := consumeTag(b, pos)
		if err != nil {
			return dst, err
		}
		switch f {
		case 1, 2, 3:
			if wt != wireLen {
				return dst, wrongWireType("ScopeLogs", wt)
			}
			var seg []byte
			if seg, p, err = consumeBytes(b, p); err != nil {
				return dst, err
			}
			switch f {
			case 1:
				err = d.scope(seg)
			case 3:
				d.sc.schema = seg
			}
		default:
			p, err = consumeUnknown(b, p, wt)
		}
		if err != nil {
			return dst, err
		}
		pos = p
	}
	for pos := 0; pos < len(b); {
		f, wt, p, _ := consumeTag(b, pos)
		if wt != wireLen || f != 2 {
			pos, _ = consumeUnknown(b, p, wt)
			continue
		}
		seg, p, _ := consumeBytes(b, p)
		pos = p
		if err := d.record(seg); err != nil {
			return dst, err
		}
		if emit {
			var e *relaykit.Event
			dst, e = extend(dst)
			e.Reset()
			d.decodeWire(e, now)
		}
	}
	return dst, nil
}

// scope merges one InstrumentationScope message into d.sc.
func (d *decoder) scope(b []byte) error {
	for pos := 0; pos < len(b); {
		f, wt, p, err := consumeTag(b, pos)
		if err != nil {
			return err
		}
		switch f {
		case 1, 2:
			if wt != wireLen {
				return wrongWireType("InstrumentationScope", wt)
			}
			var seg []byte
			seg, p, err = consumeBytes(b, p)
			if f == 1 {
				d.sc.name = seg
			} else {
				d.sc.version = seg
			}
		case 3:
			if wt != wireLen {
				return wrongWireType("Attributes", wt)
			}
			d.sc.attrs, p, err = appendKeyValue(d.sc.attrs, b, p)
		case 4:
			if wt != wireVarint {
				return wrongWireType("DroppedAttributesCount", wt)
			}
			var n uint64
			n, p, err = consumeVarint(b, p)
			d.sc.dropped = uint32(n)
		default:
			p, err = consumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
		pos = p
	}
	return nil
}

// record reads one LogRecord into d.rec.
func (d *decoder) record(b []byte) error {
	r := &d.rec
	*r = wireRecord{attrs: r.attrs[:0]}
	for pos := 0; pos < len(b); {
		f, wt, p, err := consumeTag(b, pos)
		if err != nil {
			return err
		}
		var want wireType
		switch f {
		case 1, 11:
			want = wireI64
		case 2, 7:
			want = wireVarint
		case 8:
			want = wireI32
		case 3, 5, 6, 9, 10, 12:
			want = wireLen
		default:
			if pos, err = consumeUnknown(b, p, wt); err != nil {
				return err
			}
			continue
		}
		if wt != want {
			return wrongWireType("LogRecord", wt)
		}
		var n uint64
		var seg []byte
		switch want {
		case wireI64:
			n, p, err = consumeI64(b, p)
		case wireVarint:
			n, p, err = consumeVarint(b, p)
		case wireI32:
			var n32 uint32
			n32, p, err = consumeI32(b, p)
			n = uint64(n32)
		default:
			if f == 6 {
				r.attrs, p, err = appendKeyValue(r.attrs, b, p)
			} else {
				seg, p, err = consumeBytes(b, p)
			}
		}
		if err != nil {
			return err
		}
		switch f {
		case 1:
			r.time = n
		case 11:
			r.observed = n
		case 2:
			r.sevNum = int32(n)
		case 7:
			r.dropped = uint32(n)
		case 8:
			r.flags = uint32(n)
		case 3:
			r.sevText = seg
		case 12:
			r.eventName = seg
		case 5:
			err = mergeAnyValue(&r.body, seg, true)
		case 9:
			switch len(seg) {
			case 0:
				r.traceID = [16]byte{}
			case 16:
				r.traceID = [16]byte(seg)
			default:
				err = errTraceIDSize
			}
		case 10:
			switch len(seg) {
			case 0:
				r.spanID = [8]byte{}
			case 8:
				r.spanID = [8]byte(seg)
			default:
				err = errSpanIDSize
			}
		}
		if err != nil {
			return err
		}
		pos = p
	}
	return nil
}

// appendKeyValue reads the KeyValue field whose length starts at pos and
// appends it to kvs.
func appendKeyValue(kvs []wkv, b []byte, pos int) ([]wkv, int, error) {
	seg, p, err := consumeBytes(b, pos)
	if err != nil {
		return kvs, 0, err
	}
	var kv *wkv
	kvs, kv = extend(kvs)
	*kv = wkv{}
	if err := readKeyValue(kv, seg, true); err != nil {
		return kvs, 0, err
	}
	return kvs, p, nil
}

// readKeyValue reads one KeyValue message into the zero kv; with check
// it reads its value's lists through for errors (see mergeAnyValue).
func readKeyValue(kv *wkv, b []byte, check bool) error {
	for pos := 0; pos < len(b); {
		f, wt, p, err := consumeTag(b, pos)
		if err != nil {
			return err
		}
		switch f {
		case 1, 2:
			if wt != wireLen {
				return wrongWireType("KeyValue", wt)
			}
			var seg []byte
			if seg, p, err = consumeBytes(b, p); err != nil {
				return err
			}
			if f == 1 {
				kv.key = seg
			} else {
				err = mergeAnyValue(&kv.val, seg, check)
			}
		case 3:
			if wt != wireVarint {
				return wrongWireType("KeyStrindex", wt)
			}
			_, p, err = consumeVarint(b, p)
		default:
			p, err = consumeUnknown(b, p, wt)
		}
		if err != nil {
			return err
		}
		pos = p
	}
	return nil
}

// mergeAnyValue reads one AnyValue message into v: the last value field
// set wins, over those of earlier messages merged into v too. Arrays and
// key/value lists are kept encoded; with check they are read through for
// errors (once, when the request is read: a walk through a list checked
// before passes false, so that nested lists cost linear time).
func mergeAnyValue(v *anyVal, b []byte, check bool) error {
	for pos := 0; pos < len(b); {
		f, wt, p, err := consumeTag(b, pos)
		if err != nil {
			return err
		}
		var want wireType
		switch f {
		case anyBool, anyInt, anyStrindex:
			want = wireVarint
		case anyDouble:
			want = wireI64
		case anyString, anyArray, anyKvlist, anyBytes:
			want = wireLen
		default:
			if pos, err = consumeUnknown(b, p, wt); err != nil {
				return err
			}
			continue
		}
		if wt != want {
			return wrongWireType("AnyValue", wt)
		}
		var n uint64
		var seg []byte
		switch want {
		case wireVarint:
			n, p, err = consumeVarint(b, p)
		case wireI64:
			n, p, err = consumeI64(b, p)
		default:
			seg, p, err = consumeBytes(b, p)
			if err == nil && !check {
				// Checked before.
			} else if err == nil && f == anyArray {
				err = checkList(seg, false)
			} else if err == nil && f == anyKvlist {
				err = checkList(seg, true)
			}
		}
		if err != nil {
			return err
		}
		*v = anyVal{kind: uint8(f), num: n, data: seg}
		pos = p
	}
	return nil
}

// checkList reads an encoded ArrayValue (or KeyValueList, kv) for errors.
func checkList(b []byte, kv bool) error {
	for pos := 0; pos < len(b); {
		f, wt, p, err := consumeTag(b, pos)
		if err != nil {
			return err
		}
		if f != 1 {
			if pos, err = consumeUnknown(b, p, wt); err != nil {
				return err
			}
			continue
		}
		if wt != wireLen {
			return wrongWireType("Values", wt)
		}
		var seg []byte
		if seg, p, err = consumeBytes(b, p); err != nil {
			return err
		}
		if kv {
			var x wkv
			err = readKeyValue(&x, seg, true)
		} else {
			var x anyVal
			err = mergeAnyValue(&x, seg, true)
		}
		if err != nil {
			return err
		}
		pos = p
	}
	return nil
}

// listIter walks the values of an ArrayValue or KeyValueList checked
// before (by mergeAnyValue), so it meets no errors.
type listIter struct {
	b   []byte
	pos int
}

// next returns the next element (for a KeyValueList, with its key).
func (it *listIter) next(kv bool) (wkv, bool) {
	for it.pos < len(it.b) {
		f, wt, p, _ := consumeTag(it.b, it.pos)
		if f != 1 || wt != wireLen {
			it.pos, _ = consumeUnknown(it.b, p, wt)
			continue
		}
		seg, p, _ := consumeBytes(it.b, p)
		it.pos = p
		var x wkv
		if kv {
			_ = readKeyValue(&x, seg, false)
		} else {
			_ = mergeAnyValue(&x.val, seg, false)
		}
		return x, true
	}
	return wkv{}, false
}

// listLen returns the number of elements of an ArrayValue or
// KeyValueList.
func listLen(b []byte) int {
	n := 0
	it := listIter{b: b}
	for pos := 0; pos < len(b); {
		f, wt, p, _ := consumeTag(it.b, pos)
		if f == 1 && wt == wireLen {
			n++
		}
		pos, _ = consumeUnknown(b, p, wt)
	}
	return n
}

// decodeWire fills the reset event e from d.res, d.sc and d.rec, as
// decode does from pdata.
func (d *decoder) decodeWire(e *relaykit.Event, now int64) {
	n := d.m.names()
	lr := &d.rec
	d.types = d.types[:0]
	e.Time = int64(lr.time)
	e.ReceiveTime = int64(lr.observed)
	if e.ReceiveTime == 0 {
		e.ReceiveTime = now
	}

	// Resource.
	for i := range d.res.attrs {
		kv := &d.res.attrs[i]
		if kv.val.kind == anyString && n.hostResource != "" {
			switch {
			case string(kv.key) == n.hostResource && len(e.Host) == 0:
				e.Host = append(e.Host, kv.val.data...)
				continue
			case string(kv.key) == n.sourceResource && len(e.Source) == 0:
				e.Source = append(e.Source, kv.val.data...)
				continue
			}
		}
		d.addWireValue(e, FieldPrefixResource, kv.key, kv.val)
	}
	if c := d.res.dropped; c != 0 {
		addUint(e, FieldResourceDropped, uint64(c))
	}
	if s := d.res.schema; len(s) != 0 {
		addBytes(e, FieldResourceSchemaURL, s)
	}

	// Scope.
	if s := d.sc.name; len(s) != 0 {
		addBytes(e, FieldScopeName, s)
	}
	if s := d.sc.version; len(s) != 0 {
		addBytes(e, FieldScopeVersion, s)
	}
	for i := range d.sc.attrs {
		kv := &d.sc.attrs[i]
		d.addWireValue(e, FieldPrefixScopeAttr, kv.key, kv.val)
	}
	if c := d.sc.dropped; c != 0 {
		addUint(e, FieldScopeDropped, uint64(c))
	}
	if s := d.sc.schema; len(s) != 0 {
		addBytes(e, FieldScopeSchemaURL, s)
	}

	// Severity.
	prio := d.wirePriority(n)
	if prio >= 0 {
		e.SetPriority(uint8(prio>>3), uint8(prio&7))
	} else {
		if s := lr.sevNum; s != 0 {
			addUint(e, FieldSeverityNumber, uint64(s))
		}
		if s := lr.sevText; len(s) != 0 {
			addBytes(e, FieldSeverityText, s)
		}
	}

	// Log attributes.
	for i := range lr.attrs {
		kv := &lr.attrs[i]
		k, v := kv.key, kv.val
		isStr := v.kind == anyString
		switch {
		case string(k) == n.facility || (n.priority != "" && string(k) == n.priority):
			if prio >= 0 {
				continue
			}
		case string(k) == n.procID && isStr:
			addBytes(e, syslog.FieldProcID, v.data)
			continue
		case string(k) == n.msgID && isStr:
			addBytes(e, syslog.FieldMsgID, v.data)
			continue
		case string(k) == n.sd && d.wireStructuredData(e, v):
			continue
		case n.hostAttr != "" && string(k) == n.hostAttr && isStr && len(e.Host) == 0:
			e.Host = append(e.Host, v.data...)
			continue
		case n.sourceAttr != "" && string(k) == n.sourceAttr && isStr && len(e.Source) == 0:
			e.Source = append(e.Source, v.data...)
			continue
		case string(k) == AttrSourceType && isStr && len(e.SourceType) == 0:
			e.SourceType = append(e.SourceType, v.data...)
			continue
		case string(k) == AttrIndex && isStr && len(e.Index) == 0:
			e.Index = append(e.Index, v.data...)
			continue
		case string(k) == AttrFlags && v.kind == anyInt && int64(v.num) >= 0 && int64(v.num) <= 0xffffffff &&
			relaykit.Flags(int64(v.num))&relaykit.FlagPriority == 0:
			e.Flags |= relaykit.Flags(int64(v.num))
			continue
		}
		if escapedBytes(k, n) {
			d.addWireValue(e, FieldPrefixEscaped, k, v)
		} else {
			d.addWireValue(e, "", k, v)
		}
	}

	// The rest of the record.
	if lr.traceID != [16]byte{} {
		f := newField(e, "", FieldTraceID)
		f.Value = hex.AppendEncode(f.Value, lr.traceID[:])
	}
	if lr.spanID != [8]byte{} {
		f := newField(e, "", FieldSpanID)
		f.Value = hex.AppendEncode(f.Value, lr.spanID[:])
	}
	if fl := lr.flags; fl != 0 {
		addUint(e, FieldFlags, uint64(fl))
	}
	if s := lr.eventName; len(s) != 0 {
		addBytes(e, FieldEventName, s)
	}
	if c := lr.dropped; c != 0 {
		addUint(e, FieldDroppedAttributes, uint64(c))
	}
	var tag string
	e.Raw, tag = appendWireValue(e.Raw, lr.body)
	if tag != "" {
		d.types = appendTypeEntry(d.types, tag, "", bodyTypeKey)
	}
	if len(d.types) > 0 {
		f := newField(e, "", FieldTypes)
		f.Value = append(f.Value, d.types...)
	}
}

// wirePriority is priority for d.rec.
func (d *decoder) wirePriority(n *names) int {
	lr := &d.rec
	sev, ok := syslogname.SeverityCode(lr.sevText)
	if !ok || lr.sevNum != int32(severityNumbers[sev]) {
		return -1
	}
	fv, ok := wireGet(lr.attrs, n.facility)
	if !ok || fv.kind != anyInt || int64(fv.num) < 0 || int64(fv.num) > 23 {
		return -1
	}
	prio := int(int64(fv.num))<<3 | int(sev)
	if n.priority != "" {
		pv, ok := wireGet(lr.attrs, n.priority)
		if !ok || pv.kind != anyInt || int64(pv.num) != int64(prio) {
			return -1
		}
	}
	return prio
}

// wireGet returns the value of the first attribute named k, as
// pcommon.Map.Get does.
func wireGet(kvs []wkv, k string) (anyVal, bool) {
	for i := range kvs {
		if string(kvs[i].key) == k {
			return kvs[i].val, true
		}
	}
	return anyVal{}, false
}

// wireStructuredData is structuredData for an encoded value.
func (d *decoder) wireStructuredData(e *relaykit.Event, v anyVal) bool {
	if v.kind != anyKvlist {
		return false
	}
	it := listIter{b: v.data}
	for el, ok := it.next(true); ok; el, ok = it.next(true) {
		if el.val.kind != anyKvlist {
			return false
		}
		pit := listIter{b: el.val.data}
		for p, ok := pit.next(true); ok; p, ok = pit.next(true) {
			if p.val.kind != anyString {
				return false
			}
		}
	}
	it = listIter{b: v.data}
	for el, ok := it.next(true); ok; el, ok = it.next(true) {
		if listLen(el.val.data) == 0 {
			newFieldBytes(e, syslog.SDFieldPrefix, el.key)
			continue
		}
		pit := listIter{b: el.val.data}
		for p, ok := pit.next(true); ok; p, ok = pit.next(true) {
			d.sd = append(append(append(d.sd[:0], el.key...), '.'), p.key...)
			f := newFieldBytes(e, syslog.SDFieldPrefix, d.sd)
			f.Value = append(f.Value, p.val.data...)
		}
	}
	return true
}

// escapeFirst holds the first bytes of the keys escaped may report true
// for, with either set of names: a cheap first test.
var escapeFirst = func() (t [256]bool) {
	for _, n := range []*names{&specNames, &collectorNames} {
		for _, k := range []string{syslog.FieldProcID, syslog.FieldMsgID, n.facility, n.procID, n.msgID, n.sd,
			AttrSourceType, AttrIndex, AttrFlags, n.priority, n.hostAttr, n.sourceAttr} {
			if k != "" {
				t[k[0]] = true
			}
		}
	}
	for _, p := range reservedPrefixes {
		t[p[0]] = true
	}
	return t
}()

// escapedBytes is escaped for a key in bytes.
func escapedBytes(k []byte, n *names) bool {
	if len(k) == 0 || !escapeFirst[k[0]] {
		return false
	}
	switch string(k) {
	case syslog.FieldProcID, syslog.FieldMsgID, n.facility, n.procID, n.msgID, n.sd,
		AttrSourceType, AttrIndex, AttrFlags:
		return true
	case "":
		return false
	}
	if (n.priority != "" && string(k) == n.priority) ||
		(n.hostAttr != "" && (string(k) == n.hostAttr || string(k) == n.sourceAttr)) {
		return true
	}
	for _, p := range reservedPrefixes {
		if hasPrefix(k, p) {
			return true
		}
	}
	return false
}

// addWireValue is addValue for an encoded value.
func (d *decoder) addWireValue(e *relaykit.Event, prefix string, k []byte, v anyVal) {
	f := newFieldBytes(e, prefix, k)
	var tag string
	f.Value, tag = appendWireValue(f.Value, v)
	if tag != "" {
		d.types = appendTypeEntry(d.types, tag, prefix, k)
	}
}

func addBytes(e *relaykit.Event, k string, v []byte) {
	f := newField(e, "", k)
	f.Value = append(f.Value, v...)
}
