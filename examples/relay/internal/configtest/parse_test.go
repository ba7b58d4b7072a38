package configtest

import (
	"strings"
	"testing"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deviceRecipes are the README's device recipes, by the vendor name of
// their marker and the file under testdata/recipes.
var deviceRecipes = map[string]string{
	"fortigate": "sentinel-fortigate", "panos": "sentinel-panos", "cisco_asa": "sentinel-cisco-asa", "checkpoint": "sentinel-checkpoint",
}

// sentinelEnv sets the variables the README's device examples read.
func sentinelEnv(t *testing.T) {
	for k, v := range map[string]string{
		"SENTINEL_CEF_ENDPOINT": "https://dce.example.com", "SENTINEL_CEF_DCR": "dcr-00000000000000000000000000000001",
		"SENTINEL_TENANT_ID": "t", "SENTINEL_CLIENT_ID": "c", "SENTINEL_CLIENT_SECRET": "x",
	} {
		t.Setenv(k, v)
	}
}

// TestDeviceRecipesFollowReadme keeps each device recipe's routes those of
// its README block (the recipe file's destinations are the README's with
// defaults for relay test).
func TestDeviceRecipesFollowReadme(t *testing.T) {
	sentinelEnv(t)
	for vendor, file := range deviceRecipes {
		t.Run(vendor, func(t *testing.T) {
			readme, err := config.LoadConfig(relaytest.WriteConfig(t, relaytest.DeviceRecipe(t, vendor)))
			require.NoError(t, err)
			recipe, err := config.LoadConfig("../../testdata/recipes/" + file + ".yaml")
			require.NoError(t, err)
			assert.Equal(t, readme.Routes, recipe.Routes)
			assert.Equal(t, "vendor", readme.Routes[0].Pipeline[0].Type)
		})
	}
}

// TestParseStepsReadme runs the README's example of every parse step with
// relay test: the fields each step sets, the row CommonSecurityLog gets,
// and a line a step cannot read, which goes on with a note.
func TestParseStepsReadme(t *testing.T) {
	sentinelEnv(t)
	cfg, err := config.LoadConfig(relaytest.WriteConfig(t, relaytest.ReadmeBlock(t, "parse-steps")+relaytest.ReadmeBlock(t, "device-destinations")))
	require.NoError(t, err)
	const line = `<134>1 2026-11-28T12:00:05Z gw7 appliance - - - date=2026-11-28 time=13:00:00 tz=+0100 src=10.0.0.1 spt=0443 ` +
		`dst=[2001:DB8::9] dpt=+80 user="jdoe@corp" summary=web,allow,news took 12.50ms`
	suite, err := ParseTests([]byte(`
tests:
  - name: every step
    input: {line: '` + line + `'}
    expect:
      destinations: [sentinel-cef]
      fields: {date: 2026-11-28, src: 10.0.0.1, spt: "443", dst: "2001:db8::9", dpt: "80", kind: web, act: allow, cat: news,
               suser: jdoe, sntdom: corp, took_ms: "12.5", a: {absent: true}}
      sentinel:
        TimeGenerated: 2026-11-28T12:00:00.0000000Z
        SourceIP: 10.0.0.1
        SourcePort: 443
        DestinationIP: "2001:db8::9"
        DestinationPort: 80
        DeviceAction: allow
        DeviceEventCategory: news
        SourceUserName: jdoe
        SourceNTDomain: corp
        Message: {regex: '^date=2026-11-28 time=13:00:00 .* took 12\.50ms$'}
        DeviceVendor: {absent: true}
        AdditionalExtensions: {regex: 'took_ms=12\.5'}
  - name: a dns summary picks the other column set
    input: {line: '<134>1 2026-11-28T12:00:05Z gw7 appliance - - - summary=dns,example.com,192.0.2.7'}
    expect:
      fields: {kind: dns, query: example.com, answer: 192.0.2.7, act: {absent: true}}
  - name: no pair, no match, no time
    input: {line: '<134>1 2026-11-28T12:00:05Z gw7 appliance - - - nothing to read here'}
    expect:
      destinations: [sentinel-cef]
      sentinel: {Message: nothing to read here, TimeGenerated: 2026-11-28T12:00:05.0000000Z}
`))
	require.NoError(t, err)
	rep, err := RunTests(&cfg, suite)
	require.NoError(t, err)
	for _, c := range rep.Cases {
		assert.True(t, c.Passed(), "%s: %s", c.Name, strings.Join(c.Failures, "\n"))
	}
	notes := strings.Join(rep.Cases[2].Notes, "\n")
	for _, step := range []string{"parse_kv: parse: no match", "parse_regex: parse: no match", "parse_grok: parse: no match",
		"parse_timestamp: parse: bad timestamp"} {
		assert.Contains(t, notes, "route appliance, step "+step+" (the event went on)")
	}
}

// TestParseStepErrors: -check and relay test refuse each parse step's bad
// settings, naming the step, the setting and, for a pattern, its line.
func TestParseStepErrors(t *testing.T) {
	const head = "routes:\n  - name: fw\n    destinations: [archive]\n    pipeline:\n      - {type: set, field: x, value: y}\n"
	tests := []struct{ name, step, want string }{
		{"regex pattern", "- {type: regex, pattern: 'from (?P<src>\\S+'}",
			"routes[0].pipeline[1].pattern: line 6: regex: error parsing regexp: missing closing ): `from (?P<src>\\S+` (route \"fw\")"},
		{"regex without groups", "- {type: regex, pattern: 'from \\S+'}", `routes[0].pipeline[1].pattern: line 6: regex: pattern "from \\S+" has no named group`},
		{"regex pattern on its own line", "- type: regex\n        field: msg\n        pattern: '(?P<x>'", "routes[0].pipeline[1].pattern: line 8: regex: error parsing regexp"},
		{"regex without pattern", "- {type: regex}", "routes[0].pipeline[1]: line 6: regex: pattern is required"},
		{"grok unknown pattern", "- {type: grok, pattern: '%{NOPE:x}'}", `routes[0].pipeline[1].pattern: line 6: grok: pattern definition "NOPE" unknown`},
		{"grok bad definition", "- type: grok\n        pattern: '%{MINE:x}'\n        patterns:\n          MINE: '(\\d+'", "routes[0].pipeline[1].pattern: line 7: grok: error parsing regexp"},
		{"mask pattern", "- {type: mask, pattern: '[a-'}", "routes[0].pipeline[1].pattern: line 6: error parsing regexp"},
		{"kv duplicate", "- {type: kv, duplicate: newest}", `routes[0].pipeline[1]: line 6: kv: duplicate "newest": want last, first or join`},
		{"kv separator", "- {type: kv, separator: ' '}", "routes[0].pipeline[1]: line 6: kv: "},
		{"csv separator", "- {type: csv, separator: ';;'}", `csv: separator ";;": one byte`},
		{"csv select", "- {type: csv, columns: [a, b], select: c}", `csv: Select "c" is not one of Columns`},
		{"timestamp fields", "- {type: timestamp, layout: unix}", "timestamp: fields is required"},
		{"timestamp layout", "- {type: timestamp, fields: [t], layout: dd.mm.yyyy}", `timestamp: layout "dd.mm.yyyy" has no element of Go's reference time`},
		{"timestamp location", "- {type: timestamp, fields: [t], location: Mars/Olympus}", "timestamp: location: unknown time zone Mars/Olympus"},
		{"timestamp fields map", "- {type: timestamp, fields: {t: int}}", "timestamp: fields is a list of names, not a map"},
		{"convert type", "- {type: convert, fields: {dpt: integer}}", `convert: field "dpt": unknown type "integer"`},
		{"convert list", "- {type: convert, fields: [dpt]}", "convert: fields is required: a map of field names to int, float, bool or ip"},
		{"keep map", "- {type: keep, fields: {a: int}}", "keep: fields is a list of names, not a map"},
		{"vendor name", "- {type: vendor, name: fortinet}", `vendor: unknown name "fortinet"`},
		{"vendor without name", "- {type: vendor}", "vendor: name is required (checkpoint, cisco_asa, fortigate, panos)"},
		{"unknown key", "- {type: kv, delimiter: ';'}", "field delimiter not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.LoadConfig(relaytest.WriteConfig(t, head+"      "+tt.step+"\n"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	t.Run("filter", func(t *testing.T) {
		_, err := config.LoadConfig(relaytest.WriteConfig(t, "routes:\n  - name: fw\n    filter: '(('\n    destinations: [archive]\n"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "routes[0].filter: line 3: error parsing regexp")
	})
	// Every example in the steps' doc comment loads.
	cfg, err := config.LoadConfig(relaytest.WriteConfig(t, head+
		"      - {type: kv, delimiters: '; ', separator: ':', duplicate: join, prefix: cp.}\n"+
		"      - {type: csv, columns: [-, receive_time, serial, type], select: type, sets: {TRAFFIC: [a, b, c, type]}, braces: true}\n"+
		"      - {type: timestamp, fields: [date, time], zone_field: tz}\n"+
		"      - {type: timestamp, fields: [eventtime], layout: unix_ns}\n"+
		"      - {type: convert, fields: {dpt: int, spt: int, src: ip, ok: bool, r: float}, remove_invalid: true}\n"+
		"      - {type: vendor, name: panos}\n"))
	require.NoError(t, err)
	for _, j := range []int{3, 4, 6} {
		assert.Equal(t, "Local", cfg.Routes[0].Pipeline[j].Location, "the relay's timezone is the default location")
	}
}
