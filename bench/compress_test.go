package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/bench/internal/reallines"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/syslog"
)

// sentinelBodies returns n request bodies of the Logs Ingestion API as the
// relay builds them: realistic 1.2 KB lines (reallines) parsed as the relay
// parses them and encoded as rows of table (a JSON array of rows rows
// each), each body from different lines.
func sentinelBodies(tb testing.TB, table forward.SentinelTable, n, rows int) [][]byte {
	tb.Helper()
	st, err := forward.NewSentinel(forward.SentinelConfig{
		Endpoint: "https://dce.example.com", DCRImmutableID: "dcr-00000000000000000000000000000001",
		TokenSource: forward.StaticToken("t"), Table: table, CollectorHostName: "relay-01",
	})
	if err != nil {
		tb.Fatal(err)
	}
	p := syslog.NewParser(syslog.Config{Location: time.UTC, RequireText: true, CEF: true})
	g := reallines.New(7)
	var line []byte
	var ev relaykit.Event
	bodies := make([][]byte, n)
	for i := range bodies {
		body := []byte{'['}
		for j := range rows {
			if table == forward.SentinelCommonSecurityLog {
				line = g.CEF(line[:0])
			} else {
				line = g.Syslog(line[:0])
			}
			ev.Reset()
			p.Parse(&ev, line)
			if j > 0 {
				body = append(body, ',')
			}
			body = st.AppendEvent(body, &ev)
		}
		bodies[i] = append(body, ']')
	}
	return bodies
}

// BenchmarkSentinelGzipLevels is the compression study behind the
// destinations' compression_level: one op compresses one Logs Ingestion
// request body of 440 rows (what the relay sends for 1.2 KB lines: 440 is
// its batch in bench/relay/run.sh scenario s) from realistic syslog
// (table=Syslog) or CEF (table=CommonSecurityLog) lines, with
// forward.AppendGzip at each level klauspost/compress offers: stateless
// (-3), Huffman only (-2) and 1 to 9. It reports cpu-ns/event (CPU time of
// compression per row, the process's CPU time rather than wall time, so
// that other work on a shared machine counts less), json-B/event (the row, what Azure bills) and
// wire-B/event (what the uplink carries). Eight different bodies are
// compressed in turn, so no level wins by remembering one.
func BenchmarkSentinelGzipLevels(b *testing.B) {
	const rows = 440
	for _, table := range []forward.SentinelTable{forward.SentinelSyslog, forward.SentinelCommonSecurityLog} {
		bodies := sentinelBodies(b, table, 8, rows)
		for _, level := range []int{forward.GzipStateless, forward.GzipHuffmanOnly, 1, 2, 3, 4, 5, 6, 7, 8, 9} {
			name := fmt.Sprint(level)
			switch level {
			case forward.GzipStateless:
				name = "stateless"
			case forward.GzipHuffmanOnly:
				name = "huffman"
			}
			b.Run(fmt.Sprintf("table=%v/level=%s", table, name), func(b *testing.B) {
				dst := make([]byte, 0, 1<<20)
				var raw, wire, n int
				b.ReportAllocs()
				cpu := processCPU()
				for b.Loop() {
					src := bodies[n%len(bodies)]
					var err error
					dst, err = forward.AppendGzip(dst[:0], src, level)
					if err != nil {
						b.Fatal(err)
					}
					raw += len(src)
					wire += len(dst)
					n++
				}
				b.StopTimer()
				cpu = processCPU() - cpu
				checkGunzip(b, dst, bodies[(n-1)%len(bodies)])
				ev := float64(n * rows)
				b.ReportMetric(float64(cpu)/ev, "cpu-ns/event")
				b.ReportMetric(float64(raw)/ev, "json-B/event")
				b.ReportMetric(float64(wire)/ev, "wire-B/event")
			})
		}
	}
}
