package enrich_test

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
	"github.com/stretchr/testify/require"
)

// cityNet is one network of a generated City database.
type cityNet struct {
	cidr              string
	iso, country      string
	subISO, sub, city string
	lat, lon          float64
	noLocation        bool
	registeredOnly    bool // only registered_country, no country
}

// asnNet is one network of a generated ASN database.
type asnNet struct {
	cidr string
	asn  uint32
	org  string
}

// testCityNets uses documentation ranges (RFC 5737, RFC 3849).
var testCityNets = []cityNet{
	{cidr: "192.0.2.0/24", iso: "DE", country: "Germany", subISO: "BE", sub: "Land Berlin", city: "Berlin", lat: 52.5244, lon: 13.4105},
	{cidr: "198.51.100.0/25", iso: "FR", country: "France", subISO: "IDF", sub: "Île-de-France", city: "Paris", lat: 48.8534, lon: 2.3488},
	{cidr: "198.51.100.128/25", iso: "JP", country: "Japan", noLocation: true},
	{cidr: "203.0.113.0/24", iso: "US", country: "United States", registeredOnly: true, noLocation: true},
	{cidr: "2001:db8::/48", iso: "NL", country: "Netherlands", subISO: "NH", sub: "North Holland", city: "Amsterdam", lat: 52.374, lon: 4.8897},
}

var testASNNets = []asnNet{
	{cidr: "192.0.2.0/24", asn: 64496, org: "Example Net One"},
	{cidr: "198.51.100.0/24", asn: 64497, org: "Example Net Two"},
	{cidr: "2001:db8::/32", asn: 64498, org: "Example Six"},
}

func names(en string) mmdbtype.Map {
	return mmdbtype.Map{"en": mmdbtype.String(en), "de": mmdbtype.String(en + " (de)")}
}

func cityRecord(n cityNet) mmdbtype.Map {
	place := mmdbtype.Map{
		"geoname_id": mmdbtype.Uint32(2921044),
		"iso_code":   mmdbtype.String(n.iso),
		"names":      names(n.country),
	}
	rec := mmdbtype.Map{
		"continent":          mmdbtype.Map{"code": mmdbtype.String("EU"), "names": names("Europe")},
		"registered_country": place,
	}
	if !n.registeredOnly {
		rec["country"] = place
	}
	if n.city != "" {
		rec["city"] = mmdbtype.Map{"geoname_id": mmdbtype.Uint32(1), "names": names(n.city)}
	}
	if n.sub != "" {
		rec["subdivisions"] = mmdbtype.Slice{
			mmdbtype.Map{"iso_code": mmdbtype.String(n.subISO), "names": names(n.sub)},
			mmdbtype.Map{"iso_code": mmdbtype.String("XX"), "names": names("Second")},
		}
	}
	if !n.noLocation {
		rec["location"] = mmdbtype.Map{
			"accuracy_radius": mmdbtype.Uint16(10),
			"latitude":        mmdbtype.Float64(n.lat),
			"longitude":       mmdbtype.Float64(n.lon),
			"time_zone":       mmdbtype.String("Europe/Berlin"),
		}
	}
	rec["postal"] = mmdbtype.Map{"code": mmdbtype.String("10115")}
	return rec
}

// writeDB writes a tree to path atomically (temporary file and rename).
func writeDB(tb testing.TB, path string, tree *mmdbwriter.Tree) {
	tb.Helper()
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mmdb-*")
	require.NoError(tb, err)
	_, err = tree.WriteTo(tmp)
	require.NoError(tb, err)
	require.NoError(tb, tmp.Close())
	require.NoError(tb, os.Rename(tmp.Name(), path))
}

func newTree(tb testing.TB, dbType string) *mmdbwriter.Tree {
	tb.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{
		DatabaseType:            dbType,
		Description:             map[string]string{"en": "relaykit test database"},
		Languages:               []string{"en", "de"},
		IncludeReservedNetworks: true, // documentation ranges
		IPVersion:               6,
		RecordSize:              28,
	})
	require.NoError(tb, err)
	return tree
}

// writeCityDB writes a GeoLite2-City database with nets to path.
func writeCityDB(tb testing.TB, path string, nets []cityNet) {
	tb.Helper()
	tree := newTree(tb, "GeoLite2-City")
	for _, n := range nets {
		_, ipn, err := net.ParseCIDR(n.cidr)
		require.NoError(tb, err)
		require.NoError(tb, tree.Insert(ipn, cityRecord(n)))
	}
	writeDB(tb, path, tree)
}

// writeASNDB writes a GeoLite2-ASN database with nets to path.
func writeASNDB(tb testing.TB, path string, nets []asnNet) {
	tb.Helper()
	tree := newTree(tb, "GeoLite2-ASN")
	for _, n := range nets {
		_, ipn, err := net.ParseCIDR(n.cidr)
		require.NoError(tb, err)
		require.NoError(tb, tree.Insert(ipn, mmdbtype.Map{
			"autonomous_system_number":       mmdbtype.Uint32(n.asn),
			"autonomous_system_organization": mmdbtype.String(n.org),
		}))
	}
	writeDB(tb, path, tree)
}

// testDBs writes the test City and ASN databases into a temporary
// directory and returns their paths.
func testDBs(tb testing.TB) (city, asn string) {
	tb.Helper()
	dir := tb.TempDir()
	city = filepath.Join(dir, "GeoLite2-City.mmdb")
	asn = filepath.Join(dir, "GeoLite2-ASN.mmdb")
	writeCityDB(tb, city, testCityNets)
	writeASNDB(tb, asn, testASNNets)
	return city, asn
}
