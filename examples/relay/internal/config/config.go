package config

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

//go:embed default.yaml
var DefaultYAML []byte

// defaultUDPReadBuffer is the SO_RCVBUF of a UDP input without
// read_buffer, as default.yaml documents.
const defaultUDPReadBuffer = 4 << 20

// Config is the relay's configuration, read from YAML.
type Config struct {
	Inputs          InputsConfig                 `yaml:"inputs"`
	Workers         WorkersConfig                `yaml:"workers"`
	Timezone        string                       `yaml:"timezone"`
	Routes          []RouteConfig                `yaml:"routes"`
	Destinations    map[string]DestinationConfig `yaml:"destinations"`
	Spool           SpoolConfig                  `yaml:"spool"`
	DeadLetter      DeadLetterConfig             `yaml:"dead_letter"`
	Metrics         MetricsConfig                `yaml:"metrics"`
	Sources         SourcesConfig                `yaml:"sources"`
	API             APIConfig                    `yaml:"api"`
	ShutdownTimeout time.Duration                `yaml:"shutdown_timeout"`
	StatsInterval   time.Duration                `yaml:"stats_interval"`

	lines map[string]int // the file's routes: line by path ("routes[0].pipeline[1].pattern"), for errors
}

// Secret is a string that prints redacted.
type Secret string

// String returns "<redacted>" for a non-empty secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "<redacted>"
}

// ByteSize is a size in bytes that reads "64KiB", "1MiB", "1GiB", "512" or "10MB".
type ByteSize int64

// UnmarshalYAML parses a ByteSize.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	v, err := parseByteSize(n.Value)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

func parseByteSize(s string) (ByteSize, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid size %q (want e.g. 64KiB, 1MiB)", s)
	}
	return ByteSize(n * mult), nil
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// expandEnv replaces ${VAR} and ${VAR:-default} in every scalar value of
// the document. It works on decoded values, so an environment variable can
// never inject YAML structure.
func expandEnv(n *yaml.Node, missing *[]string) {
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "${") {
		v, miss := ExpandValue(n.Value)
		n.Value = v
		*missing = append(*missing, miss...)
		if n.Tag == "!!null" || n.Tag == "" {
			n.Tag = "!!str"
		}
	}
	for _, c := range n.Content {
		expandEnv(c, missing)
	}
}

// expandValue replaces ${VAR} and ${VAR:-default} in s and returns the
// names of unset variables that have no default.
func ExpandValue(s string) (string, []string) {
	var missing []string
	out := envRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := envRef.FindStringSubmatch(ref)
		if v, ok := os.LookupEnv(m[1]); ok && v != "" {
			return v
		}
		if strings.Contains(ref, ":-") {
			return m[2]
		}
		missing = append(missing, m[1])
		return ""
	})
	return out, missing
}

// LoadConfig reads the embedded default, then overlays the file at path (if
// not empty): sections present in the file replace the defaults' values.
func LoadConfig(path string) (Config, error) {
	var cfg Config
	if err := decodeConfig(DefaultYAML, &cfg); err != nil {
		return Config{}, fmt.Errorf("embedded default config: %w", err)
	}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return Config{}, err
		}
		// Lists and maps in the file replace the defaults' entirely.
		var over Config
		if err := decodeConfig(data, &over); err != nil {
			return Config{}, fmt.Errorf("%s: %w", path, err)
		}
		if err := checkOffSections(data, over, cfg); err != nil {
			return Config{}, fmt.Errorf("%s: %w", path, err)
		}
		cfg = overlay(cfg, over, data)
		cfg.lines = routeLines(data)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func decodeConfig(data []byte, cfg *Config) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	if len(doc.Content) == 0 {
		return nil
	}
	var missing []string
	expandEnv(&doc, &missing)
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("environment variable(s) not set: %s", strings.Join(slices.Compact(missing), ", "))
	}
	dec := doc.Content[0]
	if err := dec.Decode(cfg); err != nil {
		return err
	}
	// Strict: unknown keys are errors that name the key.
	return checkKnown(dec)
}

// switchedSections are the sections that do nothing unless enabled: true,
// by YAML key and Config field.
var switchedSections = []struct{ key, field string }{{"sources", "Sources"}, {"api", "API"}}

