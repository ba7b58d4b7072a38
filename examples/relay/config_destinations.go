package main

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/relaykit/relaykit/storage"
)

// DestinationConfig is one destination; Type selects which fields apply.
type DestinationConfig struct {
	Type string `yaml:"type"` // archive, hec, sentinel, syslog, kafka

	// archive
	Dir     string   `yaml:"dir"`
	Format  string   `yaml:"format"`
	MaxSize ByteSize `yaml:"max_size"`
	Fsync   bool     `yaml:"fsync"` // fsync every batch (group commit) before it counts as archived

	// hec
	URL        string `yaml:"url"`
	Token      Secret `yaml:"token"`
	Index      string `yaml:"index"`
	SourceType string `yaml:"sourcetype"`
	Gzip       *bool  `yaml:"gzip"`

	// sentinel
	Endpoint       string        `yaml:"endpoint"` // DCE logs ingestion URL
	DCRImmutableID string        `yaml:"dcr_immutable_id"`
	Stream         string        `yaml:"stream"`
	TenantID       string        `yaml:"tenant_id"`
	ClientID       string        `yaml:"client_id"`
	ClientSecret   Secret        `yaml:"client_secret"`
	AuthorityHost  string        `yaml:"authority_host"` // Entra ID base URL; empty: login.microsoftonline.com
	Scope          string        `yaml:"scope"`          // empty: https://monitor.azure.com//.default
	Columns        ColumnsConfig `yaml:"columns"`
	// Table is the Sentinel table layout: custom (the default, by
	// columns), syslog (the built-in Syslog table, stream
	// Microsoft-Syslog) or common_security_log (CommonSecurityLog, stream
	// Microsoft-CommonSecurityLog); see forward.SentinelTable.
	Table string `yaml:"table"`
	// CollectorHostName fills the CollectorHostName column of the built-in
	// tables; empty means this host's name, "-" leaves it out.
	CollectorHostName string `yaml:"collector_host_name"`
	// CustomColumns sends event fields to columns of their own: field →
	// column. Columns added to a built-in table end in _CF.
	CustomColumns map[string]string `yaml:"custom_columns"`

	// hec: IndexedFields lists the event fields sent as indexed fields
	// ("sd.*" selects a prefix; facility and severity are the syslog
	// priority); empty means every field. OmitFields sends none.
	IndexedFields []string `yaml:"indexed_fields"`
	OmitFields    bool     `yaml:"omit_fields"`

	// syslog
	Network string `yaml:"network"` // tcp, tls, udp
	Address string `yaml:"address"`
	CAFile  string `yaml:"ca_file"`

	// kafka (see kafka_config.go)
	Kafka KafkaDestinationConfig `yaml:",inline"`

	// common to the network destinations
	Spool              DestSpoolConfig `yaml:"spool"`
	Queue              int             `yaml:"queue"` // batches held in memory (mode on_failure); 0 means 8
	Retry              RetryConfig     `yaml:"retry"`
	Timeout            time.Duration   `yaml:"timeout"`
	InsecureSkipVerify bool            `yaml:"insecure_skip_verify"`
	Concurrency        int             `yaml:"concurrency"`
}

