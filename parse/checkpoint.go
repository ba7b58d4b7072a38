package parse

import (
	"bytes"
	"time"

	"github.com/relaykit/relaykit"
)

// Check Point: Log Exporter's syslog format (sk122323), an RFC 5424-like
// header whose timestamp holds a space, and the log as pseudo structured
// data, `[key:"value"; key:"value"; ...]`, mapped as Log Exporter's own CEF
// output maps it (its CefFieldsMapping: s_port→spt, service→dpt,
// action→act, ifdir→deviceDirection, rule_name→cs2, time→rt, ...).

// Tags of the Check Point keys the header, the time and value rewrites
// come from.
const (
	cpOther uint8 = iota
	cpTime
	cpIfDir
	cpRuleName
	cpProduct
	cpSeverity
	cpProtectionType
	cpProtectionName
	cpServiceID
	cpCount
)

var cpNames = newNameMap(func() map[string]nameEntry {
	m := names(map[string]string{
		"action": "act", "s_port": "spt", "service": "dpt",
		"xlatesrc": "sourceTranslatedAddress", "xlatedst": "destinationTranslatedAddress",
		"xlatesport": "sourceTranslatedPort", "xlatedport": "destinationTranslatedPort",
		"src_user_name": "suser", "dst_user_name": "duser",
		"src_machine_name": "shost", "dst_machine_name": "dhost",
		"resource": "request", "file_name": "fname",
	})
	m["time"] = nameEntry{name: "rt", tag: cpTime}
	m["ifdir"] = nameEntry{name: "deviceDirection", tag: cpIfDir}
	m["rule_name"] = nameEntry{name: "cs2", tag: cpRuleName}
	m["product"] = nameEntry{tag: cpProduct}
	m["severity"] = nameEntry{tag: cpSeverity}
	m["protection_type"] = nameEntry{name: "protection_type", tag: cpProtectionType}
	m["protection_name"] = nameEntry{name: "protection_name", tag: cpProtectionName}
	m["service_id"] = nameEntry{name: "service_id", tag: cpServiceID}
	return m
}())

// cpSyntax is Log Exporter's pair layout: key:"value" pairs separated by
// ';' and spaces.
var cpSyntax, _ = newKVSyntax("; ", ":", `"`)

var (
	cpLayout   = compileLayout("2006-01-02 15:04:05")
	cpRFC3339  = compileLayout(time.RFC3339Nano)
	hCS2Label  = hash("cs2Label")
	hProcID    = hash("procid")
	hRT        = hash("rt")
	cpCEFBytes = []byte(`:"`)
)

// parseCheckPoint maps one Log Exporter syslog line, from the raw line
// (with or without its <PRI>) or from what the syslog parser left of it:
// the header from VERSION on when the timestamp held a space, the
// bracketed pairs alone when it did not.
func parseCheckPoint(v *Vendor, w *fieldWriter, text []byte) error {
	open := bytes.IndexByte(text, '[')
	if open < 0 || !bytes.Contains(text[open:], cpCEFBytes) {
		return ErrNoMatch
	}
	var spans [cpCount]kvSpan
	sc := kvScanner{syn: &cpSyntax, s: text[open+1:]}
	w.capped = true
	pairs := 0
	for sc.next() {
		if len(sc.key) == 0 {
			continue
		}
		pairs++
		h := fnvAdd(fnvOffset, sc.key)
		s := cpNames.lookup(sc.key, h)
		prefix, key := "", sc.key
		if s != nil {
			if s.tag != cpOther {
				spans[s.tag] = kvSpan{sc.val, sc.quote}
			}
			switch s.tag {
			case cpTime, cpProduct, cpSeverity:
				continue // rewritten or in the header below
			case cpIfDir:
				f := w.slot(s.name, nil, s.hash)
				switch string(sc.val) {
				case "inbound":
					f.Value = append(f.Value, '0')
				case "outbound":
					f.Value = append(f.Value, '1')
				default:
					f.Value = appendKVValue(f.Value, sc.val, sc.quote)
				}
				continue
			case cpRuleName:
				w.setString(hCS2Label, "Rule Name")
			}
			prefix, key, h = s.name, nil, s.hash
		}
		f := w.slot(prefix, key, h)
		f.Value = appendKVValue(f.Value, sc.val, sc.quote)
	}
	w.capped = false
	if pairs == 0 {
		return ErrNoMatch
	}
	var hdr cpHeader
	hdr.read(text[:open])
	e := w.e
	// The header's host, where the message gave the syslog parser none
	// it could read (an input then put the sender's address there).
	if (len(e.Host) == 0 || e.Flags&relaykit.FlagHostFromPeer != 0) && len(hdr.host) > 0 {
		e.Host = append(e.Host[:0], hdr.host...)
		e.Flags &^= relaykit.FlagHostFromPeer
	}
	if len(e.Source) == 0 && len(hdr.app) > 0 {
		e.Source = append(e.Source, hdr.app...)
	}
	if len(hdr.procid) > 0 {
		if _, ok := e.Field("procid"); !ok {
			w.setBytes(hProcID, hdr.procid)
		}
	}
	// The CEF header: Check Point|product|Check Point|protection type or
	// Log|protection name, service or Log|severity or Unknown.
	w.setString(hVendor, "Check Point")
	f := w.field(hProduct)
	if f.Value = spans[cpProduct].append(f.Value); len(f.Value) == 0 {
		f.Value = append(f.Value, "Check Point"...)
	}
	w.setString(hVersion, "Check Point")
	f = w.field(hClassID)
	if f.Value = spans[cpProtectionType].append(f.Value); len(f.Value) == 0 {
		f.Value = append(f.Value, "Log"...)
	}
	f = w.field(hName)
	switch {
	case len(spans[cpProtectionName].v) > 0:
		f.Value = spans[cpProtectionName].append(f.Value)
	case len(spans[cpServiceID].v) > 0:
		f.Value = spans[cpServiceID].append(f.Value)
	default:
		f.Value = append(f.Value, "Log"...)
	}
	f = w.field(hSeverity)
	if f.Value = spans[cpSeverity].append(f.Value); len(f.Value) == 0 {
		f.Value = append(f.Value, "Unknown"...)
	}
	w.badTime = cpTimeOf(v, w, &spans, &hdr) != nil
	w.unterminated = sc.unterminated
	return nil
}

