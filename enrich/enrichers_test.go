package enrich_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/enrich"
)

func fields(e *relaykit.Event) map[string]string {
	m := map[string]string{}
	for _, f := range e.Fields {
		m[string(f.Key)] = string(f.Value)
	}
	return m
}

func TestGeoEnricher(t *testing.T) {
	city, asn := testDBs(t)
	g := openTestGeo(t, enrich.GeoConfig{CityPath: city, ASNPath: asn})

	tests := []struct {
		name string
		cfg  enrich.GeoEnricherConfig
		raw  string
		set  map[string]string
		want map[string]string
		ok   bool
	}{
		{name: "raw message, default names", raw: "Failed password from 192.0.2.5 port 22", ok: true, want: map[string]string{
			"src_geo_country": "DE", "src_geo_country_name": "Germany", "src_geo_subdivision": "Land Berlin",
			"src_geo_subdivision_iso": "BE", "src_geo_city": "Berlin", "src_geo_lat": "52.5244", "src_geo_lon": "13.4105",
			"src_asn": "64496", "src_as_org": "Example Net One",
		}},
		{name: "field, custom names", cfg: enrich.GeoEnricherConfig{
			Source: enrich.Source{Field: "dst"},
			Fields: enrich.GeoFields{CountryISO: "dst_country", ASN: "dst_asn"},
		}, set: map[string]string{"dst": "[2001:db8::4]:443"}, ok: true, want: map[string]string{
			"dst": "[2001:db8::4]:443", "dst_country": "NL", "dst_asn": "64498",
		}},
		{name: "json path in raw", cfg: enrich.GeoEnricherConfig{Source: enrich.Source{JSONPath: "client.ip"}, Fields: enrich.GeoFieldNames("client_")},
			raw: `{"client":{"ip":"198.51.100.200"}}`, ok: true, want: map[string]string{
				"client_geo_country": "JP", "client_geo_country_name": "Japan", "client_asn": "64497", "client_as_org": "Example Net Two",
			}},
		{name: "no address", raw: "nothing here 1.2.3", want: map[string]string{}},
		{name: "malformed address", raw: "from 10.0.0.300", want: map[string]string{}},
		{name: "not in database", raw: "from 10.0.0.3", want: map[string]string{}},
		{name: "missing field", cfg: enrich.GeoEnricherConfig{Source: enrich.Source{Field: "src_ip"}}, raw: "from 192.0.2.1", want: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ge, err := enrich.NewGeoEnricher(g, tt.cfg)
			require.NoError(t, err)
			var e relaykit.Event
			e.Raw = []byte(tt.raw)
			for k, v := range tt.set {
				e.SetFieldString(k, v)
			}
			assert.Equal(t, tt.ok, ge.ApplyForTest(&e))
			assert.Equal(t, tt.want, fields(&e))
			st := ge.Stats()
			assert.Equal(t, uint64(1), st.Events)
			if tt.ok {
				assert.Equal(t, uint64(1), st.Enriched)
			} else {
				assert.Equal(t, uint64(1), st.NoInput+st.NoData)
			}
		})
	}

	_, err := enrich.NewGeoEnricher(nil, enrich.GeoEnricherConfig{})
	assert.ErrorIs(t, err, enrich.ErrInvalidConfig)
	_, err = enrich.NewGeoEnricher(g, enrich.GeoEnricherConfig{Source: enrich.Source{JSONPath: "a..b"}})
	assert.ErrorIs(t, err, enrich.ErrInvalidConfig)
}

func TestGeoEnricherAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	city, asn := testDBs(t)
	for _, slots := range []int{0, -1} { // address table hit, and miss
		g := openTestGeo(t, enrich.GeoConfig{CityPath: city, ASNPath: asn, AddressCacheSlots: slots})
		ge, err := enrich.NewGeoEnricher(g, enrich.GeoEnricherConfig{})
		require.NoError(t, err)
		var e relaykit.Event
		raw := []byte("May  1 12:00:00 fw1 sshd[42]: Failed password for root from 192.0.2.5 port 22 ssh2")
		fill := func() {
			e.Reset()
			e.Raw = append(e.Raw, raw...)
			if keep, err := ge.Apply(&e); !keep || err != nil {
				panic("geoip step dropped or failed")
			}
		}
		fill()
		fill()
		assert.Zero(t, testing.AllocsPerRun(200, fill), "address slots %d", slots)
		assert.Len(t, e.Fields, 9)
	}
}

