package calendar

import (
	"testing"
	"time"
)

// TestAgainstTime checks every day from 1600 to 2400 against the time
// package.
func TestAgainstTime(t *testing.T) {
	for d := time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 2400; d = d.AddDate(0, 0, 1) {
		y, m, day := d.Date()
		if got, want := DaysFromEpoch(y, int(m), day), d.Unix()/86400; got != want {
			t.Fatalf("DaysFromEpoch(%d, %d, %d) = %d, want %d", y, m, day, got, want)
		}
		if day == 1 {
			last := d.AddDate(0, 1, -1).Day()
			if got := DaysIn(int(m), y); got != last {
				t.Fatalf("DaysIn(%d, %d) = %d, want %d", m, y, got, last)
			}
		}
	}
}
