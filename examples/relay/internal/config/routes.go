package config

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/relaykit/relaykit/pipeline"
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
//	sample:     n (keep one in n overall; with key, one in n per key), or dynamic: true
//	            with key, window, min_events, max_rate (a per-key rate from the key's
//	            count in the previous window); with key or dynamic, max_keys, and kept
//	            events carry sample_rate
//	suppress:   key (default [host, _raw]), allow (default 1), window (default 30s),
//	            max_keys (default 10000): the first allow events per key and window pass,
//	            the rest are absorbed into one summary per key (suppressed_count,
//	            first_seen, last_seen)
//	aggregate:  key (group by; empty: one group), window (default 1m), sum, min, max
//	            (numeric fields), sourcetype (default relaykit:aggregate), max_keys:
//	            every event is absorbed; one summary per key and window (count,
//	            sum_<f>, min_<f>, max_<f>, first_seen, last_seen)
//	keep:       fields (only these extracted fields survive; "prefix*" keeps a prefix)
//	parse_json: field (empty: message), prefix
//	parse_cef:  (no settings; syslog inputs already decode CEF messages)
//	kv:         field, delimiters, separator, quotes, prefix, duplicate (last|first|join), max_fields
//	csv:        field, separator, columns, select, sets, prefix, extra_prefix, keep_empty, braces, max_fields
//	regex:      field, pattern (named groups), prefix
//	grok:       field, pattern, patterns, prefix, capture_unnamed
//	timestamp:  fields (joined by separator), layout (Go's, or unix|unix_ms|unix_us|unix_ns),
//	            location (default: timezone), zone_field
//	convert:    fields ({name: int|float|bool|ip}), remove_invalid
//	vendor:     name (fortigate|panos|cisco_asa|checkpoint), field, location (default: timezone)
//	geoip:      city_db and/or asn_db, field or json_path (where the IP is), prefix
//	lookup:     memcached (servers) or csv (file of key,value), field or json_path (the key),
//	            target, default, timeout, cache_ttl
//
// Windows are at least 1s, aligned to the Unix epoch, and end on the
// engine's window ticker (reduceTick), at shutdown and on reload. An event a
// suppress or aggregate step absorbs is counted reduced{step}, and for
// the acknowledging inputs (hec, relp, kafka) finished once routed: a
// crash before its window ends loses that window's summary (README,
// "Reduction").
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

	// Reduction steps (suppress, aggregate, sample with a key, keep).
	Key        []string      `yaml:"key"`
	Allow      int           `yaml:"allow"`
	Window     time.Duration `yaml:"window"`
	MaxKeys    int           `yaml:"max_keys"`
	Sum        []string      `yaml:"sum"`
	Min        []string      `yaml:"min"`
	Max        []string      `yaml:"max"`
	SourceType string        `yaml:"sourcetype"`
	Dynamic    bool          `yaml:"dynamic"`
	MinEvents  int           `yaml:"min_events"`
	MaxRate    int           `yaml:"max_rate"`
	Fields     StepFields    `yaml:"fields"`

	// Parse steps (kv, csv, regex, grok, timestamp, convert, vendor):
	// package parse's Config fields, built by package route.
	Name           string              `yaml:"name"`
	Delimiters     string              `yaml:"delimiters"`
	Separator      string              `yaml:"separator"`
	Quotes         string              `yaml:"quotes"`
	Duplicate      string              `yaml:"duplicate"`
	MaxFields      int                 `yaml:"max_fields"`
	Columns        []string            `yaml:"columns"`
	Select         string              `yaml:"select"`
	Sets           map[string][]string `yaml:"sets"`
	ExtraPrefix    string              `yaml:"extra_prefix"`
	KeepEmpty      bool                `yaml:"keep_empty"`
	Braces         bool                `yaml:"braces"`
	Patterns       map[string]string   `yaml:"patterns"`
	CaptureUnnamed bool                `yaml:"capture_unnamed"`
	Layout         string              `yaml:"layout"`
	Location       string              `yaml:"location"`
	ZoneField      string              `yaml:"zone_field"`
	RemoveInvalid  bool                `yaml:"remove_invalid"`
}

// StepFields is a step's fields: a list of names (keep, timestamp), or
// names each with a type (convert: {dpt: int}).
type StepFields struct {
	Names []string
	Types map[string]string
}

// UnmarshalYAML reads a list into Names and a mapping into Types.
func (f *StepFields) UnmarshalYAML(n *yaml.Node) error {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.MappingNode {
		return n.Decode(&f.Types)
	}
	return n.Decode(&f.Names)
}

// stepTypes are the step types another package builds (RegisterStepType:
// package route registers the parse steps), by type.
var stepTypes = map[string]StepBuilder{}

// RegisterStepType makes typ a step type that build builds; Validate
// builds each such step to check it. Call it from an init function.
func RegisterStepType(typ string, build StepBuilder) { stepTypes[typ] = build }

// KeyError is an error of one setting of a step, named by its key
// ("pattern"): Validate reports it at that key, with its line.
type KeyError struct {
	Key string
	Err error
}

