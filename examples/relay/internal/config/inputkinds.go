package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// InputSection is the config section of one input, whatever its kind:
// what the summary, the checks, the sources keys and the
// file-descriptor budget need of it. Each kind's section type (a field
// of InputsConfig) implements it; the input registry builds the input
// from it.
type InputSection interface {
	// Key is the kind's YAML key under inputs: (syslog_udp, hec, ...).
	Key() string
	// InputName is the input's name: its ledger entry, metrics label,
	// tap point (input:NAME) and sources input.
	InputName() string
	// Kind is the kind label of its metrics and status (syslog_tls for a
	// syslog_tcp input with tls, relp_tls, ...).
	Kind() string
	// Summary is its line of the startup summary, secrets redacted; ""
	// for none (a generator that is off).
	Summary() string
	// Files is what it may hold open at once: listening sockets (and
	// client connections) and accepted connections, for the
	// file-descriptor budget (service.FileNeeds).
	Files() (listeners, conns int)
	// SourceKeys are what sources.keys may choose for it: address, host
	// or both; none when it has no sources.
	SourceKeys() []string
	// validate fills its defaults and checks it, naming fields under f
	// (inputs.KEY[i]).
	validate(f string, ck *Checker)
}

// Sections returns every input section of ins, kind by kind in the
// order of InputsConfig's fields and in file order within a kind, as
// pointers into ins (validate fills them in place). The generator is
// listed whether on or not: its Summary and Files say when it is off.
func (ins *InputsConfig) Sections() []InputSection {
	var out []InputSection
	v := reflect.ValueOf(ins).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() == reflect.Slice {
			for j := range f.Len() {
				out = append(out, f.Index(j).Addr().Interface().(InputSection))
			}
		} else {
			out = append(out, f.Addr().Interface().(InputSection))
		}
	}
	return out
}

// InputKinds returns a zero section of each kind of input, in the
// order of InputsConfig's fields: the kinds the config format knows.
func InputKinds() []InputSection {
	var out []InputSection
	t := reflect.TypeFor[InputsConfig]()
	for i := range t.NumField() {
		ft := t.Field(i).Type
		if ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		out = append(out, reflect.New(ft).Interface().(InputSection))
	}
	return out
}

// sectionField names section i of its kind: inputs.KEY[i], or
// inputs.KEY for the generator.
func sectionField(sec InputSection, i int) string {
	if _, one := sec.(*GeneratorConfig); one {
		return "inputs." + sec.Key()
	}
	return fmt.Sprintf("inputs.%s[%d]", sec.Key(), i)
}

// validate fills the inputs' defaults and checks them, each section
// its own.
func (ins *InputsConfig) validate(ck *Checker) {
	index := map[string]int{}
	for _, sec := range ins.Sections() {
		i := index[sec.Key()]
		index[sec.Key()]++
		sec.validate(sectionField(sec, i), ck)
	}
}

// Source key kinds that an input offers (SourceKeys).
var (
	keysBoth    = []string{SourceKeyAddress, SourceKeyHost}
	keysAddress = []string{SourceKeyAddress}
	keysHost    = []string{SourceKeyHost}
)

// syslog_udp

func (in *UDPInputConfig) Key() string                   { return "syslog_udp" }
func (in *UDPInputConfig) InputName() string             { return in.Name }
func (in *UDPInputConfig) Kind() string                  { return "syslog_udp" }
func (in *UDPInputConfig) Files() (listeners, conns int) { return 1, 0 }
func (in *UDPInputConfig) SourceKeys() []string          { return keysBoth }
func (in *UDPInputConfig) Summary() string {
	return fmt.Sprintf("input %s: syslog udp %s (max %d B, rcvbuf %d B)", in.Name, in.Listen, in.MaxMessageSize, in.ReadBuffer)
}

func (in *UDPInputConfig) validate(f string, ck *Checker) {
	ck.name(f+".name", in.Name)
	ck.Addr(f+".listen", in.Listen)
	if in.ReadBuffer == 0 {
		// The kernel's default (net.core.rmem_default, 208 KiB) drops
		// datagrams under a burst of a few thousand.
		in.ReadBuffer = defaultUDPReadBuffer
	}
	if in.MaxMessageSize == 0 {
		in.MaxMessageSize = 64 << 10
	}
	if in.MaxMessageSize > 64<<10 {
		ck.Bad(f+".max_message_size", "%d exceeds the largest UDP datagram (64KiB)", in.MaxMessageSize)
	}
	if in.BatchSize == 0 {
		in.BatchSize = 64
	}
	if in.BatchSize < 0 || in.BatchSize > 1024 {
		ck.Bad(f+".batch_size", "%d out of range 1..1024", in.BatchSize)
	}
	if in.Readers == 0 {
		in.Readers = 1
	}
	if in.Readers < 0 || in.Readers > 64 {
		ck.Bad(f+".readers", "%d out of range 1..64", in.Readers)
	}
}

