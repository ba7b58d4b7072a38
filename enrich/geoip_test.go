package enrich_test

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/enrich"
)

func openTestGeo(t *testing.T, cfg enrich.GeoConfig) *enrich.GeoIP {
	t.Helper()
	g, err := enrich.OpenGeoIP(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	return g
}

func TestGeoIPLookup(t *testing.T) {
	city, asn := testDBs(t)
	tests := []struct {
		name  string
		ip    string
		found bool
		want  enrich.GeoRecord
	}{
		{name: "ipv4 full", ip: "192.0.2.77", found: true, want: enrich.GeoRecord{
			CountryISO: "DE", CountryName: "Germany", Subdivision: "Land Berlin", SubdivisionISO: "BE",
			City: "Berlin", Latitude: 52.5244, Longitude: 13.4105, HasLocation: true,
			ASN: 64496, ASOrg: "Example Net One",
		}},
		{name: "ipv4 non-ascii name", ip: "198.51.100.1", found: true, want: enrich.GeoRecord{
			CountryISO: "FR", CountryName: "France", Subdivision: "Île-de-France", SubdivisionISO: "IDF",
			City: "Paris", Latitude: 48.8534, Longitude: 2.3488, HasLocation: true,
			ASN: 64497, ASOrg: "Example Net Two",
		}},
		{name: "no location, no city", ip: "198.51.100.200", found: true, want: enrich.GeoRecord{
			CountryISO: "JP", CountryName: "Japan", ASN: 64497, ASOrg: "Example Net Two",
		}},
		{name: "registered country fallback, no ASN", ip: "203.0.113.9", found: true, want: enrich.GeoRecord{
			CountryISO: "US", CountryName: "United States",
		}},
		{name: "ipv6", ip: "2001:db8::1", found: true, want: enrich.GeoRecord{
			CountryISO: "NL", CountryName: "Netherlands", Subdivision: "North Holland", SubdivisionISO: "NH",
			City: "Amsterdam", Latitude: 52.374, Longitude: 4.8897, HasLocation: true,
			ASN: 64498, ASOrg: "Example Six",
		}},
		{name: "ipv6 ASN only", ip: "2001:db8:1::1", found: true, want: enrich.GeoRecord{
			ASN: 64498, ASOrg: "Example Six",
		}},
		{name: "ipv4-mapped ipv6", ip: "::ffff:192.0.2.1", found: true, want: enrich.GeoRecord{
			CountryISO: "DE", CountryName: "Germany", Subdivision: "Land Berlin", SubdivisionISO: "BE",
			City: "Berlin", Latitude: 52.5244, Longitude: 13.4105, HasLocation: true,
			ASN: 64496, ASOrg: "Example Net One",
		}},
		{name: "not in database", ip: "10.1.2.3", found: false},
		{name: "invalid addr", ip: "", found: false},
	}
	for _, cfg := range []enrich.GeoConfig{
		{}, // defaults: the tables and the IPv4 index
		{RecordCacheSlots: -1, StringCacheSlots: -1, AddressCacheSlots: -1},
		{DisableIPv4Index: true},
		{RecordCacheSlots: -1, StringCacheSlots: -1, AddressCacheSlots: -1, DisableIPv4Index: true},
	} {
		cfg.CityPath, cfg.ASNPath = city, asn
		g := openTestGeo(t, cfg)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var ip netip.Addr
				if tt.ip != "" {
					ip = netip.MustParseAddr(tt.ip)
				}
				for range 3 { // cold, then from the record table
					rec, ok := g.Lookup(ip)
					assert.Equal(t, tt.found, ok)
					assert.Equal(t, tt.want, rec)
				}
			})
		}
	}
}

func TestGeoIPOnlyOneDatabase(t *testing.T) {
	city, asn := testDBs(t)
	g := openTestGeo(t, enrich.GeoConfig{ASNPath: asn})
	rec, ok := g.Lookup(netip.MustParseAddr("192.0.2.1"))
	require.True(t, ok)
	assert.Equal(t, enrich.GeoRecord{ASN: 64496, ASOrg: "Example Net One"}, rec)

	g = openTestGeo(t, enrich.GeoConfig{CityPath: city})
	rec, ok = g.Lookup(netip.MustParseAddr("192.0.2.1"))
	require.True(t, ok)
	assert.Equal(t, "Berlin", rec.City)
	assert.Zero(t, rec.ASN)
}

