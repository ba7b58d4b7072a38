package parse_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/parse"
)

func mustParse(t testing.TB, layout, v string, loc *time.Location) int64 {
	t.Helper()
	ts, err := time.ParseInLocation(layout, v, loc)
	require.NoError(t, err)
	return ts.UnixNano()
}

func TestTimestamp(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	const recv = int64(1_800_000_000_000_000_000)
	tests := []struct {
		name   string
		cfg    parse.TimestampConfig
		fields map[string]string
		want   int64 // 0: the event keeps Time 0
		err    error
	}{
		{"FortiGate date and time, zone from tz",
			parse.TimestampConfig{Fields: []string{"date", "time"}, Layout: "2006-01-02 15:04:05", ZoneField: "tz", Location: berlin},
			map[string]string{"date": "2026-11-28", "time": "12:58:59", "tz": "-0800"},
			mustParse(t, time.RFC3339, "2026-11-28T12:58:59-08:00", time.UTC), nil},
		{"FortiGate without tz: Location",
			parse.TimestampConfig{Fields: []string{"date", "time"}, Layout: "2006-01-02 15:04:05", ZoneField: "tz", Location: berlin},
			map[string]string{"date": "2026-07-01", "time": "12:00:00"},
			mustParse(t, time.RFC3339, "2026-07-01T12:00:00+02:00", time.UTC), nil},
		{"PAN-OS generated time",
			parse.TimestampConfig{Fields: []string{"time_generated"}, Layout: "2006/01/02 15:04:05", Location: time.UTC},
			map[string]string{"time_generated": "2026/11/28 12:58:58"},
			mustParse(t, time.RFC3339, "2026-11-28T12:58:58Z", time.UTC), nil},
		{"RFC 3339 by default, fraction and zone",
			parse.TimestampConfig{Fields: []string{"ts"}},
			map[string]string{"ts": "2026-11-28T12:58:58.123+01:00"},
			mustParse(t, time.RFC3339Nano, "2026-11-28T12:58:58.123+01:00", time.UTC), nil},
		{"BSD syslog with year", parse.TimestampConfig{Fields: []string{"ts"}, Layout: "Jan _2 2006 15:04:05", Location: time.UTC},
			map[string]string{"ts": "Nov  8 2026 12:58:59"}, mustParse(t, time.RFC3339, "2026-11-08T12:58:59Z", time.UTC), nil},
		{"layout outside the fast path", parse.TimestampConfig{Fields: []string{"ts"}, Layout: time.RFC1123},
			map[string]string{"ts": "Sat, 28 Nov 2026 12:58:59 UTC"}, mustParse(t, time.RFC1123, "Sat, 28 Nov 2026 12:58:59 UTC", time.UTC), nil},
		{"unix seconds with fraction", parse.TimestampConfig{Fields: []string{"t"}, Layout: parse.LayoutUnix},
			map[string]string{"t": "1795870739.25"}, 1795870739_250_000_000, nil},
		{"unix ms", parse.TimestampConfig{Fields: []string{"t"}, Layout: parse.LayoutUnixMs},
			map[string]string{"t": "1795870739123"}, 1795870739_123_000_000, nil},
		{"unix us", parse.TimestampConfig{Fields: []string{"t"}, Layout: parse.LayoutUnixUs},
			map[string]string{"t": "1795870739123456"}, 1795870739_123_456_000, nil},
		{"unix ns", parse.TimestampConfig{Fields: []string{"t"}, Layout: parse.LayoutUnixNs},
			map[string]string{"t": "1795870739123456789"}, 1795870739_123_456_789, nil},
		{"missing field keeps the time", parse.TimestampConfig{Fields: []string{"date", "time"}, Layout: "2006-01-02 15:04:05"},
			map[string]string{"date": "2026-11-28"}, 0, parse.ErrTimestamp},
		{"bad value keeps the time", parse.TimestampConfig{Fields: []string{"t"}, Layout: "2006-01-02 15:04:05"},
			map[string]string{"t": "2026-13-45 99:00:00"}, 0, parse.ErrTimestamp},
		{"bad unix", parse.TimestampConfig{Fields: []string{"t"}, Layout: parse.LayoutUnix},
			map[string]string{"t": "17958x"}, 0, parse.ErrTimestamp},
		{"out of range", parse.TimestampConfig{Fields: []string{"t"}, Layout: "2006"},
			map[string]string{"t": "9999"}, 0, parse.ErrTimestamp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step, err := parse.NewTimestamp(tt.cfg)
			require.NoError(t, err)
			e := relaykit.Event{ReceiveTime: recv}
			for k, v := range tt.fields {
				e.SetFieldString(k, v)
			}
			keep, err := step.Apply(&e)
			assert.True(t, keep)
			if tt.err == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.err)
			}
			assert.Equal(t, tt.want, e.Time)
			if tt.want == 0 {
				assert.Equal(t, time.Unix(0, recv).UTC(), e.EventTime(), "the receive time stands")
			}
		})
	}
}

