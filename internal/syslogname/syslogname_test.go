package syslogname

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNames(t *testing.T) {
	for _, c := range []struct {
		code     uint8
		facility string
		severity string
	}{
		{0, "kern", "emerg"}, {1, "user", "alert"}, {2, "mail", "crit"}, {3, "daemon", "err"},
		{4, "auth", "warning"}, {5, "syslog", "notice"}, {6, "lpr", "info"}, {7, "news", "debug"},
		{9, "cron", ""}, {10, "authpriv", ""}, {13, "audit", ""}, {16, "local0", ""}, {23, "local7", ""}, {24, "", ""},
	} {
		assert.Equal(t, c.facility, Facility(c.code), "facility %d", c.code)
		assert.Equal(t, c.severity, Severity(c.code), "severity %d", c.code)
	}
}

func TestCodes(t *testing.T) {
	for code := range uint8(24) {
		got, ok := FacilityCode([]byte(Facility(code)))
		assert.True(t, ok, "facility %d", code)
		assert.Equal(t, code, got)
	}
	for code := range uint8(8) {
		got, ok := SeverityCode([]byte(Severity(code)))
		assert.True(t, ok, "severity %d", code)
		assert.Equal(t, code, got)
	}
	for _, bad := range []string{"", "Auth", "error", "local8", "4"} {
		_, ok := FacilityCode([]byte(bad))
		assert.False(t, ok, bad)
		_, ok = SeverityCode([]byte(bad))
		assert.False(t, ok, bad)
	}
}
