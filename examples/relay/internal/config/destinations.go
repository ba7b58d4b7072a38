package config

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/relaykit/relaykit/storage"
)

// destTypes are the destination types by the value of their type field,
// in the order error messages list them. The package that builds their
// sinks registers them (RegisterDestType; package dest does, for every
// type): the section types live beside their sinks.
var destTypes []struct {
	name string
	make func() DestSpec
}

// RegisterDestType adds destination type name, whose section make
// returns (zero), to the types a destinations entry can name. Call it
// from an init function, once per type, in the order messages list them.
func RegisterDestType(name string, make func() DestSpec) {
	destTypes = append(destTypes, struct {
		name string
		make func() DestSpec
	}{name, make})
}

// DestSpec is the section of one destination type: its own settings and
// the checks beside them (package dest holds the types and their sinks).
type DestSpec interface {
	Kind() string
	// Validate fills the defaults and reports, at field f, what is wrong;
	// spool is the spool section (the network destinations' defaults).
	Validate(f string, ck *Checker, spool *SpoolConfig)
	// QueueConfig returns the delivery queue's settings; nil for the
	// archive, whose queue is memory-only.
	QueueConfig() (*QueueSettings, RetryConfig)
	Summary() string // for Config.Summary, secrets redacted
}

// DestinationConfig is one entry of destinations: the section of its
// type (dest.ArchiveDestination, dest.HECDestination, ...), selected by
// its type field.
type DestinationConfig struct {
	Spec DestSpec
	errs []error // what decoding found, at ".field: ..."; Validate reports it
}

// UnmarshalYAML decodes the type field, then the node into that type's
// section. A key the type has no field for is an error that names the
// types that use it, reported by Validate with the destination's name.
func (d *DestinationConfig) UnmarshalYAML(n *yaml.Node) error {
	var t struct {
		Type string `yaml:"type"`
	}
	if err := n.Decode(&t); err != nil {
		return err
	}
	*d = DestinationConfig{}
	for _, dt := range destTypes {
		if dt.name == t.Type {
			d.Spec = dt.make()
		}
	}
	if d.Spec == nil {
		if t.Type != "" {
			d.errs = []error{fmt.Errorf(".type: unknown type %q (want %s)", t.Type, typeList(typeNames("")))}
		}
		return nil
	}
	if err := n.Decode(d.Spec); err != nil {
		return err
	}
	d.errs = checkKeys(n, reflect.TypeOf(d.Spec).Elem(), t.Type, "", nil)
	return nil
}

// typeNames lists the destination types whose section has the setting
// key; all of them for "".
func typeNames(key string) []string {
	var names []string
	for _, dt := range destTypes {
		if _, ok := yamlFields(reflect.TypeOf(dt.make()).Elem())[key]; ok || key == "" {
			names = append(names, dt.name)
		}
	}
	return names
}

// typeList joins names as "a, b or c".
func typeList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// yamlFields returns the YAML keys of struct type t, inlined structs
// included, with their Go types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, opts, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if opts == "inline" {
			maps.Copy(m, yamlFields(sf.Type))
		} else if name != "" && name != "-" {
			m[name] = sf.Type
		}
	}
	return m
}

// checkKeys appends to errs an error for every key of mapping n (merge
// keys followed) that struct type t has no field for, and checks the
// mappings of its struct fields the same way; path is the keys above
// ("retry."), kind the destination's type.
func checkKeys(n *yaml.Node, t reflect.Type, kind, path string, errs []error) []error {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return errs
	}
	known := yamlFields(t)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" && k.Tag == "!!merge" { // a mapping or a list of them
			merged := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				merged = v.Content
			}
			for _, m := range merged {
				errs = checkKeys(m, t, kind, path, errs)
			}
			continue
		}
		ft, ok := known[k.Value]
		if ok && ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch users := typeNames(k.Value); {
		case ok && ft.Kind() == reflect.Struct:
			errs = checkKeys(v, ft, kind, path+k.Value+".", errs)
		case ok || path == "" && k.Value == "type":
		case path == "" && len(users) > 0:
			errs = append(errs, fmt.Errorf(".%s: is set, but %s destinations do not use it (only %s destinations do)", k.Value, kind, typeList(users)))
		default:
			errs = append(errs, fmt.Errorf(".%s%s: unknown setting (line %d; the settings of %s are %s)", path, k.Value, k.Line,
				cmp.Or(strings.TrimSuffix(path, "."), kind+" destinations"), strings.Join(slices.Sorted(maps.Keys(known)), ", ")))
		}
	}
	return errs
}

// queue returns the destination's delivery queue settings; nil for the
// archive and an entry without a known type.
func (d DestinationConfig) queue() *QueueSettings {
	if d.Spec == nil {
		return nil
	}
	q, _ := d.Spec.QueueConfig()
	return q
}

// QueueSettings are the delivery queue's settings of a network
// destination (hec, sentinel, syslog, kafka).
type QueueSettings struct {
	Spool DestSpoolConfig `yaml:"spool"`
	Queue int             `yaml:"queue"` // batches held in memory (mode on_failure); 0 means 8
}

// DestSpoolConfig overrides the spool section's mode and full policy for
// one destination; empty fields take the spool section's values.
type DestSpoolConfig struct {
	Mode string `yaml:"mode"` // always | on_failure
	Full string `yaml:"full"` // block | drop_oldest | drop_newest
}

