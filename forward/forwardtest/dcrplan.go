package forwardtest

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Table plans a DCRServer can be told its table has
// (DCRServerConfig.Plan), as the Tables API names them.
const (
	PlanAnalytics = "Analytics"
	PlanBasic     = "Basic"
	PlanAuxiliary = "Auxiliary"
)

// auxTime is the TimeGenerated an Auxiliary table accepts: ISO 8601 with
// exactly 6 fractional digits, in UTC or with an offset
// (https://learn.microsoft.com/azure/azure-monitor/logs/create-custom-table-auxiliary:
// "The TimeGenerated column only supports the ISO 8601 format with 6
// decimal places for precision").
var auxTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$`)

// checkPlan validates the Plan of a DCRServerConfig against its stream and
// columns: the Auxiliary plan is for custom tables only, without dynamic
// columns (the Tables API refuses to create such a table).
func checkPlan(plan, stream string, cols map[string]string) error {
	switch plan {
	case "", PlanAnalytics, PlanBasic:
		return nil
	case PlanAuxiliary:
	default:
		return fmt.Errorf("plan %q: want %s, %s or %s", plan, PlanAnalytics, PlanBasic, PlanAuxiliary)
	}
	if !strings.HasPrefix(stream, "Custom-") {
		return fmt.Errorf("plan %s: only custom tables (a Custom- stream) can have the Auxiliary plan, not %q", plan, stream)
	}
	for name, typ := range cols {
		if typ == TypeDynamic {
			return fmt.Errorf("column %q: a table with the Auxiliary plan has no dynamic columns", name)
		}
	}
	return nil
}

// checkAuxRow reports the first way row breaks the rules of an Auxiliary
// table, as the service words it, or "": TimeGenerated present and in ISO
// 8601 with 6 fractional digits, and no dynamic data (a JSON object or
// array) in any column, declared or not.
func checkAuxRow(row map[string]any) string {
	tg, ok := row["TimeGenerated"]
	if !ok {
		return "column 'TimeGenerated' is required"
	}
	if s, isString := tg.(string); !isString || !auxTime.MatchString(s) {
		return fmt.Sprintf("column 'TimeGenerated' has an invalid value: %s: a table with the Auxiliary plan "+
			"supports only the ISO 8601 format with 6 decimal places (e.g. 2026-05-06T07:08:09.123456Z)", shortJSON(tg))
	}
	for name, v := range row {
		switch v.(type) {
		case map[string]any, []any:
			return fmt.Sprintf("column '%s' holds dynamic data, which a table with the Auxiliary plan does not support: %s", name, shortJSON(v))
		}
	}
	return ""
}

// checkAuxSpan reports, as the service words it, a call to an Auxiliary
// table whose rows' TimeGenerated span DCRAuxiliaryMaxSpan or more, or "".
// Every row's TimeGenerated has passed checkAuxRow.
func checkAuxSpan(rows []map[string]any) string {
	var first, last time.Time
	for _, row := range rows {
		s, _ := row["TimeGenerated"].(string)
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			continue
		}
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if last.IsZero() || t.After(last) {
			last = t
		}
	}
	if span := last.Sub(first); span >= DCRAuxiliaryMaxSpan {
		return fmt.Sprintf("The TimeGenerated values of the records in the call span %v (from %s to %s): "+
			"a call to a table with the Auxiliary plan must span less than 30 minutes.",
			span, first.UTC().Format(time.RFC3339Nano), last.UTC().Format(time.RFC3339Nano))
	}
	return ""
}