// checkOffSections refuses, in a file, a setting of a section that is off
// when it differs from the default: "sources: {silent_after: 5s}" without
// "enabled: true" would be accepted and do nothing. The default config's
// own values (a copy of -print-default-config) pass.
func checkOffSections(data []byte, file, def Config) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	root := doc.Content[0]
	fv, dv := reflect.ValueOf(file), reflect.ValueOf(def)
	var errs []error
	for i := 0; i+1 < len(root.Content); i += 2 {
		for _, sw := range switchedSections {
			sec := root.Content[i+1]
			if root.Content[i].Value != sw.key || sec.Kind != yaml.MappingNode {
				continue
			}
			f, d := fv.FieldByName(sw.field), dv.FieldByName(sw.field)
			if f.FieldByName("Enabled").Bool() {
				continue
			}
			for j := 0; j+1 < len(sec.Content); j += 2 {
				k := sec.Content[j]
				if k.Value == "enabled" {
					continue
				}
				if fi, ok := fieldByTag(f.Type(), k.Value); ok && !reflect.DeepEqual(f.Field(fi).Interface(), d.Field(fi).Interface()) {
					errs = append(errs, fmt.Errorf("%s.%s: line %d: set, but the %s section is off: add \"enabled: true\" to %s, or remove the setting",
						sw.key, k.Value, k.Line, sw.key, sw.key))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// fieldByTag returns the index of the field of struct type t whose yaml
// tag names key.
func fieldByTag(t reflect.Type, key string) (int, bool) {
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name == key {
			return i, true
		}
	}
	return 0, false
}

// checkKnown decodes again with KnownFields to report misspelt keys.
func checkKnown(n *yaml.Node) error {
	out, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(strings.NewReader(string(out)))
	dec.KnownFields(true)
	var c Config
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// overlay merges a user file over the defaults at the top-level-section
// level: a section present in the file replaces the default section.
func overlay(def, over Config, data []byte) Config {
	var keys map[string]yaml.Node
	_ = yaml.Unmarshal(data, &keys)
	out, o := reflect.ValueOf(&def).Elem(), reflect.ValueOf(over)
	for i := range out.NumField() {
		if _, ok := keys[out.Type().Field(i).Tag.Get("yaml")]; ok {
			out.Field(i).Set(o.Field(i))
		}
	}
	return def
}

// Validate fills defaults for zero values and checks every field, naming
// the field in the error. Each section checks itself.
func (c *Config) Validate() error {
	ck := &Checker{names: map[string]bool{}, lines: c.lines}
	c.Inputs.validate(ck)
	c.Workers.validate(ck)
	if c.Timezone == "" {
		c.Timezone = "Local"
	}
	if _, err := time.LoadLocation(c.Timezone); err != nil {
		ck.Bad("timezone", "%v", err)
	}
	c.Spool.validate(ck)
	c.validateDestinations(ck)
	c.validateAckDestinations(ck)
	c.validateRoutes(ck)
	c.validateSources(ck)
	if c.DeadLetter.Dir == "" {
		c.DeadLetter.Dir = "./data/deadletter"
	}
	if c.Metrics.Listen != "" {
		ck.Addr("metrics.listen", c.Metrics.Listen)
	}
	c.validateAPI(ck)
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 15 * time.Second
	}
	if c.StatsInterval < 0 {
		ck.Bad("stats_interval", "must not be negative")
	}
	return errors.Join(ck.Errs...)
}

// checker collects the errors of Validate, each naming its field.
type Checker struct {
	Errs    []error
	names   map[string]bool // input names seen
	autoTLS bool            // an input has tls: {auto: true}
	lines   map[string]int  // Config.lines
}

// line returns "line N: " for the value at path in the file, or "".
func (ck *Checker) line(path string) string {
	if n, ok := ck.lines[path]; ok {
		return fmt.Sprintf("line %d: ", n)
	}
	return ""
}

// routeLines indexes the lines of the routes section of a YAML file by
// path: "routes[0]", "routes[0].pipeline[1].pattern", ...
func routeLines(data []byte) map[string]int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	idx := map[string]int{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		idx[path] = n.Line
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], path+"."+n.Content[i].Value)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "routes" {
			walk(root.Content[i+1], "routes")
		}
	}
	return idx
}

// bad records an error of field.
func (ck *Checker) Bad(field, format string, args ...any) {
	ck.Errs = append(ck.Errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
}

// addr checks a host:port.
func (ck *Checker) Addr(field, addr string) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		ck.Bad(field, "invalid address %q (want host:port)", addr)
	}
}

// name checks that an input name is set and unique.
func (ck *Checker) name(field, name string) {
	if name == "" {
		ck.Bad(field, "missing name")
	} else if ck.names[name] {
		ck.Bad(field, "duplicate input name %q", name)
	}
	ck.names[name] = true
}

// Summary describes the configuration in a few lines, secrets redacted.
func (c *Config) Summary() string {
	var b strings.Builder
	for _, in := range c.Inputs.Sections() {
		if line := in.Summary(); line != "" {
			b.WriteString(line + "\n")
		}
	}
	fmt.Fprintf(&b, "workers: %d × ring %d, batch %d events / %d B / %s\n", c.Workers.Count, c.Workers.RingSize,
		c.Workers.BatchMaxEvents, c.Workers.BatchMaxBytes, c.Workers.BatchMaxWait)
	for _, r := range c.Routes {
		filter := r.Filter
		if filter == "" {
			filter = "(all)"
		}
		fmt.Fprintf(&b, "route %s: filter %s -> %s (final=%t, %d steps)\n", r.Name, filter, strings.Join(r.Destinations, ", "), r.Final, len(r.Pipeline))
	}
	for _, n := range slices.Sorted(maps.Keys(c.Destinations)) {
		if d := c.Destinations[n]; d.Spec != nil {
			fmt.Fprintf(&b, "destination %s: %s\n", n, d.Spec.Summary())
		}
	}
	if s := c.Sources; s.Enabled {
		limit := "no rate limit"
		if s.RateLimit.EventsPerSecond > 0 {
			burst := "one second's worth"
			if s.RateLimit.Burst > 0 {
				burst = strconv.Itoa(s.RateLimit.Burst)
			}
			limit = fmt.Sprintf("limit %g events/s per source, burst %s (%s)", s.RateLimit.EventsPerSecond, burst, s.RateLimit.Mode)
		}
		fmt.Fprintf(&b, "sources: at most %d, silent after %s, %d expected, %d overrides, %s; state %s\n",
			s.MaxSources, s.SilentAfter, len(s.Expected), len(s.Overrides), limit, s.StateFile)
	}
	fmt.Fprintf(&b, "spool: %s; dead letters: %s; metrics: %s", c.Spool.Dir, c.DeadLetter.Dir, c.Metrics.Listen)
	return b.String()
}
