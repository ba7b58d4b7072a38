package main

import (
	"cmp"
	"crypto/tls"
	"fmt"

	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/storage"
)

// The archive, hec and syslog destination types (sentinel: tables.go,
// kafka: config_kafkadest.go): each type's settings, checks and sink.

// ArchiveDestination (type: archive) writes the events to rotating files.
type ArchiveDestination struct {
	Dir     string   `yaml:"dir"`
	Format  string   `yaml:"format"` // raw (default) | json
	MaxSize ByteSize `yaml:"max_size"`
	Fsync   bool     `yaml:"fsync"` // fsync every batch (group commit) before it counts as archived
}

func (a *ArchiveDestination) kind() string                                 { return "archive" }
func (a *ArchiveDestination) queueSettings() (*QueueSettings, RetryConfig) { return nil, RetryConfig{} }
func (a *ArchiveDestination) summary() string                              { return fmt.Sprintf("archive %s (%s)", a.Dir, a.Format) }

func (a *ArchiveDestination) validate(f string, ck *checker, _ *SpoolConfig) {
	if a.Dir == "" {
		ck.bad(f+".dir", "required")
	}
	a.Format = cmp.Or(a.Format, "raw")
	if _, ok := archiveFormats[a.Format]; !ok {
		ck.bad(f+".format", "unknown format %q (want raw or json)", a.Format)
	}
}

var archiveFormats = map[string]storage.Format{"raw": storage.FormatRaw, "json": storage.FormatJSON}

func (a *ArchiveDestination) newSink(r *Relay, _ string) (destSink, error) {
	return storage.NewArchive(storage.ArchiveConfig{
		Writer: storage.Config{Dir: a.Dir, Location: r.loc, MaxBytes: int64(a.MaxSize), Clock: clk},
		Format: archiveFormats[a.Format],
		Fsync:  a.Fsync,
	})
}

// HTTPSettings are the HTTP client settings of the hec and sentinel
// destinations.
type HTTPSettings struct {
	Gzip        *bool `yaml:"gzip"`        // compress requests; default true
	Concurrency int   `yaml:"concurrency"` // requests in flight; 0 means the forward package's default
	// CompressionLevel is the gzip level (compression.go); 0 means 1.
	CompressionLevel CompressionLevel `yaml:"compression_level"`
}

// httpConfig is the forward.HTTPConfig of an hec or sentinel destination
// (its TLS built from the CA file, read now).
func (r *Relay) httpConfig(name string, n *NetworkSettings, h *HTTPSettings) (forward.HTTPConfig, error) {
	tc, err := forward.TLSConfig{CAFile: n.CAFile, DangerousInsecureSkipVerify: n.InsecureSkipVerify}.Build()
	if err != nil {
		return forward.HTTPConfig{}, fmt.Errorf("ca_file: %w", err)
	}
	return forward.HTTPConfig{
		Name:        name,
		Timeout:     n.Timeout,
		Concurrency: h.Concurrency,
		DisableGzip: h.Gzip != nil && !*h.Gzip,
		GzipLevel:   int(h.CompressionLevel),
		TLS:         tc,
		Logger:      r.log.With("destination", name),
	}, nil
}

// HECDestination (type: hec) sends to a Splunk HTTP Event Collector.
type HECDestination struct {
	URL        string `yaml:"url"`
	Token      Secret `yaml:"token"`
	Index      string `yaml:"index"`
	SourceType string `yaml:"sourcetype"`
	// IndexedFields lists the event fields sent as indexed fields ("sd.*"
	// selects a prefix; facility and severity are the syslog priority);
	// empty means every field. OmitFields sends none.
	IndexedFields   []string `yaml:"indexed_fields"`
	OmitFields      bool     `yaml:"omit_fields"`
	NetworkSettings `yaml:",inline"`
	HTTPSettings    `yaml:",inline"`
}

func (h *HECDestination) kind() string    { return "hec" }
func (h *HECDestination) summary() string { return fmt.Sprintf("hec %s token=%s", h.URL, h.Token) }

func (h *HECDestination) validate(f string, ck *checker, spool *SpoolConfig) {
	h.NetworkSettings.validate(f, ck, spool)
	h.HTTPSettings.validate(f, ck)
	if h.URL == "" {
		ck.bad(f+".url", "required")
	}
	if h.Token == "" {
		ck.bad(f+".token", "required (use ${HEC_TOKEN})")
	}
	if h.OmitFields && len(h.IndexedFields) > 0 {
		ck.bad(f+".indexed_fields", "set together with omit_fields: true, which sends no fields")
	}
	for i, k := range h.IndexedFields {
		if k == "" || k == "*" {
			ck.bad(f+".indexed_fields", "entry %d is %q (leave indexed_fields out to send every field)", i, k)
		}
	}
}

func (h *HECDestination) newSink(r *Relay, name string) (destSink, error) {
	hc, err := r.httpConfig(name, &h.NetworkSettings, &h.HTTPSettings)
	if err != nil {
		return nil, err
	}
	return forward.NewHEC(forward.HECConfig{
		URL: h.URL, Token: string(h.Token), Index: h.Index, SourceType: h.SourceType,
		Fields: h.IndexedFields, OmitFields: h.OmitFields,
		OverrideEventMeta: true, // index and sourcetype, when set, win over the event's (e.g. "syslog")
		HTTP:              hc,
	})
}

// SyslogDestination (type: syslog) forwards RFC 5424 syslog.
type SyslogDestination struct {
	Network         string `yaml:"network"` // tcp (default), tls, udp
	Address         string `yaml:"address"`
	NetworkSettings `yaml:",inline"`
}

func (s *SyslogDestination) kind() string { return "syslog" }
func (s *SyslogDestination) summary() string {
	return fmt.Sprintf("syslog %s %s", s.Network, s.Address)
}

func (s *SyslogDestination) validate(f string, ck *checker, spool *SpoolConfig) {
	s.NetworkSettings.validate(f, ck, spool)
	s.Network = cmp.Or(s.Network, "tcp")
	if s.Network != "tcp" && s.Network != "tls" && s.Network != "udp" {
		ck.bad(f+".network", "unknown network %q (want tcp, tls or udp)", s.Network)
	}
	ck.addr(f+".address", s.Address)
	const tlsOnly = "is set, but syslog destinations use it only with network: tls (network is %s)"
	if s.CAFile != "" && s.Network != "tls" {
		ck.bad(f+".ca_file", tlsOnly, s.Network)
	}
	if s.InsecureSkipVerify && s.Network != "tls" {
		ck.bad(f+".insecure_skip_verify", tlsOnly, s.Network)
	}
}

func (s *SyslogDestination) newSink(r *Relay, name string) (destSink, error) {
	var tc *tls.Config
	if s.Network == "tls" {
		var err error
		tc, err = forward.TLSConfig{CAFile: s.CAFile, DangerousInsecureSkipVerify: s.InsecureSkipVerify}.Build()
		if err != nil {
			return nil, fmt.Errorf("ca_file: %w", err)
		}
	}
	return forward.NewSyslog(forward.SyslogConfig{
		Name: name, Network: s.Network, Address: s.Address,
		ProcIDField: fieldProcID, MsgIDField: fieldMsgID,
		TLS:          tc,
		WriteTimeout: s.Timeout,
		Logger:       r.log.With("destination", name),
	})
}
