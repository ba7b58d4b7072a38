package forward

import "strconv"

// SentinelPlan is the table plan of the Log Analytics table a [Sentinel]
// sink writes to. The plan is a property of the table, set when the table
// is created or changed (Tables - Create Or Update, "plan"); the Logs
// Ingestion API, the rule and the stream are the same for every plan. The
// sink uses the plan only to write rows the plan accepts and to refuse a
// configuration it cannot fill
// (https://learn.microsoft.com/azure/azure-monitor/logs/data-platform-logs#table-plans):
//
//	plan        tables                      ingestion   queries                          retention
//	Analytics   every table                 standard    full KQL, included in the price  30 days interactive (90 with Sentinel), up to 12 years in all
//	Basic       DCR-based custom tables and reduced     one table (lookup into Analytics  up to 12 years in all
//	            the Azure tables listed as              tables), billed per GB scanned,
//	            supporting it (among them               simple log alerts only
//	            CommonSecurityLog)
//	Auxiliary   DCR-based custom tables     minimal     one table, unoptimized (slow),   up to 12 years in all
//	            only                                    billed per GB scanned, no alerts
//
// Rows for a Basic table are the rows of an Analytics one: choosing Basic
// changes what queries cost and may do, not what is sent. An Auxiliary
// table accepts less
// (https://learn.microsoft.com/azure/azure-monitor/logs/create-custom-table-auxiliary):
// TimeGenerated only in ISO 8601 with 6 fractional digits, and no dynamic
// columns; its data collection rule sends to that one table and cannot
// transform.
type SentinelPlan uint8

const (
	// SentinelAnalytics is the Analytics plan, the default.
	SentinelAnalytics SentinelPlan = iota
	// SentinelBasic is the Basic plan: the same rows as Analytics.
	SentinelBasic
	// SentinelAuxiliary is the Auxiliary plan, for custom tables
	// ([SentinelCustom]) only: TimeGenerated is written with 6 fractional
	// digits (microseconds) instead of 7, and a Fields column (JSON
	// object, a dynamic column) is a configuration error. Every other
	// column is a string or a number.
	SentinelAuxiliary
)

// String returns "Analytics", "Basic" or "Auxiliary", the names the Tables
// API uses.
func (p SentinelPlan) String() string {
	switch p {
	case SentinelAnalytics:
		return "Analytics"
	case SentinelBasic:
		return "Basic"
	case SentinelAuxiliary:
		return "Auxiliary"
	}
	return "SentinelPlan(" + strconv.Itoa(int(p)) + ")"
}

// timeDigits is the number of fractional digits of TimeGenerated: 7 (100
// ns, a Kusto datetime's precision) except on an Auxiliary table, which
// takes exactly 6.
func (p SentinelPlan) timeDigits() int {
	if p == SentinelAuxiliary {
		return 6
	}
	return 7
}