func TestTimestampStats(t *testing.T) {
	step, err := parse.NewTimestamp(parse.TimestampConfig{Fields: []string{"t"}, Layout: parse.LayoutUnix})
	require.NoError(t, err)
	for _, v := range []string{"1", "", "x"} {
		var e relaykit.Event
		if v != "" {
			e.SetFieldString("t", v)
		}
		_, _ = step.Apply(&e)
	}
	assert.Equal(t, parse.TimestampStats{Events: 3, Parsed: 1, Missing: 1, Failed: 1}, step.Stats())
	_, err = parse.NewTimestamp(parse.TimestampConfig{})
	assert.ErrorIs(t, err, parse.ErrInvalidConfig)
}

// timestampLayouts are layouts with a fast path, checked against
// time.ParseInLocation.
var timestampLayouts = []string{
	"2006-01-02 15:04:05", "2006/01/02 15:04:05", time.RFC3339, time.RFC3339Nano, "Jan _2 15:04:05",
	"Jan _2 2006 15:04:05", "2006-01-02T15:04:05.000Z0700", "02/Jan/2006:15:04:05 -0700", "Mon Jan _2 15:04:05 2006",
	"20060102150405", "2006-01-02 15:04:05,999",
}

// FuzzTimestamp: for every layout, the step returns what
// time.ParseInLocation returns (or keeps the time where it fails or lies
// outside int64 nanoseconds), in UTC and in a zone with DST.
func FuzzTimestamp(f *testing.F) {
	for _, s := range []string{"2026-11-28 12:58:59", "2026/11/28 12:58:58", "2026-11-28T12:58:58.123+01:00",
		"Nov  8 12:58:59", "Nov 28 2026 12:58:59", "2026-11-28T12:58:59.123Z", "28/Nov/2026:12:58:59 +0100",
		"Sat Nov 28 12:58:59 2026", "20261128125859", "2026-02-29 00:00:00", "2026-11-28 24:00:00",
		"2026-11-28 12:58:59.5", "2026-03-29 02:30:00", "2026-11-28 12:58:59,123"} {
		f.Add(s)
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(f, err)
	type step struct {
		layout string
		loc    *time.Location
		fn     *parse.Timestamp
	}
	var steps []step
	for _, l := range timestampLayouts {
		for _, loc := range []*time.Location{time.UTC, berlin} {
			fn, err := parse.NewTimestamp(parse.TimestampConfig{Fields: []string{"t"}, Layout: l, Location: loc})
			require.NoError(f, err)
			steps = append(steps, step{l, loc, fn})
		}
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, s := range steps {
			var e relaykit.Event
			e.SetFieldString("t", v)
			_, err := s.fn.Apply(&e)
			want, perr := time.ParseInLocation(s.layout, v, s.loc)
			ok := perr == nil && want.Year() >= 1678 && want.Year() <= 2261
			if !ok {
				if v != "" && err == nil {
					// Years 1677 and 2262 hold both valid and invalid
					// nanoseconds; the step decides by Unix seconds.
					require.Contains(t, []int{1677, 2262}, want.Year(), "%q %q", s.layout, v)
				}
				continue
			}
			require.NoError(t, err, "%q %q", s.layout, v)
			require.Equal(t, want.UnixNano(), e.Time, "%q %q", s.layout, v)
		}
	})
}
