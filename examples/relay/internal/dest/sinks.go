package dest

// The sink of each destination type, built from its section
// (config.DestSpec) and an environment: the other half of the
// destination registry, whose sections are config.DestTypes.

import (
	"cmp"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/forward/kafka"
	"github.com/relaykit/relaykit/otlp"
	"github.com/relaykit/relaykit/storage"
	"github.com/relaykit/relaykit/syslog"
)

func archiveSink(a *ArchiveDestination, env SinkEnv, _ string) (Sink, error) {
	return storage.NewArchive(storage.ArchiveConfig{
		Writer: storage.Config{Dir: a.Dir, Location: env.Loc, MaxBytes: int64(a.MaxSize), Clock: clock.Default()},
		Format: ArchiveFormats[a.Format],
		Fsync:  a.Fsync,
	})
}

// HTTPConfig is the forward.HTTPConfig of an hec or sentinel destination
// (its TLS built from the CA file, read now).
func (env SinkEnv) HTTPConfig(name string, n *NetworkSettings, h *HTTPSettings) (forward.HTTPConfig, error) {
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
		Logger:      env.Log.With("destination", name),
	}, nil
}

func hecSink(h *HECDestination, env SinkEnv, name string) (Sink, error) {
	hc, err := env.HTTPConfig(name, &h.NetworkSettings, &h.HTTPSettings)
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

func syslogSink(s *SyslogDestination, env SinkEnv, name string) (Sink, error) {
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
		ProcIDField: syslog.FieldProcID, MsgIDField: syslog.FieldMsgID,
		TLS:          tc,
		WriteTimeout: s.Timeout,
		Logger:       env.Log.With("destination", name),
	})
}

