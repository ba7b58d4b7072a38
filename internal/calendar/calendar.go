// Package calendar does calendar arithmetic on civil dates in the proleptic
// Gregorian calendar, without time.Date's allocation-free but slower
// normalisation: the timestamp parsers of syslog and parse share it.
package calendar

// DaysFromEpoch returns the number of days from 1970-01-01 to y-m-d
// (negative before it). m is 1 to 12; d is not checked against the month.
// The algorithm is Howard Hinnant's days_from_civil.
func DaysFromEpoch(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// IsLeap reports whether y is a leap year.
func IsLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// DaysIn returns the number of days in month m (1 to 12) of year y.
func DaysIn(m, y int) int {
	switch m {
	case 2:
		if IsLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
