package route

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/relaykit/relaykit/examples/relay/internal/config"

	"github.com/relaykit/relaykit/enrich"
	"github.com/relaykit/relaykit/pipeline"
)

// enrichments owns the enrichment resources pipelines share: GeoIP
// databases (one per pair of files, reloaded when the files change) and
// cached lookups (one per backend). Route reloads reuse what exists. Close
// releases everything; Run drives the GeoIP reload checks.
type Enrichments struct {
	log *slog.Logger

	mu      sync.Mutex
	geo     map[string]*enrich.GeoIP
	lookups map[string]*enrich.Cache
	closers []func() error
	added   chan *enrich.GeoIP
}

func NewEnrichments(log *slog.Logger) *Enrichments {
	return &Enrichments{log: log, geo: map[string]*enrich.GeoIP{}, lookups: map[string]*enrich.Cache{},
		added: make(chan *enrich.GeoIP, 64)}
}

// step builds any pipeline step: the pipeline package's built-ins and the
// enrichment steps geoip and lookup.
func (en *Enrichments) Step(sc config.StepConfig) (pipeline.Function, error) {
	switch sc.Type {
	case "geoip":
		g, err := en.geoIP(sc.CityDB, sc.ASNDB)
		if err != nil {
			return nil, err
		}
		prefix := sc.Prefix
		if prefix == "" {
			prefix = "src_"
		}
		ge, err := enrich.NewGeoEnricher(g, enrich.GeoEnricherConfig{
			Source: enrich.Source{Field: sc.Field, JSONPath: sc.JSONPath},
			Fields: enrich.GeoFieldNames(prefix),
		})
		if err != nil {
			return nil, err
		}
		return ge, nil // a pipeline.Function that never drops
	case "lookup":
		c, err := en.lookup(sc)
		if err != nil {
			return nil, err
		}
		le, err := enrich.NewLookupEnricher(c, enrich.LookupEnricherConfig{
			Source: enrich.Source{Field: sc.Field, JSONPath: sc.JSONPath},
			Target: sc.Target, Default: sc.Default,
		})
		if err != nil {
			return nil, err
		}
		return le, nil
	}
	return config.BuiltinStep(sc)
}

func (en *Enrichments) geoIP(city, asn string) (*enrich.GeoIP, error) {
	key := city + "\x00" + asn
	en.mu.Lock()
	defer en.mu.Unlock()
	if g, ok := en.geo[key]; ok {
		return g, nil
	}
	g, err := enrich.OpenGeoIP(enrich.GeoConfig{CityPath: city, ASNPath: asn, Logger: en.log})
	if err != nil {
		return nil, err
	}
	en.geo[key] = g
	en.closers = append(en.closers, g.Close)
	select {
	case en.added <- g:
	default:
	}
	return g, nil
}

func (en *Enrichments) lookup(sc config.StepConfig) (*enrich.Cache, error) {
	key := "memcached:" + strings.Join(sc.Memcached, ",")
	if sc.CSV != "" {
		key = "csv:" + sc.CSV
	}
	en.mu.Lock()
	defer en.mu.Unlock()
	if c, ok := en.lookups[key]; ok {
		return c, nil
	}
	var backend enrich.Lookup
	if sc.CSV != "" {
		f, err := os.Open(sc.CSV)
		if err != nil {
			return nil, err
		}
		t, err := enrich.LoadCSV(f, enrich.CSVConfig{})
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("csv %s: %w", sc.CSV, err)
		}
		backend = t
	} else {
		m, err := enrich.NewMemcached(enrich.MemcachedConfig{Servers: sc.Memcached, Timeout: sc.Timeout})
		if err != nil {
			return nil, err
		}
		backend = m
		en.closers = append(en.closers, m.Close)
	}
	c, err := enrich.NewCache(backend, enrich.CacheConfig{TTL: sc.CacheTTL})
	if err != nil {
		return nil, err
	}
	en.lookups[key] = c
	en.closers = append(en.closers, c.Close)
	return c, nil
}

// Run checks the GeoIP files for updates until ctx ends.
func (en *Enrichments) Run(ctx context.Context) {
	var wg sync.WaitGroup
	start := func(g *enrich.GeoIP) { wg.Go(func() { _ = g.Run(ctx) }) }
	en.mu.Lock()
	for _, g := range en.geo {
		start(g)
	}
	// Drain what was announced before Run; those are started above.
	for len(en.added) > 0 {
		<-en.added
	}
	en.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case g := <-en.added:
			start(g)
		}
	}
}

// Close releases every resource, in reverse order of creation.
func (en *Enrichments) Close() error {
	en.mu.Lock()
	defer en.mu.Unlock()
	var errs []error
	for i := len(en.closers) - 1; i >= 0; i-- {
		errs = append(errs, en.closers[i]())
	}
	en.closers = nil
	return errors.Join(errs...)
}
