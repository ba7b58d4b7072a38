package main

import (
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/relaykit/relaykit/forward"
)

// Sentinel table presets (destinations.<name>.table) and HEC field
// selection (indexed_fields, omit_fields).

var sentinelTables = map[string]forward.SentinelTable{
	"":                    forward.SentinelCustom,
	"custom":              forward.SentinelCustom,
	"syslog":              forward.SentinelSyslog,
	"common_security_log": forward.SentinelCommonSecurityLog,
}

// columnName is a Log Analytics column name.
var columnName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,44}$`)

// validateSentinelTable checks table, custom_columns and the stream that
// goes with the table, and fills the stream of a built-in table.
func validateSentinelTable(f string, d *DestinationConfig, bad func(field, format string, args ...any)) {
	table, ok := sentinelTables[d.Table]
	if !ok {
		bad(f+".table", "unknown table %q (want custom, syslog or common_security_log)", d.Table)
		return
	}
	for field, col := range d.CustomColumns {
		switch {
		case field == "":
			bad(f+".custom_columns", "an entry has no field name")
		case !columnName.MatchString(col):
			bad(f+".custom_columns."+field, "%q is not a column name (a letter, then up to 44 letters, digits and underscores)", col)
		case table != forward.SentinelCustom && !strings.HasSuffix(col, "_CF"):
			bad(f+".custom_columns."+field, "column %q added to the built-in %v table must end in _CF", col, table)
		}
	}
	if table == forward.SentinelCustom {
		if t, builtin := strings.CutPrefix(d.Stream, "Microsoft-"); builtin {
			want := map[string]string{"Syslog": "syslog", "CommonSecurityLog": "common_security_log"}[t]
			if want == "" {
				bad(f+".stream", "%q is not a stream this relay can fill (Microsoft-Syslog or Microsoft-CommonSecurityLog)", d.Stream)
			} else {
				bad(f+".stream", "%q is the built-in %s table: set table: %s", d.Stream, t, want)
			}
		}
		return
	}
	if d.Columns != (ColumnsConfig{}) {
		bad(f+".columns", "not used with table: %s (the %v table's columns are fixed; use custom_columns for added _CF columns)", d.Table, table)
	}
	if d.Stream == "" {
		d.Stream = table.Stream()
	} else if t, builtin := strings.CutPrefix(d.Stream, "Microsoft-"); builtin && t != table.String() {
		bad(f+".stream", "%q does not match table: %s (its stream is %s)", d.Stream, d.Table, table.Stream())
	}
}

// validateHECFields checks indexed_fields and omit_fields.
func validateHECFields(f string, d *DestinationConfig, bad func(field, format string, args ...any)) {
	if d.OmitFields && len(d.IndexedFields) > 0 {
		bad(f+".indexed_fields", "set together with omit_fields: true, which sends no fields")
	}
	for i, k := range d.IndexedFields {
		if k == "" || k == "*" {
			bad(f+".indexed_fields", "entry %d is %q (leave indexed_fields out to send every field)", i, k)
		}
	}
}

// sentinelTableSettings returns the forward settings of a sentinel
// destination's table, collector host name and custom columns.
func sentinelTableSettings(dc DestinationConfig) (forward.SentinelTable, string, []forward.SentinelField) {
	table := sentinelTables[dc.Table]
	var collector string
	if table != forward.SentinelCustom {
		switch dc.CollectorHostName {
		case "-":
		case "":
			collector, _ = os.Hostname()
		default:
			collector = dc.CollectorHostName
		}
	}
	fields := make([]forward.SentinelField, 0, len(dc.CustomColumns))
	for field, col := range dc.CustomColumns {
		fields = append(fields, forward.SentinelField{Field: field, Column: col})
	}
	sort.Slice(fields, func(i, j int) bool { return fields[i].Column < fields[j].Column })
	return table, collector, fields
}