// cpTimeOf sets the event's time and rt (epoch milliseconds, as Log
// Exporter's CEF writes it) from the time pair, epoch seconds, else from
// the header's timestamp; when neither reads, the time pair is kept as it
// was and ErrTimestamp is returned.
func cpTimeOf(v *Vendor, w *fieldWriter, spans *[cpCount]kvSpan, hdr *cpHeader) error {
	var buf [40]byte
	ns, ok := epochNanos(spans[cpTime].append(buf[:0]))
	if !ok && len(hdr.date) > 0 {
		if len(hdr.clock) > 0 {
			ts := append(append(append(buf[:0], hdr.date...), ' '), hdr.clock...)
			ns, ok = cpLayout.parse(ts, v.loc)
		} else {
			ns, ok = cpRFC3339.parse(hdr.date, v.loc)
		}
	}
	if !ok && len(spans[cpTime].v) == 0 && len(hdr.date) == 0 && w.e.Time != 0 {
		// The syslog parser read the header and its timestamp.
		ns, ok = w.e.Time, true
	}
	if !ok {
		if len(spans[cpTime].v) > 0 {
			rt := w.field(hRT)
			rt.Value = spans[cpTime].append(rt.Value)
		}
		return ErrTimestamp
	}
	w.e.Time = ns
	rt := w.field(hRT)
	rt.Value = appendMillis(rt.Value, ns)
	return nil
}

// cpHeader is what precedes the pairs: [<PRI>][VERSION SP] date [SP
// clock] SP host SP app SP procid SP msgid.
type cpHeader struct {
	date, clock, host, app, procid []byte
}

func (h *cpHeader) read(b []byte) {
	b = stripPRI(b)
	var tok [8][]byte
	n := 0
	for n < len(tok) {
		for len(b) > 0 && b[0] == ' ' {
			b = b[1:]
		}
		if len(b) == 0 {
			break
		}
		j := bytes.IndexByte(b, ' ')
		if j < 0 {
			j = len(b)
		}
		tok[n], b = b[:j], b[j:]
		n++
	}
	i := 0
	if i < n && len(tok[i]) <= 3 && isDigits(tok[i]) {
		i++ // VERSION
	}
	if i < n && len(tok[i]) >= 10 && tok[i][4] == '-' {
		h.date = tok[i]
		i++
		if i < n && len(tok[i]) >= 8 && tok[i][2] == ':' {
			h.clock = tok[i]
			i++
		}
	}
	for _, p := range [...]*[]byte{&h.host, &h.app, &h.procid} {
		if i < n {
			if string(tok[i]) != "-" {
				*p = tok[i]
			}
			i++
		}
	}
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}
