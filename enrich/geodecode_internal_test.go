package enrich

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/oschwald/maxminddb-golang/v2/mmdbdata"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mmdbEnc writes MaxMind DB data section values (MaxMind DB File Format
// Specification 2.0, "Output Data Section"): short forms only, enough for
// layouts mmdbwriter does not produce (it sorts map keys).
type mmdbEnc struct{ b []byte }

func (e *mmdbEnc) str(s string) int {
	off := len(e.b)
	e.b = append(e.b, 2<<5|byte(len(s)))
	e.b = append(e.b, s...)
	return off
}

// mapOf writes a map header for n pairs; the caller writes them.
func (e *mmdbEnc) mapOf(n int) int {
	off := len(e.b)
	e.b = append(e.b, 7<<5|byte(n))
	return off
}

// array writes an array header (extended type 11) for n values.
func (e *mmdbEnc) array(n int) int {
	off := len(e.b)
	e.b = append(e.b, byte(n), 11-7)
	return off
}

// ptr writes a pointer to off (below 2048).
func (e *mmdbEnc) ptr(off int) {
	e.b = append(e.b, 1<<5|byte(off>>8), byte(off))
}

func (e *mmdbEnc) double(f float64) {
	e.b = append(e.b, 3<<5|8)
	e.b = binary.BigEndian.AppendUint64(e.b, math.Float64bits(f))
}

func (e *mmdbEnc) uint32(v uint32) {
	e.b = append(e.b, 6<<5|4)
	e.b = binary.BigEndian.AppendUint32(e.b, v)
}

// names writes a names map of the pairs lang, name, lang, name...
func (e *mmdbEnc) names(pairs ...string) {
	e.mapOf(len(pairs) / 2)
	for _, s := range pairs {
		e.str(s)
	}
}

// TestGeoDecoderLayouts decodes City records whose places are shared
// (pointers) or inline, whose keys are in orders that writers that sort
// keys do not produce, and whose names lack English, with and without the
// string table and twice (the second time from the table): the fields must
// be right and the successor must be the value after the record, although
// the decoder stops reading places and names early.
func TestGeoDecoderLayouts(t *testing.T) {
	var e mmdbEnc
	// Shared places, each written once.
	city := e.mapOf(2)
	e.str("geoname_id")
	e.uint32(2950159)
	e.str("names")
	e.names("de", "Berlin", "en", "Berlin", "ja", "ベルリン")
	country := e.mapOf(3) // names before iso_code
	e.str("names")
	e.names("en", "Germany", "fr", "Allemagne")
	e.str("iso_code")
	e.str("DE")
	e.str("is_in_european_union")
	e.b = append(e.b, 0, 7) // bool true (extended type 14)
	subs := e.array(2)
	e.mapOf(3) // a key after names
	e.str("names")
	e.names("de", "Land Berlin", "en", "Land Berlin")
	e.str("iso_code")
	e.str("BE")
	e.str("zz")
	e.str("after names")
	e.mapOf(1)
	e.str("iso_code")
	e.str("XX")

	type layout struct {
		name string
		off  int
		want GeoRecord
	}
	var layouts []layout

	off := e.mapOf(6)
	e.str("city")
	e.ptr(city)
	e.str("continent")
	e.mapOf(2)
	e.str("code")
	e.str("EU")
	e.str("names")
	e.names("en", "Europe")
	e.str("country")
	e.ptr(country)
	e.str("location")
	e.mapOf(3)
	e.str("latitude")
	e.double(52.5244)
	e.str("time_zone")
	e.str("Europe/Berlin")
	e.str("longitude")
	e.double(13.4105)
	e.str("subdivisions")
	e.ptr(subs)
	e.str("zz")
	e.str("last")
	e.str("END")
	layouts = append(layouts, layout{"shared places", off, GeoRecord{CountryISO: "DE", CountryName: "Germany",
		Subdivision: "Land Berlin", SubdivisionISO: "BE", City: "Berlin",
		Latitude: 52.5244, Longitude: 13.4105, HasLocation: true}})

	off = e.mapOf(4)
	e.str("subdivisions") // before country: any order
	e.array(1)
	e.mapOf(2)
	e.str("names")
	e.names("en", "Île-de-France", "fr", "Île-de-France")
	e.str("iso_code")
	e.str("IDF")
	e.str("country")
	e.mapOf(3)
	e.str("iso_code")
	e.str("FR")
	e.str("names")
	e.names("de", "Frankreich", "en", "France", "es", "Francia")
	e.str("geoname_id")
	e.uint32(3017382)
	e.str("city")
	e.mapOf(1)
	e.str("names")
	e.names("fr", "Lutèce") // no English name
	e.str("location")
	e.mapOf(1)
	e.str("latitude") // no longitude: no location
	e.double(48.8534)
	e.str("END")
	layouts = append(layouts, layout{"inline places", off, GeoRecord{CountryISO: "FR", CountryName: "France",
		Subdivision: "Île-de-France", SubdivisionISO: "IDF", Latitude: 48.8534}})

	off = e.mapOf(2)
	e.str("registered_country")
	e.mapOf(2)
	e.str("names")
	e.names("en", "United States")
	e.str("iso_code")
	e.str("US")
	e.str("subdivisions")
	e.array(0)
	e.str("END")
	layouts = append(layouts, layout{"registered country only", off, GeoRecord{CountryISO: "US", CountryName: "United States"}})

	off = e.mapOf(2)
	e.str("registered_country")
	e.ptr(country)
	e.str("country")
	e.mapOf(1)
	e.str("iso_code")
	e.str("JP")
	e.str("END")
	layouts = append(layouts, layout{"country after registered", off, GeoRecord{CountryISO: "JP"}})

	for _, slots := range []int{0, -1} {
		strs := newStringTable(slots)
		for _, l := range layouts {
			for pass := range 2 {
				d := &geoDecoder{kind: kindCity, strs: strs}
				next, err := mmdbdata.NewDecoder(e.b, uint(l.off)).Cursor().UnmarshalCursor(d)
				require.NoError(t, err, "%s, slots %d, pass %d", l.name, slots, pass)
				assert.Equal(t, l.want, d.rec, "%s, slots %d, pass %d", l.name, slots, pass)
				// What the record table keeps gives the same record back,
				// with the places it points to in the string table.
				var got GeoRecord
				newRecEntry(uintptr(l.off), kindCity, &d.rec, d.country, d.sub).fill(&got, kindCity)
				assert.Equal(t, l.want, got, "%s, slots %d, pass %d: from a record entry", l.name, slots, pass)
				if strs != nil && (d.rec.CountryName != "" || d.rec.CountryISO != "") {
					require.NotNil(t, d.country, "%s: country entry", l.name)
					assert.Equal(t, [2]string{d.rec.CountryName, d.rec.CountryISO}, [2]string{d.country.s, d.country.s2})
				}
				if strs != nil && d.rec.Subdivision != "" {
					require.NotNil(t, d.sub, "%s: subdivision entry", l.name)
				}
				end, _, err := next.ReadString()
				require.NoError(t, err)
				assert.Equal(t, "END", end, "%s: successor", l.name)
			}
		}
	}
}
