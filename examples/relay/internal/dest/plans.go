package dest

import (
	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/forward"
)

// The table plan of a sentinel destination (plan: analytics, basic,
// auxiliary; README "Table plans"). The plan is a property of the
// Log Analytics table, set when the table is created or changed; the
// destination uses it to write rows the table accepts and to refuse a
// configuration that cannot fill it.

var SentinelPlans = map[string]forward.SentinelPlan{
	"":          forward.SentinelAnalytics,
	"analytics": forward.SentinelAnalytics,
	"basic":     forward.SentinelBasic,
	"auxiliary": forward.SentinelAuxiliary,
}

// validatePlan checks plan against the table and columns: the Auxiliary
// plan is for custom tables only, which then have no dynamic column (the
// Fields column, all fields as one object).
func (s *SentinelDestination) validatePlan(f string, ck *config.Checker) {
	plan, ok := SentinelPlans[s.Plan]
	switch {
	case !ok:
		ck.Bad(f+".plan", "unknown plan %q (want analytics, basic or auxiliary)", s.Plan)
	case plan != forward.SentinelAuxiliary:
	case SentinelTables[s.Table] != forward.SentinelCustom:
		ck.Bad(f+".plan", "auxiliary is for custom tables only, not table: %s (Azure offers the Auxiliary plan on DCR-based custom tables; the built-in tables can have basic)", s.Table)
	case s.Columns.Fields != "" && s.Columns.Fields != "-":
		ck.Bad(f+".columns.fields", "%q would be a dynamic column, which a table with the auxiliary plan cannot have: "+
			"leave fields out and send the fields you need to columns of their own with custom_columns", s.Columns.Fields)
	}
}

// fieldsColumn is the default Fields column of a custom table: "Fields"
// (dynamic), or none on an Auxiliary table.
func (s *SentinelDestination) FieldsColumn() string {
	if SentinelPlans[s.Plan] == forward.SentinelAuxiliary {
		return "-"
	}
	return "Fields"
}