// syslog_tcp

func (in *TCPInputConfig) Key() string                   { return "syslog_tcp" }
func (in *TCPInputConfig) InputName() string             { return in.Name }
func (in *TCPInputConfig) Files() (listeners, conns int) { return 1, in.MaxConnections }
func (in *TCPInputConfig) SourceKeys() []string          { return keysBoth }
func (in *TCPInputConfig) Kind() string {
	if in.TLS != nil {
		return "syslog_tls"
	}
	return "syslog_tcp"
}

func (in *TCPInputConfig) Summary() string {
	kind := "tcp"
	if in.TLS != nil {
		kind = "tls"
	}
	return fmt.Sprintf("input %s: syslog %s %s (max %d B, %d conns, %d per source, idle %s, frame %s%s)", in.Name, kind, in.Listen, in.MaxMessageSize, in.MaxConnections, in.MaxConnectionsPerSource, in.IdleTimeout, in.FrameTimeout, in.summary(in.TLS))
}

func (in *TCPInputConfig) validate(f string, ck *Checker) {
	ck.name(f+".name", in.Name)
	ck.Addr(f+".listen", in.Listen)
	if in.MaxMessageSize == 0 {
		in.MaxMessageSize = 64 << 10
	}
	if in.MaxMessageSize < 64 || in.MaxMessageSize > 64<<20 {
		ck.Bad(f+".max_message_size", "%d out of range 64..64MiB", in.MaxMessageSize)
	}
	if in.IdleTimeout == 0 {
		in.IdleTimeout = 10 * time.Minute
	}
	in.StreamLimits.validate(f, &in.MaxConnections, ck.Bad)
	in.StreamLimits.validateReads(f, ck.Bad)
	checkTLS(f, in.TLS, ck)
}

// checkTLS checks a listener's tls section.
func checkTLS(f string, t *TLSConfig, ck *Checker) {
	switch {
	case t == nil:
	case t.Auto:
		ck.autoTLS = true
		if t.CertFile != "" || t.KeyFile != "" {
			ck.Bad(f+".tls.auto", "excludes cert_file and key_file")
		}
	case t.CertFile == "" || t.KeyFile == "":
		ck.Bad(f+".tls", "cert_file and key_file are required (or auto: true)")
	}
}

// json_tcp

func (in *JSONInputConfig) Key() string                   { return "json_tcp" }
func (in *JSONInputConfig) InputName() string             { return in.Name }
func (in *JSONInputConfig) Kind() string                  { return "json_tcp" }
func (in *JSONInputConfig) Files() (listeners, conns int) { return 1, in.MaxConnections }

// SourceKeys: the JSON input's events name their peer, so its key is
// the address.
func (in *JSONInputConfig) SourceKeys() []string { return keysAddress }
func (in *JSONInputConfig) Summary() string {
	return fmt.Sprintf("input %s: json lines tcp %s (max %d B%s)", in.Name, in.Listen, in.MaxLineSize, in.summary(nil))
}

func (in *JSONInputConfig) validate(f string, ck *Checker) {
	ck.name(f+".name", in.Name)
	ck.Addr(f+".listen", in.Listen)
	if in.MaxLineSize == 0 {
		in.MaxLineSize = 1 << 20
	}
	if in.IdleTimeout == 0 {
		in.IdleTimeout = 10 * time.Minute
	}
	in.StreamLimits.validate(f, &in.MaxConnections, ck.Bad)
	in.StreamLimits.validateReads(f, ck.Bad)
}

// generator

func (g *GeneratorConfig) Key() string          { return "generator" }
func (g *GeneratorConfig) InputName() string    { return "generator" }
func (g *GeneratorConfig) Kind() string         { return "generator" }
func (g *GeneratorConfig) SourceKeys() []string { return nil }

// Files: none; the generator opens nothing.
func (g *GeneratorConfig) Files() (listeners, conns int) { return 0, 0 }

// On reports whether the generator runs (rate above 0).
func (g *GeneratorConfig) On() bool { return g.Rate > 0 }

func (g *GeneratorConfig) Summary() string {
	if !g.On() {
		return ""
	}
	return fmt.Sprintf("input generator: %d events/s, shape %s", g.Rate, g.Shape)
}

func (g *GeneratorConfig) validate(f string, ck *Checker) {
	if g.Rate < 0 {
		ck.Bad(f+".rate", "must not be negative")
	}
	if g.Shape == "" {
		g.Shape = "syslog"
	}
	if !slices.Contains(GeneratorShapes, g.Shape) {
		ck.Bad(f+".shape", "unknown shape %q (want one of %s)", g.Shape, strings.Join(GeneratorShapes, ", "))
	}
}

// generatorShapes are the generator's shapes (package input renders them).
var GeneratorShapes = []string{"syslog", "sshd", "firewall", "json"}
