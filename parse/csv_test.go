package parse_test

import (
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/parse"
)

// refCSV reads s as encoding/csv reads one line with LazyQuotes: the
// reference the step is compared with.
func refCSV(s string, sep byte) ([]string, error) {
	r := csv.NewReader(strings.NewReader(s))
	r.Comma = rune(sep)
	r.LazyQuotes = true
	r.FieldsPerRecord = -1
	rec, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	return rec, err
}

func newCSV(t testing.TB, cfg parse.CSVConfig) *parse.CSV {
	t.Helper()
	c, err := parse.NewCSV(cfg)
	require.NoError(t, err)
	return c
}

func TestCSV(t *testing.T) {
	abc := parse.CSVConfig{Columns: []string{"a", "b", "c"}}
	panos := parse.CSVConfig{
		Columns: []string{"-", "receive_time", "serial", "type", "subtype"},
		Select:  "type",
		Sets: map[string][]string{
			"TRAFFIC": {"-", "receive_time", "serial", "type", "subtype", "-", "time_generated", "src", "dst"},
			"SYSTEM":  {"-", "receive_time", "serial", "type", "subtype", "-", "time_generated", "vsys", "eventid"},
		},
	}
	tests := []struct {
		name string
		cfg  parse.CSVConfig
		in   string
		want [][2]string
		err  error
	}{
		{"named columns", abc, `1,2,3`, [][2]string{{"a", "1"}, {"b", "2"}, {"c", "3"}}, nil},
		{"RFC 4180 quoting: commas and doubled quotes", abc, `"x,y","say ""hi""",z`,
			[][2]string{{"a", "x,y"}, {"b", `say "hi"`}, {"c", "z"}}, nil},
		{"lazy quotes as encoding/csv reads them", abc, `a"b,"c"d",e`,
			[][2]string{{"a", `a"b`}, {"b", `c"d`}, {"c", "e"}}, nil},
		{"spaces kept", abc, ` 1 , 2 ,3 `, [][2]string{{"a", " 1 "}, {"b", " 2 "}, {"c", "3 "}}, nil},
		{"missing trailing columns", abc, `1,2`, [][2]string{{"a", "1"}, {"b", "2"}}, nil},
		{"extra trailing columns", abc, `1,2,3,4,"5,6"`,
			[][2]string{{"a", "1"}, {"b", "2"}, {"c", "3"}, {"column4", "4"}, {"column5", "5,6"}}, nil},
		{"empty values set no field", abc, `1,,3,`, [][2]string{{"a", "1"}, {"c", "3"}}, nil},
		{"empty values kept", parse.CSVConfig{Columns: []string{"a", "b"}, KeepEmpty: true}, `,`,
			[][2]string{{"a", ""}, {"b", ""}}, nil},
		{"skipped columns", parse.CSVConfig{Columns: []string{"a", "-", "", "d"}}, `1,2,3,4`,
			[][2]string{{"a", "1"}, {"d", "4"}}, nil},
		{"select TRAFFIC", panos, `1,2026/11/28 12:58:59,0123,TRAFFIC,end,2561,2026/11/28 12:58:58,10.0.0.1,10.0.0.2`,
			[][2]string{{"receive_time", "2026/11/28 12:58:59"}, {"serial", "0123"}, {"type", "TRAFFIC"}, {"subtype", "end"},
				{"time_generated", "2026/11/28 12:58:58"}, {"src", "10.0.0.1"}, {"dst", "10.0.0.2"}}, nil},
		{"select SYSTEM", panos, `1,2026/11/28 12:58:59,0123,SYSTEM,general,0,2026/11/28 12:58:58,vsys1,auth-fail`,
			[][2]string{{"receive_time", "2026/11/28 12:58:59"}, {"serial", "0123"}, {"type", "SYSTEM"}, {"subtype", "general"},
				{"time_generated", "2026/11/28 12:58:58"}, {"vsys", "vsys1"}, {"eventid", "auth-fail"}}, nil},
		{"unselected type uses Columns", panos, `1,2026/11/28 12:58:59,0123,CONFIG,0,x`,
			[][2]string{{"receive_time", "2026/11/28 12:58:59"}, {"serial", "0123"}, {"type", "CONFIG"}, {"subtype", "0"},
				{"column6", "x"}}, nil},
		{"quoted select value", panos, `1,t,s,"TRAFFIC",end,x,y,"10.0.0.1"`,
			[][2]string{{"receive_time", "t"}, {"serial", "s"}, {"type", "TRAFFIC"}, {"subtype", "end"}, {"time_generated", "y"},
				{"src", "10.0.0.1"}}, nil},
		{"braces", parse.CSVConfig{Columns: []string{"a", "links", "c"}, Braces: true}, `1,{x,y,{z}},3`,
			[][2]string{{"a", "1"}, {"links", "{x,y,{z}}"}, {"c", "3"}}, nil},
		{"unbalanced brace is a byte", parse.CSVConfig{Columns: []string{"a", "b"}, Braces: true}, `{x,y`,
			[][2]string{{"a", "{x"}, {"b", "y"}}, nil},
		{"tab separated, prefix", parse.CSVConfig{Columns: []string{"a", "b"}, Separator: '\t', Prefix: "p."}, "1\t\"2\t3\"",
			[][2]string{{"p.a", "1"}, {"p.b", "2\t3"}}, nil},
		{"unterminated quote", abc, `1,"2,3`, [][2]string{{"a", "1"}, {"b", "2,3"}}, parse.ErrUnterminated},
		{"empty line", abc, ``, nil, parse.ErrNoMatch},
		{"max fields", parse.CSVConfig{MaxFields: 2}, `1,2,3`, [][2]string{{"column1", "1"}, {"column2", "2"}}, parse.ErrTooManyFields},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCSV(t, tt.cfg)
			e := relaykit.Event{Raw: []byte(tt.in)}
			keep, err := c.Apply(&e)
			assert.True(t, keep)
			if tt.err == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.err)
			}
			assert.Equal(t, tt.want, fieldPairs(&e))
			assert.Equal(t, tt.in, string(e.Raw))
		})
	}
}

