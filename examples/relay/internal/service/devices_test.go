package service

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
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

// deviceLines returns the lines of the parse package's sample file
// (parse/testdata/<name>.log), numbered from 1 as in the file.
func deviceLines(t *testing.T, name string) map[int]string {
	t.Helper()
	data, err := os.ReadFile("../../../../parse/testdata/" + name + ".log")
	require.NoError(t, err)
	lines := map[int]string{}
	for i, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		lines[i+1] = l
	}
	return lines
}

// startDeviceRecipe starts a relay with the README's device recipe for
// vendor, as written (the destinations' addresses and credentials from
// the environment variables it names, set to a CommonSecurityLog stand-in
// that checks every column's type; its archive the test's).
func startDeviceRecipe(t *testing.T, vendor string) (*testRelay, *forwardtest.DCRServer) {
	t.Helper()
	dcr := forwardtest.NewDCRServer(t, forwardtest.DCRServerConfig{Stream: "Microsoft-CommonSecurityLog", Plan: forwardtest.PlanAnalytics})
	c := dcr.Config()
	for k, v := range map[string]string{
		"SENTINEL_CEF_ENDPOINT": dcr.URL, "SENTINEL_CEF_DCR": c.DCRImmutableID,
		"SENTINEL_TENANT_ID": c.TenantID, "SENTINEL_CLIENT_ID": c.ClientID, "SENTINEL_CLIENT_SECRET": c.ClientSecret,
	} {
		t.Setenv(k, v)
	}
	recipe, err := config.LoadConfig(relaytest.WriteConfig(t, relaytest.DeviceRecipe(t, vendor)))
	require.NoError(t, err)
	cfg := relaytest.TestConfig(t)
	archive := cfg.Destinations["archive"]
	cfg.Routes, cfg.Destinations = recipe.Routes, recipe.Destinations
	cfg.Destinations["archive"] = archive
	relaytest.SpecOf[*dest.SentinelDestination](cfg, "sentinel-cef").AuthorityHost = dcr.AuthorityHost
	return startRelay(t, cfg), dcr
}

// findRow returns the first row holding every column of want, or fails
// listing the rows.
func findRow(t *testing.T, rows []map[string]any, want map[string]any) map[string]any {
	t.Helper()
	for _, r := range rows {
		match := true
		for k, v := range want {
			match = match && fmt.Sprint(r[k]) == fmt.Sprint(v)
		}
		if match {
			return r
		}
	}
	var b strings.Builder
	for _, r := range rows {
		j, _ := json.Marshal(r)
		b.Write(append(j, '\n'))
	}
	t.Errorf("no row with %v among:\n%s", want, b.String())
	return nil
}

// parseMetrics scrapes the relay's metrics and returns the value of each
// relay_parse_* series, by its name and labels as exposed.
func parseMetrics(t *testing.T, tr *testRelay) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + tr.addr("metrics") + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	out := map[string]float64{}
	for _, l := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(l, "relay_parse_") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		v, err := strconv.ParseFloat(l[i+1:], 64)
		require.NoError(t, err, l)
		out[l[:i]] = v
	}
	return out
}

// row is a CommonSecurityLog row's columns the vendor tests check: the
// ones an analyst queries first.
func row(src, dst string, spt, dpt int, proto, act, classID, time string) map[string]any {
	r := map[string]any{"SourceIP": src, "DestinationIP": dst, "Protocol": proto, "DeviceAction": act,
		"DeviceEventClassID": classID, "TimeGenerated": time}
	if spt > 0 {
		r["SourcePort"] = json.Number(strconv.Itoa(spt))
	}
	if dpt > 0 {
		r["DestinationPort"] = json.Number(strconv.Itoa(dpt))
	}
	return r
}

// withComputer adds the Computer column a row must have.
func withComputer(r map[string]any, host string) map[string]any {
	r["Computer"] = host
	return r
}

