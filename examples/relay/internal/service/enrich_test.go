package service

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"
	"github.com/relaykit/relaykit/syslog"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeMMDB writes a one-network database of the given type (documentation
// range 192.0.2.0/24) to dir and returns its path.
func writeMMDB(t *testing.T, dir, dbType string, rec mmdbtype.Map) string {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: dbType, IncludeReservedNetworks: true, IPVersion: 6, RecordSize: 28})
	require.NoError(t, err)
	_, ipn, err := net.ParseCIDR("192.0.2.0/24")
	require.NoError(t, err)
	require.NoError(t, tree.Insert(ipn, rec))
	p := filepath.Join(dir, dbType+".mmdb")
	f, err := os.Create(p)
	require.NoError(t, err)
	_, err = tree.WriteTo(f)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return p
}

// TestGeoIPAndLookupSteps: the geoip step (City and ASN databases) and the
// lookup step (CSV table) enrich events on their way through a route.
func TestGeoIPAndLookupSteps(t *testing.T) {
	dir := t.TempDir()
	en := mmdbtype.Map{"en": mmdbtype.String("Germany")}
	city := writeMMDB(t, dir, "GeoLite2-City", mmdbtype.Map{
		"country": mmdbtype.Map{"iso_code": mmdbtype.String("DE"), "names": en},
		"city":    mmdbtype.Map{"names": mmdbtype.Map{"en": mmdbtype.String("Berlin")}},
	})
	asn := writeMMDB(t, dir, "GeoLite2-ASN", mmdbtype.Map{
		"autonomous_system_number":       mmdbtype.Uint32(64496),
		"autonomous_system_organization": mmdbtype.String("Example Net"),
	})
	csv := filepath.Join(dir, "apps.csv")
	require.NoError(t, os.WriteFile(csv, []byte("LOGIN,security\nHTTP,web\n"), 0o600))

	cfg := relaytest.TestConfig(t)
	cfg.Routes = []config.RouteConfig{{
		Name: "all", Final: true, Destinations: []string{"archive"},
		Pipeline: []config.StepConfig{
			{Type: "geoip", CityDB: city, ASNDB: asn},
			{Type: "lookup", CSV: csv, Field: syslog.FieldMsgID, Target: "team", Default: "unknown"},
		},
	}}
	tr := startRelay(t, cfg)
	relaytest.Send(t, "tcp", tr.addr("tcp"), []byte(
		"<38>1 2026-11-22T01:00:00Z gw sshd 42 LOGIN - Failed password for root from 192.0.2.7 port 22\n"+
			"<38>1 2026-11-22T01:00:00Z gw cron 43 CRON - no address here\n"))
	relaytest.WaitFor(t, 5*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == 2 }, "events archived")
	s := tr.stop(t)
	checkBalanced(t, s)
	recs := archivedRecords(t, relaytest.ArchiveOf(cfg).Dir)
	require.Len(t, recs, 2)
	assert.Equal(t, "DE", recs[0].Fields["src_geo_country"])
	assert.Equal(t, "Berlin", recs[0].Fields["src_geo_city"])
	assert.Equal(t, "64496", recs[0].Fields["src_asn"])
	assert.Equal(t, "Example Net", recs[0].Fields["src_as_org"])
	assert.Equal(t, "security", recs[0].Fields["team"])
	assert.NotContains(t, recs[1].Fields, "src_geo_country")
	assert.Equal(t, "unknown", recs[1].Fields["team"])
}
