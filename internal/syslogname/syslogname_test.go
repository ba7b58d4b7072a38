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
	for f := uint8(0); f < 24; f++ {
		c, ok := FacilityCode([]byte(Facility(f)))
		assert.True(t, ok)
		assert.Equal(t, f, c)
	}
	for s := uint8(0); s < 8; s++ {
		c, ok := SeverityCode([]byte(Severity(s)))
		assert.True(t, ok)
		assert.Equal(t, s, c)
	}
	_, ok := FacilityCode([]byte("nope"))
	assert.False(t, ok)
	_, ok = SeverityCode([]byte(""))
	assert.False(t, ok)
}
