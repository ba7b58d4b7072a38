package forward

import (
	"strconv"
	"sync"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/internal/jsonenc"
	"github.com/relaykit/relaykit/internal/syslogname"
)

// SentinelTable selects the row layout of a [Sentinel] sink: a custom table
// mapped by [SentinelConfig.Columns] and [SentinelConfig.Fields], or one of
// the two built-in Sentinel tables the Logs Ingestion API accepts
// (Syslog and CommonSecurityLog; "Supported tables" in
// https://learn.microsoft.com/azure/azure-monitor/logs/logs-ingestion-api-overview).
//
// The built-in layouts follow the tables' published schemas
// (https://learn.microsoft.com/azure/azure-monitor/reference/tables/syslog,
// https://learn.microsoft.com/azure/azure-monitor/reference/tables/commonsecuritylog)
// and Microsoft's "CEF and CommonSecurityLog field mapping"
// (https://learn.microsoft.com/azure/sentinel/cef-name-mapping), and read
// the event fields the pipeline package's syslog and CEF parsers produce:
// "procid" and "msgid"; "cef.device_vendor", "cef.device_product",
// "cef.device_version", "cef.device_event_class_id", "cef.name",
// "cef.severity" for the CEF header; CEF extension keys as they are
// ("src", "dpt", "cs1", "cs1Label", ...).
type SentinelTable uint8

const (
	// SentinelCustom writes the columns named by SentinelConfig.Columns
	// and Fields, for a custom table (Custom-<Table>_CL). The default.
	SentinelCustom SentinelTable = iota

	// SentinelSyslog writes rows of the Syslog table (stream
	// "Microsoft-Syslog"):
	//
	//	TimeGenerated      datetime  event time (Event.Time, else ReceiveTime)
	//	EventTime          datetime  Event.Time, when known
	//	Computer           string    Event.Host
	//	HostName           string    Event.Host
	//	HostIP             string    Event.Host, when it is an IP address
	//	Facility           string    facility name: kern, user, ..., authpriv, ..., local7
	//	SeverityLevel      string    severity name: emerg, alert, crit, err, warning, notice, info, debug
	//	SyslogMessage      string    Event.Raw (the MSG part)
	//	ProcessName        string    Event.Source (APP-NAME or tag)
	//	ProcessID          int       field "procid", when it is a number
	//	CollectorHostName  string    SentinelConfig.CollectorHostName, when set
	//
	// Facility and SeverityLevel are written for events with a priority
	// ([relaykit.FlagPriority]), with the names the Azure Monitor Agent
	// writes (those of syslog.conf; RFC 5424 tables 1 and 2 number them).
	// The table has no column for MSGID or structured data: send them to
	// custom columns of your own (Fields, e.g. {Field: "msgid", Column:
	// "MsgID_CF"}), after adding those columns to the table.
	SentinelSyslog

	// SentinelCommonSecurityLog writes rows of the CommonSecurityLog table
	// (stream "Microsoft-CommonSecurityLog"): TimeGenerated (event time),
	// Computer (Event.Host), the CEF header (DeviceVendor, DeviceProduct,
	// DeviceVersion, DeviceEventClassID, Activity for the name,
	// LogSeverity), and every standard CEF extension key in the column
	// Microsoft's mapping names (src → SourceIP, dpt → DestinationPort,
	// act → DeviceAction, suser → SourceUserName, request → RequestURL,
	// cs1 → DeviceCustomString1, ...; the full list is
	// [SentinelCEFColumns]). Numbers go to int, long and real columns when
	// they are valid numbers of that type; start and end, when they are
	// epoch milliseconds, to the datetime columns StartTime and EndTime;
	// cn1-cn3 to FieldDeviceCustomNumber1-3 (long) and externalId to ExtID
	// (string), the columns that replaced DeviceCustomNumber1-3 and
	// ExternalID in the table's February 2023 schema change. ProcessName
	// is deviceProcessName, else Event.Source.
	//
	// Every other field (unknown keys, values a typed column cannot hold,
	// syslog fields such as msgid or sd.*, enrichments) goes to
	// AdditionalExtensions as "key=value" pairs separated by ';', in the
	// event's order, with '\', ';' and '=' escaped by a '\': the shape
	// Sentinel's own analytics rules read (the Palo Alto port-scan rule
	// matches AdditionalExtensions has "reason=aged-out" and splits it on
	// ';'). The CEF
	// version (cef.version) is not kept. An event without CEF header
	// fields (not parsed as CEF) has its Raw message in Message, so that
	// nothing is lost.
	SentinelCommonSecurityLog
)

