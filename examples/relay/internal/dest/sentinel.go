package dest

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/relaykit/relaykit/examples/relay/internal/config"

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
	ClientSecret   config.Secret `yaml:"client_secret"`
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

var SentinelTables = map[string]forward.SentinelTable{
	"":                    forward.SentinelCustom,
	"custom":              forward.SentinelCustom,
	"syslog":              forward.SentinelSyslog,
	"common_security_log": forward.SentinelCommonSecurityLog,
}

// columnName is a Log Analytics column name.
var columnName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,44}$`)

func (s *SentinelDestination) Kind() string { return "sentinel" }

func (s *SentinelDestination) Summary() string {
	return fmt.Sprintf("sentinel %s dcr=%s stream=%s tenant=%s client=%s secret=%s",
		s.Endpoint, s.DCRImmutableID, s.Stream, s.TenantID, s.ClientID, s.ClientSecret)
}

func (s *SentinelDestination) Validate(f string, ck *config.Checker, spool *config.SpoolConfig) {
	s.NetworkSettings.ValidateNetwork(f, ck, spool)
	s.HTTPSettings.Validate(f, ck)
	s.ValidateTable(f, ck)
	s.validatePlan(f, ck)
	for _, r := range []struct{ field, v string }{
		{"endpoint", s.Endpoint}, {"dcr_immutable_id", s.DCRImmutableID}, {"stream", s.Stream},
		{"tenant_id", s.TenantID}, {"client_id", s.ClientID}, {"client_secret", string(s.ClientSecret)},
	} {
		if r.v == "" {
			ck.Bad(f+"."+r.field, "required")
		}
	}
	if s.DCRImmutableID != "" && !strings.HasPrefix(s.DCRImmutableID, "dcr-") {
		ck.Bad(f+".dcr_immutable_id", "%q is not an immutable ID (dcr-...)", s.DCRImmutableID)
	}
}

// validateTable checks table, custom_columns and the stream that goes with
// the table, and fills the stream of a built-in table.
func (s *SentinelDestination) ValidateTable(f string, ck *config.Checker) {
	table, ok := SentinelTables[s.Table]
	if !ok {
		ck.Bad(f+".table", "unknown table %q (want custom, syslog or common_security_log)", s.Table)
		return
	}
	for field, col := range s.CustomColumns {
		switch {
		case field == "":
			ck.Bad(f+".custom_columns", "an entry has no field name")
		case !columnName.MatchString(col):
			ck.Bad(f+".custom_columns."+field, "%q is not a column name (a letter, then up to 44 letters, digits and underscores)", col)
		case table != forward.SentinelCustom && !strings.HasSuffix(col, "_CF"):
			ck.Bad(f+".custom_columns."+field, "column %q added to the built-in %v table must end in _CF", col, table)
		}
	}
	if table == forward.SentinelCustom {
		if t, builtin := strings.CutPrefix(s.Stream, "Microsoft-"); builtin {
			want := map[string]string{"Syslog": "syslog", "CommonSecurityLog": "common_security_log"}[t]
			if want == "" {
				ck.Bad(f+".stream", "%q is not a stream this relay can fill (Microsoft-Syslog or Microsoft-CommonSecurityLog)", s.Stream)
			} else {
				ck.Bad(f+".stream", "%q is the built-in %s table: set table: %s", s.Stream, t, want)
			}
		}
		return
	}
	if s.Columns != (ColumnsConfig{}) {
		ck.Bad(f+".columns", "not used with table: %s (the %v table's columns are fixed; use custom_columns for added _CF columns)", s.Table, table)
	}
	if s.Stream == "" {
		s.Stream = table.Stream()
	} else if t, builtin := strings.CutPrefix(s.Stream, "Microsoft-"); builtin && t != table.String() {
		ck.Bad(f+".stream", "%q does not match table: %s (its stream is %s)", s.Stream, s.Table, table.Stream())
	}
}
