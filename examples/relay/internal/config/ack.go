package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/relaykit/relaykit/stream/hec"
	"github.com/relaykit/relaykit/stream/relp"
)

// HECInputConfig is a Splunk HTTP Event Collector listener (inputs.hec[]):
// the event, raw, ack and health endpoints under /services/collector.
// Each request is answered once its events are finished (engine.Input.PushWait).
type HECInputConfig struct {
	Name   string           `yaml:"name"`
	Listen string           `yaml:"listen"`
	TLS    *TLSConfig       `yaml:"tls"`
	Tokens []HECTokenConfig `yaml:"tokens"`
	// MaxBodySize bounds a request body, as received and after gzip
	// decompression (413 beyond); 0 means 8MiB.
	MaxBodySize ByteSize `yaml:"max_body_size"`
	// HeaderTimeout bounds the reading of a request's line and headers,
	// from accept or, on a kept-alive connection, from the first byte of
	// the request (the http.Server's ReadHeaderTimeout); the connection is
	// closed beyond it. 0 means 10s.
	HeaderTimeout time.Duration `yaml:"header_timeout"`
	// BodyTimeout bounds the reading of a body (408 beyond); 0 means 30s.
	BodyTimeout time.Duration `yaml:"body_timeout"`
	// AckTimeout bounds the wait for a request's events to be finished
	// (with useACK: for its ackId to turn true); a request not finished
	// by then is answered 503, code 9 (or its ackId stays false), and the
	// sender sends it again. 0 means 30s.
	AckTimeout time.Duration `yaml:"ack_timeout"`
	// IdleTimeout closes a kept-alive connection without requests for
	// this long; 0 means 2m.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MaxConnections is the most connections open at once; at it, a new
	// connection closes the longest-idle kept-alive one (one with a
	// request in flight never), or is refused with refuse_when_full.
	// 0 means 1024.
	MaxConnections int `yaml:"max_connections"`
	// The per-source limit, the TLS handshake deadline and
	// refuse_when_full, as the syslog TCP/TLS inputs have them.
	ConnLimits `yaml:",inline"`
	// AllowQueryStringToken accepts ?token=... (HEC's allowQueryStringAuth).
	AllowQueryStringToken bool `yaml:"allow_query_string_token"`

	// Indexer acknowledgement (tokens with ack: true); refused when no
	// token uses it.
	AckConcurrency int           `yaml:"ack_concurrency"`  // batches of acknowledged requests in flight at once; 0 means 16
	MaxPendingAcks int           `yaml:"max_pending_acks"` // per channel; 0 means 10000
	MaxAckChannels int           `yaml:"max_ack_channels"` // 0 means 10000
	AckChannelIdle time.Duration `yaml:"ack_channel_idle"` // 0 means 10m
}

// HECTokenConfig is one token an HEC input accepts, with what it pins.
type HECTokenConfig struct {
	Name     string `yaml:"name"`
	Token    Secret `yaml:"token"`
	Disabled bool   `yaml:"disabled"`
	// Defaults set on events that carry none of their own.
	Host       string `yaml:"host"`
	Source     string `yaml:"source"`
	SourceType string `yaml:"sourcetype"`
	Index      string `yaml:"index"`
	// Indexes lists the indexes the token may write to (code 7
	// otherwise); empty means any.
	Indexes []string `yaml:"indexes"`
	// Route is set on every event of the token as the field hec_route,
	// for routes to select (field: hec_route).
	Route string `yaml:"route"`
	// Ack enables indexer acknowledgement (HEC's useACK) for the token.
	Ack bool `yaml:"ack"`
}

// RELPInputConfig is a RELP listener (inputs.relp[]), plain or TLS: each
// syslog frame is answered "200 OK" once its event is finished (engine.Input.PushOwnedWait).
type RELPInputConfig struct {
	Name   string     `yaml:"name"`
	Listen string     `yaml:"listen"`
	TLS    *TLSConfig `yaml:"tls"`
	// Window is the most frames handed over and answered together; 0
	// means 128 (rsyslog's omrelp window).
	Window int `yaml:"window"`
	// MaxMessageSize is the largest frame data accepted; a frame
	// announcing more closes the session (librelp's maxDataSize). 0
	// means 128KiB.
	MaxMessageSize ByteSize      `yaml:"max_message_size"`
	MaxConnections int           `yaml:"max_connections"`
	IdleTimeout    time.Duration `yaml:"idle_timeout"`
	// AckTimeout bounds the wait for a window's events to be finished;
	// past it the session is closed unanswered and the client sends the
	// window again after reconnecting. 0 means 60s (below omrelp's own
	// 90 s timeout).
	AckTimeout   time.Duration `yaml:"ack_timeout"`
	StreamLimits `yaml:",inline"`
}

// hecRouteField is the event field a token's route sets.
const HECRouteField = "hec_route"