// String returns "custom", "Syslog" or "CommonSecurityLog".
func (t SentinelTable) String() string {
	switch t {
	case SentinelCustom:
		return "custom"
	case SentinelSyslog:
		return "Syslog"
	case SentinelCommonSecurityLog:
		return "CommonSecurityLog"
	}
	return "SentinelTable(" + strconv.Itoa(int(t)) + ")"
}

// Stream returns the stream of a built-in table, "Microsoft-Syslog" or
// "Microsoft-CommonSecurityLog", or "" for SentinelCustom.
func (t SentinelTable) Stream() string {
	switch t {
	case SentinelSyslog:
		return "Microsoft-Syslog"
	case SentinelCommonSecurityLog:
		return "Microsoft-CommonSecurityLog"
	}
	return ""
}

// Column types of the built-in tables (Kusto scalar types).
type columnType uint8

const (
	colString   columnType = iota
	colInt                 // 32-bit signed integer
	colLong                // 64-bit signed integer
	colReal                // double
	colDatetime            // written from epoch milliseconds
)

// cefColumn maps one event field to a CommonSecurityLog column.
type cefColumn struct {
	field, column string
	typ           columnType
}

// cefColumns is the CEF key → CommonSecurityLog column mapping of
// https://learn.microsoft.com/azure/sentinel/cef-name-mapping, with the
// types of the table's schema, plus the CEF header fields as the pipeline
// package's CEF parser names them.
var cefColumns = []cefColumn{
	{"cef.device_vendor", "DeviceVendor", colString},
	{"cef.device_product", "DeviceProduct", colString},
	{"cef.device_version", "DeviceVersion", colString},
	{"cef.device_event_class_id", "DeviceEventClassID", colString},
	{"cef.name", "Activity", colString},
	{"cef.severity", "LogSeverity", colString},

	{"act", "DeviceAction", colString},
	{"app", "ApplicationProtocol", colString},
	{"cat", "DeviceEventCategory", colString},
	{"cnt", "EventCount", colInt},
	{"destinationDnsDomain", "DestinationDnsDomain", colString},
	{"destinationServiceName", "DestinationServiceName", colString},
	{"destinationTranslatedAddress", "DestinationTranslatedAddress", colString},
	{"destinationTranslatedPort", "DestinationTranslatedPort", colInt},
	{"deviceDirection", "CommunicationDirection", colString},
	{"deviceDnsDomain", "DeviceDnsDomain", colString},
	{"deviceExternalId", "DeviceExternalID", colString},
	{"deviceFacility", "DeviceFacility", colString},
	{"deviceInboundInterface", "DeviceInboundInterface", colString},
	{"deviceNtDomain", "DeviceNtDomain", colString},
	{"deviceOutboundInterface", "DeviceOutboundInterface", colString},
	{"devicePayloadId", "DevicePayloadId", colString},
	{"deviceProcessName", "ProcessName", colString},
	{"deviceTranslatedAddress", "DeviceTranslatedAddress", colString},
	{"dhost", "DestinationHostName", colString},
	{"dmac", "DestinationMACAddress", colString},
	{"dntdom", "DestinationNTDomain", colString},
	{"dpid", "DestinationProcessId", colInt},
	{"dpriv", "DestinationUserPrivileges", colString},
	{"dproc", "DestinationProcessName", colString},
	{"dpt", "DestinationPort", colInt},
	{"dst", "DestinationIP", colString},
	{"dtz", "DeviceTimeZone", colString},
	{"duid", "DestinationUserID", colString},
	{"duser", "DestinationUserName", colString},
	{"dvc", "DeviceAddress", colString},
	{"dvchost", "DeviceName", colString},
	{"dvcmac", "DeviceMacAddress", colString},
	{"dvcpid", "ProcessID", colInt},
	{"end", "EndTime", colDatetime},
	{"externalId", "ExtID", colString},
	{"fileCreateTime", "FileCreateTime", colString},
	{"fileHash", "FileHash", colString},
	{"fileId", "FileID", colString},
	{"fileModificationTime", "FileModificationTime", colString},
	{"filePath", "FilePath", colString},
	{"filePermission", "FilePermission", colString},
	{"fileType", "FileType", colString},
	{"fname", "FileName", colString},
	{"fsize", "FileSize", colInt},
	{"in", "ReceivedBytes", colLong},
	{"msg", "Message", colString},
	{"oldFileCreateTime", "OldFileCreateTime", colString},
	{"oldFileHash", "OldFileHash", colString},
	{"oldFileId", "OldFileID", colString},
	{"oldFileModificationTime", "OldFileModificationTime", colString},
	{"oldFileName", "OldFileName", colString},
	{"oldFilePath", "OldFilePath", colString},
	{"oldFilePermission", "OldFilePermission", colString},
	{"oldFileSize", "OldFileSize", colInt},
	{"oldFileType", "OldFileType", colString},
	{"out", "SentBytes", colLong},
	{"outcome", "EventOutcome", colString},
	{"proto", "Protocol", colString},
	{"reason", "Reason", colString},
	{"request", "RequestURL", colString},
	{"requestClientApplication", "RequestClientApplication", colString},
	{"requestContext", "RequestContext", colString},
	{"requestCookies", "RequestCookies", colString},
	{"requestMethod", "RequestMethod", colString},
	{"rt", "ReceiptTime", colString},
	{"shost", "SourceHostName", colString},
	{"smac", "SourceMACAddress", colString},
	{"sntdom", "SourceNTDomain", colString},
	{"sourceDnsDomain", "SourceDnsDomain", colString},
	{"sourceServiceName", "SourceServiceName", colString},
	{"sourceTranslatedAddress", "SourceTranslatedAddress", colString},
	{"sourceTranslatedPort", "SourceTranslatedPort", colInt},
	{"spid", "SourceProcessId", colInt},
	{"spriv", "SourceUserPrivileges", colString},
	{"sproc", "SourceProcessName", colString},
	{"spt", "SourcePort", colInt},
	{"src", "SourceIP", colString},
	{"start", "StartTime", colDatetime},
	{"suid", "SourceUserID", colString},
	{"suser", "SourceUserName", colString},
	{"type", "EventType", colInt},

	{"c6a1", "DeviceCustomIPv6Address1", colString},
	{"c6a1Label", "DeviceCustomIPv6Address1Label", colString},
	{"c6a2", "DeviceCustomIPv6Address2", colString},
	{"c6a2Label", "DeviceCustomIPv6Address2Label", colString},
	{"c6a3", "DeviceCustomIPv6Address3", colString},
	{"c6a3Label", "DeviceCustomIPv6Address3Label", colString},
	{"c6a4", "DeviceCustomIPv6Address4", colString},
	{"c6a4Label", "DeviceCustomIPv6Address4Label", colString},
	{"cfp1", "DeviceCustomFloatingPoint1", colReal},
	{"cfp1Label", "DeviceCustomFloatingPoint1Label", colString},
	{"cfp2", "DeviceCustomFloatingPoint2", colReal},
	{"cfp2Label", "DeviceCustomFloatingPoint2Label", colString},
	{"cfp3", "DeviceCustomFloatingPoint3", colReal},
	{"cfp3Label", "DeviceCustomFloatingPoint3Label", colString},
	{"cfp4", "DeviceCustomFloatingPoint4", colReal},
	{"cfp4Label", "DeviceCustomFloatingPoint4Label", colString},
	{"cn1", "FieldDeviceCustomNumber1", colLong},
	{"cn1Label", "DeviceCustomNumber1Label", colString},
	{"cn2", "FieldDeviceCustomNumber2", colLong},
	{"cn2Label", "DeviceCustomNumber2Label", colString},
	{"cn3", "FieldDeviceCustomNumber3", colLong},
	{"cn3Label", "DeviceCustomNumber3Label", colString},
	{"cs1", "DeviceCustomString1", colString},
	{"cs1Label", "DeviceCustomString1Label", colString},
	{"cs2", "DeviceCustomString2", colString},
	{"cs2Label", "DeviceCustomString2Label", colString},
	{"cs3", "DeviceCustomString3", colString},
	{"cs3Label", "DeviceCustomString3Label", colString},
	{"cs4", "DeviceCustomString4", colString},
	{"cs4Label", "DeviceCustomString4Label", colString},
	{"cs5", "DeviceCustomString5", colString},
	{"cs5Label", "DeviceCustomString5Label", colString},
	{"cs6", "DeviceCustomString6", colString},
	{"cs6Label", "DeviceCustomString6Label", colString},
	{"deviceCustomDate1", "DeviceCustomDate1", colString},
	{"deviceCustomDate1Label", "DeviceCustomDate1Label", colString},
	{"deviceCustomDate2", "DeviceCustomDate2", colString},
	{"deviceCustomDate2Label", "DeviceCustomDate2Label", colString},
	{"flexDate1", "FlexDate1", colString},
	{"flexDate1Label", "FlexDate1Label", colString},
	{"flexNumber1", "FlexNumber1", colInt},
	{"flexNumber1Label", "FlexNumber1Label", colString},
	{"flexNumber2", "FlexNumber2", colInt},
	{"flexNumber2Label", "FlexNumber2Label", colString},
	{"flexString1", "FlexString1", colString},
	{"flexString1Label", "FlexString1Label", colString},
	{"flexString2", "FlexString2", colString},
	{"flexString2Label", "FlexString2Label", colString},
}

