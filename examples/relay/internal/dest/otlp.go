package dest

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/relaykit/relaykit/examples/relay/internal/config"

	"github.com/relaykit/relaykit/otlp"
)

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
	Headers map[string]config.Secret `yaml:"headers"`
	// Token, when set, is sent as "Authorization: Bearer <token>".
	Token config.Secret `yaml:"token"`
	// Gzip compresses requests; default true.
	Gzip *bool `yaml:"gzip"`
	// CompressionLevel is the gzip level (compression.go: 1 to 9,
	// huffman_only, stateless); 0 means 1.
	CompressionLevel CompressionLevel `yaml:"compression_level"`
	// MaxRequestSize bounds the encoded size of one request: a batch is
	// split into requests of at most this size; 0 means 4MiB (the
	// default receive limit of gRPC servers and of the Collector).
	MaxRequestSize config.ByteSize `yaml:"max_request_size"`
	// Names: spec (default) or collector, as for inputs.otlp.
	Names string `yaml:"names"`
	// CertFile and KeyFile are a client certificate for mutual TLS.
	CertFile        string `yaml:"cert_file"`
	KeyFile         string `yaml:"key_file"`
	NetworkSettings `yaml:",inline"`
}

var OTLPProtocols = map[string]otlp.Protocol{"http/protobuf": otlp.HTTPProtobuf, "http/json": otlp.HTTPJSON, "grpc": otlp.GRPC}

func (o *OTLPDestination) Kind() string { return "otlp" }

func (o *OTLPDestination) Summary() string {
	s := fmt.Sprintf("otlp %s %s", o.Protocol, o.Endpoint)
	if o.Token != "" {
		s += " token=" + o.Token.String()
	}
	if len(o.Headers) > 0 {
		s += " headers=" + strings.Join(slices.Sorted(maps.Keys(o.Headers)), ",")
	}
	return s
}

func (o *OTLPDestination) Validate(f string, ck *config.Checker, spool *config.SpoolConfig) {
	o.NetworkSettings.ValidateNetwork(f, ck, spool)
	switch {
	case o.Endpoint == "":
		ck.Bad(f+".endpoint", "required (http://host:port or https://host:port)")
	case !strings.HasPrefix(o.Endpoint, "http://") && !strings.HasPrefix(o.Endpoint, "https://"):
		ck.Bad(f+".endpoint", "%q must start with http:// or https://", o.Endpoint)
	}
	o.Protocol = cmp.Or(o.Protocol, "http/protobuf")
	if _, ok := OTLPProtocols[o.Protocol]; !ok {
		ck.Bad(f+".protocol", "unknown protocol %q (want http/protobuf, http/json or grpc)", o.Protocol)
	}
	o.Names = cmp.Or(o.Names, "spec")
	if _, ok := config.OTLPNames[o.Names]; !ok {
		ck.Bad(f+".names", "unknown names %q (want spec or collector)", o.Names)
	}
	if strings.ContainsAny(string(o.Token), " \t\r\n") {
		ck.Bad(f+".token", "contains white space")
	}
	for k := range o.Headers {
		if k == "" || strings.ContainsAny(k, " \t\r\n:") {
			ck.Bad(f+".headers", "invalid header name %q", k)
		}
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		ck.Bad(f+".cert_file", "cert_file and key_file go together")
	}
	if o.CompressionLevel != 0 && o.Gzip != nil && !*o.Gzip {
		ck.Bad(f+".compression_level", "is set, but gzip: false sends requests uncompressed")
	}
	if o.MaxRequestSize < 0 {
		ck.Bad(f+".max_request_size", "must be positive")
	}
	const tlsOnly = "is set, but the endpoint %s is not https://"
	if !strings.HasPrefix(o.Endpoint, "https://") {
		for _, s := range []struct {
			field string
			set   bool
		}{{"ca_file", o.CAFile != ""}, {"insecure_skip_verify", o.InsecureSkipVerify}, {"cert_file", o.CertFile != ""}} {
			if s.set {
				ck.Bad(f+"."+s.field, tlsOnly, o.Endpoint)
			}
		}
	}
}
