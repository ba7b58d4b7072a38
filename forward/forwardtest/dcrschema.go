package forwardtest

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strings"
	"time"
)

// Column types of a stream declaration (Kusto scalar types).
const (
	TypeString   = "string"
	TypeInt      = "int"
	TypeLong     = "long"
	TypeReal     = "real"
	TypeBoolean  = "boolean"
	TypeDatetime = "datetime"
	TypeDynamic  = "dynamic"
)

// syslogColumns is the writable schema of the Syslog table:
// https://learn.microsoft.com/azure/azure-monitor/reference/tables/syslog
// (Type, _ResourceId, _SubscriptionId, _BilledSize and _IsBillable are set
// by the service).
var syslogColumns = map[string]string{
	"CollectorHostName": TypeString,
	"Computer":          TypeString,
	"EventTime":         TypeDatetime,
	"Facility":          TypeString,
	"HostIP":            TypeString,
	"HostName":          TypeString,
	"ProcessID":         TypeInt,
	"ProcessName":       TypeString,
	"SeverityLevel":     TypeString,
	"SourceSystem":      TypeString,
	"SyslogMessage":     TypeString,
	"TimeGenerated":     TypeDatetime,
}

// commonSecurityLogColumns is the writable schema of the CommonSecurityLog
// table after its February 2023 change:
// https://learn.microsoft.com/azure/azure-monitor/reference/tables/commonsecuritylog
var commonSecurityLogColumns = func() map[string]string {
	m := map[string]string{
		"Activity": TypeString, "AdditionalExtensions": TypeString, "ApplicationProtocol": TypeString,
		"CollectorHostName": TypeString, "CommunicationDirection": TypeString, "Computer": TypeString,
		"DestinationDnsDomain": TypeString, "DestinationHostName": TypeString, "DestinationIP": TypeString,
		"DestinationMACAddress": TypeString, "DestinationNTDomain": TypeString, "DestinationPort": TypeInt,
		"DestinationProcessId": TypeInt, "DestinationProcessName": TypeString, "DestinationServiceName": TypeString,
		"DestinationTranslatedAddress": TypeString, "DestinationTranslatedPort": TypeInt,
		"DestinationUserID": TypeString, "DestinationUserName": TypeString, "DestinationUserPrivileges": TypeString,
		"DeviceAction": TypeString, "DeviceAddress": TypeString,
		"DeviceCustomDate1": TypeString, "DeviceCustomDate1Label": TypeString,
		"DeviceCustomDate2": TypeString, "DeviceCustomDate2Label": TypeString,
		"DeviceDnsDomain": TypeString, "DeviceEventCategory": TypeString, "DeviceEventClassID": TypeString,
		"DeviceExternalID": TypeString, "DeviceFacility": TypeString, "DeviceInboundInterface": TypeString,
		"DeviceMacAddress": TypeString, "DeviceName": TypeString, "DeviceNtDomain": TypeString,
		"DeviceOutboundInterface": TypeString, "DevicePayloadId": TypeString, "DeviceProduct": TypeString,
		"DeviceTimeZone": TypeString, "DeviceTranslatedAddress": TypeString, "DeviceVendor": TypeString,
		"DeviceVersion": TypeString, "EndTime": TypeDatetime, "EventCount": TypeInt, "EventOutcome": TypeString,
		"EventType": TypeInt, "ExternalID": TypeInt, "ExtID": TypeString,
		"FileCreateTime": TypeString, "FileHash": TypeString, "FileID": TypeString,
		"FileModificationTime": TypeString, "FileName": TypeString, "FilePath": TypeString,
		"FilePermission": TypeString, "FileSize": TypeInt, "FileType": TypeString,
		"FlexDate1": TypeString, "FlexDate1Label": TypeString,
		"FlexNumber1": TypeInt, "FlexNumber1Label": TypeString, "FlexNumber2": TypeInt, "FlexNumber2Label": TypeString,
		"FlexString1": TypeString, "FlexString1Label": TypeString, "FlexString2": TypeString, "FlexString2Label": TypeString,
		"IndicatorThreatType": TypeString, "LogSeverity": TypeString, "MaliciousIP": TypeString,
		"MaliciousIPCountry": TypeString, "MaliciousIPLatitude": TypeReal, "MaliciousIPLongitude": TypeReal,
		"Message": TypeString, "OldFileCreateTime": TypeString, "OldFileHash": TypeString, "OldFileID": TypeString,
		"OldFileModificationTime": TypeString, "OldFileName": TypeString, "OldFilePath": TypeString,
		"OldFilePermission": TypeString, "OldFileSize": TypeInt, "OldFileType": TypeString,
		"OriginalLogSeverity": TypeString, "ProcessID": TypeInt, "ProcessName": TypeString, "Protocol": TypeString,
		"Reason": TypeString, "ReceiptTime": TypeString, "ReceivedBytes": TypeLong, "RemoteIP": TypeString,
		"RemotePort": TypeString, "RequestClientApplication": TypeString, "RequestContext": TypeString,
		"RequestCookies": TypeString, "RequestMethod": TypeString, "RequestURL": TypeString, "SentBytes": TypeLong,
		"SimplifiedDeviceAction": TypeString, "SourceDnsDomain": TypeString, "SourceHostName": TypeString,
		"SourceIP": TypeString, "SourceMACAddress": TypeString, "SourceNTDomain": TypeString, "SourcePort": TypeInt,
		"SourceProcessId": TypeInt, "SourceProcessName": TypeString, "SourceServiceName": TypeString,
		"SourceSystem": TypeString, "SourceTranslatedAddress": TypeString, "SourceTranslatedPort": TypeInt,
		"SourceUserID": TypeString, "SourceUserName": TypeString, "SourceUserPrivileges": TypeString,
		"StartTime": TypeDatetime, "ThreatConfidence": TypeString, "ThreatDescription": TypeString,
		"ThreatSeverity": TypeInt, "TimeGenerated": TypeDatetime,
	}
	for i := 1; i <= 4; i++ {
		m[fmt.Sprintf("DeviceCustomIPv6Address%d", i)] = TypeString
		m[fmt.Sprintf("DeviceCustomIPv6Address%dLabel", i)] = TypeString
		m[fmt.Sprintf("DeviceCustomFloatingPoint%d", i)] = TypeReal
		m[fmt.Sprintf("DeviceCustomFloatingPoint%dLabel", i)] = TypeString
	}
	for i := 1; i <= 3; i++ {
		m[fmt.Sprintf("DeviceCustomNumber%d", i)] = TypeInt
		m[fmt.Sprintf("DeviceCustomNumber%dLabel", i)] = TypeString
		m[fmt.Sprintf("FieldDeviceCustomNumber%d", i)] = TypeLong
	}
	for i := 1; i <= 6; i++ {
		m[fmt.Sprintf("DeviceCustomString%d", i)] = TypeString
		m[fmt.Sprintf("DeviceCustomString%dLabel", i)] = TypeString
	}
	return m
}()

