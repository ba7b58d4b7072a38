package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/relaykit/relaykit/forward"
	"github.com/relaykit/relaykit/otlp"
)

// OTLPInputConfig is an OpenTelemetry logs listener (inputs.otlp[]):
// OTLP/HTTP (POST /v1/logs, protobuf or JSON, gzip optional) on
// http_listen and OTLP/gRPC (LogsService/Export) on grpc_listen, either
// or both. Each export request is answered success only once its records
// are finished (engine.Input.PushWait): delivered, on disk, or
// dead-lettered, as the HEC and RELP inputs answer theirs. Otherwise it is
// answered 503 with Retry-After (HTTP) or UNAVAILABLE with RetryInfo
// (gRPC), which OTLP senders retry.
type OTLPInputConfig struct {
	Name string `yaml:"name"`
	// HTTPListen is the OTLP/HTTP address (conventionally :4318); empty
	// means no HTTP listener.
	HTTPListen string `yaml:"http_listen"`
	// GRPCListen is the OTLP/gRPC address (conventionally :4317); empty
	// means no gRPC listener.
	GRPCListen string `yaml:"grpc_listen"`
	// TLS serves both listeners over TLS; client_ca_file makes it mutual
	// (client certificates required).
	TLS *TLSConfig `yaml:"tls"`
	// Token, when set, is the bearer token every request must present
	// ("Authorization: Bearer <token>", HTTP header or gRPC metadata):
	// 401 / UNAUTHENTICATED otherwise. Empty means none.
	Token Secret `yaml:"token"`
	// Names selects the attribute names of the syslog part of a record:
	// spec (the OTel data model's syslog appendix, the default) or
	// collector (the OTel Collector's syslog receiver: appname, hostname,
	// proc_id, ...). See the otlp package's mapping table.
	Names string `yaml:"names"`
	// MaxBodySize bounds a request, as received and after decompression
	// (413 / RESOURCE_EXHAUSTED beyond); 0 means 8MiB.
	MaxBodySize ByteSize `yaml:"max_body_size"`
	// MaxEventSize refuses larger records with a partial success (the
	// others are taken); 0 means no limit beyond max_body_size.
	MaxEventSize ByteSize `yaml:"max_event_size"`
	// HeaderTimeout bounds the reading of an HTTP request's headers, and
	// on grpc_listen the arrival of a new connection's HTTP/2 preface and
	// settings (the connection is closed after it); 0 means 10s.
	HeaderTimeout time.Duration `yaml:"header_timeout"`
	// BodyTimeout bounds the reading of an HTTP body (408 beyond), and of
	// a gRPC Export's message from its headers (its stream is cancelled
	// with DEADLINE_EXCEEDED beyond; nothing of it is taken in). Both
	// count as relay_otlp_errors_total{reason="body_timeout"}. 0 means
	// 30s.
	BodyTimeout time.Duration `yaml:"body_timeout"`
	// AckTimeout bounds the wait for a request's records to be finished;
	// a request not finished by then is answered 503 / UNAVAILABLE and
	// sent again by its sender. 0 means 30s.
	AckTimeout time.Duration `yaml:"ack_timeout"`
	// IdleTimeout closes a kept-alive HTTP connection without requests,
	// or a gRPC connection without streams (GOAWAY), for this long; 0
	// means 2m. gRPC connections also take at most 16 concurrent streams,
	// and keepalive pings at most every 10s.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MaxConnections is the most connections open at once on each
	// listener; 0 means 1024.
	MaxConnections int `yaml:"max_connections"`
	// The per-source limit, the TLS handshake deadline and
	// refuse_when_full, as the other stream inputs have them.
	ConnLimits `yaml:",inline"`
}

// otlpNames are the values of an OTLP input's or destination's names.
var otlpNames = map[string]otlp.SyslogNames{"spec": otlp.SpecNames, "collector": otlp.CollectorNames}

