package main

import (
	"cmp"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/relaykit/relaykit/forward"
)

// SentinelDestination (type: sentinel) sends to Microsoft Sentinel (Azure
// Monitor Logs ingestion API, a DCE and DCR).
type SentinelDestination struct {
	Endpoint       string        `yaml:"endpoint"` // DCE logs ingestion URL
	DCRImmutableID string        `yaml:"dcr_immutable_id"`
	Stream         string        `yaml:"stream"`
	TenantID       string        `yaml:"tenant_id"`
	ClientID       string        `yaml:"client_id"`
	ClientSecret   Secret        `yaml:"client_secret"`
	AuthorityHost  string        `yaml:"authority_host"` // Entra ID base URL; empty: login.microsoftonline.com
	Scope          string        `yaml:"scope"`          // empty: https://monitor.azure.com//.default
	Columns        ColumnsConfig `yaml:"columns"`
	// Table is the Sentinel table layout: custom (the default, by
	// columns), syslog (the built-in Syslog table, stream
	// Microsoft-Syslog) or common_security_log (CommonSecurityLog, stream
	// Microsoft-CommonSecurityLog); see forward.SentinelTable.
	Table string `yaml:"table"`
	// Plan is the table plan of the destination table: analytics (the
	// default), basic (the same rows; cheaper ingestion, queries billed
	// per GB scanned) or auxiliary (custom tables only: TimeGenerated
	// with 6 fractional digits, no dynamic Fields column); plans.go.
	Plan string `yaml:"plan"`
	// CollectorHostName fills the CollectorHostName column of the built-in
	// tables; empty means this host's name, "-" leaves it out.
	CollectorHostName string `yaml:"collector_host_name"`
	// CustomColumns sends event fields to columns of their own: field →
	// column. Columns added to a built-in table end in _CF.
	CustomColumns   map[string]string `yaml:"custom_columns"`
	NetworkSettings `yaml:",inline"`
	HTTPSettings    `yaml:",inline"`
}

// ColumnsConfig names the Sentinel table columns the event's parts go to;
// empty means the relay's default, "-" leaves the part out.
type ColumnsConfig struct {
	Time       string `yaml:"time"`       // default TimeGenerated
	Message    string `yaml:"message"`    // default RawData
	Host       string `yaml:"host"`       // default Computer
	Source     string `yaml:"source"`     // default ProcessName
	SourceType string `yaml:"sourcetype"` // default left out
	Facility   string `yaml:"facility"`   // default Facility
	Severity   string `yaml:"severity"`   // default SeverityLevel
	Fields     string `yaml:"fields"`     // default Fields (all fields as a dynamic column); none with plan: auxiliary
}

var sentinelTables = map[string]forward.SentinelTable{
	"":                    forward.SentinelCustom,
	"custom":              forward.SentinelCustom,
	"syslog":              forward.SentinelSyslog,
	"common_security_log": forward.SentinelCommonSecurityLog,
}