// TableColumns returns the writable columns of a built-in table the Logs
// Ingestion API accepts and the DCR server checks rows against, "Syslog"
// or "CommonSecurityLog", as column name → type; nil for another table.
// The map is a new copy.
func TableColumns(table string) map[string]string {
	switch table {
	case "Syslog":
		return maps.Clone(syslogColumns)
	case "CommonSecurityLog":
		return maps.Clone(commonSecurityLogColumns)
	}
	return nil
}

// streamSchema returns the columns rows of stream must match, or nil when
// rows are not checked: the built-in table of a "Microsoft-<Table>" stream
// plus extra (its custom _CF columns), or extra alone as the declaration of
// a custom stream.
func streamSchema(stream string, extra map[string]string) map[string]string {
	table, builtin := strings.CutPrefix(stream, "Microsoft-")
	cols := TableColumns(table)
	if !builtin || cols == nil {
		if len(extra) == 0 {
			return nil
		}
		return maps.Clone(extra)
	}
	maps.Copy(cols, extra)
	return cols
}

// rowSchema returns the columns rows must match (nil: not checked), or the
// error in DCRServerConfig.Columns, which fails every ingestion request
// with 500 and the error as message.
func (s *DCRServer) rowSchema() (map[string]string, error) {
	s.schemaOnce.Do(func() {
		if err := checkColumns(s.cfg.Stream, s.cfg.Columns); err != nil {
			s.schemaErr = fmt.Errorf("forwardtest: DCRServerConfig.Columns: %w", err)
			return
		}
		if err := checkPlan(s.cfg.Plan, s.cfg.Stream, s.cfg.Columns); err != nil {
			s.schemaErr = fmt.Errorf("forwardtest: DCRServerConfig.Plan: %w", err)
			return
		}
		s.schema = streamSchema(s.cfg.Stream, s.cfg.Columns)
	})
	return s.schema, s.schemaErr
}

// checkColumns validates the Columns of a DCRServerConfig for stream.
func checkColumns(stream string, cols map[string]string) error {
	_, builtin := strings.CutPrefix(stream, "Microsoft-")
	for name, typ := range cols {
		switch typ {
		case TypeString, TypeInt, TypeLong, TypeReal, TypeBoolean, TypeDatetime, TypeDynamic:
		default:
			return fmt.Errorf("column %q: unknown type %q", name, typ)
		}
		if builtin && !strings.HasSuffix(name, "_CF") {
			return fmt.Errorf("column %q: a column added to a built-in table must end in _CF", name)
		}
	}
	return nil
}

// checkRow reports the first way row does not match schema, as the
// service words it, or "".
func checkRow(schema map[string]string, row map[string]any) string {
	if _, ok := row["TimeGenerated"]; !ok {
		if _, declared := schema["TimeGenerated"]; declared {
			return "column 'TimeGenerated' is required"
		}
	}
	for name, v := range row {
		typ, ok := schema[name]
		if !ok {
			return fmt.Sprintf("column '%s' is not in the schema of the stream", name)
		}
		if v == nil || typ == TypeDynamic {
			continue
		}
		if !valueHasType(v, typ) {
			return fmt.Sprintf("column '%s' of type '%s' has an invalid value: %s", name, typ, shortJSON(v))
		}
	}
	return ""
}

func valueHasType(v any, typ string) bool {
	switch typ {
	case TypeString:
		_, ok := v.(string)
		return ok
	case TypeBoolean:
		_, ok := v.(bool)
		return ok
	case TypeDatetime:
		s, ok := v.(string)
		if !ok {
			return false
		}
		_, err := time.Parse(time.RFC3339Nano, s)
		return err == nil
	case TypeInt, TypeLong:
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		i, err := n.Int64()
		if err != nil {
			return false
		}
		return typ == TypeLong || i >= math.MinInt32 && i <= math.MaxInt32
	case TypeReal:
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Float64()
		return err == nil
	}
	return false
}

func shortJSON(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}