// TestDeviceRecipes sends each vendor's sample lines (parse/testdata)
// through a relay running the README's recipe for it to a
// CommonSecurityLog stand-in that refuses a value of the wrong type in a
// typed column: every row arrives typed (nothing refused, the ledger
// balances), the columns analysts query first hold what the device sent,
// a line the step cannot read keeps its text in Message, other syslog
// goes to the archive, and the parse metrics count what the steps did.
func TestDeviceRecipes(t *testing.T) {
	type vendorCase struct {
		vendor, file string
		edit         map[int]string // replaces a sample line (to tell two rows apart)
		extra        []string       // lines sent after the samples
		archived     int            // lines that reach the archive only
		rows         []map[string]any
		metrics      map[string]float64
	}
	fg := deviceLines(t, "fortigate")
	var denies []string
	for i := range 200 {
		denies = append(denies, strings.Replace(fg[2], "dstport=3389", fmt.Sprintf("dstport=%d", []int{3389, 22, 445, 23}[i%4]), 1))
	}
	pan := deviceLines(t, "panos")
	cases := []vendorCase{
		{vendor: "fortigate", file: "fortigate", extra: denies, archived: 1,
			rows: []map[string]any{
				row("10.1.100.11", "52.53.140.235", 54190, 443, "6", "close", "00013", "2026-11-28T11:58:59.0000000Z"),
				row("10.1.100.11", "185.230.61.185", 59194, 80, "6", "blocked", "13056", "2018-12-27T10:23:50.0000000Z"),
				row("2001:db8::10", "2001:db8:1::20", 51000, 53, "17", "accept", "00013", "2026-11-28T12:00:00.0000000Z"),
				row("198.51.100.23", "10.1.100.20", 40112, 3389, "6", "deny", "00013", "2026-11-28T11:59:01.0000000Z"),
				{"Message": `date=2026-11-28 msg="forwarded text logid=0000000013 type=traffic"`},
			},
			metrics: map[string]float64{
				`relay_parse_events_total{position="0",route="fortigate",step="vendor:fortigate"}`:                         8,
				`relay_parse_results_total{position="0",result="no_match",route="fortigate",step="vendor:fortigate"}`:      1,
				`relay_parse_results_total{position="0",result="unterminated",route="fortigate",step="vendor:fortigate"}`:  1,
				`relay_parse_results_total{position="0",result="bad_time",route="fortigate",step="vendor:fortigate"}`:      1,
				`relay_parse_results_total{position="0",result="parsed",route="fortigate-deny",step="vendor:fortigate"}`:   201,
				`relay_parse_results_total{position="0",result="no_match",route="fortigate-deny",step="vendor:fortigate"}`: 0,
				`relay_parse_results_total{position="0",result="parsed",route="fortigate",step="vendor:fortigate"}`:        7,
			}},
		// Lines 2 and 13 are line 1 in PAN-OS 9.1's shorter form and
		// without a hostname (PAN-OS's default): given source ports of
		// their own to find their rows.
		{vendor: "panos", file: "panos", archived: 1,
			edit: map[int]string{
				2:  strings.Replace(pan[2], ",54321,443,", ",54322,443,", 1),
				13: strings.Replace(pan[13], ",54321,443,", ",54329,443,", 1),
			},
			rows: []map[string]any{
				row("192.168.1.100", "203.0.113.50", 54321, 443, "tcp", "allow", "end", "2026-11-28T11:58:58.1230000Z"),
				row("192.168.1.100", "203.0.113.50", 54322, 443, "tcp", "allow", "end", "2026-11-28T11:58:58.0000000Z"),
				row("192.168.1.100", "198.51.100.99", 52881, 80, "tcp", "block-url", "url", "2026-11-28T11:58:58.5000000Z"),
				{"SourcePort": json.Number("54329"), "Computer": "PA-3260", "DeviceExternalID": "012801000001", "SourceIP": "192.168.1.100",
					"DestinationIP": "203.0.113.50", "DestinationPort": json.Number("443"), "DeviceAction": "allow", "Activity": "TRAFFIC"},
				{"Activity": "CONFIG", "DeviceAction": "edit", "DestinationUserName": "admin"},
			},
			metrics: map[string]float64{
				`relay_parse_events_total{position="0",route="panos",step="vendor:panos"}`:                    13,
				`relay_parse_results_total{position="0",result="parsed",route="panos",step="vendor:panos"}`:   13,
				`relay_parse_results_total{position="0",result="unknown",route="panos",step="vendor:panos"}`:  1,
				`relay_parse_results_total{position="0",result="bad_time",route="panos",step="vendor:panos"}`: 1,
			}},
		{vendor: "cisco_asa", file: "asa", archived: 1,
			rows: []map[string]any{
				row("203.0.113.5", "10.0.0.5", 51234, 443, "TCP", "Built", "302013", "2026-11-28T12:58:59.0000000Z"),
				row("10.1.1.2", "10.1.2.1", 53496, 22, "TCP", "Built", "302013", "2026-11-28T12:59:00.0000000Z"),
				row("2001:db8::5", "2001:db8:1::10", 51234, 443, "tcp", "Deny", "106023", "2026-11-28T12:59:06.0000000Z"),
				row("203.0.113.5", "10.0.0.5", 51234, 22, "tcp", "denied", "106100", "2026-11-28T12:59:08.0000000Z"),
				row("203.0.113.5", "10.0.0.5", 5353, 161, "UDP", "Deny", "106006", "2026-11-28T12:59:10.0000000Z"),
				{"DeviceEventClassID": "111008", "Message": "User 'enable_15' executed the 'write memory' command."},
				{"DeviceProduct": "FTD", "Computer": "ftd-1", "DestinationPort": json.Number("8443")},
			},
			metrics: map[string]float64{
				`relay_parse_events_total{position="0",route="cisco-asa",step="vendor:cisco_asa"}`:                    20,
				`relay_parse_results_total{position="0",result="unknown",route="cisco-asa",step="vendor:cisco_asa"}`:  1,
				`relay_parse_results_total{position="0",result="mismatch",route="cisco-asa",step="vendor:cisco_asa"}`: 1,
			}},
		{vendor: "checkpoint", file: "checkpoint", archived: 1,
			rows: []map[string]any{
				withComputer(row("192.168.96.27", "192.168.96.80", 63945, 443, "6", "Accept", "Log", "2026-11-28T12:58:59.0000000Z"), "gw-01"),
				row("2001:db8:ffff::7", "2001:db8::80", 5353, 161, "17", "Drop", "Log", "2026-11-28T12:59:00.0000000Z"),
				row("198.51.100.30", "10.20.30.40", 443, 49180, "6", "Prevent", "IPS", "2026-11-28T12:59:03.0000000Z"),
				{"Computer": "gw-01", "DestinationPort": json.Number("22"), "TimeGenerated": "2026-11-28T12:59:02.0000000Z"},
			},
			metrics: map[string]float64{
				`relay_parse_events_total{position="0",route="checkpoint",step="vendor:checkpoint"}`:                        6,
				`relay_parse_results_total{position="0",result="unterminated",route="checkpoint",step="vendor:checkpoint"}`: 1,
			}},
	}
	for _, tc := range cases {
		t.Run(tc.vendor, func(t *testing.T) {
			tr, dcr := startDeviceRecipe(t, tc.vendor)
			lines := deviceLines(t, tc.file)
			var burst strings.Builder
			for i := 1; i <= len(lines); i++ {
				l := lines[i]
				if e, ok := tc.edit[i]; ok {
					l = e
				}
				burst.WriteString(l + "\n")
			}
			for _, l := range tc.extra {
				burst.WriteString(l + "\n")
			}
			total := len(lines) + len(tc.extra)
			relaytest.Send(t, "tcp", tr.addr("tcp"), []byte(burst.String()))
			relaytest.WaitFor(t, 30*time.Second, func() bool { return tr.Ledger().Routed == int64(total) }, "every line routed")
			// Routed counts a batch as it enters the route table: the
			// steps' counters follow once it has run through.
			var got map[string]float64
			relaytest.WaitFor(t, 30*time.Second, func() bool {
				got = parseMetrics(t, tr)
				for k, v := range tc.metrics {
					if got[k] != v {
						return false
					}
				}
				return true
			}, "the parse steps' counters")
			for k, v := range tc.metrics {
				have, ok := got[k]
				assert.True(t, ok, "%s in %v", k, got)
				assert.Equal(t, v, have, k)
			}
			s := tr.stop(t) // ends the suppress windows: their summaries go out
			checkBalanced(t, s)
			require.Zero(t, s.DroppedTotal(), "no row refused by the table: %s", s)
			assert.Equal(t, int64(tc.archived), s.Dest["archive"].Delivered, "the other syslog")
			rows := dcr.Rows()
			assert.Equal(t, s.Dest["sentinel-cef"].Delivered, int64(len(rows)))
			for _, want := range tc.rows {
				findRow(t, rows, want)
			}
			if tc.vendor == "fortigate" {
				checkFortiGateSuppress(t, rows, denies)
			}
		})
	}
}

