package parse

import (
	"bytes"
	"time"
)

// FortiGate: FortiOS logs in their default syslog format, key=value pairs
// (FortiOS Log Message Reference), mapped as FortiOS's own CEF output maps
// them ("FortiOS to CEF log field mapping guidelines" and the per-type
// "log support for CEF" pages of the same reference).

// fortiPrefix starts the name of every FortiOS key without a CEF name, as
// in FortiOS's CEF output.
const fortiPrefix = "FTNTFGT"

// Tags of the FortiOS keys the header and the time are built from.
const (
	ftOther uint8 = iota
	ftDate
	ftTime
	ftTZ
	ftEventTime
	ftType
	ftSubtype
	ftEventType
	ftAction
	ftStatus
	ftLevel
	ftLogID
	ftCount
)

// fortiNames maps FortiOS keys to CEF keys (FortiOS Log Message Reference,
// "Traffic log support for CEF", "Event log support for CEF" and the UTM
// pages: srcip→src, sessionid→externalId, service→app, user→duser, ...),
// and tags the keys the header and the time come from. devname has no CEF
// key there (FortiOS puts it in the syslog header); here it is dvchost,
// DeviceName. A tagged key with the name "" keeps the FTNTFGT prefix; date,
// time and type are not stored (they become the time and cat).
var fortiNames = newNameMap(func() map[string]nameEntry {
	m := names(map[string]string{
		"devid": "deviceExternalId", "devname": "dvchost",
		"srcip": "src", "srcport": "spt", "srcintf": "deviceInboundInterface", "srcname": "shost", "srcmac": "smac",
		"dstip": "dst", "dstport": "dpt", "dstintf": "deviceOutboundInterface", "dstname": "dhost", "dstmac": "dmac",
		"sessionid": "externalId", "proto": "proto", "service": "app",
		"transip": "sourceTranslatedAddress", "transport": "sourceTranslatedPort",
		"tranip": "destinationTranslatedAddress", "tranport": "destinationTranslatedPort",
		"sentbyte": "out", "rcvdbyte": "in", "msg": "msg", "user": "duser", "reason": "reason",
		"ui": "sproc", "role": "sourceServiceName", "cookies": "requestCookies",
		"url": "request", "hostname": "dhost", "agent": "requestClientApplication", "filename": "fname",
		"count": "cnt",
	})
	m["date"] = nameEntry{tag: ftDate}
	m["time"] = nameEntry{tag: ftTime}
	m["type"] = nameEntry{tag: ftType}
	m["tz"] = nameEntry{tag: ftTZ}
	m["eventtime"] = nameEntry{tag: ftEventTime}
	m["subtype"] = nameEntry{tag: ftSubtype}
	m["eventtype"] = nameEntry{tag: ftEventType}
	m["level"] = nameEntry{tag: ftLevel}
	m["logid"] = nameEntry{tag: ftLogID}
	m["action"] = nameEntry{name: "act", tag: ftAction}
	m["status"] = nameEntry{name: "outcome", tag: ftStatus}
	return m
}())

// fortiSyntax is FortiOS's key=value layout: pairs separated by spaces,
// values optionally in double quotes.
var fortiSyntax, _ = newKVSyntax(" ", "=", `"`)

// fortiLevels maps FortiOS's level to the CEF severity FortiOS writes: the
// syslog severity reversed (8 - severity: information is 2, notice 3,
// warning 4, alert 7, as in the reference's examples).
var fortiLevels = map[string]string{
	"emergency": "8", "alert": "7", "critical": "6", "error": "5",
	"warning": "4", "notice": "3", "information": "2", "debug": "1",
}

var (
	fortiLayout = compileLayout("2006-01-02 15:04:05")
	fortiPrefH  = fnvString(fnvOffset, fortiPrefix)
	hCat        = hash("cat")
	hFortiDate  = hash(fortiPrefix + "date")
	hFortiTime  = hash(fortiPrefix + "time")
)