func (in *HECInputConfig) Key() string                   { return "hec" }
func (in *HECInputConfig) InputName() string             { return in.Name }
func (in *HECInputConfig) Kind() string                  { return "hec" }
func (in *HECInputConfig) Files() (listeners, conns int) { return 1, in.MaxConnections }

// SourceKeys: an HEC input counts each request for its sender's
// address.
func (in *HECInputConfig) SourceKeys() []string { return keysAddress }

// validate fills and checks an HEC input.
func (in *HECInputConfig) validate(f string, ck *Checker) {
	ck.name(f+".name", in.Name)
	ck.Addr(f+".listen", in.Listen)
	checkTLS(f, in.TLS, ck)
	if len(in.Tokens) == 0 {
		ck.Bad(f+".tokens", "at least one token is required")
	}
	seen := map[Secret]bool{}
	names := map[string]bool{}
	ack := false
	for j := range in.Tokens {
		t := &in.Tokens[j]
		tf := fmt.Sprintf("%s.tokens[%d]", f, j)
		if t.Name == "" {
			t.Name = fmt.Sprintf("token-%d", j+1)
		}
		if names[t.Name] {
			ck.Bad(tf+".name", "duplicate token name %q", t.Name)
		}
		names[t.Name] = true
		switch {
		case t.Token == "":
			ck.Bad(tf+".token", "required (use ${HEC_TOKEN})")
		case strings.ContainsAny(string(t.Token), " \t\r\n"):
			ck.Bad(tf+".token", "contains white space")
		case seen[t.Token]:
			ck.Bad(tf+".token", "the same token is listed twice")
		}
		seen[t.Token] = true
		if t.Index != "" && len(t.Indexes) > 0 && !slices.Contains(t.Indexes, t.Index) {
			ck.Bad(tf+".index", "%q is not in the token's indexes", t.Index)
		}
		ack = ack || t.Ack
	}
	if !ack {
		for _, s := range []struct {
			field string
			set   bool
		}{{"ack_concurrency", in.AckConcurrency != 0}, {"max_pending_acks", in.MaxPendingAcks != 0},
			{"max_ack_channels", in.MaxAckChannels != 0}, {"ack_channel_idle", in.AckChannelIdle != 0}} {
			if s.set {
				ck.Bad(f+"."+s.field, "applies to tokens with ack: true, and no token has it")
			}
		}
	} else {
		// Defaults only where acknowledgement is used, so that a
		// validated config validates again unchanged.
		if in.AckConcurrency == 0 {
			in.AckConcurrency = 16
		}
		if in.MaxPendingAcks == 0 {
			in.MaxPendingAcks = hec.DefaultMaxPendingAcks
		}
		if in.MaxAckChannels == 0 {
			in.MaxAckChannels = hec.DefaultMaxAckChannels
		}
		if in.AckChannelIdle == 0 {
			in.AckChannelIdle = hec.DefaultAckChannelIdle
		}
	}
	if in.MaxBodySize == 0 {
		in.MaxBodySize = hec.DefaultMaxBodyBytes
	}
	if in.HeaderTimeout == 0 {
		in.HeaderTimeout = defaultHECHeaderTimeout
	}
	if in.BodyTimeout == 0 {
		in.BodyTimeout = hec.DefaultBodyTimeout
	}
	if in.AckTimeout == 0 {
		in.AckTimeout = hec.DefaultSendTimeout
	}
	if in.IdleTimeout == 0 {
		in.IdleTimeout = 2 * time.Minute
	}
	in.ConnLimits.validate(f, &in.MaxConnections, ck.Bad)
	for _, v := range []struct {
		field string
		neg   bool
	}{{"max_body_size", in.MaxBodySize < 0}, {"header_timeout", in.HeaderTimeout < 0}, {"body_timeout", in.BodyTimeout < 0}, {"ack_timeout", in.AckTimeout < 0},
		{"idle_timeout", in.IdleTimeout < 0}, {"ack_concurrency", in.AckConcurrency < 0}, {"max_pending_acks", in.MaxPendingAcks < 0},
		{"max_ack_channels", in.MaxAckChannels < 0}, {"ack_channel_idle", in.AckChannelIdle < 0}} {
		if v.neg {
			ck.Bad(f+"."+v.field, "must be positive")
		}
	}
}

func (in *HECInputConfig) Summary() string {
	scheme := "http"
	if in.TLS != nil {
		scheme = "https"
	}
	var toks []string
	for _, t := range in.Tokens {
		s := t.Name
		var pins []string
		if t.Index != "" {
			pins = append(pins, "index="+t.Index)
		}
		if t.SourceType != "" {
			pins = append(pins, "sourcetype="+t.SourceType)
		}
		if t.Route != "" {
			pins = append(pins, "route="+t.Route)
		}
		if t.Ack {
			pins = append(pins, "ack")
		}
		if t.Disabled {
			pins = append(pins, "disabled")
		}
		if len(pins) > 0 {
			s += "(" + strings.Join(pins, " ") + ")"
		}
		toks = append(toks, s)
	}
	return fmt.Sprintf("input %s: hec %s://%s/services/collector tokens=%s (body max %d B, ack timeout %s, %d conns, %d per source%s)",
		in.Name, scheme, in.Listen, strings.Join(toks, ","), in.MaxBodySize, in.AckTimeout, in.MaxConnections, in.MaxConnectionsPerSource, in.summary(in.TLS))
}