// maxCEFColumns bounds len(cefColumns), for the per-row arrays on the stack.
const maxCEFColumns = 160

// cefIndex maps an event field key to its index in cefColumns; cefKeys
// holds each column's pre-encoded `,"Column":`.
var (
	cefIndex = func() map[string]int {
		if len(cefColumns) > maxCEFColumns {
			panic("forward: too many CommonSecurityLog columns")
		}
		m := make(map[string]int, len(cefColumns))
		for i, c := range cefColumns {
			m[c.field] = i
		}
		return m
	}()
	cefKeys = func() [][]byte {
		k := make([][]byte, len(cefColumns))
		for i, c := range cefColumns {
			k[i] = columnKey(c.column)
		}
		return k
	}()
	cefProcessName = cefIndex["deviceProcessName"]
)

// SentinelCEFColumns returns the event field → CommonSecurityLog column
// mapping [SentinelCommonSecurityLog] uses, as a new map.
func SentinelCEFColumns() map[string]string {
	m := make(map[string]string, len(cefColumns))
	for _, c := range cefColumns {
		m[c.field] = c.column
	}
	return m
}

// columnKey returns `,"name":`.
func columnKey(name string) []byte {
	k := append([]byte{','}, '"')
	k = append(k, name...)
	return append(k, '"', ':')
}

