package enrich

import (
	"sync"

	"github.com/oschwald/maxminddb-golang/v2/mmdbdata"
)

// geoDecoder decodes the needed fields of one City or ASN record straight
// from the database with the cursor API: no reflection, maps walked with
// the counted-map reader that maxminddb-gen's generated decoders use, and
// places and strings from the file's stringTable when it has them.
//
// A City record's places (city, country, subdivisions) are pointers to
// maps shared by many records, each with a names map in up to 8
// languages. The decoder looks a place up in the string table by the
// offset the pointer leads to; on a miss it reads the place's map only up
// to its ISO code and English name, and takes the record's next field
// from past the pointer, so the other languages are neither decoded nor
// walked.
type geoDecoder struct {
	kind int
	strs *stringTable
	rec  GeoRecord
	// country and sub are the string table's entries for the country
	// (or registered country) and first subdivision in rec, nil when
	// the table does not hold them: a record table entry points to them
	// instead of copying four strings.
	country, sub *strEntry
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
	d.country, d.sub = nil, nil
	if d.kind == kindASN {
		return d.decodeASN(c)
	}
	return d.decodeCity(c)
}

// decodeASN reads the AS number and organisation of an ASN record.
func (d *geoDecoder) decodeASN(c mmdbdata.Cursor) (mmdbdata.Cursor, error) {
	m, err := c.MapReader()
	if err != nil {
		return mmdbdata.Cursor{}, err
	}
	next := m.First()
	for range m.Len() {
		key, v, err := next.ReadMapKey()
		if err != nil {
			return mmdbdata.Cursor{}, err
		}
		switch string(key) {
		case "autonomous_system_number":
			var n uint64
			n, next, err = v.ReadUint()
			d.rec.ASN = uint32(n)
		case "autonomous_system_organization":
			d.rec.ASOrg, next, err = d.readString(v)
		default:
			next, err = v.Skip()
		}
		if err != nil {
			return mmdbdata.Cursor{}, err
		}
	}
	return m.End(next)
}

