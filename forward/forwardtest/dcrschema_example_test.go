package forwardtest_test

import (
	"fmt"
	"slices"

	"github.com/relaykit/relaykit/forward/forwardtest"
)

// The writable columns of the Syslog table, which a DCRServer for the
// Microsoft-Syslog stream checks rows against.
func ExampleTableColumns() {
	cols := forwardtest.TableColumns("Syslog")
	names := make([]string, 0, len(cols))
	for name := range cols {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Println(name, cols[name])
	}
	// Output:
	// CollectorHostName string
	// Computer string
	// EventTime datetime
	// Facility string
	// HostIP string
	// HostName string
	// ProcessID int
	// ProcessName string
	// SeverityLevel string
	// SourceSystem string
	// SyslogMessage string
	// TimeGenerated datetime
}
