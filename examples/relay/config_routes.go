package main

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// RouteConfig is one route: events matching Filter (a regex on Field, or on
// the message when Field is empty) run through Pipeline and go to
// Destinations. A Final route consumes the event.
type RouteConfig struct {
	Name         string       `yaml:"name"`
	Filter       string       `yaml:"filter"`
	Field        string       `yaml:"field"`
	Final        bool         `yaml:"final"`
	Pipeline     []StepConfig `yaml:"pipeline"`
	Destinations []string     `yaml:"destinations"`
}

// StepConfig is one pipeline function. Type selects which fields apply:
//
//	set:        field, value
//	rename:     field, to
//	remove:     field
//	mask:       field (empty: message), pattern, replace
//	drop:       field (empty: message), pattern
//	sample:     n (keep one in n)
//	parse_json: field (empty: message), prefix
//	parse_cef:  (no settings; syslog inputs already decode CEF messages)
//	geoip:      city_db and/or asn_db, field or json_path (where the IP is), prefix
//	lookup:     memcached (servers) or csv (file of key,value), field or json_path (the key),
//	            target, default, timeout, cache_ttl
type StepConfig struct {
	Type      string        `yaml:"type"`
	Field     string        `yaml:"field"`
	To        string        `yaml:"to"`
	Value     string        `yaml:"value"`
	Pattern   string        `yaml:"pattern"`
	Replace   string        `yaml:"replace"`
	N         int           `yaml:"n"`
	Prefix    string        `yaml:"prefix"`
	JSONPath  string        `yaml:"json_path"`
	CityDB    string        `yaml:"city_db"`
	ASNDB     string        `yaml:"asn_db"`
	Memcached []string      `yaml:"memcached"`
	CSV       string        `yaml:"csv"`
	Target    string        `yaml:"target"`
	Default   string        `yaml:"default"`
	Timeout   time.Duration `yaml:"timeout"`
	CacheTTL  time.Duration `yaml:"cache_ttl"`
}

// validateRoutes checks the routes and their steps against the
// destinations.
func (c *Config) validateRoutes(ck *checker) {
	if len(c.Routes) == 0 {
		ck.bad("routes", "at least one route is required")
	}
	routeNames := map[string]bool{}
	for i, r := range c.Routes {
		f := fmt.Sprintf("routes[%d]", i)
		if r.Name == "" {
			ck.bad(f+".name", "required")
		} else if routeNames[r.Name] {
			ck.bad(f+".name", "duplicate route %q", r.Name)
		}
		routeNames[r.Name] = true
		if _, err := regexp.Compile(r.Filter); err != nil {
			ck.bad(f+".filter", "%v", err)
		}
		if len(r.Destinations) == 0 {
			ck.bad(f+".destinations", "at least one destination is required")
		}
		for j, d := range r.Destinations {
			if _, ok := c.Destinations[d]; !ok {
				ck.bad(fmt.Sprintf("%s.destinations[%d]", f, j), "unknown destination %q", d)
			}
		}
		for j, s := range r.Pipeline {
			if err := s.validate(); err != nil {
				ck.bad(fmt.Sprintf("%s.pipeline[%d]", f, j), "%v", err)
			}
		}
	}
}

func (s StepConfig) validate() error {
	need := func(what, v string) error {
		if v == "" {
			return fmt.Errorf("%s: %s is required", s.Type, what)
		}
		return nil
	}
	switch s.Type {
	case "set":
		return need("field", s.Field)
	case "rename":
		return errors.Join(need("field", s.Field), need("to", s.To))
	case "remove":
		return need("field", s.Field)
	case "mask", "drop":
		if err := need("pattern", s.Pattern); err != nil {
			return err
		}
		_, err := regexp.Compile(s.Pattern)
		return err
	case "sample":
		if s.N < 1 {
			return errors.New("sample: n must be at least 1")
		}
	case "parse_json", "parse_cef":
	case "geoip":
		if s.CityDB == "" && s.ASNDB == "" {
			return errors.New("geoip: city_db or asn_db is required")
		}
	case "lookup":
		if (len(s.Memcached) == 0) == (s.CSV == "") {
			return errors.New("lookup: exactly one of memcached and csv is required")
		}
		return need("target", s.Target)
	default:
		return fmt.Errorf("unknown step type %q", s.Type)
	}
	return nil
}