// decodeCity reads the place names and location of a City (or Country)
// record; the other fields are skipped over without being read.
func (d *geoDecoder) decodeCity(c mmdbdata.Cursor) (mmdbdata.Cursor, error) {
	m, err := c.MapReader()
	if err != nil {
		return mmdbdata.Cursor{}, err
	}
	var regISO, regName string
	var regE *strEntry
	next := m.First()
	for range m.Len() {
		key, v, err := next.ReadMapKey()
		if err != nil {
			return mmdbdata.Cursor{}, err
		}
		switch string(key) {
		case "city":
			_, next, err = d.readPlace(v, nil, &d.rec.City)
		case "country":
			d.country, next, err = d.readPlace(v, &d.rec.CountryISO, &d.rec.CountryName)
		case "location":
			next, err = d.readLocation(v)
		case "registered_country":
			if d.rec.CountryISO == "" {
				// Only a fallback: writers sort keys, so "country" has
				// usually been read already; if not, this is decoded and
				// used only when no country follows.
				regE, next, err = d.readPlace(v, &regISO, &regName)
			} else {
				next, err = v.Skip()
			}
		case "subdivisions":
			next, err = d.readSubdivisions(v)
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
		d.country = regE
	}
	return m.End(next)
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
// probe and a skip over a pointer. It returns the table's entry, or nil
// without a table.
func (d *geoDecoder) readPlace(c mmdbdata.Cursor, iso, name *string) (*strEntry, mmdbdata.Cursor, error) {
	var off uint
	if d.strs != nil {
		var err error
		if off, err = c.Offset(); err != nil {
			return nil, mmdbdata.Cursor{}, err
		}
		if e := d.strs.entry(off); e != nil {
			if iso != nil {
				*iso = e.s2
			}
			*name = e.s
			next, err := c.Skip()
			return e, next, err
		}
	}
	// The successor first: past the pointer to a shared place (no walk),
	// so the place itself need not be read to its end.
	next, err := c.Skip()
	if err != nil {
		return nil, mmdbdata.Cursor{}, err
	}
	isoS, nameS, err := decodePlace(c)
	if err != nil {
		return nil, mmdbdata.Cursor{}, err
	}
	if iso != nil {
		*iso = isoS
	}
	*name = nameS
	var e *strEntry
	if d.strs != nil {
		e = &strEntry{off: off, s: nameS, s2: isoS}
		d.strs.putEntry(e)
	}
	return e, next, nil
}

// decodePlace returns the ISO code and English name of the place map at
// c. It stops reading once it has both, or after "names" when that is the
// map's last key (the writers sort keys, and "names" sorts last), so the
// rest of the map is not walked; the caller takes the successor from
// c.Skip. The strings are new: the place as a whole is what the string
// table keeps.
func decodePlace(c mmdbdata.Cursor) (iso, name string, err error) {
	m, err := c.MapReader()
	if err != nil {
		return "", "", err
	}
	haveISO := false
	next := m.First()
	for i := range m.Len() {
		key, v, err := next.ReadMapKey()
		if err != nil {
			return "", "", err
		}
		switch string(key) {
		case "iso_code":
			if iso, next, err = v.ReadString(); err != nil {
				return "", "", err
			}
			haveISO = true
		case "names":
			if name, err = englishName(v); err != nil {
				return "", "", err
			}
			if haveISO || i == m.Len()-1 {
				return iso, name, nil
			}
			next, err = v.Skip()
		default:
			next, err = v.Skip()
		}
		if err != nil {
			return "", "", err
		}
	}
	return iso, name, nil
}

// englishName returns the "en" entry of the names map at c, or "" when
// it has none. It reads keys only up to "en": the other languages are
// neither decoded nor walked.
func englishName(c mmdbdata.Cursor) (string, error) {
	m, err := c.MapReader()
	if err != nil {
		return "", err
	}
	next := m.First()
	for range m.Len() {
		key, v, err := next.ReadMapKey()
		if err != nil {
			return "", err
		}
		if string(key) == "en" {
			s, _, err := v.ReadString()
			return s, err
		}
		if next, err = v.Skip(); err != nil {
			return "", err
		}
	}
	return "", nil
}

// readSubdivisions reads the first element of the subdivisions array. The
// pair is kept in the string table under the array's offset, like a place:
// the array is shared by the records of a region.
func (d *geoDecoder) readSubdivisions(c mmdbdata.Cursor) (mmdbdata.Cursor, error) {
	var off uint
	if d.strs != nil {
		var err error
		if off, err = c.Offset(); err != nil {
			return mmdbdata.Cursor{}, err
		}
		if e := d.strs.entry(off); e != nil {
			d.rec.Subdivision, d.rec.SubdivisionISO = e.s, e.s2
			d.sub = e
			return c.Skip()
		}
	}
	next, err := c.Skip()
	if err != nil {
		return mmdbdata.Cursor{}, err
	}
	s, err := c.Slice()
	if err != nil {
		return mmdbdata.Cursor{}, err
	}
	var iso, name string
	if _, v, ok := s.Next(mmdbdata.Cursor{}); ok {
		if iso, name, err = decodePlace(v); err != nil {
			return mmdbdata.Cursor{}, err
		}
	} else if err := s.Err(); err != nil {
		return mmdbdata.Cursor{}, err
	}
	d.rec.Subdivision, d.rec.SubdivisionISO = name, iso
	if d.strs != nil {
		d.sub = &strEntry{off: off, s: name, s2: iso}
		d.strs.putEntry(d.sub)
	}
	return next, nil
}

// readLocation reads latitude and longitude.
func (d *geoDecoder) readLocation(c mmdbdata.Cursor) (mmdbdata.Cursor, error) {
	m, err := c.MapReader()
	if err != nil {
		return mmdbdata.Cursor{}, err
	}
	var haveLat, haveLon bool
	next := m.First()
	for range m.Len() {
		key, v, err := next.ReadMapKey()
		if err != nil {
			return mmdbdata.Cursor{}, err
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
	return m.End(next)
}