// validateOTLPInputs fills and checks inputs.otlp.
func (c *Config) validateOTLPInputs(ck *checker) {
	for i := range c.Inputs.OTLP {
		in := &c.Inputs.OTLP[i]
		f := fmt.Sprintf("inputs.otlp[%d]", i)
		ck.name(f+".name", in.Name)
		if in.HTTPListen == "" && in.GRPCListen == "" {
			ck.bad(f, "http_listen or grpc_listen (or both) is required")
		}
		if in.HTTPListen != "" {
			ck.addr(f+".http_listen", in.HTTPListen)
		}
		if in.GRPCListen != "" {
			ck.addr(f+".grpc_listen", in.GRPCListen)
		}
		if in.TLS != nil && (in.TLS.CertFile == "" || in.TLS.KeyFile == "") {
			ck.bad(f+".tls", "cert_file and key_file are required")
		}
		if strings.ContainsAny(string(in.Token), " \t\r\n") {
			ck.bad(f+".token", "contains white space")
		}
		in.Names = cmp.Or(in.Names, "spec")
		if _, ok := otlpNames[in.Names]; !ok {
			ck.bad(f+".names", "unknown names %q (want spec or collector)", in.Names)
		}
		in.MaxBodySize = cmp.Or(in.MaxBodySize, otlp.DefaultMaxBodyBytes)
		in.HeaderTimeout = cmp.Or(in.HeaderTimeout, defaultHECHeaderTimeout)
		in.BodyTimeout = cmp.Or(in.BodyTimeout, otlp.DefaultBodyTimeout)
		in.AckTimeout = cmp.Or(in.AckTimeout, otlp.DefaultSendTimeout)
		in.IdleTimeout = cmp.Or(in.IdleTimeout, 2*time.Minute)
		in.ConnLimits.validate(f, &in.MaxConnections, ck.bad)
		for _, v := range []struct {
			field string
			neg   bool
		}{{"max_body_size", in.MaxBodySize < 0}, {"max_event_size", in.MaxEventSize < 0}, {"header_timeout", in.HeaderTimeout < 0},
			{"body_timeout", in.BodyTimeout < 0}, {"ack_timeout", in.AckTimeout < 0}, {"idle_timeout", in.IdleTimeout < 0}} {
			if v.neg {
				ck.bad(f+"."+v.field, "must be positive")
			}
		}
	}
}

// OTLPDestination (type: otlp) sends the events as OTLP log records to
// any OTLP backend (an OTel Collector, a vendor's endpoint, another
// relay), over OTLP/HTTP with protobuf or JSON, or OTLP/gRPC. Failures are
// classified as the OTLP specification says (429/502/503/504 and the
// retryable gRPC codes are retried, honouring Retry-After / RetryInfo;
// other answers are permanent and dead-lettered); the records a partial
// success rejects are dead-lettered, never sent again.
type OTLPDestination struct {
	// Endpoint is http(s)://host:port, to which /v1/logs is added for
	// HTTP (a URL with a path is used as it is); for grpc, https://
	// means TLS and http:// plaintext.
	Endpoint string `yaml:"endpoint"`
	// Protocol is http/protobuf (default), http/json or grpc, as
	// OTEL_EXPORTER_OTLP_PROTOCOL spells them.
	Protocol string `yaml:"protocol"`
	// Headers are sent with every request (HTTP headers or gRPC
	// metadata), e.g. an API key; the values are secrets.
	Headers map[string]Secret `yaml:"headers"`
	// Token, when set, is sent as "Authorization: Bearer <token>".
	Token Secret `yaml:"token"`
	// Gzip compresses requests; default true.
	Gzip *bool `yaml:"gzip"`
	// CompressionLevel is the gzip level (compression.go: 1 to 9,
	// huffman_only, stateless); 0 means 1.
	CompressionLevel CompressionLevel `yaml:"compression_level"`
	// MaxRequestSize bounds the encoded size of one request: a batch is
	// split into requests of at most this size; 0 means 4MiB (the
	// default receive limit of gRPC servers and of the Collector).
	MaxRequestSize ByteSize `yaml:"max_request_size"`
	// Names: spec (default) or collector, as for inputs.otlp.
	Names string `yaml:"names"`
	// CertFile and KeyFile are a client certificate for mutual TLS.
	CertFile        string `yaml:"cert_file"`
	KeyFile         string `yaml:"key_file"`
	NetworkSettings `yaml:",inline"`
}

