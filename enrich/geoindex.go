package enrich

import (
	"encoding/binary"
	"math"
	"net/netip"

	"github.com/oschwald/maxminddb-golang/v2"
)

// noRecord is the offset an ipv4Index gives an address without data.
const noRecord = math.MaxUint32

// ipv4Index maps every IPv4 address to the data-section offset of its
// record in one database, without walking the search tree: the tree takes
// about 23 dependent loads per address (7 of them cache misses on
// GeoLite2-City, whose tree is 24 MiB), the index a probe of a small
// table and a binary search among the few ranges of the address's /16.
//
// It is built once per opened file from maxminddb-golang's own network
// iterator (Reader.NetworksWithin over 0.0.0.0/0, networks without data
// included), so the file is read by the library and the index holds only
// what the iterator yields: each network's first address and record
// offset, adjacent networks with the same record merged into one range.
// A range that crosses a /16 boundary is cut there, so each /16 starts
// with a range at its first address. The index is immutable.
//
// Memory is 6 bytes per range plus a 256 KiB table: 14.8 MiB for
// GeoLite2-City (2.4 million ranges from 3 million IPv4 networks).
type ipv4Index struct {
	// first[h] is the index in starts and offs of the first range of the
	// /16 h; first[1<<16] is the number of ranges.
	first [1<<16 + 1]uint32
	// starts holds the low 16 bits of each range's first address,
	// ascending within each /16, beginning with 0.
	starts []uint16
	// offs holds each range's record offset, or noRecord.
	offs []uint32
}

// ipv4Bits returns the 32 bits of an IPv4 address.
func ipv4Bits(ip netip.Addr) uint32 {
	b := ip.As4()
	return binary.BigEndian.Uint32(b[:])
}

var allIPv4 = netip.PrefixFrom(netip.IPv4Unspecified(), 0)

// newIPv4Index indexes the IPv4 networks of r. It returns nil (and no
// error) when r's IPv4 addresses are not a plain IPv4 subtree that the
// iterator covers without a gap (an IPv4 part held by one IPv6 network,
// or a record offset beyond 32 bits); lookups then walk the tree. An error
// is the iterator's: the search tree is corrupt.
func newIPv4Index(r *maxminddb.Reader) (*ipv4Index, error) {
	x := new(ipv4Index)
	var next uint64 // first address not yet covered
	h := -1         // last /16 whose first range is set
	last := uint32(noRecord)
	for res := range r.NetworksWithin(allIPv4, maxminddb.IncludeNetworksWithoutData()) {
		if err := res.Err(); err != nil {
			return nil, err
		}
		p := res.Prefix()
		if !p.Addr().Is4() || uint64(ipv4Bits(p.Addr())) != next {
			return nil, nil
		}
		s := ipv4Bits(p.Addr())
		next = uint64(s) + 1<<(32-p.Bits())
		off := uint32(noRecord)
		if res.Found() {
			o := res.Offset()
			if o >= noRecord {
				return nil, nil
			}
			off = uint32(o)
		}
		for hs := int(s >> 16); h < hs; {
			h++
			x.first[h] = uint32(len(x.starts))
			if uint32(h)<<16 != s { // the previous range goes on here
				x.starts = append(x.starts, 0)
				x.offs = append(x.offs, last)
			}
		}
		if len(x.starts) > int(x.first[h]) && off == last {
			continue // same record as the range before: merged
		}
		x.starts = append(x.starts, uint16(s))
		x.offs = append(x.offs, off)
		last = off
	}
	if next != 1<<32 {
		return nil, nil
	}
	for h < 1<<16-1 { // the /16s that the last range covers
		h++
		x.first[h] = uint32(len(x.starts))
		x.starts = append(x.starts, 0)
		x.offs = append(x.offs, last)
	}
	x.first[1<<16] = uint32(len(x.starts))
	// Drop the spare capacity that append left (up to a quarter).
	x.starts = append([]uint16(nil), x.starts...)
	x.offs = append([]uint32(nil), x.offs...)
	return x, nil
}

// lookup returns the record offset of the IPv4 address a, or noRecord.
func (x *ipv4Index) lookup(a uint32) uint32 {
	lo, hi := x.first[a>>16], x.first[a>>16+1]
	keys := x.starts[lo:hi]
	k := uint16(a)
	// The last key <= k; keys[0] is 0, so there is one.
	i, n := 0, len(keys)
	for n > 1 {
		half := n / 2
		if keys[i+half] <= k {
			i += half
		}
		n -= half
	}
	return x.offs[int(lo)+i]
}
