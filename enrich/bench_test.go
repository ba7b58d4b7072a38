package enrich_test

import (
	"context"
	"net/netip"
	"strconv"
	"testing"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/enrich"
)

// Micro-benchmarks beside the code; the comparisons live in the bench
// module.

func BenchmarkCacheHit(b *testing.B) {
	m := map[string]string{}
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = []byte("user-" + strconv.Itoa(i))
		m[string(keys[i])] = "v"
	}
	c, err := enrich.NewCache(enrich.NewTable(m), enrich.CacheConfig{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for _, k := range keys {
		c.Get(ctx, k)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, ok, _ := c.Get(ctx, keys[i&1023]); !ok {
				panic("miss")
			}
			i++
		}
	})
}

func BenchmarkFirstIP(b *testing.B) {
	line := []byte("May  1 12:00:01 bastion sshd[2211]: Failed password for invalid user admin from 203.0.113.45 port 51234 ssh2")
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := enrich.FirstIP(line); !ok {
			b.Fatal("none")
		}
	}
}

func BenchmarkGeoEnricher(b *testing.B) {
	city, asn := testDBs(b)
	g, err := enrich.OpenGeoIP(enrich.GeoConfig{CityPath: city, ASNPath: asn})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	ge, err := enrich.NewGeoEnricher(g, enrich.GeoEnricherConfig{Source: enrich.Source{Field: "src_ip"}})
	if err != nil {
		b.Fatal(err)
	}
	var e relaykit.Event
	ip := []byte(netip.MustParseAddr("192.0.2.7").String())
	b.ReportAllocs()
	for b.Loop() {
		e.Reset()
		e.SetField("src_ip", ip)
		if keep, err := ge.Apply(&e); !keep || err != nil || len(e.Fields) == 1 {
			b.Fatal("not enriched")
		}
	}
}
