package main

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/relaykit/relaykit/storage"
)

//go:embed default.yaml
var defaultYAML []byte

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
	ShutdownTimeout time.Duration                `yaml:"shutdown_timeout"`
	StatsInterval   time.Duration                `yaml:"stats_interval"`
}

// InputsConfig lists the listeners.
type InputsConfig struct {
	SyslogUDP []UDPInputConfig  `yaml:"syslog_udp"`
	SyslogTCP []TCPInputConfig  `yaml:"syslog_tcp"`
	JSONTCP   []JSONInputConfig `yaml:"json_tcp"`
	Generator GeneratorConfig   `yaml:"generator"`

	// Kafka consumer-group inputs; see kafka_config.go.
	Kafka []KafkaInputConfig `yaml:"kafka"`
}

// UDPInputConfig is a syslog UDP listener.
type UDPInputConfig struct {
	Name           string   `yaml:"name"`
	Listen         string   `yaml:"listen"`
	ReadBuffer     ByteSize `yaml:"read_buffer"` // SO_RCVBUF; 0 means 4MiB
	MaxMessageSize ByteSize `yaml:"max_message_size"`
	BatchSize      int      `yaml:"batch_size"` // datagrams per recvmmsg; 0 means 64
	Readers        int      `yaml:"readers"`    // goroutines reading the socket; 0 means 1
}

// TCPInputConfig is a syslog TCP or TLS listener.
type TCPInputConfig struct {
	Name           string        `yaml:"name"`
	Listen         string        `yaml:"listen"`
	MaxMessageSize ByteSize      `yaml:"max_message_size"`
	MaxConnections int           `yaml:"max_connections"`
	IdleTimeout    time.Duration `yaml:"idle_timeout"`
	TLS            *TLSConfig    `yaml:"tls"`
	StreamLimits   `yaml:",inline"`
}

// StreamLimits are what a TCP/TLS input allows one sender (stream.Config).
type StreamLimits struct {
	// MaxConnectionsPerSource is the most connections open at once from
	// one source IP address; 0 means 64.
	MaxConnectionsPerSource int `yaml:"max_connections_per_source"`
	// FrameTimeout is how long a frame that has started may take to
	// complete; 0 means 30s.
	FrameTimeout time.Duration `yaml:"frame_timeout"`
	// HandshakeTimeout bounds the TLS handshake; 0 means 10s.
	HandshakeTimeout time.Duration `yaml:"handshake_timeout"`
	// RefuseWhenFull refuses new connections at max_connections instead
	// of closing the longest-idle one.
	RefuseWhenFull bool `yaml:"refuse_when_full"`
}

// TLSConfig enables TLS on a listener (RFC 5425 for syslog).
type TLSConfig struct {
	CertFile     string `yaml:"cert_file"`
	KeyFile      string `yaml:"key_file"`
	ClientCAFile string `yaml:"client_ca_file"`
}

// JSONInputConfig is a JSON-lines TCP listener.
type JSONInputConfig struct {
	Name           string        `yaml:"name"`
	Listen         string        `yaml:"listen"`
	MaxLineSize    ByteSize      `yaml:"max_line_size"`
	MaxConnections int           `yaml:"max_connections"`
	IdleTimeout    time.Duration `yaml:"idle_timeout"`
	StreamLimits   `yaml:",inline"`
}

// GeneratorConfig configures the synthetic input.
type GeneratorConfig struct {
	Rate  int    `yaml:"rate"`
	Shape string `yaml:"shape"`
	Count int64  `yaml:"count"`
}

