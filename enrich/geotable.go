package enrich

import (
	"encoding/binary"
	"math/bits"
	"net/netip"
	"strconv"
	"sync/atomic"
)

// slotIndex spreads an offset over a power-of-two table.
func slotIndex(off uint, shift uint) uint {
	return uint((uint64(off) * 0x9E3779B97F4A7C15) >> shift)
}

// tableShift returns the shift for a table of at least n slots and its
// size.
func tableShift(n int) (shift uint, size int) {
	if n < 2 {
		n = 2
	}
	b := bits.Len(uint(n - 1))
	return uint(64 - b), 1 << b
}

// stringTable maps the offset of a value in a database to the strings
// decoded from it: a string, or the English name and ISO code of a place
// (a map) or of a list's first place (subdivisions). It is direct-mapped
// (a collision replaces the entry), lock-free, and safe for concurrent
// use. A nil table holds nothing.
type stringTable struct {
	shift uint
	slots []atomic.Pointer[strEntry]
}

// strEntry is a string at offset off, or a place (name s, ISO code s2)
// whose map or list is at offset off.
type strEntry struct {
	off   uint
	s, s2 string
}

func newStringTable(n int) *stringTable {
	if n < 0 {
		return nil
	}
	shift, size := tableShift(n)
	return &stringTable{shift: shift, slots: make([]atomic.Pointer[strEntry], size)}
}

func (t *stringTable) get(off uint) (string, bool) {
	if e := t.slots[slotIndex(off, t.shift)].Load(); e != nil && e.off == off {
		return e.s, true
	}
	return "", false
}

func (t *stringTable) put(off uint, s string) {
	t.putEntry(&strEntry{off: off, s: s})
}

func (t *stringTable) entry(off uint) *strEntry {
	if e := t.slots[slotIndex(off, t.shift)].Load(); e != nil && e.off == off {
		return e
	}
	return nil
}

func (t *stringTable) putEntry(e *strEntry) {
	t.slots[slotIndex(e.off, t.shift)].Store(e)
}

// assocWays is the number of ways of an assocTable bucket: 4 slots of 16
// bytes, one cache line.
const assocWays = 4

// assocTable is a lock-free 4-way set-associative table of immutable
// entries of type E, keyed by a 64-bit hash that is never 0. A key hashes
// to a bucket of 4 slots, whose hash tags and entry pointers share one
// cache line, so a probe reads that line and dereferences only an entry
// whose tag matches (the caller then compares the entry's own key). A
// missed key takes a free slot of its bucket at once; into a full bucket
// it is admitted on its second miss (seen in a separate direct-mapped
// table of recent misses, indexed by other hash bits than the bucket, so
// the keys of one bucket do not erase each other's marks) and replaces a
// slot chosen at random: one-off keys (scans) cause no churn, and more hot
// keys than a bucket holds do not evict each other in lock step.
//
// Each slot costs 24 bytes (16 in the buckets, 8 in the recent table)
// plus its entry.
type assocTable[E any] struct {
	shift  uint // bucket = hash >> shift
	mask   uint64
	slots  []assocSlot[E]  // assocWays per bucket
	recent []atomic.Uint64 // indexed by hash & mask
	seq    atomic.Uint64   // victim choice
}

// assocSlot is one way of a bucket: the entry's hash (0 when empty) beside
// the pointer, so a probe touches one cache line.
type assocSlot[E any] struct {
	tag atomic.Uint64
	e   atomic.Pointer[E]
}

// init sizes t to at least n slots (rounded up to a power of two, at
// least two buckets).
func (t *assocTable[E]) init(n int) {
	shift, size := tableShift(max(n, 2*assocWays))
	t.shift = shift + 2 // size/4 buckets of 4 slots
	t.mask = uint64(size - 1)
	t.slots = make([]assocSlot[E], size)
	t.recent = make([]atomic.Uint64, size)
}

// bucket returns the ways of h's bucket.
func (t *assocTable[E]) bucket(h uint64) []assocSlot[E] {
	b := (h >> t.shift) * assocWays
	return t.slots[b : b+assocWays : b+assocWays]
}

// seen reports whether the key that hashes to h missed before: its mark
// is in the recent table. Read before a slow step (the tree walk), the
// load overlaps with that step.
func (t *assocTable[E]) seen(h uint64) bool { return t.recent[h&t.mask].Load() == h }

// admit returns the way of set (h's bucket) that a new entry for h is to
// take, or -1 when it is not admitted (see assocTable); seen is t.seen(h).
// A plain store marks a first miss: no atomic read-modify-write on a
// cache line that other cores may hold.
func (t *assocTable[E]) admit(set []assocSlot[E], h uint64, seen bool) int {
	for w := range set {
		if set[w].tag.Load() == 0 {
			return w
		}
	}
	if !seen {
		t.recent[h&t.mask].Store(h)
		return -1
	}
	return int((t.seq.Add(1) * 0x9E3779B97F4A7C15) >> 62)
}

// store puts e, whose key hashes to h, into way w of set. Entry first,
// tag second: a reader that sees the new tag with the old entry (or the
// reverse) compares the entry's key and misses.
func (t *assocTable[E]) store(set []assocSlot[E], w int, h uint64, e *E) {
	set[w].e.Store(e)
	set[w].tag.Store(h)
}

// recordTable maps the offset of a record in a database (the data
// section offset of a lookup result, [maxminddb.Result.Offset]) to its
// decoded fields: many networks share one record, so an address whose
// record is here costs finding the offset and one probe, not a decode.
type recordTable struct{ assocTable[recEntry] }

