package parse_test

import (
	"encoding/csv"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	grok "github.com/elastic/go-grok"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/parse"
	"github.com/relaykit/relaykit/pipeline"
)

// processCPU is the CPU time of the process (all threads, GC included),
// which, unlike wall time, does not grow when other processes take the
// cores: reported per op as cpu-ns/op.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchStep measures fn on a reused event refilled with text (and the
// fields in pre) per op, as a relay's worker reuses its events; it
// checks, every op, that the step found want fields at least.
func benchStep(b *testing.B, fn func(e *relaykit.Event) error, text string, pre map[string]string, want int) {
	in := []byte(text)
	var e relaykit.Event
	fill := func() {
		e.Reset()
		e.Raw = append(e.Raw, in...)
		for k, v := range pre {
			e.SetFieldString(k, v)
		}
	}
	fill()
	require.NoError(b, fn(&e))
	require.GreaterOrEqual(b, len(e.Fields), want)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		fill()
		if err := fn(&e); err != nil || len(e.Fields) < want {
			b.Fatalf("%v, %d fields", err, len(e.Fields))
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

func apply(f pipeline.Function) func(e *relaykit.Event) error {
	return func(e *relaykit.Event) error { _, err := f.Apply(e); return err }
}

// afterTag returns what the syslog parser leaves of a sample line in Raw:
// the text after the first occurrence of sep.
func afterTag(l, sep string) string { return l[strings.Index(l, sep)+len(sep):] }

// BenchmarkParse measures each primitive and vendor step on one
// representative line per vendor, beside the reference implementation the
// tests compare it with and, where one applies, go-grok or a regexp: one
// op is one line (event).
//
//   - line=fortigate: a 668-byte FortiOS traffic line (testdata/fortigate.log:1)
//   - line=panos: a PAN-OS 10.x TRAFFIC line, 115 columns (testdata/panos.log:1)
//   - line=asa302013: a Cisco ASA 302013 message (testdata/asa.log:1)
//   - line=checkpoint: a Check Point Log Exporter accept (testdata/checkpoint.log:1)
func BenchmarkParse(b *testing.B) {
	fg := afterTag(line(b, "fortigate.log", 1), ">")
	pan := afterTag(line(b, "panos.log", 1), "PA-3260 ")
	asa := afterTag(line(b, "asa.log", 1), "302013: ")
	asaPre := map[string]string{"msgid": "ASA-6-302013"}
	cp := afterTag(line(b, "checkpoint.log", 1), "<134>")

	kv := newKV(b, parse.KVConfig{})
	cpKV := newKV(b, parse.KVConfig{Delimiters: "; ", Separator: ":", Quotes: `"`})
	// The PAN-OS TRAFFIC line's 115 columns, named (column names are
	// what a CSV step is for; unnamed extras cost a name built per value).
	names := make([]string, 115)
	for i := range names {
		names[i] = "c" + itoa(i+1)
	}
	namedCSV := newCSV(b, parse.CSVConfig{Columns: names, Braces: true})
	vendor := func(name string) func(e *relaykit.Event) error {
		return apply(newVendor(b, name, time.UTC))
	}
	// refStore is the reference implementations' output: fields as the
	// steps store them.
	refStore := func(e *relaykit.Event, pairs [][2]string) {
		for _, p := range pairs {
			e.SetFieldString(p[0], p[1])
		}
	}
	kvRegexp := regexp.MustCompile(`([^\s=]+)=("(?:[^"\\]|\\.)*"|\S*)`)

	b.Run("line=fortigate/impl=kv", func(b *testing.B) { benchStep(b, apply(kv), fg, nil, 38) })
	b.Run("line=fortigate/impl=reference", func(b *testing.B) {
		benchStep(b, func(e *relaykit.Event) error {
			pairs, _ := refKV(string(e.Raw), "", "", "")
			refStore(e, pairs)
			return nil
		}, fg, nil, 38)
	})
	b.Run("line=fortigate/impl=regexp", func(b *testing.B) {
		benchStep(b, func(e *relaykit.Event) error {
			for _, m := range kvRegexp.FindAllSubmatch(e.Raw, -1) {
				e.SetField(string(m[1]), []byte(strings.Trim(string(m[2]), `"`)))
			}
			return nil
		}, fg, nil, 38)
	})
	b.Run("line=fortigate/impl=vendor", func(b *testing.B) { benchStep(b, vendor(parse.VendorFortiGate), fg, nil, 38) })

	b.Run("line=panos/impl=csv", func(b *testing.B) { benchStep(b, apply(namedCSV), pan, nil, 56) })
	b.Run("line=panos/impl=encoding-csv", func(b *testing.B) {
		benchStep(b, func(e *relaykit.Event) error {
			r := csv.NewReader(strings.NewReader(string(e.Raw)))
			r.LazyQuotes, r.FieldsPerRecord = true, -1
			rec, err := r.Read()
			for i, v := range rec {
				if v != "" {
					e.SetFieldString(names[i], v)
				}
			}
			return err
		}, pan, nil, 56)
	})
	b.Run("line=panos/impl=vendor", func(b *testing.B) { benchStep(b, vendor(parse.VendorPANOS), pan, nil, 56) })

	b.Run("line=asa302013/impl=vendor", func(b *testing.B) { benchStep(b, vendor(parse.VendorCiscoASA), asa, asaPre, 18) })
	grokStep, err := parse.NewGrok(parse.GrokConfig{Pattern: grokCases[0].pattern})
	require.NoError(b, err)
	b.Run("line=asa302013/impl=grok", func(b *testing.B) { benchStep(b, apply(grokStep), asa, asaPre, 12) })
	g, err := grok.NewComplete()
	require.NoError(b, err)
	require.NoError(b, g.Compile(grokCases[0].pattern, true))
	b.Run("line=asa302013/impl=go-grok", func(b *testing.B) {
		benchStep(b, func(e *relaykit.Event) error {
			m, err := g.Parse(e.Raw)
			for k, v := range m {
				e.SetField(k, v)
			}
			return err
		}, asa, asaPre, 12)
	})
	asaRegexp, err := parse.NewRegex(parse.RegexConfig{Pattern: `^(?P<act>Built|Teardown) (?P<dir>inbound|outbound) (?P<proto>\S+) connection (?P<conn>\d+) for (?P<srcif>[^:]+):(?P<src>[^/]+)/(?P<spt>\d+) \((?P<srcnat>[^/]+)/(?P<srcnatport>\d+)\) to (?P<dstif>[^:]+):(?P<dst>[^/]+)/(?P<dpt>\d+) \((?P<dstnat>[^/]+)/(?P<dstnatport>\d+)\)`})
	require.NoError(b, err)
	b.Run("line=asa302013/impl=regexp", func(b *testing.B) { benchStep(b, apply(asaRegexp), asa, asaPre, 12) })

	b.Run("line=checkpoint/impl=kv", func(b *testing.B) { benchStep(b, apply(cpKV), cp, nil, 25) })
	b.Run("line=checkpoint/impl=reference", func(b *testing.B) {
		benchStep(b, func(e *relaykit.Event) error {
			pairs, _ := refKV(string(e.Raw), "; ", ":", `"`)
			refStore(e, pairs)
			return nil
		}, cp, nil, 25)
	})
	b.Run("line=checkpoint/impl=vendor", func(b *testing.B) { benchStep(b, vendor(parse.VendorCheckPoint), cp, nil, 25) })
}

// BenchmarkTimestamp measures the timestamp step on FortiGate's date and
// time: the fast path, beside time.ParseInLocation.
func BenchmarkTimestamp(b *testing.B) {
	ts, err := parse.NewTimestamp(parse.TimestampConfig{Fields: []string{"date", "time"}, Layout: "2006-01-02 15:04:05", ZoneField: "tz"})
	require.NoError(b, err)
	pre := map[string]string{"date": "2026-11-28", "time": "12:58:59", "tz": "+0100"}
	b.Run("impl=parse", func(b *testing.B) { benchStep(b, apply(ts), "", pre, 3) })
	b.Run("impl=time.Parse", func(b *testing.B) {
		benchStep(b, func(e *relaykit.Event) error {
			d, _ := e.Field("date")
			c, _ := e.Field("time")
			t, err := time.Parse("2006-01-02 15:04:05 -0700", string(d)+" "+string(c)+" +0100")
			e.Time = t.UnixNano()
			return err
		}, "", pre, 3)
	})
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