func TestCSVStats(t *testing.T) {
	c := newCSV(t, parse.CSVConfig{
		Columns: []string{"x", "type", "y"}, Select: "type",
		Sets: map[string][]string{"A": {"x", "type", "y", "z"}},
	})
	for _, in := range []string{`1,A,2,3`, `1,A,2`, `1,A,2,3,4`, `1,B,2`, ``, `1,A,"2`} {
		e := relaykit.Event{Raw: []byte(in)}
		_, _ = c.Apply(&e)
	}
	assert.Equal(t, parse.CSVStats{Events: 6, Parsed: 5, NoMatch: 1, Short: 2, Long: 1, Unselected: 1, Unterminated: 1}, c.Stats())
}

func TestCSVExistingField(t *testing.T) {
	c := newCSV(t, parse.CSVConfig{Columns: []string{"a", "b"}})
	var e relaykit.Event
	e.SetFieldString("b", "old")
	e.Raw = []byte(`1,2`)
	_, err := c.Apply(&e)
	require.NoError(t, err)
	assert.Equal(t, [][2]string{{"b", "2"}, {"a", "1"}}, fieldPairs(&e))
}

func TestCSVInvalidConfig(t *testing.T) {
	for name, cfg := range map[string]parse.CSVConfig{
		"quote separator":      {Separator: '"'},
		"newline separator":    {Separator: '\n'},
		"repeated name":        {Columns: []string{"a", "a"}},
		"select not a column":  {Columns: []string{"a"}, Select: "b"},
		"sets without select":  {Sets: map[string][]string{"x": {"a"}}},
		"repeated name in set": {Columns: []string{"t"}, Select: "t", Sets: map[string][]string{"x": {"t", "t"}}},
		"negative max":         {MaxFields: -1},
	} {
		_, err := parse.NewCSV(cfg)
		assert.ErrorIs(t, err, parse.ErrInvalidConfig, name)
	}
}

// TestCSVAgainstReference compares the step with encoding/csv on the table
// and on the PAN-OS samples.
func TestCSVAgainstReference(t *testing.T) {
	c := newCSV(t, parse.CSVConfig{KeepEmpty: true})
	inputs := csvSeeds
	for _, l := range readLines(t, "panos.log") {
		if i := strings.Index(l, " 1,"); i > 0 {
			inputs = append(inputs, l[i+1:])
		}
	}
	for _, in := range inputs {
		checkCSV(t, c, in, ',')
	}
}

var csvSeeds = []string{
	`a,b,c`, `"a,b",c`, `"a""b"`, `a"b,c`, `"a"b,c`, `"a`, `,`, `,,`, `"",""`, `"a""`, `""""`, `"a"",b`,
	` "a",b`, `a,"b"c"d,e"`, `"x"y"z"`, "\x00,\xff", `"`, `""`, `"""`,
}

// checkCSV asserts that the step reads in as encoding/csv (LazyQuotes)
// does: every value, empty ones too, under column<n>.
func checkCSV(t *testing.T, c *parse.CSV, in string, sep byte) {
	t.Helper()
	want, err := refCSV(in, sep)
	require.NoError(t, err, "%q", in)
	e := relaykit.Event{Raw: []byte(in)}
	_, _ = c.Apply(&e)
	var got []string
	for i, f := range e.Fields {
		require.Equal(t, "column"+strconv.Itoa(i+1), string(f.Key), "%q", in)
		got = append(got, string(f.Value))
	}
	require.Equal(t, want, got, "%q", in)
	require.Equal(t, in, string(e.Raw))
}

// FuzzCSV compares the step with encoding/csv (LazyQuotes) on any line
// without line breaks, and checks that a line that encoding/csv also reads
// without LazyQuotes (valid RFC 4180) reads the same.
func FuzzCSV(f *testing.F) {
	for _, s := range csvSeeds {
		f.Add(s, byte(','))
	}
	f.Add("a;\"b;c\"", byte(';'))
	f.Add("a\tb", byte('\t'))
	for _, l := range readLines(f, "panos.log") {
		f.Add(l, byte(','))
	}
	f.Fuzz(func(t *testing.T, in string, sep byte) {
		if strings.ContainsAny(in, "\r\n") || sep == '"' || sep == '\r' || sep == '\n' || sep == 0 || sep >= 0x80 {
			return
		}
		c := newCSV(t, parse.CSVConfig{KeepEmpty: true, Separator: sep, MaxFields: 1 << 20})
		checkCSV(t, c, in, sep)
		r := csv.NewReader(strings.NewReader(in))
		r.Comma, r.FieldsPerRecord = rune(sep), -1
		if strict, err := r.Read(); err == nil {
			lazy, _ := refCSV(in, sep)
			require.Equal(t, lazy, strict)
		}
	})
}