// rowNanos is the time written to TimeGenerated.
func rowNanos(e *relaykit.Event) int64 {
	if e.Time != 0 {
		return e.Time
	}
	if e.ReceiveTime != 0 {
		return e.ReceiveTime
	}
	return time.Now().UnixNano() // an event with no time at all (rare)
}

func appendDatetime(dst []byte, key string, ns int64) []byte {
	dst = append(dst, key...)
	dst = append(dst, '"')
	dst = appendTimestamp(dst, ns, 7)
	return append(dst, '"')
}

// appendSyslogRow appends a Syslog table row, without the closing brace.
func (st *Sentinel) appendSyslogRow(dst []byte, e *relaykit.Event) []byte {
	dst = append(dst, '{')
	dst = appendDatetime(dst, `"TimeGenerated":`, rowNanos(e))
	if e.Time != 0 {
		dst = appendDatetime(dst, `,"EventTime":`, e.Time)
	}
	if len(e.Host) > 0 {
		dst = append(dst, `,"Computer":`...)
		dst = jsonenc.AppendString(dst, e.Host)
		dst = append(dst, `,"HostName":`...)
		dst = jsonenc.AppendString(dst, e.Host)
		if isIPAddress(e.Host) {
			dst = append(dst, `,"HostIP":`...)
			dst = jsonenc.AppendString(dst, e.Host)
		}
	}
	if e.Flags&relaykit.FlagPriority != 0 {
		dst = append(dst, `,"Facility":"`...)
		dst = append(dst, syslogname.Facility(e.Priority>>3)...)
		dst = append(dst, `","SeverityLevel":"`...)
		dst = append(dst, syslogname.Severity(e.Priority&7)...)
		dst = append(dst, '"')
	}
	dst = append(dst, `,"SyslogMessage":`...)
	dst = jsonenc.AppendString(dst, e.Raw)
	if len(e.Source) > 0 {
		dst = append(dst, `,"ProcessName":`...)
		dst = jsonenc.AppendString(dst, e.Source)
	}
	if v, ok := e.Field("procid"); ok {
		if n, ok := parseInt(v, 32); ok {
			dst = append(dst, `,"ProcessID":`...)
			dst = strconv.AppendInt(dst, n, 10)
		}
	}
	return dst
}

