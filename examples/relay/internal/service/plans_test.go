package service

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/dest"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward/forwardtest"
)

func TestPlanConfigErrors(t *testing.T) {
	const sentinel = "routes:\n  - {name: r, final: true, destinations: [s]}\n" +
		"destinations:\n  s:\n    type: sentinel\n    endpoint: https://dce.example.com\n" +
		"    dcr_immutable_id: dcr-00000000000000000000000000000001\n    tenant_id: t\n    client_id: c\n    client_secret: x\n"
	for _, tt := range []struct{ name, yaml, want string }{
		{"unknown plan", sentinel + "    stream: Custom-T_CL\n    plan: archive\n",
			`destinations.s.plan: unknown plan "archive" (want analytics, basic or auxiliary)`},
		{"auxiliary built-in table", sentinel + "    table: common_security_log\n    plan: auxiliary\n",
			"destinations.s.plan: auxiliary is for custom tables only, not table: common_security_log"},
		{"auxiliary with a dynamic column", sentinel + "    stream: Custom-T_CL\n    plan: auxiliary\n    columns: {fields: Props}\n",
			`destinations.s.columns.fields: "Props" would be a dynamic column, which a table with the auxiliary plan cannot have`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.LoadConfig(relaytest.WriteConfig(t, tt.yaml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	for _, ok := range []string{
		sentinel + "    stream: Custom-T_CL\n    plan: auxiliary\n    columns: {fields: '-'}\n",
		sentinel + "    table: common_security_log\n    plan: basic\n",
		sentinel + "    table: syslog\n    plan: analytics\n",
	} {
		_, err := config.LoadConfig(relaytest.WriteConfig(t, ok))
		assert.NoError(t, err, ok)
	}
}

// sentinelDest is a sentinel destination for srv, with the retry budget
// of these tests.
func sentinelDest(srv *forwardtest.DCRServer, d *dest.SentinelDestination) config.DestinationConfig {
	c := srv.Config()
	d.Endpoint, d.AuthorityHost = srv.URL, srv.AuthorityHost
	d.DCRImmutableID, d.TenantID, d.ClientID, d.ClientSecret = c.DCRImmutableID, c.TenantID, c.ClientID, config.Secret(c.ClientSecret)
	d.NetworkSettings = dest.NetworkSettings{Timeout: 5 * time.Second}
	return config.DestinationConfig{Spec: d}
}

// TestBasicPlanCommonSecurityLog: a CommonSecurityLog destination with
// plan: basic sends the rows an analytics one sends (same stream, same
// rule), and the stand-in whose table has the Basic plan accepts every
// one, typed.
func TestBasicPlanCommonSecurityLog(t *testing.T) {
	dcr := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{Stream: "Microsoft-CommonSecurityLog", Plan: forwardtest.PlanBasic})
	cfg := relaytest.TestConfig(t)
	cfg.Destinations["sentinel"] = sentinelDest(dcr, &dest.SentinelDestination{Table: "common_security_log", Plan: "basic", CollectorHostName: "-"})
	cfg.Routes = append([]config.RouteConfig{{Name: "cef", Field: "sourcetype", Filter: "^cef$", Final: true, Destinations: []string{"sentinel"}}}, cfg.Routes...)
	tr := startRelay(t, cfg)
	var burst bytes.Buffer
	const n = 50
	for i := range n {
		burst.WriteString(flowLine(fmt.Sprintf("192.0.2.%d", i), 443, 1000+i))
	}
	relaytest.Send(t, "tcp", tr.addr("tcp"), burst.Bytes())
	relaytest.WaitFor(t, 30*time.Second, func() bool { return tr.Ledger().Dest["sentinel"].Delivered == n }, "every row delivered")
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Zero(t, s.DroppedTotal())
	rows := dcr.Rows()
	require.Len(t, rows, n)
	for _, r := range rows {
		assert.Equal(t, "accept", r["DeviceAction"])
		assert.Equal(t, json.Number("443"), r["DestinationPort"])
		assert.Regexp(t, `\.\d{7}Z$`, r["TimeGenerated"], "the Analytics encoding")
	}
}

// recipeYAML returns the YAML block of README.md that follows the
// plans-recipe marker: the test runs the README's own text.
func recipeYAML(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)<!-- plans-recipe[^>]*-->\\s*```yaml\\n(.*?)```").FindSubmatch(readme)
	require.NotNil(t, m, "the plans recipe in README.md")
	return string(m[1])
}

// auxTableColumns declares the recipe's Auxiliary table FirewallRaw_CL
// (no dynamic column, as Azure requires).
var auxTableColumns = map[string]string{
	"TimeGenerated": forwardtest.TypeDatetime, "RawData": forwardtest.TypeString, "Computer": forwardtest.TypeString,
	"ProcessName": forwardtest.TypeString, "Facility": forwardtest.TypeInt, "SeverityLevel": forwardtest.TypeInt,
	"SourceIP": forwardtest.TypeString, "DestinationIP": forwardtest.TypeString,
	"DestinationPort": forwardtest.TypeString, "DeviceAction": forwardtest.TypeString,
}

// TestPlansRecipe runs the README's recipe, its YAML as written (the
// addresses, rule IDs and credentials from the environment variables it
// names; the Entra authority host, which the recipe leaves at Azure's,
// set to each stand-in's): denies in a burst (several keys), accepted
// flows of three groups, another CEF event and a plain syslog line. The
// Auxiliary stand-in (which refuses 7-digit times and dynamic values)
// gets every event as received; the CommonSecurityLog stand-in gets the
// allowed denies, their summaries, the flow summaries and the other CEF
// event, typed; the counts add up to what was sent. The windows are the
// recipe's (30 s, 1 min, aligned to the clock): a burst that straddles a
// window's end has two rows for a key, which the sums account for.
func TestPlansRecipe(t *testing.T) {
	aux := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{
		DCRImmutableID: "dcr-0000000000000000000000000000aux1", Stream: "Custom-FirewallRaw_CL",
		Plan: forwardtest.PlanAuxiliary, Columns: auxTableColumns,
	})
	cef := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{
		DCRImmutableID: "dcr-0000000000000000000000000000cef1", Stream: "Microsoft-CommonSecurityLog", Plan: forwardtest.PlanAnalytics,
	})
	c := aux.Config()
	for k, v := range map[string]string{
		"SENTINEL_AUX_ENDPOINT": aux.URL, "SENTINEL_AUX_DCR": c.DCRImmutableID,
		"SENTINEL_CEF_ENDPOINT": cef.URL, "SENTINEL_CEF_DCR": cef.Config().DCRImmutableID,
		"SENTINEL_TENANT_ID": c.TenantID, "SENTINEL_CLIENT_ID": c.ClientID, "SENTINEL_CLIENT_SECRET": c.ClientSecret,
	} {
		t.Setenv(k, v)
	}
	recipe, err := config.LoadConfig(relaytest.WriteConfig(t, recipeYAML(t)))
	require.NoError(t, err)
	cfg := relaytest.TestConfig(t)
	cfg.Routes, cfg.Destinations = recipe.Routes, recipe.Destinations
	relaytest.SpecOf[*dest.SentinelDestination](cfg, "sentinel-aux").AuthorityHost = aux.AuthorityHost
	relaytest.SpecOf[*dest.SentinelDestination](cfg, "sentinel-cef").AuthorityHost = cef.AuthorityHost
	tr := startRelay(t, cfg)

	// Denies: 4 keys (src), 2,500 each; flows: 3 groups, skewed.
	var burst bytes.Buffer
	denies := map[string]int{}
	for i := range 10000 {
		src := fmt.Sprintf("198.51.100.%d", i%4)
		denies[src]++
		burst.WriteString(strings.Replace(denyLine(), "198.51.100.7", src, 1))
	}
	type group struct {
		src  string
		dpt  int
		n    int
		sent int64
	}
	groups := []*group{{src: "192.0.2.1", dpt: 443}, {src: "192.0.2.2", dpt: 443}, {src: "192.0.2.1", dpt: 53}}
	const flows = 900
	for i := range flows {
		g := groups[i%len(groups)]
		if i%5 == 0 {
			g = groups[0]
		}
		out := 500 + i*11
		g.n++
		g.sent += int64(out)
		burst.WriteString(flowLine(g.src, g.dpt, out))
	}
	burst.WriteString("<134>1 2026-11-27T10:00:01.000Z fw01 FW - - - CEF:0|Acme|Firewall|1.0|300|virus found|8|" +
		"src=203.0.113.5 dst=10.0.0.7 dpt=80 act=blocked fname=eicar.com\n")
	burst.WriteString("<30>1 2026-11-27T10:00:02.000Z fw01 dhcpd 42 - - DHCPACK on 10.0.0.7\n")
	total := 10000 + flows + 2
	relaytest.Send(t, "tcp", tr.addr("tcp"), burst.Bytes())
	relaytest.WaitFor(t, 60*time.Second, func() bool {
		s := tr.Ledger()
		return s.Routed == int64(total) && s.Dest["sentinel-aux"].Delivered == int64(total)
	}, "every event routed and in the Auxiliary table")
	s := tr.stop(t) // ends the open windows: their summaries go out
	checkBalanced(t, s)
	require.Zero(t, s.DroppedTotal(), "no row refused by either table: %s", s)

	// Auxiliary: every event as received, 6-digit times, string columns.
	auxRows := aux.Rows()
	require.Len(t, auxRows, total)
	byAction := map[string]int{}
	for _, r := range auxRows {
		require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`, r["TimeGenerated"])
		require.NotContains(t, r, "Fields", "no dynamic column")
		act, _ := r["DeviceAction"].(string)
		byAction[act]++
		if act == "accept" {
			require.IsType(t, "", r["DestinationPort"], "string column")
			require.Contains(t, r["RawData"], "CEF:0|Acme|Firewall|1.0|200|accept|3|", "the whole message")
		}
	}
	assert.Equal(t, map[string]int{"deny": 10000, "accept": flows, "blocked": 1, "": 1}, byAction)

	// Analytics: per deny key the allowed event plus a summary whose
	// EventCount is the rest; per flow group one row with count and sum.
	var allowed, suppressed, other int
	denySeen := map[string]int{}
	type groupTotal struct {
		n    int
		sent int64
	}
	flowSeen := map[string]*groupTotal{}
	for _, r := range cef.Rows() {
		switch r["DeviceAction"] {
		case "deny":
			src := r["SourceIP"].(string)
			if r["EventCount"] == nil {
				allowed++
				denySeen[src]++
				continue
			}
			n, err := strconv.Atoi(string(r["EventCount"].(json.Number)))
			require.NoError(t, err, "EventCount in the int column")
			suppressed += n
			denySeen[src] += n
		case "accept":
			key := fmt.Sprintf("%v/%v", r["SourceIP"], r["DestinationPort"])
			n, err := strconv.Atoi(string(r["EventCount"].(json.Number)))
			require.NoError(t, err, "count in the int column")
			sent, err := strconv.ParseInt(string(r["SentBytes"].(json.Number)), 10, 64)
			require.NoError(t, err, "sum in the long column")
			if flowSeen[key] == nil {
				flowSeen[key] = &groupTotal{}
			}
			flowSeen[key].n += n
			flowSeen[key].sent += sent
		default:
			other++
			assert.Equal(t, "blocked", r["DeviceAction"], "%v", r)
			assert.Equal(t, "eicar.com", r["FileName"])
		}
	}
	assert.GreaterOrEqual(t, allowed, len(denies), "allow: 1 per key and window")
	assert.Less(t, allowed, 10*len(denies), "allow: 1 per key and window (a few windows at most)")
	assert.Equal(t, 10000, allowed+suppressed, "allowed + EventCount of the summaries = the denies sent")
	assert.Equal(t, denies, denySeen, "per key")
	want := map[string]*groupTotal{}
	sum := 0
	for _, g := range groups {
		want[fmt.Sprintf("%s/%d", g.src, g.dpt)] = &groupTotal{g.n, g.sent}
		sum += g.n
	}
	assert.Equal(t, flows, sum)
	assert.Equal(t, want, flowSeen, "per flow group: EventCount and SentBytes add up to the flows sent")
	assert.Equal(t, 1, other)
	assert.Equal(t, int64(len(cef.Rows())), s.Dest["sentinel-cef"].Delivered)
}
