package enrich

import (
	"context"
	"fmt"
	"sync"

	"github.com/relaykit/relaykit"
)

// GeoFields names the event fields a [GeoEnricher] writes. An empty name
// means that field is not written.
type GeoFields struct {
	CountryISO     string // ISO 3166-1 alpha-2 code, e.g. "DE"
	CountryName    string // English name
	Subdivision    string // English name of the first subdivision
	SubdivisionISO string // ISO 3166-2 subdivision code without the country
	City           string // English name
	Latitude       string // degrees, 4 decimals
	Longitude      string // degrees, 4 decimals
	ASN            string // decimal AS number
	ASOrg          string // AS organisation
}

// GeoFieldNames returns the conventional field names with prefix, e.g.
// for "src_": src_geo_country, src_geo_country_name, src_geo_subdivision,
// src_geo_subdivision_iso, src_geo_city, src_geo_lat, src_geo_lon, src_asn
// and src_as_org.
func GeoFieldNames(prefix string) GeoFields {
	return GeoFields{
		CountryISO:     prefix + "geo_country",
		CountryName:    prefix + "geo_country_name",
		Subdivision:    prefix + "geo_subdivision",
		SubdivisionISO: prefix + "geo_subdivision_iso",
		City:           prefix + "geo_city",
		Latitude:       prefix + "geo_lat",
		Longitude:      prefix + "geo_lon",
		ASN:            prefix + "asn",
		ASOrg:          prefix + "as_org",
	}
}

// GeoEnricherConfig configures [NewGeoEnricher].
type GeoEnricherConfig struct {
	// Source is where the IP address is read: a field (e.g. "src_ip"), a
	// JSON path in it, or the first address in the raw message (the zero
	// Source).
	Source Source
	// Fields names the fields written. The zero value means
	// GeoFieldNames("src_").
	Fields GeoFields
}

// EnricherStats is a snapshot of an enricher's counters.
type EnricherStats struct {
	// Events is the number of events the enricher ran on.
	Events uint64
	// NoInput is the number of events without the input (no field, no
	// JSON value, no address or key).
	NoInput uint64
	// Enriched is the number of events that got fields.
	Enriched uint64
	// NoData is the number of events whose address or key had no data
	// (not in the database or store, or the store failed).
	NoData uint64
}

// enricherCounters are the striped counters behind EnricherStats.
type enricherCounters struct {
	events, noInput, enriched, noData stripedCounter
}

func (c *enricherCounters) stats() EnricherStats {
	return EnricherStats{
		Events:   c.events.load(),
		NoInput:  c.noInput.load(),
		Enriched: c.enriched.load(),
		NoData:   c.noData.load(),
	}
}

// GeoEnricher writes GeoIP and ASN fields for the IP address it finds in
// an event. It is safe for concurrent use by multiple goroutines and does
// not allocate per event once warm.
type GeoEnricher struct {
	geo    *GeoIP
	src    source
	fields GeoFields
	keys   geoKeys
	n      enricherCounters
}

// NewGeoEnricher returns an enricher that looks addresses up in g. The
// error wraps [ErrInvalidConfig].
func NewGeoEnricher(g *GeoIP, cfg GeoEnricherConfig) (*GeoEnricher, error) {
	if g == nil {
		return nil, fmt.Errorf("%w: GeoEnricher needs a GeoIP", ErrInvalidConfig)
	}
	src, err := cfg.Source.compile()
	if err != nil {
		return nil, err
	}
	if cfg.Fields == (GeoFields{}) {
		cfg.Fields = GeoFieldNames("src_")
	}
	return &GeoEnricher{geo: g, src: src, fields: cfg.Fields, keys: newGeoKeys(cfg.Fields)}, nil
}

// Enrich implements [Enricher]. It returns [ErrClosed] after the GeoIP was
// closed and nil otherwise, whether or not it found data.
func (ge *GeoEnricher) Enrich(_ context.Context, e *relaykit.Event) error {
	if ge.geo.cur.Load() == nil {
		return ErrClosed
	}
	ge.apply(e)
	return nil
}

// Name returns "geoip", the step's label in pipeline counters.
func (ge *GeoEnricher) Name() string { return "geoip" }

// Apply is the pipeline form of [GeoEnricher.Enrich]: with Name, it makes a
// *GeoEnricher a pipeline.Function (package pipeline, matched by method set;
// this package does not import it). It always returns keep=true: an event
// without an address, or whose address has no data, passes unchanged, and
// only [ErrClosed] (the GeoIP was closed) is returned, which a pipeline
// counts without dropping the event. Whether fields were written shows in
// [GeoEnricher.Stats].
func (ge *GeoEnricher) Apply(e *relaykit.Event) (keep bool, err error) {
	return true, ge.Enrich(context.Background(), e)
}

