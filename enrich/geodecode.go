package enrich

import (
	"encoding/binary"
	"math/bits"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/oschwald/maxminddb-golang/v2/mmdbdata"
)

// geoDecoder decodes the needed fields of one City or ASN record straight
// from the database with the cursor API: no reflection, and strings come
// from the file's stringTable when it has them.
type geoDecoder struct {
	kind int
	strs *stringTable
	rec  GeoRecord
}

var decoderPool = sync.Pool{New: func() any { return new(geoDecoder) }}

func getDecoder() *geoDecoder { return decoderPool.Get().(*geoDecoder) }

func putDecoder(d *geoDecoder) {
	d.strs = nil
	decoderPool.Put(d)
}

var _ mmdbdata.CursorUnmarshaler = (*geoDecoder)(nil)

// UnmarshalMaxMindDBCursor implements mmdbdata.CursorUnmarshaler.
func (d *geoDecoder) UnmarshalMaxMindDBCursor(c mmdbdata.Cursor) (mmdbdata.Cursor, error) {
	d.rec = GeoRecord{}
	m, err := c.Map()
	if err != nil {
		return mmdbdata.Cursor{}, err
	}
	var regISO, regName string
	var next mmdbdata.Cursor
	for {
		key, v, ok := m.Next(next)
		if !ok {
			break
		}
		switch {
		case d.kind == kindASN && string(key) == "autonomous_system_number":
			var n uint64
			n, next, err = v.ReadUint()
			d.rec.ASN = uint32(n)
		case d.kind == kindASN && string(key) == "autonomous_system_organization":
			d.rec.ASOrg, next, err = d.readString(v)
		case d.kind == kindCity && string(key) == "country":
			next, err = d.readPlace(v, &d.rec.CountryISO, &d.rec.CountryName)
		case d.kind == kindCity && string(key) == "registered_country" && d.rec.CountryISO == "":
			// Only a fallback: writers sort keys, so "country" has usually
			// been read already; if not, this is decoded and used only when
			// no country follows.
			next, err = d.readPlace(v, &regISO, &regName)
		case d.kind == kindCity && string(key) == "city":
			next, err = d.readPlace(v, nil, &d.rec.City)
		case d.kind == kindCity && string(key) == "subdivisions":
			next, err = d.readSubdivisions(v)
		case d.kind == kindCity && string(key) == "location":
			next, err = d.readLocation(v)
		default:
			next, err = v.Skip()
		}
		if err != nil {
			return mmdbdata.Cursor{}, err
		}
	}
	if d.rec.CountryISO == "" && d.rec.CountryName == "" {
		// No physical country (e.g. anonymous or satellite networks): fall
		// back to the country the network is registered in.
		d.rec.CountryISO, d.rec.CountryName = regISO, regName
	}
	return m.End()
}

// readString reads a string, from the string table when it holds it.
func (d *geoDecoder) readString(c mmdbdata.Cursor) (string, mmdbdata.Cursor, error) {
	if d.strs == nil {
		return c.ReadString()
	}
	off, err := c.Offset()
	if err != nil {
		return "", mmdbdata.Cursor{}, err
	}
	if s, ok := d.strs.get(off); ok {
		next, err := c.Skip()
		return s, next, err
	}
	s, next, err := c.ReadString()
	if err == nil {
		d.strs.put(off, s)
	}
	return s, next, err
}

// readPlace reads a map with "iso_code" and "names" (country, city,
// subdivision). iso may be nil. Places are usually shared by many records
// (the writer stores them once and points to them), so the pair is kept in
// the string table under the map's offset: a repeated place costs a table
// probe and a skip over a pointer.
func (d *geoDecoder) readPlace(c mmdbdata.Cursor, iso, name *string) (mmdbdata.Cursor, error) {
	if d.strs == nil {
		return d.decodePlace(c, iso, name)
	}
	off, err := c.Offset()
	if err != nil {
		return mmdbdata.Cursor{}, err
	}
	if e := d.strs.entry(off); e != nil {
		if iso != nil {
			*iso = e.s2
		}
		*name = e.s
		return c.Skip()
	}
	var isoS string
	next, err := d.decodePlace(c, &isoS, name)
	if err != nil {
		return mmdbdata.Cursor{}, err
	}
	if iso != nil {
		*iso = isoS
	}
	d.strs.putEntry(&strEntry{off: off, s: *name, s2: isoS})
	return next, nil
}

