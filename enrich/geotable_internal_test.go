package enrich

import (
	"net/netip"
	"testing"

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
// their offset, and that an entry is a copy.
func TestRecordTableSets(t *testing.T) {
	tbl := newRecordTable(64) // 16 sets of 4
	var same []uintptr        // offsets of set 0
	for off := uintptr(0); len(same) < 6; off++ {
		if offsetHash(off)>>tbl.shift == 0 {
			same = append(same, off)
		}
	}
	rec := GeoRecord{City: "Berlin", CountryISO: "DE", HasLocation: true, Latitude: 52.5244}
	for _, off := range same[:4] {
		tbl.putRecord(off, &rec)
		e := tbl.getRecord(off)
		require.NotNil(t, e, "a free way takes the record at once")
		assert.Equal(t, off, e.off)
		assert.Equal(t, rec, e.rec)
	}
	rec.City = "changed"
	assert.Equal(t, "Berlin", tbl.getRecord(same[0]).rec.City, "the entry is a copy")
	tbl.putRecord(same[4], &rec)
	assert.Nil(t, tbl.getRecord(same[4]), "full set: first miss not admitted")
	tbl.putRecord(same[5], &rec)
	for _, off := range same[:4] {
		assert.NotNil(t, tbl.getRecord(off), "one-off misses evict nothing: %d", off)
	}
	tbl.putRecord(same[4], &rec)
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