// columnName is a Log Analytics column name.
var columnName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,44}$`)

func (s *SentinelDestination) kind() string { return "sentinel" }

func (s *SentinelDestination) summary() string {
	return fmt.Sprintf("sentinel %s dcr=%s stream=%s tenant=%s client=%s secret=%s",
		s.Endpoint, s.DCRImmutableID, s.Stream, s.TenantID, s.ClientID, s.ClientSecret)
}

func (s *SentinelDestination) validate(f string, ck *checker, spool *SpoolConfig) {
	s.NetworkSettings.validate(f, ck, spool)
	s.HTTPSettings.validate(f, ck)
	s.validateTable(f, ck)
	s.validatePlan(f, ck)
	for _, r := range []struct{ field, v string }{
		{"endpoint", s.Endpoint}, {"dcr_immutable_id", s.DCRImmutableID}, {"stream", s.Stream},
		{"tenant_id", s.TenantID}, {"client_id", s.ClientID}, {"client_secret", string(s.ClientSecret)},
	} {
		if r.v == "" {
			ck.bad(f+"."+r.field, "required")
		}
	}
	if s.DCRImmutableID != "" && !strings.HasPrefix(s.DCRImmutableID, "dcr-") {
		ck.bad(f+".dcr_immutable_id", "%q is not an immutable ID (dcr-...)", s.DCRImmutableID)
	}
}

// validateTable checks table, custom_columns and the stream that goes with
// the table, and fills the stream of a built-in table.
func (s *SentinelDestination) validateTable(f string, ck *checker) {
	table, ok := sentinelTables[s.Table]
	if !ok {
		ck.bad(f+".table", "unknown table %q (want custom, syslog or common_security_log)", s.Table)
		return
	}
	for field, col := range s.CustomColumns {
		switch {
		case field == "":
			ck.bad(f+".custom_columns", "an entry has no field name")
		case !columnName.MatchString(col):
			ck.bad(f+".custom_columns."+field, "%q is not a column name (a letter, then up to 44 letters, digits and underscores)", col)
		case table != forward.SentinelCustom && !strings.HasSuffix(col, "_CF"):
			ck.bad(f+".custom_columns."+field, "column %q added to the built-in %v table must end in _CF", col, table)
		}
	}
	if table == forward.SentinelCustom {
		if t, builtin := strings.CutPrefix(s.Stream, "Microsoft-"); builtin {
			want := map[string]string{"Syslog": "syslog", "CommonSecurityLog": "common_security_log"}[t]
			if want == "" {
				ck.bad(f+".stream", "%q is not a stream this relay can fill (Microsoft-Syslog or Microsoft-CommonSecurityLog)", s.Stream)
			} else {
				ck.bad(f+".stream", "%q is the built-in %s table: set table: %s", s.Stream, t, want)
			}
		}
		return
	}
	if s.Columns != (ColumnsConfig{}) {
		ck.bad(f+".columns", "not used with table: %s (the %v table's columns are fixed; use custom_columns for added _CF columns)", s.Table, table)
	}
	if s.Stream == "" {
		s.Stream = table.Stream()
	} else if t, builtin := strings.CutPrefix(s.Stream, "Microsoft-"); builtin && t != table.String() {
		ck.bad(f+".stream", "%q does not match table: %s (its stream is %s)", s.Stream, s.Table, table.Stream())
	}
}

func (s *SentinelDestination) newSink(r *Relay, name string) (destSink, error) {
	ts, err := forward.NewEntraTokenSource(forward.EntraConfig{
		TenantID: s.TenantID, ClientID: s.ClientID, ClientSecret: string(s.ClientSecret),
		AuthorityHost: s.AuthorityHost, Scope: s.Scope, Logger: r.log.With("destination", name),
	})
	if err != nil {
		return nil, err
	}
	table := sentinelTables[s.Table]
	var columns forward.SentinelColumns // a built-in table's columns are fixed
	collector := ""
	if c := s.Columns; table == forward.SentinelCustom {
		columns = forward.SentinelColumns{
			Time: cmp.Or(c.Time, "TimeGenerated"), Message: cmp.Or(c.Message, "RawData"), Host: cmp.Or(c.Host, "Computer"),
			Source: cmp.Or(c.Source, "ProcessName"), SourceType: cmp.Or(c.SourceType, "-"),
			Facility: cmp.Or(c.Facility, "Facility"), Severity: cmp.Or(c.Severity, "SeverityLevel"), Fields: cmp.Or(c.Fields, s.fieldsColumn()),
		}
	} else if collector = s.CollectorHostName; collector == "" {
		collector, _ = os.Hostname()
	} else if collector == "-" {
		collector = ""
	}
	fields := make([]forward.SentinelField, 0, len(s.CustomColumns))
	for field, col := range s.CustomColumns {
		fields = append(fields, forward.SentinelField{Field: field, Column: col})
	}
	sort.Slice(fields, func(i, j int) bool { return fields[i].Column < fields[j].Column })
	hc, err := r.httpConfig(name, &s.NetworkSettings, &s.HTTPSettings)
	if err != nil {
		return nil, err
	}
	return forward.NewSentinel(forward.SentinelConfig{
		Endpoint: s.Endpoint, DCRImmutableID: s.DCRImmutableID, Stream: s.Stream,
		TokenSource: ts, Table: table, Plan: sentinelPlans[s.Plan], CollectorHostName: collector,
		Columns: columns, Fields: fields,
		HTTP: hc,
	})
}