// recEntry is one decoded record in 64 bytes, so that a table of a given
// memory holds twice as many records as a copy of GeoRecord (128 bytes)
// would: the country and subdivision are pointers to the string table's
// place entries, shared by all the records of a country or region; the
// city, of which there are many more, is held as a string.
type recEntry struct {
	off      uintptr
	name     string // the city (City database) or the AS organisation (ASN)
	lat, lon float64
	country  *strEntry // name in s, ISO code in s2; nil when empty
	sub      *strEntry // first subdivision, the same way
	asn      uint32
	hasLoc   bool
}

// newRecEntry returns the entry for the record at off of a database of
// kind, decoded into rec, whose country and subdivision are the place
// entries country and sub when they are not nil.
func newRecEntry(off uintptr, kind int, rec *GeoRecord, country, sub *strEntry) *recEntry {
	if kind == kindASN {
		return &recEntry{off: off, name: rec.ASOrg, asn: rec.ASN}
	}
	e := &recEntry{off: off, name: rec.City, lat: rec.Latitude, lon: rec.Longitude,
		hasLoc: rec.HasLocation, country: country, sub: sub}
	if e.country == nil && (rec.CountryName != "" || rec.CountryISO != "") {
		e.country = &strEntry{s: rec.CountryName, s2: rec.CountryISO}
	}
	if e.sub == nil && (rec.Subdivision != "" || rec.SubdivisionISO != "") {
		e.sub = &strEntry{s: rec.Subdivision, s2: rec.SubdivisionISO}
	}
	return e
}

// fill sets the fields of dst that a database of kind provides.
func (e *recEntry) fill(dst *GeoRecord, kind int) {
	if kind == kindASN {
		dst.ASN, dst.ASOrg = e.asn, e.name
		return
	}
	dst.City = e.name
	dst.Latitude, dst.Longitude, dst.HasLocation = e.lat, e.lon, e.hasLoc
	dst.CountryName, dst.CountryISO = "", ""
	if c := e.country; c != nil {
		dst.CountryName, dst.CountryISO = c.s, c.s2
	}
	dst.Subdivision, dst.SubdivisionISO = "", ""
	if c := e.sub; c != nil {
		dst.Subdivision, dst.SubdivisionISO = c.s, c.s2
	}
}

func newRecordTable(n int) *recordTable {
	if n < 0 {
		return nil
	}
	t := new(recordTable)
	t.init(n)
	return t
}

// offsetHash mixes a record offset into a tag (never 0).
func offsetHash(off uintptr) uint64 {
	h := uint64(off+1) * 0x9E3779B97F4A7C15
	return h ^ h>>29 | 1
}

// getRecord returns the entry for the record at off, or nil.
func (t *recordTable) getRecord(off uintptr) *recEntry {
	h := offsetHash(off)
	set := t.bucket(h)
	for w := range set {
		if set[w].tag.Load() == h {
			if e := set[w].e.Load(); e != nil && e.off == off {
				return e
			}
		}
	}
	return nil
}

// putRecord stores the record at off, decoded into rec from a database of
// kind, if admitted (see assocTable); see newRecEntry for country and sub.
func (t *recordTable) putRecord(off uintptr, kind int, rec *GeoRecord, country, sub *strEntry) {
	h := offsetHash(off)
	set := t.bucket(h)
	if w := t.admit(set, h, t.seen(h)); w >= 0 {
		t.store(set, w, h, newRecEntry(off, kind, rec, country, sub))
	}
}

// addrTable maps IP addresses to merged lookup results, for the addresses
// that recur in logs (see assocTable for the admission rule).
type addrTable struct{ assocTable[addrEntry] }

// addrEntry is one address's merged result, with the values a
// [GeoEnricher] writes already formatted.
type addrEntry struct {
	ip       netip.Addr
	found    bool
	rec      GeoRecord
	lat, lon string // strconv 'f', 4 decimals; empty without a location
	asn      string // decimal; empty when ASN is 0
}

func newAddrTable(n int) *addrTable {
	if n < 0 {
		return nil
	}
	t := new(addrTable)
	t.init(n)
	return t
}

// addrHash mixes the 128 bits of ip into 64.
func addrHash(ip netip.Addr) uint64 {
	b := ip.As16()
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	h := (hi ^ bits.RotateLeft64(lo, 29)) * 0x9E3779B97F4A7C15
	return h ^ h>>32 | 1 // never 0, the "empty" tag
}

// get returns the entry for ip, or nil, and ip's hash.
func (t *addrTable) get(ip netip.Addr) (*addrEntry, uint64) {
	h := addrHash(ip)
	set := t.bucket(h)
	for w := range set {
		if set[w].tag.Load() == h {
			if e := set[w].e.Load(); e != nil && e.ip == ip {
				return e, h
			}
		}
	}
	return nil, h
}

// put stores the result for ip (see assocTable for the admission rule)
// and returns the entry, or nil when it was not admitted.
func (t *addrTable) put(ip netip.Addr, rec *GeoRecord, found bool) *addrEntry {
	h := addrHash(ip)
	return t.putHashed(ip, h, t.seen(h), rec, found)
}

// putHashed is put with ip's hash h and seen = t.seen(h) read earlier.
func (t *addrTable) putHashed(ip netip.Addr, h uint64, seen bool, rec *GeoRecord, found bool) *addrEntry {
	set := t.bucket(h)
	w := t.admit(set, h, seen)
	if w < 0 {
		return nil
	}
	e := &addrEntry{ip: ip, found: found, rec: *rec}
	if rec.HasLocation {
		e.lat = strconv.FormatFloat(rec.Latitude, 'f', 4, 64)
		e.lon = strconv.FormatFloat(rec.Longitude, 'f', 4, 64)
	}
	if rec.ASN != 0 {
		e.asn = strconv.FormatUint(uint64(rec.ASN), 10)
	}
	t.store(set, w, h, e)
	return e
}