// apply enriches e and reports whether it wrote fields.
func (ge *GeoEnricher) apply(e *relaykit.Event) bool {
	ge.n.events.add()
	ip, ok := ge.src.ip(e)
	if !ok {
		ge.n.noInput.add()
		return false
	}
	if !ge.geo.setGeoFields(e, ip, &ge.keys) {
		ge.n.noData.add()
		return false
	}
	ge.n.enriched.add()
	return true
}

// Stats returns a snapshot of the counters.
func (ge *GeoEnricher) Stats() EnricherStats { return ge.n.stats() }

var _ Enricher = (*GeoEnricher)(nil)

// LookupEnricherConfig configures [NewLookupEnricher].
type LookupEnricherConfig struct {
	// Source is where the key is read: a field, a JSON path in it, or the
	// whole raw message (the zero Source).
	Source Source
	// Target is the field that receives the value. Required.
	Target string
	// Default, if not empty, is written to Target when the key has no data
	// (not found, or the store failed). Empty means Target is left alone.
	Default string
}

// LookupEnricher writes the value a [Lookup] holds for a key found in the
// event. Put a [Cache] in front of a remote store. It is safe for
// concurrent use by multiple goroutines and does not allocate per event
// once warm when the Lookup does not (a Cache hit).
type LookupEnricher struct {
	l      Lookup
	src    source
	target string
	def    string
	n      enricherCounters
}

// NewLookupEnricher returns an enricher that reads keys as cfg.Source says
// and looks them up in l. The error wraps [ErrInvalidConfig].
func NewLookupEnricher(l Lookup, cfg LookupEnricherConfig) (*LookupEnricher, error) {
	if l == nil {
		return nil, fmt.Errorf("%w: LookupEnricher needs a Lookup", ErrInvalidConfig)
	}
	if cfg.Target == "" {
		return nil, fmt.Errorf("%w: LookupEnricher needs a Target field", ErrInvalidConfig)
	}
	src, err := cfg.Source.compile()
	if err != nil {
		return nil, err
	}
	return &LookupEnricher{l: l, src: src, target: cfg.Target, def: cfg.Default}, nil
}

// keyBufs holds scratch buffers for keys read from JSON.
var keyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 128); return &b }}

// Enrich implements [Enricher]. A key without data is not an error; an
// error from the Lookup (a bare backend without a Cache) is counted as no
// data, and only a done ctx is returned.
func (le *LookupEnricher) Enrich(ctx context.Context, e *relaykit.Event) error {
	_, err := le.apply(ctx, e)
	return err
}

// apply enriches e and reports whether it wrote the value.
func (le *LookupEnricher) apply(ctx context.Context, e *relaykit.Event) (bool, error) {
	le.n.events.add()
	var key []byte
	var ok bool
	if le.src.json.keys == nil {
		key, ok = le.src.input(e)
	} else {
		bp := keyBufs.Get().(*[]byte)
		defer func() { keyBufs.Put(bp) }()
		*bp, ok = le.src.appendKey((*bp)[:0], e)
		key = *bp
	}
	if !ok || len(key) == 0 {
		le.n.noInput.add()
		return false, nil
	}
	v, found, err := le.l.Get(ctx, key)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return false, cerr
		}
		found = false
	}
	if !found {
		le.n.noData.add()
		if le.def != "" {
			e.SetFieldString(le.target, le.def)
		}
		return false, nil
	}
	e.SetField(le.target, v)
	le.n.enriched.add()
	return true, nil
}

// Name returns "lookup", the step's label in pipeline counters.
func (le *LookupEnricher) Name() string { return "lookup" }

// Apply is the pipeline form of [LookupEnricher.Enrich], with a background
// context (a [Cache] and [Memcached] bound each backend call by their own
// timeouts): with Name, it makes a *LookupEnricher a pipeline.Function
// (package pipeline, matched by method set). It always returns keep=true
// and a nil error: a missing key, a key without data and a failed backend
// leave the event as Enrich does and are counted in
// [LookupEnricher.Stats].
func (le *LookupEnricher) Apply(e *relaykit.Event) (keep bool, err error) {
	_, err = le.apply(context.Background(), e)
	return true, err
}

// Stats returns a snapshot of the counters. Lookup errors are included in
// NoData.
func (le *LookupEnricher) Stats() EnricherStats { return le.n.stats() }

var _ Enricher = (*LookupEnricher)(nil)