// WorkersConfig sizes the ring → collector → router stage.
type WorkersConfig struct {
	Count          int           `yaml:"count"`
	RingSize       int           `yaml:"ring_size"`
	BatchMaxEvents int           `yaml:"batch_max_events"`
	BatchMaxBytes  ByteSize      `yaml:"batch_max_bytes"`
	BatchMaxWait   time.Duration `yaml:"batch_max_wait"`
}

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
		v, miss := expandValue(n.Value)
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
func expandValue(s string) (string, []string) {
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
	if err := decodeConfig(defaultYAML, &cfg); err != nil {
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
		cfg = overlay(cfg, over, data)
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
	has := func(k string) bool { _, ok := keys[k]; return ok }
	out := def
	if has("inputs") {
		out.Inputs = over.Inputs
	}
	if has("workers") {
		out.Workers = over.Workers
	}
	if has("timezone") {
		out.Timezone = over.Timezone
	}
	if has("routes") {
		out.Routes = over.Routes
	}
	if has("destinations") {
		out.Destinations = over.Destinations
	}
	if has("spool") {
		out.Spool = over.Spool
	}
	if has("dead_letter") {
		out.DeadLetter = over.DeadLetter
	}
	if has("metrics") {
		out.Metrics = over.Metrics
	}
	if has("shutdown_timeout") {
		out.ShutdownTimeout = over.ShutdownTimeout
	}
	if has("stats_interval") {
		out.StatsInterval = over.StatsInterval
	}
	return out
}

// Validate fills defaults for zero values and checks every field, naming
// the field in the error.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	checkAddr := func(field, addr string) {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			bad(field, "invalid address %q (want host:port)", addr)
		}
	}
	names := map[string]bool{}
	checkName := func(field, name string) {
		if name == "" {
			bad(field, "missing name")
		} else if names[name] {
			bad(field, "duplicate input name %q", name)
		}
		names[name] = true
	}
	for i := range c.Inputs.SyslogUDP {
		in := &c.Inputs.SyslogUDP[i]
		f := fmt.Sprintf("inputs.syslog_udp[%d]", i)
		checkName(f+".name", in.Name)
		checkAddr(f+".listen", in.Listen)
		if in.ReadBuffer == 0 {
			// The kernel's default (net.core.rmem_default, 208 KiB) drops
			// datagrams under a burst of a few thousand.
			in.ReadBuffer = defaultUDPReadBuffer
		}
		if in.MaxMessageSize == 0 {
			in.MaxMessageSize = 64 << 10
		}
		if in.MaxMessageSize > 64<<10 {
			bad(f+".max_message_size", "%d exceeds the largest UDP datagram (64KiB)", in.MaxMessageSize)
		}
		if in.BatchSize == 0 {
			in.BatchSize = 64
		}
		if in.BatchSize < 0 || in.BatchSize > 1024 {
			bad(f+".batch_size", "%d out of range 1..1024", in.BatchSize)
		}
		if in.Readers == 0 {
			in.Readers = 1
		}
		if in.Readers < 0 || in.Readers > 64 {
			bad(f+".readers", "%d out of range 1..64", in.Readers)
		}
	}
	for i := range c.Inputs.SyslogTCP {
		in := &c.Inputs.SyslogTCP[i]
		f := fmt.Sprintf("inputs.syslog_tcp[%d]", i)
		checkName(f+".name", in.Name)
		checkAddr(f+".listen", in.Listen)
		if in.MaxMessageSize == 0 {
			in.MaxMessageSize = 64 << 10
		}
		if in.MaxMessageSize < 64 || in.MaxMessageSize > 64<<20 {
			bad(f+".max_message_size", "%d out of range 64..64MiB", in.MaxMessageSize)
		}
		if in.MaxConnections == 0 {
			in.MaxConnections = 1024
		}
		if in.MaxConnections < 0 {
			bad(f+".max_connections", "must be positive")
		}
		if in.IdleTimeout == 0 {
			in.IdleTimeout = 10 * time.Minute
		}
		in.StreamLimits.validate(f, in.MaxConnections, bad)
		if in.TLS != nil && (in.TLS.CertFile == "" || in.TLS.KeyFile == "") {
			bad(f+".tls", "cert_file and key_file are required")
		}
	}
	for i := range c.Inputs.JSONTCP {
		in := &c.Inputs.JSONTCP[i]
		f := fmt.Sprintf("inputs.json_tcp[%d]", i)
		checkName(f+".name", in.Name)
		checkAddr(f+".listen", in.Listen)
		if in.MaxLineSize == 0 {
			in.MaxLineSize = 1 << 20
		}
		if in.MaxConnections == 0 {
			in.MaxConnections = 1024
		}
		if in.IdleTimeout == 0 {
			in.IdleTimeout = 10 * time.Minute
		}
		in.StreamLimits.validate(f, in.MaxConnections, bad)
	}
	g := &c.Inputs.Generator
	if g.Rate < 0 {
		bad("inputs.generator.rate", "must not be negative")
	}
	if g.Shape == "" {
		g.Shape = "syslog"
	}
	if !slices.Contains(generatorShapes, g.Shape) {
		bad("inputs.generator.shape", "unknown shape %q (want one of %s)", g.Shape, strings.Join(generatorShapes, ", "))
	}
	w := &c.Workers
	if w.Count == 0 {
		w.Count = runtime.GOMAXPROCS(0)
	}
	if w.Count < 0 || w.Count > 256 {
		bad("workers.count", "%d out of range 1..256", w.Count)
	}
	if w.RingSize == 0 {
		w.RingSize = 8192
	}
	if w.RingSize < 2 || w.RingSize&(w.RingSize-1) != 0 {
		bad("workers.ring_size", "%d is not a power of two", w.RingSize)
	}
	if w.BatchMaxEvents == 0 {
		w.BatchMaxEvents = 1000
	}
	if w.BatchMaxBytes == 0 {
		w.BatchMaxBytes = 1 << 20
	}
	if w.BatchMaxWait == 0 {
		w.BatchMaxWait = 100 * time.Millisecond
	}
	if c.Timezone == "" {
		c.Timezone = "Local"
	}
	if _, err := time.LoadLocation(c.Timezone); err != nil {
		bad("timezone", "%v", err)
	}
	if c.Spool.Mode == "" {
		c.Spool.Mode = spoolAlways
	}
	if c.Spool.Mode != spoolAlways && c.Spool.Mode != spoolOnFailure {
		bad("spool.mode", "unknown mode %q (want always or on_failure)", c.Spool.Mode)
	}
	if c.Spool.Full == "" {
		c.Spool.Full = fullBlock
	}
	if c.Spool.Full != fullBlock && c.Spool.Full != fullDropOldest && c.Spool.Full != fullDropNewest {
		bad("spool.full", "unknown policy %q (want block, drop_oldest or drop_newest)", c.Spool.Full)
	}
	for name, d := range c.Destinations {
		f := "destinations." + name
		if d.Type != "archive" {
			if d.Spool.Mode == "" {
				d.Spool.Mode = c.Spool.Mode
			}
			if d.Spool.Mode != spoolAlways && d.Spool.Mode != spoolOnFailure {
				bad(f+".spool.mode", "unknown mode %q (want always or on_failure)", d.Spool.Mode)
			}
			if d.Spool.Full == "" {
				d.Spool.Full = c.Spool.Full
			}
			if d.Spool.Full != fullBlock && d.Spool.Full != fullDropOldest && d.Spool.Full != fullDropNewest {
				bad(f+".spool.full", "unknown policy %q (want block, drop_oldest or drop_newest)", d.Spool.Full)
			}
			if d.Queue == 0 {
				d.Queue = 8
			}
			if d.Queue < 0 {
				bad(f+".queue", "must be positive")
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
				bad(f+".retry", "values must not be negative")
			}
		}
		switch d.Type {
		case "archive":
			if d.Dir == "" {
				bad(f+".dir", "required")
			}
			if d.Format == "" {
				d.Format = "raw"
			}
			if d.Format != "raw" && d.Format != "json" {
				bad(f+".format", "unknown format %q (want raw or json)", d.Format)
			}
		case "hec":
			if d.URL == "" {
				bad(f+".url", "required")
			}
			if d.Token == "" {
				bad(f+".token", "required (use ${HEC_TOKEN})")
			}
			validateHECFields(f, &d, bad)
		case "sentinel":
			validateSentinelTable(f, &d, bad)
			for _, r := range []struct{ field, v string }{
				{"endpoint", d.Endpoint}, {"dcr_immutable_id", d.DCRImmutableID}, {"stream", d.Stream},
				{"tenant_id", d.TenantID}, {"client_id", d.ClientID}, {"client_secret", string(d.ClientSecret)},
			} {
				if r.v == "" {
					bad(f+"."+r.field, "required")
				}
			}
			if d.DCRImmutableID != "" && !strings.HasPrefix(d.DCRImmutableID, "dcr-") {
				bad(f+".dcr_immutable_id", "%q is not an immutable ID (dcr-...)", d.DCRImmutableID)
			}
		case "syslog":
			if d.Network == "" {
				d.Network = "tcp"
			}
			if d.Network != "tcp" && d.Network != "tls" && d.Network != "udp" {
				bad(f+".network", "unknown network %q (want tcp, tls or udp)", d.Network)
			}
			checkAddr(f+".address", d.Address)
		case "kafka":
			validateKafkaDest(bad, f, &d)
		case "":
			bad(f+".type", "required (archive, hec, sentinel or syslog)")
		default:
			bad(f+".type", "unknown type %q (want archive, hec, sentinel, syslog or kafka)", d.Type)
		}
		checkApplies(f, d, bad)
		checkKafkaApplies(f, d, bad)
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
			bad("destinations."+name, "its spool directory %q is also that of destination %q: rename one", dir, other)
		}
		spoolDirs[dir] = name
	}
	c.validateKafka(bad, checkName)
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
				bad("destinations."+name+".spool.mode", "on_failure cannot be used with a kafka input (offsets would be committed for batches still in memory): use always")
			}
			if d.Spool.Full != fullBlock {
				bad("destinations."+name+".spool.full", "%s cannot be used with a kafka input (offsets would be committed for records it dropped): use block", d.Spool.Full)
			}
		}
	}
	if len(c.Routes) == 0 {
		bad("routes", "at least one route is required")
	}
	routeNames := map[string]bool{}
	for i, r := range c.Routes {
		f := fmt.Sprintf("routes[%d]", i)
		if r.Name == "" {
			bad(f+".name", "required")
		} else if routeNames[r.Name] {
			bad(f+".name", "duplicate route %q", r.Name)
		}
		routeNames[r.Name] = true
		if _, err := regexp.Compile(r.Filter); err != nil {
			bad(f+".filter", "%v", err)
		}
		if len(r.Destinations) == 0 {
			bad(f+".destinations", "at least one destination is required")
		}
		for j, d := range r.Destinations {
			if _, ok := c.Destinations[d]; !ok {
				bad(fmt.Sprintf("%s.destinations[%d]", f, j), "unknown destination %q", d)
			}
		}
		for j, s := range r.Pipeline {
			if err := s.validate(); err != nil {
				bad(fmt.Sprintf("%s.pipeline[%d]", f, j), "%v", err)
			}
		}
	}
	if c.Spool.Dir == "" {
		c.Spool.Dir = "./data/spool"
	}
	if c.Spool.ReplayInterval == 0 {
		c.Spool.ReplayInterval = time.Second
	}
	if c.Spool.MaxSize == 0 {
		c.Spool.MaxSize = 1 << 30
	}
	if c.DeadLetter.Dir == "" {
		c.DeadLetter.Dir = "./data/deadletter"
	}
	if c.Metrics.Listen != "" {
		checkAddr("metrics.listen", c.Metrics.Listen)
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 15 * time.Second
	}
	if c.StatsInterval < 0 {
		bad("stats_interval", "must not be negative")
	}
	return errors.Join(errs...)
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