// newSink builds the producer; the relay exports its counters.
func kafkaSink(k *KafkaDestination, env SinkEnv, name string) (Sink, error) {
	key, keyField, _ := KafkaKey(k.Key)
	comp, acks := KafkaCompressions[k.Compression], KafkaAcks[k.Acks]
	tc, err := k.TLS.Build()
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	s, err := kafka.New(kafka.Config{
		Name: name, Brokers: slices.Clone(k.Brokers), Topic: k.Topic, TopicField: k.TopicField,
		Key: key, KeyField: keyField, Encoding: KafkaEncodings[k.Format], Compression: comp, OmitHeaders: k.OmitHeaders,
		MaxRecordBytes: int(k.MaxRecordBytes), Acks: acks, DisableIdempotence: acks != kafka.AcksAll,
		DeliveryTimeout: k.Timeout, TLS: tc, SASL: k.SASL.Lib(),
		Logger: env.Log.With("destination", name),
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func otlpSink(o *OTLPDestination, env SinkEnv, name string) (Sink, error) {
	cfg := otlp.ExporterConfig{
		Name:            name,
		Protocol:        OTLPProtocols[o.Protocol],
		Endpoint:        o.Endpoint,
		Token:           string(o.Token),
		DisableGzip:     o.Gzip != nil && !*o.Gzip,
		GzipLevel:       int(o.CompressionLevel),
		Timeout:         o.Timeout,
		MaxRequestBytes: int(o.MaxRequestSize),
		Mapping:         otlp.Mapping{Names: config.OTLPNames[o.Names]},
	}
	if len(o.Headers) > 0 {
		cfg.Headers = make(map[string]string, len(o.Headers))
		for k, v := range o.Headers {
			cfg.Headers[k] = string(v)
		}
	}
	if strings.HasPrefix(o.Endpoint, "https://") {
		tc, err := forward.TLSConfig{CAFile: o.CAFile, CertFile: o.CertFile, KeyFile: o.KeyFile,
			DangerousInsecureSkipVerify: o.InsecureSkipVerify}.Build()
		if err != nil {
			return nil, fmt.Errorf("tls: %w", err)
		}
		cfg.TLS = tc
	}
	return otlp.NewExporter(cfg)
}

func sentinelSink(s *SentinelDestination, env SinkEnv, name string) (Sink, error) {
	ts, err := forward.NewEntraTokenSource(forward.EntraConfig{
		TenantID: s.TenantID, ClientID: s.ClientID, ClientSecret: string(s.ClientSecret),
		AuthorityHost: s.AuthorityHost, Scope: s.Scope, Logger: env.Log.With("destination", name),
	})
	if err != nil {
		return nil, err
	}
	table := SentinelTables[s.Table]
	var columns forward.SentinelColumns // a built-in table's columns are fixed
	collector := ""
	if c := s.Columns; table == forward.SentinelCustom {
		columns = forward.SentinelColumns{
			Time: cmp.Or(c.Time, "TimeGenerated"), Message: cmp.Or(c.Message, "RawData"), Host: cmp.Or(c.Host, "Computer"),
			Source: cmp.Or(c.Source, "ProcessName"), SourceType: cmp.Or(c.SourceType, "-"),
			Facility: cmp.Or(c.Facility, "Facility"), Severity: cmp.Or(c.Severity, "SeverityLevel"), Fields: cmp.Or(c.Fields, s.FieldsColumn()),
		}
	} else if collector = s.CollectorHostName; collector == "" {
		collector, _ = os.Hostname()
	} else if collector == "-" {
		collector = ""
	}
	fields := make([]forward.SentinelField, 0, len(s.CustomColumns))
	for field, col := range s.CustomColumns {
		fields = append(fields, forward.SentinelField{Field: field, Column: col})
	}
	sort.Slice(fields, func(i, j int) bool { return fields[i].Column < fields[j].Column })
	hc, err := env.HTTPConfig(name, &s.NetworkSettings, &s.HTTPSettings)
	if err != nil {
		return nil, err
	}
	return forward.NewSentinel(forward.SentinelConfig{
		Endpoint: s.Endpoint, DCRImmutableID: s.DCRImmutableID, Stream: s.Stream,
		TokenSource: ts, Table: table, Plan: SentinelPlans[s.Plan], CollectorHostName: collector,
		Columns: columns, Fields: fields,
		HTTP: hc,
	})
}

// sinkEnv is what a destination's sink is built with: the service's
// timezone and logger, never the service.
type SinkEnv struct {
	Loc *time.Location
	Log *slog.Logger
}

// destSink is the sink a destination's section builds.
type Sink interface {
	relaykit.Sink
	io.Closer
}

// sinks builds the sink of each destination type, by its type name
// (config.DestTypes). TestDestRegistry fails when a type has none.
var sinks = map[string]func(spec config.DestSpec, env SinkEnv, name string) (Sink, error){
	"archive":  typedSink(archiveSink),
	"hec":      typedSink(hecSink),
	"sentinel": typedSink(sentinelSink),
	"syslog":   typedSink(syslogSink),
	"kafka":    typedSink(kafkaSink),
	"otlp":     typedSink(otlpSink),
}

// typedSink adapts a type's sink builder to its section type.
func typedSink[S config.DestSpec](f func(S, SinkEnv, string) (Sink, error)) func(config.DestSpec, SinkEnv, string) (Sink, error) {
	return func(spec config.DestSpec, env SinkEnv, name string) (Sink, error) { return f(spec.(S), env, name) }
}

// NewSink builds the sink of spec for the destination named name. The
// sinks make one attempt and report what they did not deliver as a
// *relaykit.BatchError; building one opens nothing (no connection, no
// token request).
func NewSink(spec config.DestSpec, env SinkEnv, name string) (Sink, error) {
	build, ok := sinks[spec.Kind()]
	if !ok {
		return nil, fmt.Errorf("no sink for destination type %s", spec.Kind())
	}
	return build(spec, env, name)
}

// HasSink reports whether destination type kind has a sink builder.
func HasSink(kind string) bool { _, ok := sinks[kind]; return ok }
