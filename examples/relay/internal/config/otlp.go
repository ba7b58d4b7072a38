package config

import (
	"cmp"
	"fmt"
	"strings"
	"time"

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
var OTLPNames = map[string]otlp.SyslogNames{"spec": otlp.SpecNames, "collector": otlp.CollectorNames}

func (in *OTLPInputConfig) Key() string { return "otlp" }

func (in *OTLPInputConfig) InputName() string { return in.Name }

func (in *OTLPInputConfig) Kind() string { return "otlp" }

// Files: two listening sockets (one unused without one of the
// addresses), each with its own max_connections.
func (in *OTLPInputConfig) Files() (listeners, conns int) {
	for _, l := range []string{in.HTTPListen, in.GRPCListen} {
		if l != "" {
			conns += in.MaxConnections
		}
	}
	return 2, conns
}

// SourceKeys: an OTLP input counts each request for its sender's
// address.
func (in *OTLPInputConfig) SourceKeys() []string { return keysAddress }

func (in *OTLPInputConfig) Summary() string {
	var ls []string
	if in.HTTPListen != "" {
		ls = append(ls, "http "+in.HTTPListen)
	}
	if in.GRPCListen != "" {
		ls = append(ls, "grpc "+in.GRPCListen)
	}
	tls := ""
	if in.TLS != nil {
		tls = ", tls"
	}
	return fmt.Sprintf("input %s: otlp %s (body max %d B, ack timeout %s, %d conns, %d per source%s%s)",
		in.Name, strings.Join(ls, ", "), in.MaxBodySize, in.AckTimeout, in.MaxConnections, in.MaxConnectionsPerSource, tls, in.summary(in.TLS))
}

// validate fills and checks an OTLP input.
func (in *OTLPInputConfig) validate(f string, ck *Checker) {
	ck.name(f+".name", in.Name)
	if in.HTTPListen == "" && in.GRPCListen == "" {
		ck.Bad(f, "http_listen or grpc_listen (or both) is required")
	}
	if in.HTTPListen != "" {
		ck.Addr(f+".http_listen", in.HTTPListen)
	}
	if in.GRPCListen != "" {
		ck.Addr(f+".grpc_listen", in.GRPCListen)
	}
	checkTLS(f, in.TLS, ck)
	if strings.ContainsAny(string(in.Token), " \t\r\n") {
		ck.Bad(f+".token", "contains white space")
	}
	in.Names = cmp.Or(in.Names, "spec")
	if _, ok := OTLPNames[in.Names]; !ok {
		ck.Bad(f+".names", "unknown names %q (want spec or collector)", in.Names)
	}
	in.MaxBodySize = cmp.Or(in.MaxBodySize, otlp.DefaultMaxBodyBytes)
	in.HeaderTimeout = cmp.Or(in.HeaderTimeout, defaultHECHeaderTimeout)
	in.BodyTimeout = cmp.Or(in.BodyTimeout, otlp.DefaultBodyTimeout)
	in.AckTimeout = cmp.Or(in.AckTimeout, otlp.DefaultSendTimeout)
	in.IdleTimeout = cmp.Or(in.IdleTimeout, 2*time.Minute)
	in.ConnLimits.validate(f, &in.MaxConnections, ck.Bad)
	for _, v := range []struct {
		field string
		neg   bool
	}{{"max_body_size", in.MaxBodySize < 0}, {"max_event_size", in.MaxEventSize < 0}, {"header_timeout", in.HeaderTimeout < 0},
		{"body_timeout", in.BodyTimeout < 0}, {"ack_timeout", in.AckTimeout < 0}, {"idle_timeout", in.IdleTimeout < 0}} {
		if v.neg {
			ck.Bad(f+"."+v.field, "must be positive")
		}
	}

}
