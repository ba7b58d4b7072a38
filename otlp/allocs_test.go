package otlp_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/otlp"
)

// syslogLikeEvent is an event as a syslog or HEC input makes it: host,
// source, sourcetype, raw text and two string fields.
func syslogLikeEvent(i int) relaykit.Event {
	var e relaykit.Event
	e.Time = 1_700_000_000_000_000_000 + int64(i)
	e.Host = []byte("web-01.prod.example.com")
	e.Source = []byte("sshd")
	e.SourceType = []byte("syslog")
	e.Raw = fmt.Appendf(nil, "Failed password for invalid user admin from 203.0.113.%d port 4%04d ssh2", i%250, i)
	e.SetFieldString("src_ip", fmt.Sprintf("203.0.113.%d", i%250))
	e.SetFieldString("user", "admin")
	return e
}

// TestAppendLogsAllocs bounds the allocations of encoding events as log
// records: per record pdata's own (the record, its attribute slice, one
// wrapper per string value: here sourcetype, two fields and the body),
// and no string copies of the event's bytes, which go into shared
// chunks.
func TestAppendLogsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	evs := make([]relaykit.Event, 100)
	for i := range evs {
		evs[i] = syslogLikeEvent(i)
	}
	var ld plog.Logs
	allocs := testing.AllocsPerRun(20, func() {
		ld = plog.NewLogs()
		otlp.Mapping{}.AppendLogs(ld, evs)
	})
	require.Equal(t, len(evs), ld.LogRecordCount())
	perRecord := 2 + 4
	// A few per call: the Logs, its resource and scope, the growth of
	// the record slice, the chunks.
	assert.LessOrEqual(t, allocs, float64(len(evs)*perRecord+32), "allocations for %d events", len(evs))
	t.Logf("%.0f allocations for %d events", allocs, len(evs))
}