// decodePlace decodes a place map without the table.
func (d *geoDecoder) decodePlace(c mmdbdata.Cursor, iso, name *string) (mmdbdata.Cursor, error) {
	m, err := c.Map()
	if err != nil {
		return mmdbdata.Cursor{}, err
	}
	var next mmdbdata.Cursor
	for {
		key, v, ok := m.Next(next)
		if !ok {
			break
		}
		switch {
		case iso != nil && string(key) == "iso_code":
			*iso, next, err = d.readString(v)
		case string(key) == "names":
			next, err = d.readNames(v, name)
		default:
			next, err = v.Skip()
		}
		if err != nil {
			return mmdbdata.Cursor{}, err
		}
	}
	return m.End()
}

// readNames reads the English entry of a names map.
func (d *geoDecoder) readNames(c mmdbdata.Cursor, name *string) (mmdbdata.Cursor, error) {
	m, err := c.Map()
	if err != nil {
		return mmdbdata.Cursor{}, err
	}
	var next mmdbdata.Cursor
	for {
		key, v, ok := m.Next(next)
		if !ok {
			break
		}
		if string(key) == "en" {
			*name, next, err = d.readString(v)
		} else {
			next, err = v.Skip()
		}
		if err != nil {
			return mmdbdata.Cursor{}, err
		}
	}
	return m.End()
}

// readSubdivisions reads the first element of the subdivisions array.
func (d *geoDecoder) readSubdivisions(c mmdbdata.Cursor) (mmdbdata.Cursor, error) {
	s, err := c.Slice()
	if err != nil {
		return mmdbdata.Cursor{}, err
	}
	var next mmdbdata.Cursor
	for {
		i, v, ok := s.Next(next)
		if !ok {
			break
		}
		if i == 0 {
			next, err = d.readPlace(v, &d.rec.SubdivisionISO, &d.rec.Subdivision)
		} else {
			next, err = v.Skip()
		}
		if err != nil {
			return mmdbdata.Cursor{}, err
		}
	}
	return s.End()
}

// readLocation reads latitude and longitude.
func (d *geoDecoder) readLocation(c mmdbdata.Cursor) (mmdbdata.Cursor, error) {
	m, err := c.Map()
	if err != nil {
		return mmdbdata.Cursor{}, err
	}
	var next mmdbdata.Cursor
	var haveLat, haveLon bool
	for {
		key, v, ok := m.Next(next)
		if !ok {
			break
		}
		switch string(key) {
		case "latitude":
			d.rec.Latitude, next, err = v.ReadFloat()
			haveLat = true
		case "longitude":
			d.rec.Longitude, next, err = v.ReadFloat()
			haveLon = true
		default:
			next, err = v.Skip()
		}
		if err != nil {
			return mmdbdata.Cursor{}, err
		}
	}
	d.rec.HasLocation = haveLat && haveLon
	return m.End()
}

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

// stringTable maps the offset of a string in a database to the decoded
// string. It is direct-mapped (a collision replaces the entry), lock-free,
// and safe for concurrent use. A nil table holds nothing.
type stringTable struct {
	shift uint
	slots []atomic.Pointer[strEntry]
}

// strEntry is a string at offset off, or a place (name s, ISO code s2)
// whose map is at offset off.
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

// recordTable maps the offset of a record in a database to its decoded
// fields. It is direct-mapped and lock-free; a record is admitted on its
// second miss in a slot, so one-off records cause no churn.
type recordTable struct {
	shift  uint
	slots  []atomic.Pointer[recEntry]
	recent []atomic.Uintptr
}

type recEntry struct {
	off uintptr
	rec GeoRecord
}

func newRecordTable(n int) *recordTable {
	if n < 0 {
		return nil
	}
	shift, size := tableShift(n)
	return &recordTable{
		shift:  shift,
		slots:  make([]atomic.Pointer[recEntry], size),
		recent: make([]atomic.Uintptr, size),
	}
}

