package dest

import (
	"cmp"
	"fmt"

	"github.com/relaykit/relaykit/examples/relay/internal/config"

	"github.com/relaykit/relaykit/storage"
)

// The archive, hec and syslog destination types (sentinel: sentinel.go,
// kafka: kafkadest.go): each type's settings, checks and sink.

// ArchiveDestination (type: archive) writes the events to rotating files.
type ArchiveDestination struct {
	Dir     string          `yaml:"dir"`
	Format  string          `yaml:"format"` // raw (default) | json
	MaxSize config.ByteSize `yaml:"max_size"`
	Fsync   bool            `yaml:"fsync"` // fsync every batch (group commit) before it counts as archived
}

func (a *ArchiveDestination) Kind() string { return "archive" }

func (a *ArchiveDestination) QueueConfig() (*config.QueueSettings, config.RetryConfig) {
	return nil, config.RetryConfig{}
}

func (a *ArchiveDestination) Summary() string { return fmt.Sprintf("archive %s (%s)", a.Dir, a.Format) }

func (a *ArchiveDestination) Validate(f string, ck *config.Checker, _ *config.SpoolConfig) {
	if a.Dir == "" {
		ck.Bad(f+".dir", "required")
	}
	a.Format = cmp.Or(a.Format, "raw")
	if _, ok := ArchiveFormats[a.Format]; !ok {
		ck.Bad(f+".format", "unknown format %q (want raw or json)", a.Format)
	}
}

var ArchiveFormats = map[string]storage.Format{"raw": storage.FormatRaw, "json": storage.FormatJSON}

// HTTPSettings are the HTTP client settings of the hec and sentinel
// destinations.
type HTTPSettings struct {
	Gzip        *bool `yaml:"gzip"`        // compress requests; default true
	Concurrency int   `yaml:"concurrency"` // requests in flight; 0 means the forward package's default
	// CompressionLevel is the gzip level (compression.go); 0 means 1.
	CompressionLevel CompressionLevel `yaml:"compression_level"`
}

// HECDestination (type: hec) sends to a Splunk HTTP Event Collector.
type HECDestination struct {
	URL        string        `yaml:"url"`
	Token      config.Secret `yaml:"token"`
	Index      string        `yaml:"index"`
	SourceType string        `yaml:"sourcetype"`
	// IndexedFields lists the event fields sent as indexed fields ("sd.*"
	// selects a prefix; facility and severity are the syslog priority);
	// empty means every field. OmitFields sends none.
	IndexedFields   []string `yaml:"indexed_fields"`
	OmitFields      bool     `yaml:"omit_fields"`
	NetworkSettings `yaml:",inline"`
	HTTPSettings    `yaml:",inline"`
}

func (h *HECDestination) Kind() string { return "hec" }

func (h *HECDestination) Summary() string { return fmt.Sprintf("hec %s token=%s", h.URL, h.Token) }

func (h *HECDestination) Validate(f string, ck *config.Checker, spool *config.SpoolConfig) {
	h.NetworkSettings.ValidateNetwork(f, ck, spool)
	h.HTTPSettings.Validate(f, ck)
	if h.URL == "" {
		ck.Bad(f+".url", "required")
	}
	if h.Token == "" {
		ck.Bad(f+".token", "required (use ${HEC_TOKEN})")
	}
	if h.OmitFields && len(h.IndexedFields) > 0 {
		ck.Bad(f+".indexed_fields", "set together with omit_fields: true, which sends no fields")
	}
	for i, k := range h.IndexedFields {
		if k == "" || k == "*" {
			ck.Bad(f+".indexed_fields", "entry %d is %q (leave indexed_fields out to send every field)", i, k)
		}
	}
}

// SyslogDestination (type: syslog) forwards RFC 5424 syslog.
type SyslogDestination struct {
	Network         string `yaml:"network"` // tcp (default), tls, udp
	Address         string `yaml:"address"`
	NetworkSettings `yaml:",inline"`
}

func (s *SyslogDestination) Kind() string { return "syslog" }

func (s *SyslogDestination) Summary() string {
	return fmt.Sprintf("syslog %s %s", s.Network, s.Address)
}

func (s *SyslogDestination) Validate(f string, ck *config.Checker, spool *config.SpoolConfig) {
	s.NetworkSettings.ValidateNetwork(f, ck, spool)
	s.Network = cmp.Or(s.Network, "tcp")
	if s.Network != "tcp" && s.Network != "tls" && s.Network != "udp" {
		ck.Bad(f+".network", "unknown network %q (want tcp, tls or udp)", s.Network)
	}
	ck.Addr(f+".address", s.Address)
	const tlsOnly = "is set, but syslog destinations use it only with network: tls (network is %s)"
	if s.CAFile != "" && s.Network != "tls" {
		ck.Bad(f+".ca_file", tlsOnly, s.Network)
	}
	if s.InsecureSkipVerify && s.Network != "tls" {
		ck.Bad(f+".insecure_skip_verify", tlsOnly, s.Network)
	}
}
