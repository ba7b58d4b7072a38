package config

// APIConfig is the operator API (the api: section): the live tap at
// /api/tap, the counters at /api/status and the status page at /
// (package api), served on the metrics listener. The zero value is off.
type APIConfig struct {
	// Enabled serves /api/ and the status page on metrics.listen. False
	// (the default): / and every /api/ path are 404.
	Enabled bool `yaml:"enabled"`
	// Token, when not empty, is the token every request for / and /api/
	// must present: "Authorization: Bearer <token>" (relay tap, relay
	// top, curl), or HTTP Basic credentials with the token as the
	// password and any user name (a browser's login prompt); others get
	// 401. Empty: no authentication (whoever reaches the listener reads
	// the events).
	Token Secret `yaml:"token"`
}

// validateAPI checks the api section: it is served on the metrics
// listener, so that must be on.
func (c *Config) validateAPI(ck *Checker) {
	if c.API.Enabled && c.Metrics.Listen == "" {
		ck.Bad("api.enabled", "needs metrics.listen (the API is served there)")
	}
}
