package enrich

// CleanUpForTest runs the cache's pending maintenance (evictions) now.
func (c *Cache) CleanUpForTest() { c.c.CleanUp() }