// RetryConfig bounds the in-memory retries of one batch: after MaxElapsed
// (the retry budget, 2 s by default) it is on disk. Zero fields take the
// relay's defaults (attempts 10, max_elapsed 2s, initial_backoff 200ms,
// max_backoff 1s).
type RetryConfig struct {
	MaxAttempts    int           `yaml:"max_attempts"`
	MaxElapsed     time.Duration `yaml:"max_elapsed"`
	InitialBackoff time.Duration `yaml:"initial_backoff"`
	MaxBackoff     time.Duration `yaml:"max_backoff"`
}

func (q *QueueSettings) Validate(f string, ck *Checker, spool *SpoolConfig) {
	q.Spool.Mode = cmp.Or(q.Spool.Mode, spool.Mode)
	q.Spool.Full = cmp.Or(q.Spool.Full, spool.Full)
	checkSpoolPolicy(f+".spool", q.Spool.Mode, q.Spool.Full, ck)
	q.Queue = cmp.Or(q.Queue, 8)
	if q.Queue < 0 {
		ck.Bad(f+".queue", "must be positive")
	}
}

// checkSpoolPolicy checks a spool mode and full policy (at f.mode, f.full).
func checkSpoolPolicy(f, mode, full string, ck *Checker) {
	if _, ok := SpoolModes[mode]; !ok {
		ck.Bad(f+".mode", "unknown mode %q (want always or on_failure)", mode)
	}
	if _, ok := SpoolFulls[full]; !ok {
		ck.Bad(f+".full", "unknown policy %q (want block, drop_oldest or drop_newest)", full)
	}
}

// SpoolConfig is where batches a destination could not take (or, in mode
// always, every batch) wait for delivery. Mode and Full are the defaults of
// every network destination (see DestSpoolConfig).
type SpoolConfig struct {
	Dir     string   `yaml:"dir"`
	MaxSize ByteSize `yaml:"max_size"` // per destination
	// ReplayInterval caps the backoff between two probes of an unhealthy
	// destination.
	ReplayInterval time.Duration `yaml:"replay_interval"`
	Mode           string        `yaml:"mode"`  // always (default) | on_failure
	Full           string        `yaml:"full"`  // block (default) | drop_oldest | drop_newest
	Fsync          bool          `yaml:"fsync"` // fsync every append and replay step (survives power loss)
}

// DeadLetterConfig is where invalid input (bad JSON lines) and events
// rejected by a destination as bad data are kept.
type DeadLetterConfig struct {
	Dir string `yaml:"dir"`
}

// MetricsConfig is the HTTP listener for /metrics and /healthz.
type MetricsConfig struct {
	Listen string `yaml:"listen"` // empty disables it
}

// validate fills the spool section's defaults and checks it.
func (s *SpoolConfig) validate(ck *Checker) {
	s.Mode = cmp.Or(s.Mode, SpoolAlways)
	s.Full = cmp.Or(s.Full, FullBlock)
	checkSpoolPolicy("spool", s.Mode, s.Full, ck)
	s.Dir = cmp.Or(s.Dir, "./data/spool")
	s.ReplayInterval = cmp.Or(s.ReplayInterval, time.Second)
	s.MaxSize = cmp.Or(s.MaxSize, 1<<30)
}

// validateDestinations has each destination fill its defaults and check
// itself, then checks what the destinations must agree on: one spool
// directory each, and the delivery a Kafka input relies on.
func (c *Config) validateDestinations(ck *Checker) {
	spoolDirs := map[string]string{}
	if ck.autoTLS {
		spoolDirs[autoTLSDir] = "" // the auto certificate's (AutoTLSDir)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Destinations)) {
		d, f := c.Destinations[name], "destinations."+name
		for _, e := range d.errs {
			ck.Errs = append(ck.Errs, fmt.Errorf("%s%w", f, e))
		}
		if d.Spec == nil {
			if len(d.errs) == 0 {
				ck.Bad(f+".type", "required (%s)", typeList(typeNames("")))
			}
			continue
		}
		d.Spec.Validate(f, ck, &c.Spool)
		q := d.queue()
		if q == nil {
			continue
		}
		// One owner per spool directory: names that sanitize to the same
		// directory would share it (the spool's lock would refuse the
		// second at start; say so here, with the names).
		dir := storage.SanitizeFileName(name)
		if other, ok := spoolDirs[dir]; ok && other == "" {
			ck.Bad(f, "its spool directory %q is where the inputs with tls auto keep their certificate: rename the destination", dir)
		} else if ok {
			ck.Bad(f, "its spool directory %q is also that of destination %q: rename one", dir, other)
		}
		spoolDirs[dir] = name
		if len(c.Inputs.Kafka) == 0 {
			continue
		}
		// A Kafka input commits an offset once every destination has its
		// record delivered or on disk; with on_failure a batch may still be
		// in a destination's memory queue when its flush returns, and a
		// drop policy would commit offsets of records it dropped.
		if q.Spool.Mode == SpoolOnFailure {
			ck.Bad(f+".spool.mode", "on_failure cannot be used with a kafka input (offsets would be committed for batches still in memory): use always")
		}
		if q.Spool.Full != FullBlock {
			ck.Bad(f+".spool.full", "%s cannot be used with a kafka input (offsets would be committed for records it dropped): use block", q.Spool.Full)
		}
	}
}

// DestTypeNames lists the destination types, in the order error
// messages list them: the sections the destination registry builds
// sinks for (dest.NewSink).
func DestTypeNames() []string { return typeNames("") }