// appendCEFRow appends a CommonSecurityLog row, without the closing brace.
func (st *Sentinel) appendCEFRow(dst []byte, e *relaykit.Event) []byte {
	dst = append(dst, '{')
	dst = appendDatetime(dst, `"TimeGenerated":`, rowNanos(e))
	if len(e.Host) > 0 {
		dst = append(dst, `,"Computer":`...)
		dst = jsonenc.AppendString(dst, e.Host)
	}
	// written[c] is 1 + the index of the field written to column c, so
	// that a second field for the same column goes to
	// AdditionalExtensions; toExtra remembers, for the first fields, which
	// ones go there, so the second pass needs no map lookups. The arrays
	// stay on the stack.
	var written [maxCEFColumns]int32
	var toExtra [64]bool
	extra, isCEF := false, false
	layout := cefLayouts.Get().(*cefLayout)
	defer cefLayouts.Put(layout)
	for i := range e.Fields {
		f := &e.Fields[i]
		if len(f.Key) > 4 && string(f.Key[:4]) == "cef." {
			isCEF = true
		}
		c, ok := layout.lookup(i, f.Key)
		if ok && written[c] == 0 {
			start := len(dst)
			dst = append(dst, cefKeys[c]...)
			if dst, ok = appendTyped(dst, cefColumns[c].typ, f.Value); ok {
				written[c] = int32(i + 1)
				continue
			}
			dst = dst[:start]
		}
		if st.isExtension(f.Key) {
			extra = true
			if i < len(toExtra) {
				toExtra[i] = true
			}
		}
	}
	if written[cefProcessName] == 0 && len(e.Source) > 0 {
		dst = append(dst, cefKeys[cefProcessName]...)
		dst = jsonenc.AppendString(dst, e.Source)
	}
	if !isCEF {
		dst = append(dst, `,"Message":`...)
		dst = jsonenc.AppendString(dst, e.Raw)
	}
	if !extra {
		return dst
	}
	dst = append(dst, `,"AdditionalExtensions":"`...)
	n := 0
	for i := range e.Fields {
		f := &e.Fields[i]
		if i < len(toExtra) {
			if !toExtra[i] {
				continue
			}
		} else if c, ok := cefLookup(f.Key); ok && written[c] == int32(i+1) || !st.isExtension(f.Key) {
			continue
		}
		if n > 0 {
			dst = append(dst, ';')
		}
		n++
		dst = appendExtension(dst, f.Key)
		dst = append(dst, '=')
		dst = appendExtension(dst, f.Value)
	}
	return append(dst, '"')
}

// isExtension reports whether a field not written to its own column goes
// to AdditionalExtensions: all but the CEF version and the fields sent to
// custom columns.
func (st *Sentinel) isExtension(key []byte) bool {
	if string(key) == "cef.version" {
		return false
	}
	for i := range st.fields {
		if string(key) == st.fields[i].field {
			return false
		}
	}
	return true
}

// appendExtension appends b to a JSON string being written, escaping '\',
// ';' and '=' with a backslash first.
func appendExtension(dst, b []byte) []byte {
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\\' && b[i] != ';' && b[i] != '=' {
			i++
		}
		dst = appendJSONBody(dst, b[:i])
		if i == len(b) {
			break
		}
		dst = append(dst, '\\', '\\') // a backslash, in JSON
		if b[i] == '\\' {
			dst = append(dst, '\\', '\\')
		} else {
			dst = append(dst, b[i])
		}
		b = b[i+1:]
	}
	return dst
}

// appendJSONBody appends b JSON-escaped, without the surrounding quotes.
func appendJSONBody(dst, b []byte) []byte {
	if len(b) == 0 {
		return dst
	}
	start := len(dst)
	dst = jsonenc.AppendString(dst, b)
	copy(dst[start:], dst[start+1:len(dst)-1])
	return dst[:len(dst)-2]
}