// parseFortiGate maps one FortiOS key=value line; see the package
// documentation.
func parseFortiGate(v *Vendor, w *fieldWriter, text []byte) error {
	text = stripPRI(text)
	if !bytes.Contains(text, []byte("logid=")) {
		return ErrNoMatch
	}
	var spans [ftCount]kvSpan
	sc := kvScanner{syn: &fortiSyntax, s: text}
	w.capped = true
	for sc.next() {
		if len(sc.key) == 0 {
			continue
		}
		h := fnvAdd(fnvOffset, sc.key)
		s := fortiNames.lookup(sc.key, h)
		if s != nil && s.tag != ftOther {
			spans[s.tag] = kvSpan{sc.val, sc.quote}
			if s.tag == ftDate || s.tag == ftTime || s.tag == ftType {
				continue // in the time and the header only
			}
		}
		var prefix string
		var key []byte
		switch {
		case s != nil && s.name != "":
			prefix, h = s.name, s.hash
		default:
			prefix, key, h = fortiPrefix, sc.key, fnvAdd(fortiPrefH, sc.key)
		}
		f := w.slot(prefix, key, h)
		f.Value = appendKVValue(f.Value, sc.val, sc.quote)
	}
	w.capped = false
	if spans[ftLogID].v == nil {
		// "logid=" was inside a quoted value: not a FortiOS line.
		w.rollback()
		return ErrNoMatch
	}
	// The CEF header: Fortinet|Fortigate|...|last five digits of
	// logid|type:subtype [eventtype] [action] [status]|reversed level.
	w.setString(hVendor, "Fortinet")
	w.setString(hProduct, "Fortigate")
	id := w.field(hClassID)
	id.Value = spans[ftLogID].append(id.Value)
	if n := len(id.Value); n > 5 {
		id.Value = append(id.Value[:0], id.Value[n-5:]...)
	}
	cat := w.field(hCat)
	cat.Value = spans[ftType].append(cat.Value)
	cat.Value = spans[ftSubtype].append(append(cat.Value, ':'))
	name := w.field(hName)
	name.Value = append(name.Value, cat.Value...)
	for _, k := range [...]uint8{ftEventType, ftAction, ftStatus} {
		if len(spans[k].v) > 0 {
			name.Value = spans[k].append(append(name.Value, ' '))
		}
	}
	var lb [16]byte
	if sev, ok := fortiLevels[string(spans[ftLevel].append(lb[:0]))]; ok {
		w.setString(hSeverity, sev)
	}
	w.badTime = fortiTime(v, w, &spans) != nil
	w.unterminated = sc.unterminated
	return nil
}

// fortiTime sets the event's time from date and time (with tz, an offset
// such as "+0100" or "-08:00", when present; else the configured zone),
// or from eventtime, an epoch count whose unit its length gives. When
// neither reads, date and time are kept as fields and ErrTimestamp is
// returned.
func fortiTime(v *Vendor, w *fieldWriter, spans *[ftCount]kvSpan) error {
	var buf [40]byte
	if len(spans[ftDate].v) > 0 && len(spans[ftTime].v) > 0 {
		ts := spans[ftDate].append(buf[:0])
		ts = spans[ftTime].append(append(ts, ' '))
		var zb [8]byte
		if off, ok := parseOffset(spans[ftTZ].append(zb[:0])); ok {
			if ns, ok := fortiLayout.parse(ts, time.UTC); ok {
				w.e.Time = ns - int64(off)*1e9
				return nil
			}
		} else if ns, ok := fortiLayout.parse(ts, v.loc); ok {
			w.e.Time = ns
			return nil
		}
	}
	if ns, ok := epochNanos(spans[ftEventTime].append(buf[:0])); ok {
		w.e.Time = ns
		return nil
	}
	if len(spans[ftDate].v) > 0 {
		f := w.field(hFortiDate)
		f.Value = spans[ftDate].append(f.Value)
	}
	if len(spans[ftTime].v) > 0 {
		f := w.field(hFortiTime)
		f.Value = spans[ftTime].append(f.Value)
	}
	return ErrTimestamp
}

// kvSpan is a value as the scanner found it: raw bytes and quote.
type kvSpan struct {
	v []byte
	q byte
}

func (s kvSpan) append(dst []byte) []byte { return appendKVValue(dst, s.v, s.q) }
