package otlp

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/relaykit/relaykit"
)

// sdkRequest returns an encoded export request of n records shaped as
// bench/relay's otlpsend sends them: one resource (host.name,
// service.name, deployment.environment), one scope, and per record a
// 40-byte body, severity, timestamp and four attributes (two strings, an
// int, a double).
func sdkRequest(tb testing.TB, n int) []byte {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	ra := rl.Resource().Attributes()
	ra.PutStr("host.name", "web-01")
	ra.PutStr("service.name", "checkout")
	ra.PutStr("deployment.environment", "prod")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("bench")
	for i := range n {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)))
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
		lr.Body().SetStr(fmt.Sprintf("GET /api/v1/items/%d?page=%d 200 5123 in %dms", 1000+i, i%7, i%50))
		a := lr.Attributes()
		a.PutStr("http.method", "GET")
		a.PutInt("http.status_code", 200)
		a.PutStr("client.address", fmt.Sprintf("10.1.%d.7", i%250))
		a.PutDouble("duration_ms", float64(i%50)+0.25)
	}
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	require.NoError(tb, err)
	return b
}

// TestDecodeProtoAllocs guards the direct decoder's steady state: a warm
// decoder and batch decode a request without allocating.
func TestDecodeProtoAllocs(t *testing.T) {
	if raceOn {
		t.Skip("allocation counts differ under -race")
	}
	b := sdkRequest(t, 100)
	var d decoder
	var batch []relaykit.Event
	var err error
	for range 2 {
		batch, err = d.appendEventsProto(batch[:0], b, testNow)
		require.NoError(t, err)
	}
	allocs := testing.AllocsPerRun(50, func() {
		batch, err = d.appendEventsProto(batch[:0], b, testNow)
	})
	require.NoError(t, err)
	require.Len(t, batch, 100)
	require.Zero(t, allocs, "allocations per request of 100 records")
}

// BenchmarkDecode compares the receiver's two ways from the bytes of a
// 100-record SDK-shaped request to events: pdata's UnmarshalProto then
// the mapping (impl=pdata, the way before), and the direct decoder
// (impl=direct). One op is one record: a request every 100 ops.
func BenchmarkDecode(b *testing.B) {
	const n = 100
	body := sdkRequest(b, n)
	impls := []struct {
		name   string
		decode func(d *decoder, batch []relaykit.Event) ([]relaykit.Event, error)
	}{
		{"pdata", func(d *decoder, batch []relaykit.Event) ([]relaykit.Event, error) {
			req := plogotlp.NewExportRequest()
			if err := req.UnmarshalProto(body); err != nil {
				return batch, err
			}
			return d.appendEvents(batch[:0], req.Logs(), testNow), nil
		}},
		{"direct", func(d *decoder, batch []relaykit.Event) ([]relaykit.Event, error) {
			return d.appendEventsProto(batch[:0], body, testNow)
		}},
	}
	for _, impl := range impls {
		b.Run("records=100/impl="+impl.name, func(b *testing.B) {
			var d decoder
			var batch []relaykit.Event
			var err error
			b.SetBytes(int64(len(body)) / n)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i%n == 0 {
					if batch, err = impl.decode(&d, batch); err != nil || len(batch) != n {
						b.Fatal(err, len(batch))
					}
				}
				i++
			}
		})
	}
}