// appendTyped appends v as a value of type t, and reports whether v is one.
func appendTyped(dst []byte, t columnType, v []byte) ([]byte, bool) {
	switch t {
	case colString:
		return jsonenc.AppendString(dst, v), true
	case colInt, colLong:
		bits := 64
		if t == colInt {
			bits = 32
		}
		n, ok := parseInt(v, bits)
		if !ok {
			return dst, false
		}
		return strconv.AppendInt(dst, n, 10), true
	case colReal:
		if !isJSONNumber(v) {
			return dst, false
		}
		return append(dst, v...), true
	case colDatetime:
		ms, ok := parseInt(v, 64)
		// Epoch milliseconds between 1970 and 9999.
		if !ok || ms < 0 || ms > 253402300799999 {
			return dst, false
		}
		dst = append(dst, '"')
		dst = appendTimestamp(dst, ms*1e6, 7)
		return append(dst, '"'), true
	}
	return dst, false
}

// parseInt parses an optionally negative decimal integer that fits in a
// signed integer of the given bits (32 or 64).
func parseInt(b []byte, bits int) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	limit := uint64(1)<<(bits-1) - 1
	if neg {
		limit++
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n > limit {
		return 0, false
	}
	if neg {
		return -int64(n), true // also right for n = 1<<63
	}
	return int64(n), true
}

// isJSONNumber reports whether b is a number in JSON's grammar (RFC 8259
// section 6) whose magnitude a double can hold (below 1e308): a valid
// Kusto real.
func isJSONNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	// exp10 is the decimal exponent of the first significant digit.
	exp10, significant := 0, false
	digits := func(fraction bool) int {
		s := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			switch {
			case significant && !fraction:
				exp10++
			case !significant && b[i] != '0':
				significant = true
				if fraction {
					exp10 = -(i - s + 1)
				}
			}
			i++
		}
		return i - s
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits(false) == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits(true) == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		neg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			neg = b[i] == '-'
			i++
		}
		s, e := i, 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if e < 1e6 {
				e = e*10 + int(b[i]-'0')
			}
			i++
		}
		if i == s {
			return false
		}
		if neg {
			e = -e
		}
		exp10 += e
	}
	return i == len(b) && (!significant || exp10 < 308)
}

// isIPAddress reports whether b looks like an IPv4 address in dotted
// decimal or an IPv6 address: enough to tell an address from a host name.
func isIPAddress(b []byte) bool {
	if len(b) < 2 || len(b) > 45 {
		return false
	}
	colons, dots, hex := 0, 0, false
	for _, c := range b {
		switch {
		case c == ':':
			colons++
		case c == '.':
			dots++
		case c >= '0' && c <= '9':
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			hex = true
		default:
			return false
		}
	}
	if colons >= 2 {
		return true
	}
	if colons > 0 || hex || dots != 3 {
		return false
	}
	part, n := 0, 0
	for i := 0; i <= len(b); i++ {
		if i == len(b) || b[i] == '.' {
			if n == 0 || n > 3 || part > 255 {
				return false
			}
			part, n = 0, 0
			continue
		}
		part = part*10 + int(b[i]-'0')
		n++
	}
	return true
}

// cefLayout remembers, field position by field position, the column the
// key last seen at that position maps to. The events of one device carry
// the same keys in the same order, so a CommonSecurityLog row finds each
// key's column by comparing it with the key the previous row had there,
// and hashes it into the column table only when the layout changes: the
// CEF decoder already went over every key, and the encoder does not look
// each one up again. One per P, through cefLayouts.
type cefLayout struct {
	klen [64]uint8    // length of key[i]; 0: nothing remembered
	key  [64][32]byte // the key at position i (keys up to 32 bytes)
	col  [64]int16    // its column in cefColumns, or -1
}

var cefLayouts = sync.Pool{New: func() any { return new(cefLayout) }}

// lookup returns the column of key, the key of field i, as cefLookup does.
func (l *cefLayout) lookup(i int, key []byte) (int, bool) {
	n := len(key)
	if i >= len(l.klen) || n == 0 || n > len(l.key[0]) {
		return cefLookup(key)
	}
	if int(l.klen[i]) == n && string(l.key[i][:n]) == string(key) {
		c := int(l.col[i])
		return c, c >= 0
	}
	c, ok := cefLookup(key)
	l.klen[i] = uint8(n)
	copy(l.key[i][:], key)
	l.col[i] = -1
	if ok {
		l.col[i] = int16(c)
	}
	return c, ok
}
