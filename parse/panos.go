package parse

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/relaykit/relaykit"
)

// PAN-OS: syslog in the default CSV formats (PAN-OS Administrator's Guide,
// "Syslog Field Descriptions", 9.1 and 10.1 to 11.x), named as PAN-OS's
// CEF templates name them (the "PAN-OS CEF Configuration Guide" formats:
// src, dst, cs1=rule with cs1Label=Rule, cn1=sessionid, act=action,
// PanOSDGl1=dg_hier_level_1, ...).

// Tags of the PAN-OS columns that are not stored as they are.
const (
	ptStore     uint8 = iota
	ptSkip            // FUTURE_USE
	ptType            // the header's name
	ptSubtype         // the header's class ID (TRAFFIC, THREAT, SYSTEM)
	ptResult          // the header's class ID (CONFIG)
	ptGenerated       // time_generated: the event's time, and start
	ptHighRes         // high_res_timestamp: the event's time when present
	ptSeverity        // the header's severity, and stored as "severity"
)

// panosCol is one column: its field name (hashed), the cs*Label or
// cn*Label name and value to set beside it, and its tag.
type panosCol struct {
	name, labelName, label string
	hash, labelHash        uint32
	tag                    uint8
}

// panosType is the column list of one log type.
type panosType struct {
	cols []panosCol
	// oldest is the length of the oldest list the step knows (PAN-OS
	// 9.1); the newest is len(cols) (10.1 to 11.x).
	oldest int
	// severity is the header's fixed severity, "" when a column has it.
	severity string
}

// panosColumns builds a column list from specs: "name", "name/Label" (a
// custom field and the value of its label field, nameLabel), "-"
// (FUTURE_USE, not stored), "!tag" (not stored) or "!tag=name" (stored).
func panosColumns(spec ...string) []panosCol {
	cols := make([]panosCol, len(spec))
	for i, s := range spec {
		c := &cols[i]
		switch {
		case s == "-":
			c.tag = ptSkip
			continue
		case strings.HasPrefix(s, "!"):
			name, rest, _ := strings.Cut(s[1:], "=")
			c.tag = map[string]uint8{"type": ptType, "subtype": ptSubtype, "result": ptResult,
				"generated": ptGenerated, "highres": ptHighRes, "severity": ptSeverity}[name]
			s = rest
			if s == "" {
				continue
			}
		}
		name, label, ok := strings.Cut(s, "/")
		c.name, c.hash = name, fnvString(fnvOffset, name)
		if ok {
			c.labelName = name + "Label"
			c.labelHash = fnvString(fnvOffset, c.labelName)
			c.label = label
		}
	}
	return cols
}

// The columns every log type starts with: FUTURE_USE, Receive Time,
// Serial Number, Type, Threat/Content Type (subtype), FUTURE_USE,
// Generated Time.
var panosHead = []string{"-", "rt", "deviceExternalId", "!type", "!subtype", "-", "!generated"}

// The device group hierarchy, virtual system name and device name that
// end most 9.1 lists.
var panosDG = []string{"PanOSDGl1", "PanOSDGl2", "PanOSDGl3", "PanOSDGl4", "PanOSVsysName", "dvchost"}

// Device-ID and the other columns 10.x added to traffic and threat logs.
var panosDeviceID = []string{
	"xff_ip", "src_category", "src_profile", "src_model", "src_vendor", "src_osfamily", "src_osversion",
	"src_host", "src_mac", "dst_category", "dst_profile", "dst_model", "dst_vendor", "dst_osfamily",
	"dst_osversion", "dst_host", "dst_mac", "container_id", "pod_namespace", "pod_name", "src_edl",
	"dst_edl", "hostid", "serialnumber",
}

