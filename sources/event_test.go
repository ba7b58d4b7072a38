package sources_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/sources"
)

func TestFillEventNoAlloc(t *testing.T) {
	at := time.Date(2026, 5, 1, 10, 5, 1, 0, time.UTC)
	silent := sources.Transition{
		Key: sources.ParseKey("192.0.2.7"), State: sources.StateSilent, At: at,
		LastSeen: at.Add(-301 * time.Second), SilentFor: 301 * time.Second, EventsBefore: 1234,
	}
	var e relaykit.Event
	e.SetFieldString("stale", "x") // FillEvent resets
	silent.FillEvent(&e)
	assert.Equal(t, at.UnixNano(), e.ReceiveTime)
	assert.Equal(t, at.UnixNano(), e.Time)
	assert.Equal(t, "192.0.2.7", string(e.Host))
	assert.Equal(t, sources.SourceType, string(e.SourceType))
	assert.Equal(t, "relay:source_health", string(e.SourceType))
	assert.Equal(t, "source 192.0.2.7 is silent: last seen 2026-05-01T10:00:00Z, silent for 301 s, 1234 events before", string(e.Raw))
	assert.Equal(t, map[string]string{
		"source_state": "silent", "last_seen": "2026-05-01T10:00:00Z", "silent_for_seconds": "301", "events_before": "1234",
	}, fields(&e))

	never := sources.Transition{Key: sources.HostKey("fw-1.corp"), State: sources.StateSilent, At: at, SilentFor: 11 * time.Second}
	never.FillEvent(&e)
	assert.Equal(t, "fw-1.corp", string(e.Host))
	assert.Equal(t, "source fw-1.corp is silent: last seen never, silent for 11 s, 0 events before", string(e.Raw))
	assert.Equal(t, "", fields(&e)["last_seen"])

	active := silent
	active.State = sources.StateActive
	active.LastSeen = at.Add(-time.Hour + 250*time.Millisecond)
	active.FillEvent(&e)
	assert.Equal(t, "active", fields(&e)["source_state"])
	assert.Equal(t, "2026-05-01T09:05:01.25Z", fields(&e)["last_seen"])
	assert.Contains(t, string(e.Raw), "is active again")

	if !raceEnabled {
		assert.Zero(t, testing.AllocsPerRun(100, func() { silent.FillEvent(&e) }), "FillEvent reuses the event's buffers")
	}
}

func fields(e *relaykit.Event) map[string]string {
	m := map[string]string{}
	for _, f := range e.Fields {
		m[string(f.Key)] = string(f.Value)
	}
	return m
}
