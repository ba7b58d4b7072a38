package configtest

import (
	"bytes"
	"encoding/xml"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// relayTest runs `relay test args...` and returns its exit code, stdout
// and stderr.
func relayTest(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Command(t.Context(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeTests(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tests.yaml")
	require.NoError(t, os.WriteFile(p, []byte(yaml), 0o600))
	return p
}

const (
	recipeFull      = "../../testdata/recipes/sentinel-syslog-cef.yaml"
	recipeMigration = "../../testdata/recipes/splunk-to-sentinel.yaml"
	recipeReduction = "../../testdata/recipes/sentinel-reduction.yaml"
)

// TestRelayTestRecipes runs every recipe under testdata/recipes with its
// test file, as an operator would.
func TestRelayTestRecipes(t *testing.T) {
	configs, err := filepath.Glob("../../testdata/recipes/*.yaml")
	require.NoError(t, err)
	n := 0
	for _, cfg := range configs {
		if strings.HasSuffix(cfg, ".tests.yaml") {
			continue
		}
		n++
		t.Run(filepath.Base(cfg), func(t *testing.T) {
			tests := strings.TrimSuffix(cfg, ".yaml") + ".tests.yaml"
			require.FileExists(t, tests)
			code, out, errOut := relayTest(t, "-config", cfg, tests)
			assert.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			assert.Regexp(t, `^PASS: \d+ cases\n$`, out)
		})
	}
	assert.Equal(t, 7, n, "recipes")
}

// TestRecipesFollowReadme keeps the recipes' routes those of the README's
// examples they test.
func TestRecipesFollowReadme(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	t.Setenv("SENTINEL_CLIENT_SECRET", "x")
	t.Setenv("HEC_TOKEN", "y")
	t.Setenv("HEC_TOKEN_APPS", "apps-token")
	t.Setenv("HEC_TOKEN_SYSLOG", "syslog-token")
	block := func(marks ...string) config.Config {
		t.Helper()
		for _, b := range strings.Split(string(readme), "```yaml\n")[1:] {
			y, _, _ := strings.Cut(b, "```")
			found := true
			for _, m := range marks {
				found = found && strings.Contains(y, m)
			}
			if found {
				cfg, err := config.LoadConfig(relaytest.WriteConfig(t, y))
				require.NoError(t, err)
				return cfg
			}
		}
		t.Fatalf("no yaml block in README.md with %q", marks)
		return config.Config{}
	}
	recipe := func(p string) config.Config {
		cfg, err := config.LoadConfig(p)
		require.NoError(t, err)
		return cfg
	}
	assert.Equal(t, block("name: deny", "name: flows").Routes, recipe(recipeReduction).Routes, "reduction")
	mig := block("syslog-forwarders", "sentinel-apps")
	rm := recipe(recipeMigration)
	assert.Equal(t, mig.Routes, rm.Routes, "migration")
	assert.Equal(t, mig.Inputs.HEC[0].Tokens[0].Route, rm.Inputs.HEC[0].Tokens[0].Route, "migration")
	// The full example's routes, without its geoip step (its databases
	// are the operator's).
	full := block("name: cef-to-sentinel", "everything-to-splunk").Routes
	require.Equal(t, "geoip", full[2].Pipeline[0].Type)
	full[2].Pipeline = nil
	assert.Equal(t, full, recipe(recipeFull).Routes, "full example")
}

// failingTests pass and fail on each kind of input and output: syslog,
// CEF and HEC in; fields, Sentinel rows and HEC events out.
const failingTests = `
tests:
  - name: syslog passes
    input: {line: "<38>1 2026-03-01T12:00:00Z web1 sshd 1 - - ok"}
    expect:
      destinations: [sentinel-syslog, splunk, archive]
      sentinel: {Computer: web1, Facility: auth}
  - name: syslog to the wrong table
    input: {line: "<38>1 2026-03-01T12:00:00Z web1 sshd 1 - - ok"}
    expect:
      destinations: [sentinel-cef]
      sentinel: {Computer: web2, Facility: auth}
  - name: CEF passes
    input: {line: "<134>Mar  1 12:00:00 fw1 CEF:0|Fortinet|Fortigate|7.2|13|deny|3|src=10.1.1.1 dpt=443 act=deny"}
    expect:
      sentinel: {DeviceVendor: Fortinet, DestinationPort: 443}
      fields: {act: {regex: "^de"}, user: {absent: true}}
  - name: CEF with the wrong vendor
    input: {line: "<134>Mar  1 12:00:00 fw1 CEF:0|Fortinet|Fortigate|7.2|13|deny|3|src=10.1.1.1 dpt=443 act=deny"}
    expect:
      sentinel: {DeviceVendor: Palo Alto Networks, DestinationPort: 443}
      fields: {act: {regex: "^acc"}, src: {absent: true}}
  - name: HEC output passes
    input: {kind: json, line: '{"a":1}'}
    expect:
      hec: {sourcetype: json, index: syslog, event: '{"a":1}'}
  - name: HEC output with the wrong sourcetype
    input: {kind: json, line: '{"a":1}'}
    expect:
      hec: {sourcetype: syslog, host: {regex: "^10\\."}}
`

const failingHECTests = `
tests:
  - name: HEC input passes
    input: {kind: hec, token: apps, line: '{"host": "api-7", "event": "paid"}'}
    expect:
      destinations: [sentinel-apps, archive]
      destination: sentinel-apps
      sentinel: {RawData: paid, SourceType: app:json, Computer: api-7}
  - name: HEC input to the wrong destination
    input: {kind: hec, token: syslog-forwarders, line: '{"host": "api-7", "event": "paid"}'}
    expect:
      destination: sentinel-apps
      count: 1
      sentinel: {RawData: paid}
  - name: HEC input refused
    input: {kind: hec, token: apps, line: '{"host": "api-7"}'}
    expect:
      destinations: [archive]
`

func TestRelayTestFailures(t *testing.T) {
	code, out, errOut := relayTest(t, "-config", recipeFull, writeTests(t, failingTests))
	assert.Equal(t, 1, code, "stderr: %s", errOut)
	t.Log("\n" + out)
	for _, want := range []string{
		"--- FAIL: syslog to the wrong table (",
		"  destinations: want [sentinel-cef], got [archive (1), sentinel-syslog (1), splunk (1)]\n",
		"  sentinel row at sentinel-syslog, event 1 of 1:\n      Computer: want \"web2\", got \"web1\"\n      row: {",
		"--- FAIL: CEF with the wrong vendor (",
		"  fields at archive, event 1 of 1:\n      act: want /^acc/, got \"deny\"\n      src: want absent, got \"10.1.1.1\"\n      event: host=\"fw1\"",
		"  sentinel row at sentinel-cef, event 1 of 1:\n      DeviceVendor: want \"Palo Alto Networks\", got \"Fortinet\"\n      row: {",
		"--- FAIL: HEC output with the wrong sourcetype (",
		"  hec event at splunk, event 1 of 1:\n      host: want /^10\\./, got \"192.0.2.1\"\n      sourcetype: want \"syslog\", got \"json\"\n      event: {",
		"FAIL: 3 of 6 cases failed\n",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "passes")
	assert.NotContains(t, out, "DestinationPort: want", "a column that matched is not in the diff")

	code, out, _ = relayTest(t, "-config", recipeMigration, writeTests(t, failingHECTests))
	assert.Equal(t, 1, code)
	t.Log("\n" + out)
	for _, want := range []string{
		"--- FAIL: HEC input to the wrong destination (",
		"  count: want 1 events at sentinel-apps, got 0\n",
		"  sentinel: no Sentinel destination received an event\n",
		"--- FAIL: HEC input refused (",
		"  destinations: want [archive], got none\n",
		"  note: request 1 answered 400 {\"text\":\"Event field is required\",\"code\":12,\"invalid-event-number\":0}\n",
		"FAIL: 2 of 3 cases failed\n",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "HEC input passes")

	// -v lists the cases that passed too.
	_, out, _ = relayTest(t, "-v", "-config", recipeMigration, writeTests(t, failingHECTests))
	assert.Contains(t, out, "--- PASS: HEC input passes (")
}

func TestRelayTestJUnit(t *testing.T) {
	report := filepath.Join(t.TempDir(), "report.xml")
	code, out, errOut := relayTest(t, "-format", "junit", "-o", report, "-config", recipeFull, writeTests(t, failingTests))
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "relay test: 3 of 6 cases failed (report in "+report+")")
	data, err := os.ReadFile(report)
	require.NoError(t, err)
	var doc junitSuites
	require.NoError(t, xml.Unmarshal(data, &doc))
	assert.Equal(t, 6, doc.Tests)
	assert.Equal(t, 3, doc.Failures)
	require.Len(t, doc.Suites, 1)
	s := doc.Suites[0]
	require.Len(t, s.Cases, 6)
	assert.Equal(t, "syslog passes", s.Cases[0].Name)
	assert.Nil(t, s.Cases[0].Failure)
	f := s.Cases[3].Failure
	require.NotNil(t, f)
	assert.Equal(t, "CEF with the wrong vendor", s.Cases[3].Name)
	assert.Equal(t, "fields at archive, event 1 of 1:", f.Message)
	assert.Contains(t, f.Text, `DeviceVendor: want "Palo Alto Networks", got "Fortinet"`)

	// All passing: exit 0, a report without failures.
	code, out, _ = relayTest(t, "-format", "junit", "-config", recipeReduction, "../../testdata/recipes/sentinel-reduction.tests.yaml")
	assert.Equal(t, 0, code)
	require.NoError(t, xml.Unmarshal([]byte(out), &doc))
	assert.Equal(t, 0, doc.Failures)
	assert.Equal(t, 3, doc.Tests)
}

// TestRunTests is the library call: the report's cases, failures and
// what each destination received.
func TestRunTests(t *testing.T) {
	cfg, err := config.LoadConfig(recipeFull)
	require.NoError(t, err)
	suite, err := ParseTests([]byte(failingTests))
	require.NoError(t, err)
	rep, err := RunTests(&cfg, suite)
	require.NoError(t, err)
	require.Len(t, rep.Cases, 6)
	assert.Equal(t, 3, rep.Failed())
	assert.True(t, rep.Cases[0].Passed())
	assert.Positive(t, rep.Cases[0].Took)
	assert.Equal(t, map[string]int{"sentinel-syslog": 1, "splunk": 1, "archive": 1}, rep.Cases[0].Received)
	c := rep.Cases[1]
	assert.False(t, c.Passed())
	require.Len(t, c.Failures, 2)
	assert.Equal(t, "destinations: want [sentinel-cef], got [archive (1), sentinel-syslog (1), splunk (1)]", c.Failures[0])
	assert.Equal(t, map[string]int{"sentinel-cef": 1, "splunk": 1, "archive": 1}, rep.Cases[2].Received)
	assert.Empty(t, rep.Cases[2].Notes)

	// Reduction: summaries are flushed at the end of each case, and each
	// case starts with empty state (the same three denies twice: the
	// first passes both times).
	red, err := config.LoadConfig(recipeReduction)
	require.NoError(t, err)
	deny := `{name: %s, input: {lines: [
      "<134>Mar  1 12:00:00 fw1 CEF:0|F|G|1|1|d|3|act=deny",
      "<134>Mar  1 12:00:00 fw1 CEF:0|F|G|1|1|d|3|act=deny"]},
    expect: [{count: 2}, {event: 1, fields: {cnt: {absent: true}}}, {event: -1, fields: {cnt: "1"}}]}`
	suite, err = ParseTests([]byte("tests:\n  - " + strings.ReplaceAll(deny, "%s", "one") + "\n  - " + strings.ReplaceAll(deny, "%s", "two") + "\n"))
	require.NoError(t, err)
	rep, err = RunTests(&red, suite)
	require.NoError(t, err)
	for _, c := range rep.Cases {
		assert.True(t, c.Passed(), "%s: %q", c.Name, c.Failures)
	}

	// What a step dropped is noted, for the diff of a case that fails.
	suite, err = ParseTests([]byte(`tests: [{name: sampled, input: {lines: ["<14>1 - a b - - - x", "<14>1 - a b - - - y"]}, expect: {count: 1}}]`))
	require.NoError(t, err)
	rep, err = RunTests(&red, suite)
	require.NoError(t, err)
	assert.True(t, rep.Cases[0].Passed(), "%q", rep.Cases[0].Failures)
	assert.Equal(t, []string{"dropped 1: filtered at route rest"}, rep.Cases[0].Notes)
}

// TestRelayTestOpensNothing: the config's inputs listen on a port taken
// here and its destinations point at a server that counts requests;
// relay test binds nothing and sends nothing.
func TestRelayTestOpensNothing(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	defer srv.Close()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	cfg := relaytest.WriteConfig(t, `
inputs:
  syslog_udp: []
  syslog_tcp: [{name: tcp, listen: "`+taken.Addr().String()+`"}]
  hec: [{name: hec, listen: "`+taken.Addr().String()+`", tokens: [{name: t, token: tok}]}]
routes:
  - {name: all, destinations: [hec, sentinel]}
destinations:
  hec: {type: hec, url: "`+srv.URL+`", token: x}
  sentinel:
    type: sentinel
    table: syslog
    endpoint: "`+srv.URL+`"
    authority_host: "`+srv.URL+`"
    dcr_immutable_id: dcr-00000000000000000000000000000001
    tenant_id: 00000000-0000-0000-0000-000000000001
    client_id: c
    client_secret: s
`)
	code, out, errOut := relayTest(t, "-config", cfg, writeTests(t, `
tests:
  - name: syslog
    input: {name: tcp, line: "<13>1 2026-03-01T12:00:00Z h a - - - hello"}
    expect: {destinations: [hec, sentinel], hec: {event: hello}, sentinel: {SyslogMessage: hello}}
  - name: hec
    input: {name: hec, line: '{"event": "hi"}'}
    expect: {destinations: [hec, sentinel], hec: {event: hi}, sentinel: {SyslogMessage: hi}}
`))
	assert.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	assert.Zero(t, hits.Load(), "requests to the destinations")
}

func TestRelayTestErrors(t *testing.T) {
	good := writeTests(t, "tests:\n  - {name: a, input: {line: x}, expect: {destinations: none}}\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no test file", []string{"-config", recipeFull}, "usage: relay test"},
		{"bad format", []string{"-format", "xml", good}, `-format "xml"`},
		{"missing config", []string{"-config", "/nonexistent.yaml", good}, "relay test: config:"},
		{"missing tests", []string{"/nonexistent-tests.yaml"}, "relay test: tests:"},
		{"unknown key", []string{writeTests(t, "tests:\n  - {name: a, input: {line: x}, expect: {destination: [a]}, extra: 1}\n")}, "field extra not found"},
		{"bad regex", []string{writeTests(t, "tests:\n  - {name: a, input: {line: x}, expect: {fields: {a: {regex: '('}}}}\n")}, "regex"},
		{"two conditions", []string{writeTests(t, "tests:\n  - {name: a, input: {line: x}, expect: {fields: {a: {equals: b, absent: true}}}}\n")}, "exactly one of"},
		{"no input", []string{writeTests(t, "tests:\n  - {name: a, expect: {destinations: none}}\n")}, "line or lines is required"},
		{"duplicate name", []string{writeTests(t, "tests:\n  - {name: a, input: {line: x}, expect: {count: 0}}\n  - {name: a, input: {line: x}, expect: {count: 0}}\n")}, `duplicate name "a"`},
		{"no tests", []string{writeTests(t, "tests: []\n")}, "no tests"},
		{"memcached lookup", []string{"-config", relaytest.WriteConfig(t, `
routes:
  - name: all
    destinations: [archive]
    pipeline: [{type: lookup, memcached: ["127.0.0.1:11211"], field: user, target: dept}]
`), good}, "memcached lookups would query the servers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := relayTest(t, tc.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.want)
		})
	}
}

// TestRelayTestInputLimits: a named input's size limits apply.
func TestRelayTestInputLimits(t *testing.T) {
	cfg := relaytest.WriteConfig(t, `
inputs:
  syslog_udp: [{name: udp, listen: "127.0.0.1:5514", max_message_size: 64}]
  syslog_tcp: []
  json_tcp: [{name: json, listen: "127.0.0.1:5515", max_line_size: 16}]
routes: [{name: all, destinations: [archive]}]
`)
	long := strings.Repeat("x", 100)
	code, out, _ := relayTest(t, "-config", cfg, writeTests(t, `
tests:
  - name: cut
    input: {name: udp, line: "<13>1 2026-03-01T12:00:00Z h a - - - `+long+`"}
    expect: {destinations: [archive], fields: {_raw: {regex: "^x{10,40}$"}}}
  - name: refused
    input: {name: json, line: '{"a":"`+long+`"}'}
    expect: {destinations: [archive]}
`))
	assert.Equal(t, 1, code)
	assert.NotContains(t, out, "--- FAIL: cut")
	assert.Contains(t, out, "--- FAIL: refused")
	assert.Contains(t, out, "note: line 1 is longer than 16 bytes, dead-lettered")
}

// TestRelayTestInputErrors: what an input cannot take fails its case,
// the other cases still run.
func TestRelayTestInputErrors(t *testing.T) {
	code, out, _ := relayTest(t, "-config", recipeMigration, writeTests(t, `
tests:
  - {name: unknown input, input: {name: nope, line: x}, expect: {count: 0}}
  - {name: kind mismatch, input: {name: hec, kind: json, line: "{}"}, expect: {count: 0}}
  - {name: unknown token, input: {kind: hec, token: nope, line: "{}"}, expect: {count: 0}}
  - {name: unknown destination, input: {name: relp, line: x}, expect: {destination: nope, count: 1}}
  - {name: unknown destinations, input: {name: relp, line: x}, expect: {destinations: [archive, nope]}}
  - {name: fine, input: {name: relp, line: x}, expect: {count: 2}}
`))
	assert.Equal(t, 1, code)
	for _, want := range []string{
		`input: name: no syslog, relp, json_tcp or hec input is named "nope"`,
		`input: kind: json, but input "hec" takes hec`,
		`input: token: the input has no token named "nope"`,
		`destination: "nope" is not a destination of the config`,
		`destinations: "nope" is not a destination of the config`,
		"FAIL: 5 of 6 cases failed",
	} {
		assert.Contains(t, out, want)
	}
}

// BenchmarkRunTests runs the full recipe's suite: one op is the suite
// (six cases, each with its own router), what CI pays per test file.
func BenchmarkRunTests(b *testing.B) {
	cfg, err := config.LoadConfig(recipeFull)
	require.NoError(b, err)
	suite, err := LoadTests("../../testdata/recipes/sentinel-syslog-cef.tests.yaml")
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		rep, err := RunTests(&cfg, suite)
		if err != nil || rep.Failed() > 0 {
			b.Fatal(err, rep.Failed())
		}
	}
}
