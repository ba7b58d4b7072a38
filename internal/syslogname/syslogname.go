// Package syslogname holds the names of syslog facilities and severities,
// shared by the encoders of forward and storage.
//
// Facility codes 0-23 and severities 0-7 are those of RFC 5424 section
// 6.2.1 (tables 1 and 2). RFC 5424 gives only descriptions; the names are
// the keywords of syslog.conf(5) and <syslog.h> (kern, user, ..., local7;
// emerg, alert, crit, err, warning, notice, info, debug) that rsyslog and
// syslog-ng use and that the Azure Monitor Agent writes into the Facility
// and SeverityLevel columns of the Syslog table. The codes <syslog.h>
// leaves unnamed (12-15) carry the names of the Azure Monitor data
// collection rule's facility list: ntp, audit, alert and clock.
package syslogname

var facilities = [24]string{
	"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
	"uucp", "cron", "authpriv", "ftp", "ntp", "audit", "alert", "clock",
	"local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7",
}

var severities = [8]string{"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"}

// Facility returns the name of facility code f (0-23), or "" for a code
// out of range.
func Facility(f uint8) string {
	if int(f) < len(facilities) {
		return facilities[f]
	}
	return ""
}

// Severity returns the name of severity code s (0-7), or "" for a code
// out of range.
func Severity(s uint8) string {
	if int(s) < len(severities) {
		return severities[s]
	}
	return ""
}

// FacilityCode returns the code (0-23) of the facility named name, as
// [Facility] spells it, and whether the name is known. It does not
// allocate.
func FacilityCode(name []byte) (uint8, bool) {
	for i, f := range facilities {
		if string(name) == f {
			return uint8(i), true
		}
	}
	return 0, false
}

// SeverityCode returns the code (0-7) of the severity named name, as
// [Severity] spells it, and whether the name is known. It does not
// allocate.
func SeverityCode(name []byte) (uint8, bool) {
	for i, s := range severities {
		if string(name) == s {
			return uint8(i), true
		}
	}
	return 0, false
}