var otlpProtocols = map[string]otlp.Protocol{"http/protobuf": otlp.HTTPProtobuf, "http/json": otlp.HTTPJSON, "grpc": otlp.GRPC}

func (o *OTLPDestination) kind() string { return "otlp" }
func (o *OTLPDestination) summary() string {
	s := fmt.Sprintf("otlp %s %s", o.Protocol, o.Endpoint)
	if o.Token != "" {
		s += " token=" + o.Token.String()
	}
	if len(o.Headers) > 0 {
		s += " headers=" + strings.Join(slices.Sorted(maps.Keys(o.Headers)), ",")
	}
	return s
}

func (o *OTLPDestination) validate(f string, ck *checker, spool *SpoolConfig) {
	o.NetworkSettings.validate(f, ck, spool)
	switch {
	case o.Endpoint == "":
		ck.bad(f+".endpoint", "required (http://host:port or https://host:port)")
	case !strings.HasPrefix(o.Endpoint, "http://") && !strings.HasPrefix(o.Endpoint, "https://"):
		ck.bad(f+".endpoint", "%q must start with http:// or https://", o.Endpoint)
	}
	o.Protocol = cmp.Or(o.Protocol, "http/protobuf")
	if _, ok := otlpProtocols[o.Protocol]; !ok {
		ck.bad(f+".protocol", "unknown protocol %q (want http/protobuf, http/json or grpc)", o.Protocol)
	}
	o.Names = cmp.Or(o.Names, "spec")
	if _, ok := otlpNames[o.Names]; !ok {
		ck.bad(f+".names", "unknown names %q (want spec or collector)", o.Names)
	}
	if strings.ContainsAny(string(o.Token), " \t\r\n") {
		ck.bad(f+".token", "contains white space")
	}
	for k := range o.Headers {
		if k == "" || strings.ContainsAny(k, " \t\r\n:") {
			ck.bad(f+".headers", "invalid header name %q", k)
		}
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		ck.bad(f+".cert_file", "cert_file and key_file go together")
	}
	if o.CompressionLevel != 0 && o.Gzip != nil && !*o.Gzip {
		ck.bad(f+".compression_level", "is set, but gzip: false sends requests uncompressed")
	}
	if o.MaxRequestSize < 0 {
		ck.bad(f+".max_request_size", "must be positive")
	}
	const tlsOnly = "is set, but the endpoint %s is not https://"
	if !strings.HasPrefix(o.Endpoint, "https://") {
		for _, s := range []struct {
			field string
			set   bool
		}{{"ca_file", o.CAFile != ""}, {"insecure_skip_verify", o.InsecureSkipVerify}, {"cert_file", o.CertFile != ""}} {
			if s.set {
				ck.bad(f+"."+s.field, tlsOnly, o.Endpoint)
			}
		}
	}
}

func (o *OTLPDestination) newSink(r *Relay, name string) (destSink, error) {
	cfg := otlp.ExporterConfig{
		Name:            name,
		Protocol:        otlpProtocols[o.Protocol],
		Endpoint:        o.Endpoint,
		Token:           string(o.Token),
		DisableGzip:     o.Gzip != nil && !*o.Gzip,
		GzipLevel:       int(o.CompressionLevel),
		Timeout:         o.Timeout,
		MaxRequestBytes: int(o.MaxRequestSize),
		Mapping:         otlp.Mapping{Names: otlpNames[o.Names]},
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
