package enrich_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/enrich"
	"github.com/relaykit/relaykit/pipeline"
)

// The pipeline forms of the enrichers are pipeline functions. enrich does
// not import pipeline; this test package may.
var (
	_ pipeline.Function = (*enrich.GeoEnricher)(nil)
	_ pipeline.Function = (*enrich.LookupEnricher)(nil)
	_ pipeline.Function = (*enrich.Step)(nil)
)

// collect is a sink that keeps copies of what it receives.
type collect struct {
	mu  sync.Mutex
	got []relaykit.Event
}

func (c *collect) Send(_ context.Context, b []relaykit.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range b {
		c.got = append(c.got, b[i].Clone())
	}
	return nil
}

// TestEnrichersInRouter runs every enricher as a step of a router's
// pipeline, over events with data, without data and without input: none is
// dropped, each gets exactly the fields its data gives, and a closed GeoIP
// is reported as a function error while the event still reaches the sink.
func TestEnrichersInRouter(t *testing.T) {
	city, asn := testDBs(t)
	g := openTestGeo(t, enrich.GeoConfig{CityPath: city, ASNPath: asn})
	geo, err := enrich.NewGeoEnricher(g, enrich.GeoEnricherConfig{
		Fields: enrich.GeoFields{CountryISO: "country", ASN: "asn"},
	})
	require.NoError(t, err)
	lookup, err := enrich.NewLookupEnricher(enrich.NewTable(map[string]string{"alice": "admin"}),
		enrich.LookupEnricherConfig{Source: enrich.Source{Field: "user"}, Target: "role"})
	require.NoError(t, err)
	errBackend := errors.New("backend down")
	tagged := enrich.NewStep("tag", enrich.Chain(
		enrich.EnricherFunc(func(_ context.Context, e *relaykit.Event) error {
			if _, ok := e.Field("role"); !ok {
				return nil // found nothing: not an error, not a drop
			}
			e.SetFieldString("tagged", "yes")
			return nil
		}),
		enrich.EnricherFunc(func(_ context.Context, e *relaykit.Event) error {
			if string(e.Raw) == "fail" {
				return errBackend
			}
			return nil
		}),
	))
	assert.Equal(t, "geoip", geo.Name())
	assert.Equal(t, "lookup", lookup.Name())
	assert.Equal(t, "tag", tagged.Name())

	var sink collect
	var fnErrs []string
	var drops int
	r, err := pipeline.NewRouter([]pipeline.Route{{
		Name:     "all",
		Pipeline: pipeline.NewPipeline(geo, lookup, tagged),
		Sinks:    []relaykit.Sink{&sink},
		Final:    true,
	}}, pipeline.Config{Hooks: pipeline.Hooks{
		OnFunctionError: func(route, fn string, err error) { fnErrs = append(fnErrs, route+"/"+fn+": "+err.Error()) },
		OnDrop:          func(string, string, int) { drops++ },
	}})
	require.NoError(t, err)

	mk := func(raw, user string) relaykit.Event {
		e := relaykit.Event{Raw: []byte(raw)}
		if user != "" {
			e.SetFieldString("user", user)
		}
		return e
	}
	batch := []relaykit.Event{
		mk("login from 192.0.2.5", "alice"),  // geo data, lookup data
		mk("login from 10.0.0.3", "mallory"), // address without data, key without data
		mk("no address here", ""),            // no input for either
		mk("fail", "alice"),                  // the chain fails after tagging
		mk("from 198.51.100.200", "nobody"),  // geo data only
	}
	require.NoError(t, r.Route(t.Context(), batch))
	want := []map[string]string{
		{"user": "alice", "country": "DE", "asn": "64496", "role": "admin", "tagged": "yes"},
		{"user": "mallory"},
		{},
		{"user": "alice", "role": "admin", "tagged": "yes"},
		{"user": "nobody", "country": "JP", "asn": "64497"},
	}
	require.Len(t, sink.got, len(want), "no event dropped")
	for i := range want {
		assert.Equal(t, want[i], fields(&sink.got[i]), "event %d", i)
	}
	assert.Equal(t, []string{"all/tag: backend down"}, fnErrs)
	assert.Zero(t, drops)
	assert.Equal(t, enrich.EnricherStats{Events: 5, NoInput: 2, Enriched: 2, NoData: 1}, geo.Stats())
	assert.Equal(t, enrich.EnricherStats{Events: 5, NoInput: 1, Enriched: 2, NoData: 2}, lookup.Stats())

	// A closed database is an error of the step, never a drop.
	require.NoError(t, g.Close())
	sink.got = nil
	fnErrs = nil
	require.NoError(t, r.Route(t.Context(), []relaykit.Event{mk("from 192.0.2.5", "")}))
	require.Len(t, sink.got, 1)
	assert.Equal(t, []string{"all/geoip: " + enrich.ErrClosed.Error()}, fnErrs)
}

// TestStepAllocs: running an enricher through a Step adds no allocation.
func TestStepAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	city, asn := testDBs(t)
	g := openTestGeo(t, enrich.GeoConfig{CityPath: city, ASNPath: asn})
	ge, err := enrich.NewGeoEnricher(g, enrich.GeoEnricherConfig{})
	require.NoError(t, err)
	p := pipeline.NewPipeline(ge, enrich.NewStep("geo_again", ge))
	var e relaykit.Event
	fill := func() {
		e.Reset()
		e.Raw = append(e.Raw, "from 192.0.2.5"...)
		if keep, err := p.Run(&e); !keep || err != nil {
			panic("dropped or failed")
		}
	}
	fill()
	assert.Zero(t, testing.AllocsPerRun(200, fill))
	assert.Len(t, e.Fields, 9)
}

func TestNewStepNil(t *testing.T) {
	assert.Panics(t, func() { enrich.NewStep("x", nil) })
}

// BenchmarkEnricherAsStep measures one GeoIP enrichment (one op = one
// event) called directly through Enrich, as the enricher's own pipeline
// form (Apply), and through a Step wrapping it: the pipeline forms add no
// allocation.
func BenchmarkEnricherAsStep(b *testing.B) {
	city, asn := testDBs(b)
	g, err := enrich.OpenGeoIP(enrich.GeoConfig{CityPath: city, ASNPath: asn})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	ge, err := enrich.NewGeoEnricher(g, enrich.GeoEnricherConfig{})
	if err != nil {
		b.Fatal(err)
	}
	step := enrich.NewStep("geo", ge)
	impls := []struct {
		name  string
		apply func(e *relaykit.Event) error
	}{
		{"enrich", func(e *relaykit.Event) error { return ge.Enrich(context.Background(), e) }},
		{"apply", func(e *relaykit.Event) error { _, err := ge.Apply(e); return err }},
		{"step", func(e *relaykit.Event) error { _, err := step.Apply(e); return err }},
	}
	raw := []byte("Failed password for root from 192.0.2.5 port 22 ssh2")
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			var e relaykit.Event
			b.ReportAllocs()
			for b.Loop() {
				e.Reset()
				e.Raw = append(e.Raw, raw...)
				if err := impl.apply(&e); err != nil || len(e.Fields) != 9 {
					b.Fatalf("not enriched: %v", err)
				}
			}
		})
	}
}
