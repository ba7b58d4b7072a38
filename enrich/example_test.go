package enrich_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/enrich"
	"github.com/relaykit/relaykit/pipeline"
)

// exampleDB writes a tiny database of the given type (e.g. "GeoLite2-City")
// with one record for network into dir and returns its path. Real
// deployments use GeoLite2 files from MaxMind instead.
func exampleDB(dir, dbType, network string, record mmdbtype.Map) string {
	tree, err := mmdbwriter.New(mmdbwriter.Options{
		DatabaseType:            dbType,
		IncludeReservedNetworks: true, // allow documentation ranges
	})
	if err != nil {
		panic(err)
	}
	_, ipn, _ := net.ParseCIDR(network)
	if err := tree.Insert(ipn, record); err != nil {
		panic(err)
	}
	path := filepath.Join(dir, dbType+".mmdb")
	f, err := os.Create(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if _, err := tree.WriteTo(f); err != nil {
		panic(err)
	}
	return path
}

func exampleDBs(dir string) (city, asn string) {
	city = exampleDB(dir, "GeoLite2-City", "192.0.2.0/24", mmdbtype.Map{
		"country": mmdbtype.Map{"iso_code": mmdbtype.String("DE"), "names": mmdbtype.Map{"en": mmdbtype.String("Germany")}},
		"city":    mmdbtype.Map{"names": mmdbtype.Map{"en": mmdbtype.String("Berlin")}},
		"location": mmdbtype.Map{
			"latitude":  mmdbtype.Float64(52.5244),
			"longitude": mmdbtype.Float64(13.4105),
		},
	})
	asn = exampleDB(dir, "GeoLite2-ASN", "192.0.2.0/24", mmdbtype.Map{
		"autonomous_system_number":       mmdbtype.Uint32(64496),
		"autonomous_system_organization": mmdbtype.String("Example Net"),
	})
	return city, asn
}

func ExampleFirstIP() {
	line := []byte("sshd[42]: Failed password for root from [2001:db8::7]:51234 via 10.0.0.300")
	ip, ok := enrich.FirstIP(line)
	fmt.Println(ip, ok)
	_, ok = enrich.FirstIPv4(line) // 10.0.0.300 is not an address
	fmt.Println(ok)
	fmt.Println(enrich.AllIPs([]byte("src=192.0.2.1:80 dst=198.51.100.2.")))
	// Output:
	// 2001:db8::7 true
	// false
	// [192.0.2.1 198.51.100.2]
}

func ExampleJSONPath() {
	p, err := enrich.NewJSONPath("client.ip", 0)
	if err != nil {
		panic(err)
	}
	ip, ok := p.IP([]byte(`{"client":{"ip":"192.0.2.10","port":443}}`))
	fmt.Println(ip, ok)
	// Output: 192.0.2.10 true
}

func ExampleGeoIP_Lookup() {
	dir, _ := os.MkdirTemp("", "geoip")
	defer os.RemoveAll(dir)
	city, asn := exampleDBs(dir)

	g, err := enrich.OpenGeoIP(enrich.GeoConfig{CityPath: city, ASNPath: asn})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	ip, _ := enrich.FirstIP([]byte("login from 192.0.2.44"))
	rec, ok := g.Lookup(ip)
	fmt.Println(ok, rec.CountryISO, rec.CountryName, rec.City, rec.Latitude, rec.Longitude, rec.ASN, rec.ASOrg)
	// Output: true DE Germany Berlin 52.5244 13.4105 64496 Example Net
}

// A GeoConfig sized for a process that looks up few distinct addresses and
// must open its databases fast: no IPv4 index (IPv4 lookups walk the
// search tree, about half a microsecond more each on GeoLite2-City, and
// opening takes no index build), smaller record and address tables.
func ExampleGeoConfig_small() {
	dir, _ := os.MkdirTemp("", "geoip")
	defer os.RemoveAll(dir)
	city, _ := exampleDBs(dir)

	g, err := enrich.OpenGeoIP(enrich.GeoConfig{
		CityPath:          city,
		DisableIPv4Index:  true,
		RecordCacheSlots:  4096,
		AddressCacheSlots: 4096,
	})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	rec, ok := g.Lookup(netip.MustParseAddr("192.0.2.44"))
	fmt.Println(ok, rec.City)
	// Output: true Berlin
}

func ExampleGeoEnricher() {
	dir, _ := os.MkdirTemp("", "geoip")
	defer os.RemoveAll(dir)
	city, asn := exampleDBs(dir)

	g, err := enrich.OpenGeoIP(enrich.GeoConfig{CityPath: city, ASNPath: asn})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	ge, err := enrich.NewGeoEnricher(g, enrich.GeoEnricherConfig{
		Source: enrich.Source{Field: "src_ip"},
		Fields: enrich.GeoFields{CountryISO: "src_geo_country", City: "src_geo_city", ASN: "src_asn", ASOrg: "src_as_org"},
	})
	if err != nil {
		panic(err)
	}
	var e relaykit.Event
	e.SetFieldString("src_ip", "192.0.2.44")
	if err := ge.Enrich(context.Background(), &e); err != nil {
		panic(err)
	}
	for _, f := range e.Fields {
		fmt.Printf("%s=%s\n", f.Key, f.Value)
	}
	// Output:
	// src_ip=192.0.2.44
	// src_geo_country=DE
	// src_geo_city=Berlin
	// src_asn=64496
	// src_as_org=Example Net
}

func ExampleCache() {
	table, err := enrich.LoadCSV(strings.NewReader("user,role\nalice,admin\n"), enrich.CSVConfig{Header: true})
	if err != nil {
		panic(err)
	}
	// In production the backend is enrich.NewMemcached(...).
	cache, err := enrich.NewCache(table, enrich.CacheConfig{MaxEntries: 10_000})
	if err != nil {
		panic(err)
	}
	defer cache.Close()
	le, err := enrich.NewLookupEnricher(cache, enrich.LookupEnricherConfig{
		Source:  enrich.Source{JSONPath: "user"},
		Target:  "role",
		Default: "unknown",
	})
	if err != nil {
		panic(err)
	}
	for _, raw := range []string{`{"user":"alice"}`, `{"user":"bob"}`, `{"user":"alice"}`} {
		e := relaykit.Event{Raw: []byte(raw)}
		_ = le.Enrich(context.Background(), &e)
		role, _ := e.Field("role")
		fmt.Println(raw, "->", string(role))
	}
	st := cache.Stats()
	fmt.Printf("hits=%d misses=%d\n", st.Hits, st.Misses)
	// Output:
	// {"user":"alice"} -> admin
	// {"user":"bob"} -> unknown
	// {"user":"alice"} -> admin
	// hits=1 misses=2
}

// Enrichers as pipeline steps: a *GeoEnricher and a *LookupEnricher are
// pipeline.Function values, and NewStep runs any other Enricher (here a
// Chain of functions) as one. An event the enrichers find nothing for is
// not dropped: it goes on unchanged.
func ExampleStep() {
	dir, _ := os.MkdirTemp("", "geoip")
	defer os.RemoveAll(dir)
	city, asn := exampleDBs(dir)
	g, err := enrich.OpenGeoIP(enrich.GeoConfig{CityPath: city, ASNPath: asn})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	geo, err := enrich.NewGeoEnricher(g, enrich.GeoEnricherConfig{
		Fields: enrich.GeoFields{CountryISO: "country", ASN: "asn"},
	})
	if err != nil {
		panic(err)
	}
	role, err := enrich.NewLookupEnricher(enrich.NewTable(map[string]string{"root": "admin"}),
		enrich.LookupEnricherConfig{Source: enrich.Source{Field: "user"}, Target: "role"})
	if err != nil {
		panic(err)
	}
	mark := enrich.NewStep("mark", enrich.Chain(
		enrich.EnricherFunc(func(_ context.Context, e *relaykit.Event) error {
			if _, ok := e.Field("country"); ok {
				e.SetFieldString("external", "true")
			}
			return nil
		}),
	))

	show := relaykit.SinkFunc(func(_ context.Context, batch []relaykit.Event) error {
		for i := range batch {
			fmt.Printf("%q", batch[i].Raw)
			for _, f := range batch[i].Fields {
				fmt.Printf(" %s=%s", f.Key, f.Value)
			}
			fmt.Println()
		}
		return nil
	})
	r, err := pipeline.NewRouter([]pipeline.Route{{
		Name:     "all",
		Pipeline: pipeline.NewPipeline(geo, role, mark),
		Sinks:    []relaykit.Sink{show},
		Final:    true,
	}}, pipeline.Config{})
	if err != nil {
		panic(err)
	}

	batch := []relaykit.Event{
		{Raw: []byte("Failed password from 192.0.2.44")},
		{Raw: []byte("Accepted password from 10.1.2.3")}, // no GeoIP data
		{Raw: []byte("no address")},
	}
	batch[0].SetFieldString("user", "root")
	if err := r.Route(context.Background(), batch); err != nil {
		panic(err)
	}
	fmt.Printf("geo: %+v\n", geo.Stats())
	// Output:
	// "Failed password from 192.0.2.44" user=root country=DE asn=64496 role=admin external=true
	// "Accepted password from 10.1.2.3"
	// "no address"
	// geo: {Events:3 NoInput:1 Enriched:1 NoData:1}
}