// Summary describes the configuration in a few lines, secrets redacted.
func (c *Config) Summary() string {
	var b strings.Builder
	for _, in := range c.Inputs.SyslogUDP {
		fmt.Fprintf(&b, "input %s: syslog udp %s (max %d B, rcvbuf %d B)\n", in.Name, in.Listen, in.MaxMessageSize, in.ReadBuffer)
	}
	for _, in := range c.Inputs.SyslogTCP {
		kind := "tcp"
		if in.TLS != nil {
			kind = "tls"
		}
		fmt.Fprintf(&b, "input %s: syslog %s %s (max %d B, %d conns, %d per source, idle %s, frame %s)\n", in.Name, kind, in.Listen, in.MaxMessageSize, in.MaxConnections, in.MaxConnectionsPerSource, in.IdleTimeout, in.FrameTimeout)
	}
	for _, in := range c.Inputs.JSONTCP {
		fmt.Fprintf(&b, "input %s: json lines tcp %s (max %d B)\n", in.Name, in.Listen, in.MaxLineSize)
	}
	for _, in := range c.Inputs.Kafka {
		fmt.Fprintf(&b, "input %s: kafka %s topics=%s group=%s (%s)\n", in.Name, strings.Join(in.Brokers, ","), strings.Join(in.Topics, ","), in.Group, in.Format)
	}
	if c.Inputs.Generator.Rate > 0 {
		fmt.Fprintf(&b, "input generator: %d events/s, shape %s\n", c.Inputs.Generator.Rate, c.Inputs.Generator.Shape)
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
	dnames := make([]string, 0, len(c.Destinations))
	for n := range c.Destinations {
		dnames = append(dnames, n)
	}
	slices.Sort(dnames)
	for _, n := range dnames {
		d := c.Destinations[n]
		switch d.Type {
		case "archive":
			fmt.Fprintf(&b, "destination %s: archive %s (%s)\n", n, d.Dir, d.Format)
		case "hec":
			fmt.Fprintf(&b, "destination %s: hec %s token=%s\n", n, d.URL, d.Token)
		case "sentinel":
			fmt.Fprintf(&b, "destination %s: sentinel %s dcr=%s stream=%s tenant=%s client=%s secret=%s\n",
				n, d.Endpoint, d.DCRImmutableID, d.Stream, d.TenantID, d.ClientID, d.ClientSecret)
		case "syslog":
			fmt.Fprintf(&b, "destination %s: syslog %s %s\n", n, d.Network, d.Address)
		case "kafka":
			fmt.Fprintf(&b, "destination %s: kafka %s topic=%s%s key=%s format=%s\n", n, strings.Join(d.Kafka.Brokers, ","), d.Kafka.Topic, d.Kafka.TopicField, d.Kafka.Key, d.Format)
		}
	}
	fmt.Fprintf(&b, "spool: %s; dead letters: %s; metrics: %s", c.Spool.Dir, c.DeadLetter.Dir, c.Metrics.Listen)
	return b.String()
}