func TestOpenGeoIPErrors(t *testing.T) {
	city, asn := testDBs(t)
	tests := []struct {
		name    string
		cfg     enrich.GeoConfig
		invalid bool
		msg     string
	}{
		{name: "no paths", cfg: enrich.GeoConfig{}, invalid: true},
		{name: "negative interval", cfg: enrich.GeoConfig{CityPath: city, CheckInterval: -1}, invalid: true},
		{name: "missing file", cfg: enrich.GeoConfig{CityPath: filepath.Join(t.TempDir(), "none.mmdb")}, msg: "no such file"},
		{name: "ASN file as City", cfg: enrich.GeoConfig{CityPath: asn}, msg: "want a City or Country edition"},
		{name: "City file as ASN", cfg: enrich.GeoConfig{ASNPath: city}, msg: "want an ASN edition"},
	}
	// A City database whose search tree's root points out of the file.
	b, err := os.ReadFile(city)
	require.NoError(t, err)
	for i := range 7 { // the root node (28-bit records)
		b[i] = 0xff
	}
	corrupt := filepath.Join(t.TempDir(), "corrupt.mmdb")
	require.NoError(t, os.WriteFile(corrupt, b, 0o644))
	tests = append(tests, struct {
		name    string
		cfg     enrich.GeoConfig
		invalid bool
		msg     string
	}{name: "corrupt search tree", cfg: enrich.GeoConfig{CityPath: corrupt}, msg: "index GeoIP database"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := enrich.OpenGeoIP(tt.cfg)
			require.Error(t, err)
			assert.Nil(t, g)
			assert.Equal(t, tt.invalid, errorsIs(err, enrich.ErrInvalidConfig))
			if tt.msg != "" {
				assert.Contains(t, err.Error(), tt.msg)
			}
		})
	}
}

// TestGeoIPCorruptTreeWithoutIndex checks that without the IPv4 index a
// database whose search tree is corrupt opens, and its lookups fail and
// are counted, as the tree walk finds the damage.
func TestGeoIPCorruptTreeWithoutIndex(t *testing.T) {
	city, _ := testDBs(t)
	b, err := os.ReadFile(city)
	require.NoError(t, err)
	for i := range 7 {
		b[i] = 0xff
	}
	corrupt := filepath.Join(t.TempDir(), "corrupt.mmdb")
	require.NoError(t, os.WriteFile(corrupt, b, 0o644))
	g := openTestGeo(t, enrich.GeoConfig{CityPath: corrupt, DisableIPv4Index: true})
	_, ok := g.Lookup(netip.MustParseAddr("192.0.2.1"))
	assert.False(t, ok)
	assert.Equal(t, uint64(1), g.Stats().Errors)
}

// TestGeoIPLookupAllocs checks that warm lookups do not allocate: answered
// by the address table, by the record table after the IPv4 index or the
// tree walk, and decoded with places from the string table.
func TestGeoIPLookupAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	city, asn := testDBs(t)
	for _, tc := range []struct {
		name           string
		addrs, records int
		noIndex        bool
	}{
		{"address table", 0, 0, false},
		{"record table", -1, 0, false},
		{"decode", -1, -1, false},
		{"record table after the tree walk", -1, 0, true},
		{"decode after the tree walk", -1, -1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := openTestGeo(t, enrich.GeoConfig{CityPath: city, ASNPath: asn,
				AddressCacheSlots: tc.addrs, RecordCacheSlots: tc.records, DisableIPv4Index: tc.noIndex})
			ips := []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("198.51.100.7"),
				netip.MustParseAddr("2001:db8::5"), netip.MustParseAddr("10.0.0.1")}
			var rec enrich.GeoRecord
			for _, ip := range ips { // warm the tables
				g.LookupTo(ip, &rec)
				g.LookupTo(ip, &rec)
			}
			allocs := testing.AllocsPerRun(200, func() {
				for _, ip := range ips {
					g.LookupTo(ip, &rec)
				}
			})
			assert.Zero(t, allocs)
			assert.Equal(t, uint64(3*(2+201)), g.Stats().Found, "3 of 4 addresses found every time")
		})
	}
}

