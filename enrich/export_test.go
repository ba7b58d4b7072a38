package enrich

import (
	"context"

	"github.com/relaykit/relaykit"
)

// CleanUpForTest runs the cache's pending maintenance (evictions) now.
func (c *Cache) CleanUpForTest() { c.c.CleanUp() }

// ApplyForTest enriches e and reports whether fields were written.
func (ge *GeoEnricher) ApplyForTest(e *relaykit.Event) bool { return ge.apply(e) }

// ApplyForTest enriches e and reports whether it got a value.
func (le *LookupEnricher) ApplyForTest(e *relaykit.Event) bool {
	ok, _ := le.apply(context.Background(), e)
	return ok
}