var panosAppFields = []string{
	"subcategory_of_app", "category_of_app", "technology_of_app", "risk_of_app",
	"characteristic_of_app", "container_of_app", "tunneled_app", "is_saas_of_app", "sanctioned_state_of_app",
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// panosSession is columns 8 to 31 of traffic and threat logs.
var panosSession = []string{
	"src", "dst", "sourceTranslatedAddress", "destinationTranslatedAddress", "cs1/Rule", "suser", "duser",
	"app", "cs3/Virtual System", "cs4/Source Zone", "cs5/Destination Zone", "deviceInboundInterface",
	"deviceOutboundInterface", "cs6/LogProfile", "-", "cn1/SessionID", "cnt", "spt", "dpt",
	"sourceTranslatedPort", "destinationTranslatedPort", "flexString1/Flags", "proto", "act",
}

var panosTypes = map[string]*panosType{
	"TRAFFIC": {
		severity: "1",
		oldest:   75,
		cols: panosColumns(concat(panosHead, panosSession, []string{
			"flexNumber1/Total bytes", "in", "out", "cn2/Packets", "PanOSStartTime",
			"cn3/Elapsed time in seconds", "cs2/URL Category", "-", "externalId", "PanOSActionFlags",
			"srcloc", "dstloc", "-", "PanOSPacketsSent", "PanOSPacketsReceived", "reason",
		}, panosDG, []string{
			"cat", "PanOSSrcUUID", "PanOSDstUUID", "PanOSTunnelID", "PanOSMonitorTag",
			"PanOSParentSessionID", "PanOSParentStartTime", "PanOSTunnelType", "PanOSSCTPAssocID",
			"PanOSSCTPChunks", "PanOSSCTPChunkSent", "PanOSSCTPChunksReceived", "PanOSRuleUUID",
			"PanOSHTTP2Con", "PanLinkChange", "PanPolicyID", "PanLinkDetail", "PanSDWANCluster",
			"PanSDWANDevice", "PanSDWANClustertype", "PanSDWANSite", "PanDynamicUsrgrp",
		}, panosDeviceID, []string{
			"src_dag", "dst_dag", "session_owner", "!highres=high_res_timestamp", "nsdsai_sst", "nsdsai_sd",
		}, panosAppFields, []string{"offloaded"})...),
	},
	"THREAT": {
		oldest: 79,
		cols: panosColumns(concat(panosHead, panosSession, []string{
			"request", "cat", "cs2/URL Category", "!severity=severity", "flexString2/Direction", "externalId",
			"PanOSActionFlags", "srcloc", "dstloc", "-", "requestContext", "fileId", "fileHash", "filePath",
			"url_idx", "requestClientApplication", "fileType", "PanOSXForwarderfor", "PanOSReferer", "suid",
			"msg", "duid", "oldFileId",
		}, panosDG, []string{
			"-", "PanOSSrcUUID", "PanOSDstUUID", "requestMethod", "PanOSTunnelID", "PanOSMonitorTag",
			"PanOSParentSessionID", "PanOSParentStartTime", "PanOSTunnelType", "PanOSThreatCategory",
			"PanOSContentVer", "-", "PanOSSCTPAssocID", "ppid", "http_headers", "url_category_list",
			"PanOSRuleUUID", "PanOSHTTP2Con", "PanDynamicUsrgrp",
		}, panosDeviceID, []string{
			"domain_edl", "src_dag", "dst_dag", "partial_hash", "!highres=high_res_timestamp", "reason",
			"justification", "nssai_sst",
		}, panosAppFields, []string{"cloud_reportid"})...),
	},
	"SYSTEM": {
		oldest: 23,
		cols: panosColumns(concat(panosHead, []string{
			"cs3/Virtual System", "cat", "fname", "-", "-", "flexString2/Module", "!severity=severity", "msg",
			"externalId", "PanOSActionFlags",
		}, panosDG, []string{"-", "-", "!highres=high_res_timestamp"})...),
	},
	"CONFIG": {
		severity: "1",
		oldest:   24,
		cols: panosColumns(concat(panosHead[:4], []string{"-", "-", "!generated",
			"shost", "cs3/Virtual System", "act", "duser", "destinationServiceName", "!result", "msg",
			"cs1/Before Change Detail", "cs2/After Change Detail", "externalId", "PanOSActionFlags",
		}, panosDG, []string{"dg_id", "comment"})...),
	},
}

// panosSeverities maps PAN-OS's severity to the number its CEF templates
// write for $number-of-severity: informational 1 to critical 5.
var panosSeverities = map[string]string{
	"informational": "1", "low": "2", "medium": "3", "high": "4", "critical": "5",
}

var (
	panosLayout    = compileLayout("2006/01/02 15:04:05")
	panosHighRes   = compileLayout(time.RFC3339Nano)
	hStart         = hash("start")
	hTimeGenerated = hash("time_generated")
	panosExtra     = "column"
)

// panosLooksRight reports whether b starts with PAN-OS's columns 1 to 4:
// FUTURE_USE, a receive time "2006/01/02 15:04:05", a serial number, and a
// type in capitals; it returns the type.
func panosLooksRight(b []byte) ([]byte, bool) {
	sc := csvScanner{s: b, sep: ','}
	var typ []byte
	for j := 0; j < 4; j++ {
		if !sc.next() {
			return nil, false
		}
		switch j {
		case 1:
			if len(sc.val) != 19 || sc.val[4] != '/' || sc.val[10] != ' ' {
				return nil, false
			}
		case 3:
			typ = sc.val
		}
	}
	if len(typ) == 0 {
		return nil, false
	}
	for _, c := range typ {
		if (c < 'A' || c > 'Z') && c != '-' && c != '_' {
			return nil, false
		}
	}
	return typ, true
}

// parsePANOS maps one PAN-OS CSV line; see the package documentation.
func parsePANOS(v *Vendor, w *fieldWriter, text []byte) error {
	text = stripPRI(text)
	e := w.e
	typ, ok := panosLooksRight(text)
	var sc *scratch
	if !ok && bytes.IndexByte(e.Host, ',') > 0 {
		// PAN-OS sends no hostname by default: a syslog parser took the
		// first column and the date of the second for one.
		sc = scratchPool.Get().(*scratch)
		defer release(sc)
		sc.b = append(append(append(sc.b[:0], e.Host...), ' '), text...)
		if typ, ok = panosLooksRight(sc.b); ok {
			text = sc.b
			e.Host = e.Host[:0]
		}
	}
	if !ok {
		return ErrNoMatch
	}
	t := panosTypes[string(typ)]
	var err error
	var cols []panosCol
	if t != nil {
		cols = t.cols
	} else {
		cols = panosGeneric
		err = errUnknown
	}
	var subtype, result, generated, highres, severity []byte
	var subQ, resQ, genQ, hrQ, sevQ bool
	var kb [32]byte
	s := csvScanner{s: text, sep: ',', braces: true}
	w.capped = true
	n := 0
	for s.next() {
		j := n
		n++
		if len(s.val) == 0 {
			continue
		}
		if j >= len(cols) {
			key := strconv.AppendInt(append(kb[:0], panosExtra...), int64(j+1), 10)
			f := w.slot("", key, fnvAdd(fnvOffset, key))
			f.Value = appendCSVValue(f.Value, s.val, s.quoted)
			continue
		}
		c := &cols[j]
		switch c.tag {
		case ptSkip, ptType:
			continue
		case ptSubtype:
			subtype, subQ = s.val, s.quoted
			continue
		case ptResult:
			result, resQ = s.val, s.quoted
			continue
		case ptGenerated:
			generated, genQ = s.val, s.quoted
			continue
		case ptHighRes:
			highres, hrQ = s.val, s.quoted
		case ptSeverity:
			severity, sevQ = s.val, s.quoted
		}
		f := w.slot(c.name, nil, c.hash)
		f.Value = appendCSVValue(f.Value, s.val, s.quoted)
		if c.label != "" {
			w.setString(hashed{c.labelName, c.labelHash}, c.label)
		}
	}
	w.capped = false
	if t != nil {
		switch {
		case n < t.oldest:
			v.short.add()
		case n > len(t.cols):
			v.long.add()
		}
	}
	// The CEF header: Palo Alto Networks|PAN-OS|...|subtype (CONFIG:
	// result)|type|severity.
	w.setString(hVendor, "Palo Alto Networks")
	w.setString(hProduct, "PAN-OS")
	f := w.field(hClassID)
	if string(typ) == "CONFIG" {
		f.Value = appendCSVValue(f.Value, result, resQ)
	} else {
		f.Value = appendCSVValue(f.Value, subtype, subQ)
	}
	w.setBytes(hName, typ)
	switch {
	case t != nil && t.severity != "":
		w.setString(hSeverity, t.severity)
	case len(severity) > 0:
		var b [16]byte
		if num, ok := panosSeverities[string(appendCSVValue(b[:0], severity, sevQ))]; ok {
			w.setString(hSeverity, num)
		}
	}
	if len(e.Host) == 0 || e.Flags&relaykit.FlagHostFromPeer != 0 {
		if name, ok := e.Field("dvchost"); ok {
			e.Host = append(e.Host[:0], name...)
			e.Flags &^= relaykit.FlagHostFromPeer
		}
	}
	w.badTime = panosTime(v, w, generated, genQ, highres, hrQ) != nil
	w.unterminated = s.unterminated
	return err
}

// panosGeneric names the columns of a log type without a list: the
// common ones, then column<n>.
var panosGeneric = panosColumns(panosHead...)

// panosTime sets the event's time from high_res_timestamp (10.0 and
// later, with its zone), else from the generated time in the configured
// zone, and start (StartTime) to the same instant in epoch milliseconds.
// When neither reads, the generated time is kept as the field
// time_generated and ErrTimestamp is returned.
func panosTime(v *Vendor, w *fieldWriter, gen []byte, genQ bool, hr []byte, hrQ bool) error {
	var buf [48]byte
	ns, ok := int64(0), false
	if len(hr) > 0 {
		ns, ok = panosHighRes.parse(appendCSVValue(buf[:0], hr, hrQ), v.loc)
	}
	if !ok && len(gen) > 0 {
		ns, ok = panosLayout.parse(appendCSVValue(buf[:0], gen, genQ), v.loc)
	}
	if !ok {
		if len(gen) > 0 {
			w.setBytes(hTimeGenerated, appendCSVValue(buf[:0], gen, genQ))
		}
		return ErrTimestamp
	}
	w.e.Time = ns
	f := w.field(hStart)
	f.Value = appendMillis(f.Value, ns)
	return nil
}
