//go:build race

package syslog_test

func skipIfRace(t interface {
	Helper()
	Skip(...any)
}) {
	t.Helper()
	t.Skip("allocation counts are not meaningful under -race")
}