func (e *KeyError) Error() string { return e.Err.Error() }
func (e *KeyError) Unwrap() error { return e.Err }

// validateRoutes checks the routes and their steps against the
// destinations.
func (c *Config) validateRoutes(ck *Checker) {
	if len(c.Routes) == 0 {
		ck.Bad("routes", "at least one route is required")
	}
	routeNames := map[string]bool{}
	for i, r := range c.Routes {
		f := fmt.Sprintf("routes[%d]", i)
		if r.Name == "" {
			ck.Bad(f+".name", "required")
		} else if routeNames[r.Name] {
			ck.Bad(f+".name", "duplicate route %q", r.Name)
		}
		routeNames[r.Name] = true
		if _, err := regexp.Compile(r.Filter); err != nil {
			ck.Bad(f+".filter", "%s%v", ck.line(f+".filter"), err)
		}
		if len(r.Destinations) == 0 {
			ck.Bad(f+".destinations", "at least one destination is required")
		}
		for j, d := range r.Destinations {
			if _, ok := c.Destinations[d]; !ok {
				ck.Bad(fmt.Sprintf("%s.destinations[%d]", f, j), "unknown destination %q", d)
			}
		}
		for j := range r.Pipeline {
			s := &c.Routes[i].Pipeline[j]
			if (s.Type == "timestamp" || s.Type == "vendor") && s.Location == "" {
				s.Location = c.Timezone // device times without a zone read as syslog's do
			}
			at := fmt.Sprintf("%s.pipeline[%d]", f, j)
			if err := s.validate(); err != nil {
				var ke *KeyError
				if errors.As(err, &ke) {
					at += "." + ke.Key
				}
				ck.Bad(at, "%s%v (route %q)", ck.line(at), err, r.Name)
			}
		}
	}
}

// keyed reports whether the step keeps state by key: suppress,
// aggregate, and sample with a key or dynamic.
func (s StepConfig) Keyed() bool {
	return s.Type == "suppress" || s.Type == "aggregate" || s.Type == "sample" && (s.Dynamic || len(s.Key) > 0)
}

func (s *StepConfig) validate() error {
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
		if _, err := regexp.Compile(s.Pattern); err != nil {
			return &KeyError{"pattern", err}
		}
	case "sample":
		if s.Dynamic {
			if s.N > 1 {
				return errors.New("sample: n is not used with dynamic: true (the rate comes from each key's volume)")
			}
			return validReduceStep(*s)
		}
		if s.N < 1 {
			return errors.New("sample: n must be at least 1")
		}
		if len(s.Key) > 0 {
			return validReduceStep(*s)
		}
	case "suppress", "aggregate":
		return validReduceStep(*s)
	case "keep":
		if s.Fields.Types != nil {
			return errors.New("keep: fields is a list of names, not a map")
		}
		if len(s.Fields.Names) == 0 {
			return errors.New("keep: fields is required (a list of the extracted fields to keep)")
		}
		for i, f := range s.Fields.Names {
			if f == "" {
				return fmt.Errorf("keep: fields[%d] is empty", i)
			}
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
		build, ok := stepTypes[s.Type]
		if !ok {
			return fmt.Errorf("unknown step type %q", s.Type)
		}
		_, err := build(*s)
		return err
	}
	return nil
}

// minReduceWindow is the shortest window of a reduction step: the relay
// ends windows from a ticker of this period (see reduceTick), so a summary
// leaves at most one tick after its window ends.
const minReduceWindow = ReduceTick

// validReduceStep checks the settings of a suppress, aggregate or keyed
// sample step: the relay's own bounds, then by building the step (the
// pipeline package's checks: negative numbers, too many key names).
func validReduceStep(s StepConfig) error {
	if s.Window != 0 && s.Window < minReduceWindow {
		return fmt.Errorf("%s: window %v is shorter than %v (windows end on a %v tick)", s.Type, s.Window, minReduceWindow, ReduceTick)
	}
	if s.MaxKeys < 0 {
		return fmt.Errorf("%s: max_keys %d is negative", s.Type, s.MaxKeys)
	}
	for i, k := range s.Key {
		if k == "" {
			return fmt.Errorf("%s: key[%d] is empty", s.Type, i)
		}
	}
	switch s.Type {
	case "suppress":
		if s.Allow < 0 {
			return fmt.Errorf("suppress: allow %d is negative", s.Allow)
		}
	case "sample":
		if s.MinEvents < 0 || s.MaxRate < 0 {
			return errors.New("sample: min_events and max_rate must not be negative")
		}
		if !s.Dynamic && (s.MinEvents != 0 || s.MaxRate != 0 || s.Window != 0) {
			return errors.New("sample: window, min_events and max_rate are for dynamic: true")
		}
	}
	if _, err := BuiltinStep(s); err != nil {
		// The pipeline's message, without its package prefix.
		return errors.New(strings.Replace(err.Error(), pipeline.ErrInvalidConfig.Error()+": ", "", 1))
	}
	return nil
}
