package enrich

import (
	"encoding/binary"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
	"github.com/oschwald/maxminddb-golang/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeRandomDB writes a database of n random IPv4 networks (/1 to /32,
// later ones overriding earlier ones where they overlap, so the tree has
// every shape: networks across /16 boundaries, /32s, holes without data)
// whose records are drawn from a few, so neighbours often share one.
func writeRandomDB(t *testing.T, rng *rand.Rand, ipVersion, recordSize, n int) string {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{
		DatabaseType: "GeoLite2-City",
		IPVersion:    ipVersion,
		RecordSize:   recordSize,
	})
	require.NoError(t, err)
	lens := make([]int, n)
	for i := range lens {
		lens[i] = 16 + rng.IntN(17) // mostly the lengths of real databases
		if i%20 == 0 {
			lens[i] = 1 + rng.IntN(15)
		}
	}
	slices.Sort(lens) // the longer ones inserted last, over the shorter
	for _, bitsLen := range lens {
		ip := make(net.IP, 4)
		binary.BigEndian.PutUint32(ip, rng.Uint32())
		ipn := &net.IPNet{IP: ip.Mask(net.CIDRMask(bitsLen, 32)), Mask: net.CIDRMask(bitsLen, 32)}
		rec := mmdbtype.Map{"city": mmdbtype.Map{"names": mmdbtype.Map{
			"en": mmdbtype.String(string(rune('A' + rng.IntN(20))))}}}
		if err := tree.Insert(ipn, rec); err != nil {
			continue // reserved networks the writer refuses
		}
	}
	path := filepath.Join(t.TempDir(), "random.mmdb")
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = tree.WriteTo(f)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return path
}

// TestIPv4IndexMatchesTree checks the index against the tree walk
// (Reader.Lookup) on databases of random networks: at every network's
// first and last address and their neighbours, at every /16 boundary, and
// at random addresses, the index must find the same record, or none.
func TestIPv4IndexMatchesTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name                  string
		ipVersion, recordSize int
	}{
		{"IPv6 tree, 28-bit records", 6, 28},
		{"IPv4 tree, 24-bit records", 4, 24},
		{"IPv6 tree, 32-bit records", 6, 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeRandomDB(t, rng, tc.ipVersion, tc.recordSize, 3000)
			r, err := maxminddb.Open(path)
			require.NoError(t, err)
			defer r.Close()
			x, err := newIPv4Index(r)
			require.NoError(t, err)
			require.NotNil(t, x)

			var probes []uint32
			networks := 0
			for res := range r.NetworksWithin(allIPv4, maxminddb.IncludeNetworksWithoutData()) {
				require.NoError(t, res.Err())
				p := res.Prefix()
				s := ipv4Bits(p.Addr())
				e := s + uint32(uint64(1)<<(32-p.Bits())-1)
				probes = append(probes, s, s-1, s+1, e, e+1, e-1)
				networks++
			}
			for h := range uint32(1 << 16) {
				probes = append(probes, h<<16, h<<16-1)
			}
			for range 200_000 {
				probes = append(probes, rng.Uint32())
			}
			t.Logf("%d networks, %d ranges, %d probes", networks, len(x.starts), len(probes))
			require.Greater(t, networks, 2000)
			for h := range 1 << 16 {
				for i := x.first[h] + 1; i < x.first[h+1]; i++ {
					require.NotEqual(t, x.offs[i-1], x.offs[i], "neighbours with one record merged")
					require.Less(t, x.starts[i-1], x.starts[i])
				}
				require.Zero(t, x.starts[x.first[h]], "a /16 starts with a range at its first address")
			}
			bad := 0
			for _, a := range probes {
				var b [4]byte
				binary.BigEndian.PutUint32(b[:], a)
				res := r.Lookup(netip.AddrFrom4(b))
				require.NoError(t, res.Err())
				want := uint32(noRecord)
				if res.Found() {
					want = uint32(res.Offset())
				}
				if got := x.lookup(a); got != want {
					bad++
					if bad <= 5 {
						t.Errorf("%v: index gives offset %d, tree %d", netip.AddrFrom4(b), got, want)
					}
				}
			}
			assert.Zero(t, bad)
		})
	}
}

// TestIPv4IndexFallback checks that a database whose whole IPv4 part is
// one IPv6 network gets no index, and that its IPv4 addresses are still
// found through the tree.
func TestIPv4IndexFallback(t *testing.T) {
	tree, err := mmdbwriter.New(mmdbwriter.Options{
		DatabaseType:            "GeoLite2-City",
		IPVersion:               6,
		RecordSize:              28,
		DisableIPv4Aliasing:     true,
		IncludeReservedNetworks: true,
	})
	require.NoError(t, err)
	_, ipn, err := net.ParseCIDR("::/64")
	require.NoError(t, err)
	require.NoError(t, tree.Insert(ipn, mmdbtype.Map{"city": mmdbtype.Map{
		"names": mmdbtype.Map{"en": mmdbtype.String("Everywhere")}}}))
	path := filepath.Join(t.TempDir(), "v6.mmdb")
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = tree.WriteTo(f)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	r, err := maxminddb.Open(path)
	require.NoError(t, err)
	x, err := newIPv4Index(r)
	require.NoError(t, err)
	assert.Nil(t, x, "no index over an IPv6 network")
	require.NoError(t, r.Close())

	g, err := OpenGeoIP(GeoConfig{CityPath: path})
	require.NoError(t, err)
	defer g.Close()
	assert.Nil(t, g.cur.Load().city.v4)
	rec, ok := g.Lookup(netip.MustParseAddr("192.0.2.1"))
	assert.True(t, ok)
	assert.Equal(t, "Everywhere", rec.City)
}
