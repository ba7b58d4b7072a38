//go:build !race

// Allocation counts are not meaningful under -race (the race detector
// makes sync.Pool drop items at random, which allocates), so this file is
// built without it only.

package parse_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/parse"
	"github.com/relaykit/relaykit/pipeline"
	"github.com/relaykit/relaykit/syslog"
)

// zeroAllocs asserts that fn applied to an event refilled from raw (as a
// reused event is: Reset, then the syslog parser) allocates nothing once
// the event's buffers are warm.
func zeroAllocs(t *testing.T, name string, fn pipeline.Function, raw string) {
	t.Helper()
	p := syslog.NewParser(syslog.Config{Location: time.UTC})
	var e relaykit.Event
	in := []byte(raw)
	run := func() {
		e.Reset()
		e.ReceiveTime = receiveTime
		p.Parse(&e, in)
		_, _ = fn.Apply(&e)
	}
	run()
	require.NotEmpty(t, e.Fields, name)
	assert.Zero(t, testing.AllocsPerRun(100, run), name)
}

func TestAllocsKV(t *testing.T) {
	for _, file := range []string{"fortigate.log"} {
		for i, l := range readLines(t, file) {
			if i == 7 || i == 9 { // not key=value
				continue
			}
			zeroAllocs(t, file, newKV(t, parse.KVConfig{}), l)
			zeroAllocs(t, file+" prefixed", newKV(t, parse.KVConfig{Prefix: "fgt.", Duplicate: parse.DuplicateJoin}), l)
		}
	}
	cp := newKV(t, parse.KVConfig{Delimiters: "; ", Separator: ":", Quotes: `"`})
	zeroAllocs(t, "checkpoint", cp, line(t, "checkpoint.log", 1))
	fromField := newKV(t, parse.KVConfig{Field: "procid"})
	zeroAllocs(t, "from a field", fromField, `<13>1 2026-11-28T12:58:59Z h app a=1 - -`)
}

func TestAllocsCSV(t *testing.T) {
	panos := newCSV(t, parse.CSVConfig{
		Columns: []string{"-", "receive_time", "serial", "type", "subtype"},
		Select:  "type",
		Sets: map[string][]string{
			"TRAFFIC": strings.Split("-,receive_time,serial,type,subtype,-,time_generated,src,dst,natsrc,natdst,rule,srcuser,dstuser,app", ","),
			"THREAT":  strings.Split("-,receive_time,serial,type,subtype,-,time_generated,src,dst", ","),
		},
		Braces: true,
	})
	plain := newCSV(t, parse.CSVConfig{KeepEmpty: true})
	for i, l := range readLines(t, "panos.log") {
		if i == 11 {
			continue
		}
		csvLine := l[strings.Index(l, " 1,")+1:]
		zeroAllocs(t, "panos", panos, csvLine)
		zeroAllocs(t, "plain", plain, csvLine)
	}
}

func TestAllocsOtherSteps(t *testing.T) {
	ts, err := parse.NewTimestamp(parse.TimestampConfig{Fields: []string{"date", "time"}, Layout: "2006-01-02 15:04:05", ZoneField: "tz"})
	require.NoError(t, err)
	conv, err := parse.NewConvert(parse.ConvertConfig{Fields: map[string]parse.Type{
		"srcport": parse.TypeInt, "srcip": parse.TypeIP, "duration": parse.TypeFloat,
	}})
	require.NoError(t, err)
	kv := newKV(t, parse.KVConfig{})
	fg := line(t, "fortigate.log", 1)
	both := func(a, b pipeline.Function) pipeline.Function {
		return pipeline.Func(func(e *relaykit.Event) (bool, error) {
			_, _ = a.Apply(e)
			return b.Apply(e)
		})
	}
	zeroAllocs(t, "timestamp", both(kv, ts), fg)
	zeroAllocs(t, "convert", both(kv, conv), fg)
}

func TestAllocsVendors(t *testing.T) {
	for _, tt := range []struct {
		vendor, file string
		loc          *time.Location
		skip         []int // lines the step does not map
	}{
		{parse.VendorFortiGate, "fortigate.log", time.UTC, []int{8, 10}},
		{parse.VendorPANOS, "panos.log", cet, []int{12}},
		{parse.VendorCiscoASA, "asa.log", time.UTC, []int{21}},
		{parse.VendorCheckPoint, "checkpoint.log", time.UTC, []int{7}},
	} {
		v := newVendor(t, tt.vendor, tt.loc)
	lines:
		for i, l := range readLines(t, tt.file) {
			for _, s := range tt.skip {
				if s == i+1 {
					continue lines
				}
			}
			zeroAllocs(t, tt.file+":"+strconv.Itoa(i+1), v, l)
		}
	}
}