// ColumnsConfig names the Sentinel table columns the event's parts go to;
// empty means the relay's default, "-" leaves the part out.
type ColumnsConfig struct {
	Time       string `yaml:"time"`       // default TimeGenerated
	Message    string `yaml:"message"`    // default RawData
	Host       string `yaml:"host"`       // default Computer
	Source     string `yaml:"source"`     // default ProcessName
	SourceType string `yaml:"sourcetype"` // default left out
	Facility   string `yaml:"facility"`   // default Facility
	Severity   string `yaml:"severity"`   // default SeverityLevel
	Fields     string `yaml:"fields"`     // default Fields (all fields as a dynamic column)
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
func (s *SpoolConfig) validate(ck *checker) {
	if s.Mode == "" {
		s.Mode = spoolAlways
	}
	if s.Mode != spoolAlways && s.Mode != spoolOnFailure {
		ck.bad("spool.mode", "unknown mode %q (want always or on_failure)", s.Mode)
	}
	if s.Full == "" {
		s.Full = fullBlock
	}
	if s.Full != fullBlock && s.Full != fullDropOldest && s.Full != fullDropNewest {
		ck.bad("spool.full", "unknown policy %q (want block, drop_oldest or drop_newest)", s.Full)
	}
	if s.Dir == "" {
		s.Dir = "./data/spool"
	}
	if s.ReplayInterval == 0 {
		s.ReplayInterval = time.Second
	}
	if s.MaxSize == 0 {
		s.MaxSize = 1 << 30
	}
}

// validateDestinations fills each destination's defaults and checks it,
// and what the destinations must agree on: one spool directory each, and
// the delivery a Kafka input relies on.
func (c *Config) validateDestinations(ck *checker) {
	for name, d := range c.Destinations {
		f := "destinations." + name
		if d.Type != "archive" {
			if d.Spool.Mode == "" {
				d.Spool.Mode = c.Spool.Mode
			}
			if d.Spool.Mode != spoolAlways && d.Spool.Mode != spoolOnFailure {
				ck.bad(f+".spool.mode", "unknown mode %q (want always or on_failure)", d.Spool.Mode)
			}
			if d.Spool.Full == "" {
				d.Spool.Full = c.Spool.Full
			}
			if d.Spool.Full != fullBlock && d.Spool.Full != fullDropOldest && d.Spool.Full != fullDropNewest {
				ck.bad(f+".spool.full", "unknown policy %q (want block, drop_oldest or drop_newest)", d.Spool.Full)
			}
			if d.Queue == 0 {
				d.Queue = 8
			}
			if d.Queue < 0 {
				ck.bad(f+".queue", "must be positive")
			}
			r := &d.Retry
			if d.Type == "kafka" {
				// The Kafka client retries within timeout: retry.* are
				// not defaults to fill but settings to reject.
				r = &RetryConfig{}
			}
			if r.MaxAttempts == 0 {
				r.MaxAttempts = 10
			}
			if r.MaxElapsed == 0 {
				r.MaxElapsed = 2 * time.Second
			}
			if r.InitialBackoff == 0 {
				r.InitialBackoff = 200 * time.Millisecond
			}
			if r.MaxBackoff == 0 {
				r.MaxBackoff = time.Second
			}
			if r.MaxAttempts < 0 || r.MaxElapsed < 0 || r.InitialBackoff < 0 || r.MaxBackoff < 0 {
				ck.bad(f+".retry", "values must not be negative")
			}
		}
		switch d.Type {
		case "archive":
			if d.Dir == "" {
				ck.bad(f+".dir", "required")
			}
			if d.Format == "" {
				d.Format = "raw"
			}
			if d.Format != "raw" && d.Format != "json" {
				ck.bad(f+".format", "unknown format %q (want raw or json)", d.Format)
			}
		case "hec":
			if d.URL == "" {
				ck.bad(f+".url", "required")
			}
			if d.Token == "" {
				ck.bad(f+".token", "required (use ${HEC_TOKEN})")
			}
			validateHECFields(f, &d, ck.bad)
		case "sentinel":
			validateSentinelTable(f, &d, ck.bad)
			for _, r := range []struct{ field, v string }{
				{"endpoint", d.Endpoint}, {"dcr_immutable_id", d.DCRImmutableID}, {"stream", d.Stream},
				{"tenant_id", d.TenantID}, {"client_id", d.ClientID}, {"client_secret", string(d.ClientSecret)},
			} {
				if r.v == "" {
					ck.bad(f+"."+r.field, "required")
				}
			}
			if d.DCRImmutableID != "" && !strings.HasPrefix(d.DCRImmutableID, "dcr-") {
				ck.bad(f+".dcr_immutable_id", "%q is not an immutable ID (dcr-...)", d.DCRImmutableID)
			}
		case "syslog":
			if d.Network == "" {
				d.Network = "tcp"
			}
			if d.Network != "tcp" && d.Network != "tls" && d.Network != "udp" {
				ck.bad(f+".network", "unknown network %q (want tcp, tls or udp)", d.Network)
			}
			ck.addr(f+".address", d.Address)
		case "kafka":
			validateKafkaDest(ck.bad, f, &d)
		case "":
			ck.bad(f+".type", "required (archive, hec, sentinel or syslog)")
		default:
			ck.bad(f+".type", "unknown type %q (want archive, hec, sentinel, syslog or kafka)", d.Type)
		}
		checkApplies(f, d, ck.bad)
		checkKafkaApplies(f, d, ck.bad)
		c.Destinations[name] = d
	}
	// One owner per spool directory: names that sanitize to the same
	// directory would share it (the spool's lock would refuse the second
	// at start; say so here, with the names).
	spoolDirs := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(c.Destinations)) {
		if c.Destinations[name].Type == "archive" {
			continue
		}
		dir := storage.SanitizeFileName(name)
		if other, ok := spoolDirs[dir]; ok {
			ck.bad("destinations."+name, "its spool directory %q is also that of destination %q: rename one", dir, other)
		}
		spoolDirs[dir] = name
	}
	if len(c.Inputs.Kafka) > 0 {
		// A Kafka input commits an offset once every destination has its
		// record delivered or on disk; with on_failure a batch may still be
		// in a destination's memory queue when its flush returns, and a
		// drop policy would commit offsets of records it dropped.
		for _, name := range slices.Sorted(maps.Keys(c.Destinations)) {
			d := c.Destinations[name]
			if d.Type == "archive" {
				continue
			}
			if d.Spool.Mode == spoolOnFailure {
				ck.bad("destinations."+name+".spool.mode", "on_failure cannot be used with a kafka input (offsets would be committed for batches still in memory): use always")
			}
			if d.Spool.Full != fullBlock {
				ck.bad("destinations."+name+".spool.full", "%s cannot be used with a kafka input (offsets would be committed for records it dropped): use block", d.Spool.Full)
			}
		}
	}
}