func (in *RELPInputConfig) Key() string                   { return "relp" }
func (in *RELPInputConfig) InputName() string             { return in.Name }
func (in *RELPInputConfig) Files() (listeners, conns int) { return 1, in.MaxConnections }

// SourceKeys: a RELP input counts each window for its sender's address.
func (in *RELPInputConfig) SourceKeys() []string { return keysAddress }
func (in *RELPInputConfig) Kind() string {
	if in.TLS != nil {
		return "relp_tls"
	}
	return "relp"
}

// validate fills and checks a RELP input.
func (in *RELPInputConfig) validate(f string, ck *Checker) {
	ck.name(f+".name", in.Name)
	ck.Addr(f+".listen", in.Listen)
	checkTLS(f, in.TLS, ck)
	if in.Window == 0 {
		in.Window = relp.DefaultWindow
	}
	if in.Window < 1 || in.Window > 4096 {
		ck.Bad(f+".window", "%d out of range 1..4096", in.Window)
	}
	if in.MaxMessageSize == 0 {
		in.MaxMessageSize = relp.DefaultMaxDataBytes
	}
	if in.MaxMessageSize < 64 || in.MaxMessageSize > 64<<20 {
		ck.Bad(f+".max_message_size", "%d out of range 64..64MiB", in.MaxMessageSize)
	}
	if in.IdleTimeout == 0 {
		in.IdleTimeout = 10 * time.Minute
	}
	if in.AckTimeout == 0 {
		in.AckTimeout = 60 * time.Second
	}
	if in.AckTimeout < 0 {
		ck.Bad(f+".ack_timeout", "must be positive")
	}
	// RELP sessions read their own frames, not through a Framer.
	if in.ReadSize != 0 {
		ck.Bad(f+".read_size", "not used by relp inputs")
	}
	if in.ReadBuffers != 0 {
		ck.Bad(f+".read_buffers", "not used by relp inputs")
	}
	in.StreamLimits.validate(f, &in.MaxConnections, ck.Bad)
}

func (in *RELPInputConfig) Summary() string {
	kind := "tcp"
	if in.TLS != nil {
		kind = "tls"
	}
	return fmt.Sprintf("input %s: relp %s %s (window %d, max %d B, %d conns, %d per source, ack timeout %s%s)",
		in.Name, kind, in.Listen, in.Window, in.MaxMessageSize, in.MaxConnections, in.MaxConnectionsPerSource, in.AckTimeout, in.summary(in.TLS))
}

// validateAckDestinations checks what the HEC and RELP inputs need of the
// destinations.
func (c *Config) validateAckDestinations(ck *Checker) {
	ins := &c.Inputs
	if len(ins.HEC)+len(ins.RELP) == 0 || len(ins.Kafka) > 0 {
		return // none, or validateDestinations said it for Kafka already
	}
	// A request or frame is answered once every destination has its
	// events on disk or delivered: with on_failure a batch may still be
	// in a destination's memory when its flush returns, and a drop policy
	// would acknowledge events it dropped.
	for _, name := range slices.Sorted(maps.Keys(c.Destinations)) {
		d := c.Destinations[name].queue()
		if d == nil {
			continue
		}
		if d.Spool.Mode == SpoolOnFailure {
			ck.Bad("destinations."+name+".spool.mode", "on_failure cannot be used with an hec or relp input (senders would be answered for batches still in memory): use always")
		}
		if d.Spool.Full != FullBlock {
			ck.Bad("destinations."+name+".spool.full", "%s cannot be used with an hec or relp input (senders would be answered for events it dropped): use block", d.Spool.Full)
		}
	}
}

// hecTokens are the hec package's tokens of the configured ones.
func HECTokens(ts []HECTokenConfig) []hec.Token {
	toks := make([]hec.Token, len(ts))
	for i, t := range ts {
		toks[i] = hec.Token{
			Name: t.Name, Token: string(t.Token), Disabled: t.Disabled,
			Host: t.Host, Source: t.Source, SourceType: t.SourceType, Index: t.Index,
			Indexes: t.Indexes, Route: t.Route, Ack: t.Ack,
		}
	}
	return toks
}

// defaultHECHeaderTimeout is the default of header_timeout: the reading
// of a request's headers (the http.Server's ReadHeaderTimeout).
const defaultHECHeaderTimeout = 10 * time.Second