// TestGeoIPReloadUnderLoad replaces both files while goroutines look up
// without pause; every lookup must see either the old or the new data.
func TestGeoIPReloadUnderLoad(t *testing.T) {
	city, asn := testDBs(t)
	g := openTestGeo(t, enrich.GeoConfig{CityPath: city, ASNPath: asn})

	changed, err := g.Reload()
	require.NoError(t, err)
	assert.False(t, changed, "nothing changed yet")

	newCity := append([]cityNet(nil), testCityNets...)
	newCity[0].city, newCity[0].sub = "Potsdam", "Brandenburg"
	newASN := append([]asnNet(nil), testASNNets...)
	newASN[0].asn, newASN[0].org = 64511, "Renamed Net"

	ip := netip.MustParseAddr("192.0.2.10")
	var stop atomic.Bool
	var wg sync.WaitGroup
	var lookups, bad atomic.Int64
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				rec, ok := g.Lookup(ip)
				lookups.Add(1)
				oldData := ok && rec.City == "Berlin" && (rec.ASN == 64496 || rec.ASN == 64511)
				newData := ok && rec.City == "Potsdam" && (rec.ASN == 64496 || rec.ASN == 64511)
				if !oldData && !newData {
					bad.Add(1)
				}
			}
		})
	}
	rounds := 20
	if testing.Short() {
		rounds = 4
	}
	for i := range rounds {
		nets, anets := testCityNets, testASNNets
		if i%2 == 0 {
			nets, anets = newCity, newASN
		}
		writeCityDB(t, city, nets)
		writeASNDB(t, asn, anets)
		changed, err := g.Reload()
		require.NoError(t, err)
		assert.True(t, changed)
		rec, ok := g.Lookup(ip)
		require.True(t, ok)
		if i%2 == 0 {
			assert.Equal(t, "Potsdam", rec.City)
			assert.Equal(t, uint32(64511), rec.ASN)
		} else {
			assert.Equal(t, "Berlin", rec.City)
			assert.Equal(t, uint32(64496), rec.ASN)
		}
	}
	stop.Store(true)
	wg.Wait()
	assert.Zero(t, bad.Load())
	assert.Positive(t, lookups.Load())
	st := g.Stats()
	assert.Equal(t, uint64(rounds), st.Reloads)
	assert.Zero(t, st.ReloadErrors)
	assert.Zero(t, st.Errors)
	assert.False(t, st.CityBuildTime.IsZero())
}

func TestGeoIPReloadKeepsOldOnError(t *testing.T) {
	city, asn := testDBs(t)
	g := openTestGeo(t, enrich.GeoConfig{CityPath: city})
	// An ASN database where the City one was: rejected, old one kept.
	writeASNDB(t, city, testASNNets)
	_ = asn
	changed, err := g.Reload()
	require.Error(t, err)
	assert.False(t, changed)
	rec, ok := g.Lookup(netip.MustParseAddr("192.0.2.1"))
	assert.True(t, ok)
	assert.Equal(t, "Berlin", rec.City)
	assert.Equal(t, uint64(1), g.Stats().ReloadErrors)
}

func TestGeoIPRun(t *testing.T) {
	city, _ := testDBs(t)
	synctest.Test(t, func(t *testing.T) {
		g, err := enrich.OpenGeoIP(enrich.GeoConfig{CityPath: city, CheckInterval: time.Minute})
		require.NoError(t, err)
		defer g.Close()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- g.Run(ctx) }()

		time.Sleep(2 * time.Minute) // two checks, nothing changed
		synctest.Wait()
		assert.Zero(t, g.Stats().Reloads)

		nets := append([]cityNet(nil), testCityNets...)
		nets[0].city = "Hamburg"
		writeCityDB(t, city, nets)
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, uint64(1), g.Stats().Reloads)
		rec, _ := g.Lookup(netip.MustParseAddr("192.0.2.1"))
		assert.Equal(t, "Hamburg", rec.City)

		cancel()
		assert.NoError(t, <-done)
	})
}

func TestGeoIPClose(t *testing.T) {
	city, asn := testDBs(t)
	g, err := enrich.OpenGeoIP(enrich.GeoConfig{CityPath: city, ASNPath: asn})
	require.NoError(t, err)
	require.NoError(t, g.Close())
	require.NoError(t, g.Close(), "idempotent")
	_, ok := g.Lookup(netip.MustParseAddr("192.0.2.1"))
	assert.False(t, ok)
	_, err = g.Reload()
	assert.ErrorIs(t, err, enrich.ErrClosed)
}
