package enrich

import (
	"net/netip"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAddrTableSets checks the admission rule of the address table: the
// addresses of one set stay cached together up to its 4 ways, a fifth
// is admitted only on its second miss, and a one-off address never
// evicts anything.
func TestAddrTableSets(t *testing.T) {
	tbl := newAddrTable(64) // 16 sets of 4
	var same []netip.Addr   // addresses of set 0
	for i := 0; len(same) < 7; i++ {
		ip := netip.AddrFrom4([4]byte{203, 0, byte(i >> 8), byte(i)})
		if addrHash(ip)>>tbl.shift == 0 {
			same = append(same, ip)
		}
	}
	rec := &GeoRecord{City: "Berlin", HasLocation: true, Latitude: 52.5244, Longitude: 13.4105, ASN: 64496}
	for _, ip := range same[:4] {
		e := tbl.put(ip, rec, true)
		require.NotNil(t, e, "a free way takes the address at once")
		assert.Equal(t, "52.5244", e.lat)
		assert.Equal(t, "13.4105", e.lon)
		assert.Equal(t, "64496", e.asn)
	}
	for _, ip := range same[:4] {
		assert.NotNil(t, tbl.getEntry(ip), "%v", ip)
	}
	assert.Nil(t, tbl.put(same[4], rec, true), "full set: first miss not admitted")
	assert.Nil(t, tbl.put(same[5], rec, true))
	for _, ip := range same[:4] {
		assert.NotNil(t, tbl.getEntry(ip), "one-off misses evict nothing: %v", ip)
	}
	require.NotNil(t, tbl.put(same[4], rec, true), "second miss admitted")
	assert.NotNil(t, tbl.getEntry(same[4]))
	hits := 0
	for _, ip := range same[:4] {
		if tbl.getEntry(ip) != nil {
			hits++
		}
	}
	assert.Equal(t, 3, hits, "one way replaced")
	assert.Nil(t, tbl.getEntry(same[6]))
}

func (t *addrTable) getEntry(ip netip.Addr) *addrEntry {
	e, _ := t.get(ip)
	return e
}

// TestRecordTableSets checks the same admission rule for records keyed by
// their offset, and that an entry gives back the record it was made from.
func TestRecordTableSets(t *testing.T) {
	tbl := newRecordTable(64) // 16 sets of 4
	var same []uintptr        // offsets of set 0
	for off := uintptr(0); len(same) < 6; off++ {
		if offsetHash(off)>>tbl.shift == 0 {
			same = append(same, off)
		}
	}
	rec := GeoRecord{City: "Berlin", CountryISO: "DE", CountryName: "Germany",
		Subdivision: "Land Berlin", SubdivisionISO: "BE", HasLocation: true, Latitude: 52.5244, Longitude: 13.4105}
	for _, off := range same[:4] {
		tbl.putRecord(off, kindCity, &rec, nil, nil)
		e := tbl.getRecord(off)
		require.NotNil(t, e, "a free way takes the record at once")
		assert.Equal(t, off, e.off)
		got := GeoRecord{ASN: 64496, ASOrg: "kept", City: "overwritten"}
		e.fill(&got, kindCity)
		want := rec
		want.ASN, want.ASOrg = 64496, "kept"
		assert.Equal(t, want, got)
	}
	rec.City = "changed"
	var got GeoRecord
	tbl.getRecord(same[0]).fill(&got, kindCity)
	assert.Equal(t, "Berlin", got.City, "the entry is a copy")
	tbl.putRecord(same[4], kindCity, &rec, nil, nil)
	assert.Nil(t, tbl.getRecord(same[4]), "full set: first miss not admitted")
	tbl.putRecord(same[5], kindCity, &rec, nil, nil)
	for _, off := range same[:4] {
		assert.NotNil(t, tbl.getRecord(off), "one-off misses evict nothing: %d", off)
	}
	tbl.putRecord(same[4], kindCity, &rec, nil, nil)
	require.NotNil(t, tbl.getRecord(same[4]), "second miss admitted")
	hits := 0
	for _, off := range same[:4] {
		if tbl.getRecord(off) != nil {
			hits++
		}
	}
	assert.Equal(t, 3, hits, "one way replaced")
	assert.Nil(t, tbl.getRecord(same[5]))
	assert.Nil(t, newRecordTable(-1), "negative size: no table")
}

// TestRecEntry checks that a record entry gives back every field of the
// record it was made from, with the places from the string table's
// entries or its own, and for an ASN record the AS fields only.
func TestRecEntry(t *testing.T) {
	city := GeoRecord{CountryISO: "DE", CountryName: "Germany", Subdivision: "Land Berlin", SubdivisionISO: "BE",
		City: "Berlin", Latitude: 52.5244, Longitude: 13.4105, HasLocation: true}
	noLoc := GeoRecord{CountryISO: "JP", Latitude: 48.8534} // a latitude without longitude stays
	country := &strEntry{off: 7, s: "Germany", s2: "DE"}
	sub := &strEntry{off: 9, s: "Land Berlin", s2: "BE"}
	for _, tc := range []struct {
		name         string
		rec          GeoRecord
		country, sub *strEntry
	}{
		{"places from the table", city, country, sub},
		{"own places", city, nil, nil},
		{"partial", noLoc, nil, nil},
		{"empty", GeoRecord{}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newRecEntry(42, kindCity, &tc.rec, tc.country, tc.sub)
			got := GeoRecord{ASN: 64496, ASOrg: "Example", CountryName: "stale", Subdivision: "stale", City: "stale"}
			e.fill(&got, kindCity)
			want := tc.rec
			want.ASN, want.ASOrg = 64496, "Example"
			assert.Equal(t, want, got)
			if tc.country != nil {
				assert.Same(t, tc.country, e.country, "shared, not copied")
			}
		})
	}
	e := newRecEntry(42, kindASN, &GeoRecord{ASN: 64496, ASOrg: "Example", City: "ignored"}, nil, nil)
	got := city
	e.fill(&got, kindASN)
	want := city
	want.ASN, want.ASOrg = 64496, "Example"
	assert.Equal(t, want, got)
	assert.Equal(t, 64, int(unsafe.Sizeof(recEntry{})), "one cache line, the 64-byte size class")
}