func (t *recordTable) get(off uintptr) *recEntry {
	if e := t.slots[slotIndex(uint(off), t.shift)].Load(); e != nil && e.off == off {
		return e
	}
	return nil
}

func (t *recordTable) put(off uintptr, rec *GeoRecord) {
	i := slotIndex(uint(off), t.shift)
	if t.recent[i].Swap(off+1) != off+1 {
		return
	}
	t.slots[i].Store(&recEntry{off: off, rec: *rec})
}

// addrTable maps IP addresses to merged lookup results. It is lock-free
// and 4-way set-associative: an address hashes to a bucket of 4 slots,
// whose hash tags and pointers share one cache line, so a probe reads
// that line and dereferences only an entry whose tag matches. A missed
// address takes a free slot of its bucket at once; into a full bucket it
// is admitted on its second miss (seen in a separate direct-mapped table
// of recent misses, indexed by other hash bits than the bucket, so the
// addresses of one bucket do not erase each other's marks) and replaces a
// slot chosen at random: one-off addresses (scans) cause no churn, and
// more hot addresses than a bucket holds do not evict each other in lock
// step.
type addrTable struct {
	shift  uint // bucket = hash >> shift
	mask   uint64
	slots  []addrSlot      // 4 per bucket: 64 bytes, one cache line
	recent []atomic.Uint64 // indexed by hash & mask
	seq    atomic.Uint64   // victim choice
}

const addrWays = 4

// addrSlot is one way of a bucket: the entry's hash (0 when empty) beside
// the pointer, so a probe touches one cache line.
type addrSlot struct {
	tag atomic.Uint64
	e   atomic.Pointer[addrEntry]
}

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
	shift, size := tableShift(max(n, 2*addrWays))
	shift += 2 // size/4 buckets of 4 slots
	return &addrTable{
		shift:  shift,
		mask:   uint64(size - 1),
		slots:  make([]addrSlot, size),
		recent: make([]atomic.Uint64, size),
	}
}

// addrHash mixes the 128 bits of ip into 64.
func addrHash(ip netip.Addr) uint64 {
	b := ip.As16()
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	h := (hi ^ bits.RotateLeft64(lo, 29)) * 0x9E3779B97F4A7C15
	return h ^ h>>32 | 1 // never 0, the "empty" tag
}

func (t *addrTable) get(ip netip.Addr) *addrEntry {
	h := addrHash(ip)
	b := (h >> t.shift) * addrWays
	set := t.slots[b : b+addrWays : b+addrWays]
	for w := range set {
		if set[w].tag.Load() == h {
			if e := set[w].e.Load(); e != nil && e.ip == ip {
				return e
			}
		}
	}
	return nil
}

// put stores the result for ip (see addrTable for the admission rule) and
// returns the entry, or nil when it was not admitted.
func (t *addrTable) put(ip netip.Addr, rec *GeoRecord, found bool) *addrEntry {
	h := addrHash(ip)
	b := (h >> t.shift) * addrWays
	w := -1
	for i := range addrWays {
		if t.slots[b+uint64(i)].tag.Load() == 0 {
			w = i
			break
		}
	}
	if w < 0 {
		if t.recent[h&t.mask].Swap(h) != h {
			return nil
		}
		w = int((t.seq.Add(1) * 0x9E3779B97F4A7C15) >> 62)
	}
	e := &addrEntry{ip: ip, found: found, rec: *rec}
	if rec.HasLocation {
		e.lat = strconv.FormatFloat(rec.Latitude, 'f', 4, 64)
		e.lon = strconv.FormatFloat(rec.Longitude, 'f', 4, 64)
	}
	if rec.ASN != 0 {
		e.asn = strconv.FormatUint(uint64(rec.ASN), 10)
	}
	// Entry first, tag second: a reader that sees the new tag with the
	// old entry (or the reverse) compares the entry's address and misses.
	t.slots[b+uint64(w)].e.Store(e)
	t.slots[b+uint64(w)].tag.Store(h)
	return e
}
