package enrich

import (
	"math/bits"
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
		case d.kind == kindCity && string(key) == "registered_country":
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
// subdivision). iso may be nil.
func (d *geoDecoder) readPlace(c mmdbdata.Cursor, iso, name *string) (mmdbdata.Cursor, error) {
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

type strEntry struct {
	off uint
	s   string
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
	t.slots[slotIndex(off, t.shift)].Store(&strEntry{off: off, s: s})
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