func TestGeoEnricherClosed(t *testing.T) {
	city, _ := testDBs(t)
	g, err := enrich.OpenGeoIP(enrich.GeoConfig{CityPath: city})
	require.NoError(t, err)
	ge, err := enrich.NewGeoEnricher(g, enrich.GeoEnricherConfig{})
	require.NoError(t, err)
	require.NoError(t, g.Close())
	e := relaykit.Event{Raw: []byte("192.0.2.1")}
	assert.ErrorIs(t, ge.Enrich(t.Context(), &e), enrich.ErrClosed)
}

func TestLookupEnricher(t *testing.T) {
	tbl := enrich.NewTable(map[string]string{"alice": "admin", "42": "answer"})
	tests := []struct {
		name string
		cfg  enrich.LookupEnricherConfig
		raw  string
		set  map[string]string
		want map[string]string
		ok   bool
	}{
		{name: "field", cfg: enrich.LookupEnricherConfig{Source: enrich.Source{Field: "user"}, Target: "role"},
			set: map[string]string{"user": "alice"}, ok: true, want: map[string]string{"user": "alice", "role": "admin"}},
		{name: "json string in raw", cfg: enrich.LookupEnricherConfig{Source: enrich.Source{JSONPath: "who.name"}, Target: "role"},
			raw: `{"who":{"name":"alice"}}`, ok: true, want: map[string]string{"role": "admin"}},
		{name: "json number", cfg: enrich.LookupEnricherConfig{Source: enrich.Source{JSONPath: "id"}, Target: "meaning"},
			raw: `{"id":42}`, ok: true, want: map[string]string{"meaning": "answer"}},
		{name: "whole raw", cfg: enrich.LookupEnricherConfig{Target: "role"}, raw: "alice", ok: true, want: map[string]string{"role": "admin"}},
		{name: "not found, default", cfg: enrich.LookupEnricherConfig{Source: enrich.Source{Field: "user"}, Target: "role", Default: "unknown"},
			set: map[string]string{"user": "mallory"}, want: map[string]string{"user": "mallory", "role": "unknown"}},
		{name: "not found", cfg: enrich.LookupEnricherConfig{Source: enrich.Source{Field: "user"}, Target: "role"},
			set: map[string]string{"user": "mallory"}, want: map[string]string{"user": "mallory"}},
		{name: "json missing", cfg: enrich.LookupEnricherConfig{Source: enrich.Source{JSONPath: "who.name"}, Target: "role"},
			raw: `{"who":{}}`, want: map[string]string{}},
		{name: "no field", cfg: enrich.LookupEnricherConfig{Source: enrich.Source{Field: "user"}, Target: "role"},
			want: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			le, err := enrich.NewLookupEnricher(tbl, tt.cfg)
			require.NoError(t, err)
			var e relaykit.Event
			e.Raw = []byte(tt.raw)
			for k, v := range tt.set {
				e.SetFieldString(k, v)
			}
			assert.Equal(t, tt.ok, le.ApplyForTest(&e))
			assert.Equal(t, tt.want, fields(&e))
		})
	}
	_, err := enrich.NewLookupEnricher(nil, enrich.LookupEnricherConfig{Target: "x"})
	assert.ErrorIs(t, err, enrich.ErrInvalidConfig)
	_, err = enrich.NewLookupEnricher(tbl, enrich.LookupEnricherConfig{})
	assert.ErrorIs(t, err, enrich.ErrInvalidConfig)
}

func TestLookupEnricherBackendErrors(t *testing.T) {
	failing := enrich.LookupFunc(func(ctx context.Context, key []byte) ([]byte, bool, error) {
		return nil, false, errors.New("down")
	})
	le, err := enrich.NewLookupEnricher(failing, enrich.LookupEnricherConfig{Target: "v", Default: "-"})
	require.NoError(t, err)
	e := relaykit.Event{Raw: []byte("k")}
	require.NoError(t, le.Enrich(t.Context(), &e), "a failed store is no data, not an error")
	assert.Equal(t, map[string]string{"v": "-"}, fields(&e))
	assert.Equal(t, uint64(1), le.Stats().NoData)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, le.Enrich(ctx, &e), context.Canceled)
}

func TestLookupEnricherAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	c := newCache(t, enrich.NewTable(map[string]string{"alice": "admin"}), enrich.CacheConfig{})
	le, err := enrich.NewLookupEnricher(c, enrich.LookupEnricherConfig{Source: enrich.Source{JSONPath: "user"}, Target: "role"})
	require.NoError(t, err)
	var e relaykit.Event
	raw := []byte(`{"user":"alice","action":"login"}`)
	ctx := context.Background()
	run := func() {
		e.Reset()
		e.Raw = append(e.Raw, raw...)
		_ = le.Enrich(ctx, &e)
	}
	run()
	run()
	assert.Zero(t, testing.AllocsPerRun(200, run))
	assert.Equal(t, map[string]string{"role": "admin"}, fields(&e))
}

func TestChain(t *testing.T) {
	var order []string
	step := func(name string, err error) enrich.Enricher {
		return enrich.EnricherFunc(func(_ context.Context, e *relaykit.Event) error {
			order = append(order, name)
			e.SetFieldString(name, "1")
			return err
		})
	}
	boom := errors.New("boom")
	ch := enrich.Chain(step("a", nil), nil, step("b", boom), step("c", nil))
	var e relaykit.Event
	err := ch.Enrich(t.Context(), &e)
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, []string{"a", "b"}, order)
	assert.Equal(t, map[string]string{"a": "1", "b": "1"}, fields(&e))
	assert.NoError(t, enrich.Chain().Enrich(t.Context(), &e))
}

// TestGeoEnricherSetsLikeSetField checks that Apply leaves the event's
// fields exactly as the equivalent sequence of SetFieldString calls would
// (order, replacement in place, duplicate names), on an address-table hit
// and miss alike.
func TestGeoEnricherSetsLikeSetField(t *testing.T) {
	city, asn := testDBs(t)
	dup := enrich.GeoFieldNames("src_")
	dup.City = dup.CountryISO // two values under one name: the later wins
	tests := []struct {
		name   string
		fields enrich.GeoFields
		pre    [][2]string
	}{
		{name: "fresh event", fields: enrich.GeoFieldNames("src_")},
		{name: "existing fields", fields: enrich.GeoFieldNames("src_"),
			pre: [][2]string{{"app", "sshd"}, {"src_geo_city", "stale"}, {"src_asn", "1"}, {"user", "root"}}},
		{name: "duplicate names", fields: dup, pre: [][2]string{{"src_geo_country", "XX"}}},
		{name: "some names", fields: enrich.GeoFields{City: "c", ASN: "a", Latitude: "lat"}},
	}
	for _, slots := range []int{0, -1} {
		g := openTestGeo(t, enrich.GeoConfig{CityPath: city, ASNPath: asn, AddressCacheSlots: slots})
		for _, tt := range tests {
			ge, err := enrich.NewGeoEnricher(g, enrich.GeoEnricherConfig{Fields: tt.fields})
			require.NoError(t, err)
			for _, raw := range []string{"from 192.0.2.5 port 22", "from 2001:db8::7", "from 198.51.100.9"} {
				var got relaykit.Event
				for range 3 { // miss, admission, hit
					got.Reset()
					got.Raw = []byte(raw)
					for _, kv := range tt.pre {
						got.SetFieldString(kv[0], kv[1])
					}
					require.True(t, ge.ApplyForTest(&got), raw)

					ip, ok := enrich.FirstIP(got.Raw)
					require.True(t, ok)
					rec, ok := g.Lookup(ip)
					require.True(t, ok)
					var want relaykit.Event
					for _, kv := range tt.pre {
						want.SetFieldString(kv[0], kv[1])
					}
					set := func(k, v string) {
						if k != "" && v != "" {
							want.SetFieldString(k, v)
						}
					}
					f := tt.fields
					set(f.CountryISO, rec.CountryISO)
					set(f.CountryName, rec.CountryName)
					set(f.Subdivision, rec.Subdivision)
					set(f.SubdivisionISO, rec.SubdivisionISO)
					set(f.City, rec.City)
					if rec.HasLocation {
						set(f.Latitude, strconv.FormatFloat(rec.Latitude, 'f', 4, 64))
						set(f.Longitude, strconv.FormatFloat(rec.Longitude, 'f', 4, 64))
					}
					if rec.ASN != 0 {
						set(f.ASN, strconv.FormatUint(uint64(rec.ASN), 10))
					}
					set(f.ASOrg, rec.ASOrg)
					require.Equal(t, len(want.Fields), len(got.Fields), "%s %s slots %d", tt.name, raw, slots)
					for i := range want.Fields {
						assert.Equal(t, string(want.Fields[i].Key)+"="+string(want.Fields[i].Value),
							string(got.Fields[i].Key)+"="+string(got.Fields[i].Value), "%s %s slots %d", tt.name, raw, slots)
					}
				}
			}
		}
	}
}