// checkFortiGateSuppress: the recipe's suppress, keyed on the src, dst and
// dpt the FortiGate step parsed, let through the first deny of each flow
// (per 30 s window) and stood for the rest with a summary whose EventCount
// counts them: per flow the rows add up to the denies sent (the sample
// line's deny included), in a few rows.
func checkFortiGateSuppress(t *testing.T, rows []map[string]any, denies []string) {
	t.Helper()
	sent := map[string]int{"3389": 1} // the sample file's own deny
	for _, l := range denies {
		_, rest, _ := strings.Cut(l, "dstport=")
		port, _, _ := strings.Cut(rest, " ")
		sent[port]++
	}
	got, seen := map[string]int{}, map[string]int{}
	for _, r := range rows {
		if r["DeviceAction"] != "deny" {
			continue
		}
		assert.Equal(t, "198.51.100.23", r["SourceIP"])
		assert.Equal(t, "10.1.100.20", r["DestinationIP"])
		dpt := fmt.Sprint(r["DestinationPort"])
		seen[dpt]++
		n := 1
		if c, ok := r["EventCount"].(json.Number); ok {
			v, err := strconv.Atoi(string(c))
			require.NoError(t, err)
			n = v
		}
		got[dpt] += n
	}
	assert.Equal(t, sent, got, "per flow, the rows' EventCount (1 without) adds up to the denies sent")
	for dpt, n := range seen {
		assert.LessOrEqual(t, n, 4, "flow to %s: the first and a summary per window, in a burst within a window or two", dpt)
	}
}
