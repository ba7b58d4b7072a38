package config

import (
	"path/filepath"
	"runtime"
	"time"

	"github.com/relaykit/relaykit/stream"
)

// InputsConfig lists the inputs, one field per kind of input: the YAML
// keys under inputs:. Every field is a section type that implements
// InputSection (a list of them, or one for the generator), and
// Sections lists them in this order: add a kind here, with its section
// type, and to the input registry (input.Kinds), and the summary,
// the checks, the sources keys and the file-descriptor budget take it.
type InputsConfig struct {
	SyslogUDP []UDPInputConfig  `yaml:"syslog_udp"`
	SyslogTCP []TCPInputConfig  `yaml:"syslog_tcp"`
	JSONTCP   []JSONInputConfig `yaml:"json_tcp"`

	// Kafka consumer-group inputs; see kafka.go.
	Kafka []KafkaInputConfig `yaml:"kafka"`

	// Acknowledging inputs: RELP and Splunk HEC; see ack.go.
	RELP []RELPInputConfig `yaml:"relp"`
	HEC  []HECInputConfig  `yaml:"hec"`

	// OpenTelemetry logs (OTLP/HTTP and OTLP/gRPC); see otlp.go.
	OTLP []OTLPInputConfig `yaml:"otlp"`

	Generator GeneratorConfig `yaml:"generator"`
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
	ConnLimits `yaml:",inline"`
	// FrameTimeout is how long a frame that has started may take to
	// complete; 0 means 30s.
	FrameTimeout time.Duration `yaml:"frame_timeout"`
	// ReadSize is the most one connection reads at a time: its buffer
	// grows from 4 KiB towards it while reads come back full and shrinks
	// when they stay small (stream.ReadBudget); 0 means 64KiB, at most
	// 1MiB.
	ReadSize ByteSize `yaml:"read_size"`
	// ReadBuffers bounds the read buffers of all the input's connections
	// together (what a frame needs is taken beyond it); 0 means 16MiB.
	ReadBuffers ByteSize `yaml:"read_buffers"`
}

// ConnLimits are the connection limits and the PROXY protocol settings
// of every listening stream input (syslog TCP/TLS, JSON lines, RELP, HEC,
// OTLP): stream.Config, beside each input's max_connections.
type ConnLimits struct {
	// MaxConnectionsPerSource is the most connections open at once from
	// one source IP address (the one a PROXY header names); 0 means 64.
	MaxConnectionsPerSource int `yaml:"max_connections_per_source"`
	// HandshakeTimeout bounds the PROXY header and the TLS handshake,
	// from accept; 0 means 10s.
	HandshakeTimeout time.Duration `yaml:"handshake_timeout"`
	// RefuseWhenFull refuses new connections at max_connections instead
	// of closing the longest-idle one.
	RefuseWhenFull bool `yaml:"refuse_when_full"`
	// ProxyProtocol is off (the default), optional or required: whether
	// connections begin with a PROXY protocol header (v1 or v2) naming
	// the sender a load balancer forwards, the connection's source from
	// then on. ProxyAllowed are the addresses (IPs, CIDR prefixes) that
	// may send one, the balancers: required unless off.
	ProxyProtocol stream.ProxyMode `yaml:"proxy_protocol"`
	ProxyAllowed  []string         `yaml:"proxy_allowed"`
}

// TLSConfig enables TLS on a listener (RFC 5425 for syslog): the
// certificate and key files, re-read on SIGHUP and when they change on
// disk, or auto: a self-signed certificate made at the first start and
// kept in AutoTLSDir (tlscert.Config). client_ca_file makes it mutual.
type TLSConfig struct {
	CertFile     string `yaml:"cert_file"`
	KeyFile      string `yaml:"key_file"`
	Auto         bool   `yaml:"auto"`
	ClientCAFile string `yaml:"client_ca_file"`
}

// AutoTLSDir is where the inputs with tls: {auto: true} keep their
// certificate, one for the relay: the directory tls in spool.dir.
func (c *Config) AutoTLSDir() string { return filepath.Join(c.Spool.Dir, autoTLSDir) }

const autoTLSDir = "tls"

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

// validate fills the workers' defaults and checks them.
func (w *WorkersConfig) validate(ck *Checker) {
	if w.Count == 0 {
		w.Count = runtime.GOMAXPROCS(0)
	}
	if w.Count < 0 || w.Count > 256 {
		ck.Bad("workers.count", "%d out of range 1..256", w.Count)
	}
	if w.RingSize == 0 {
		w.RingSize = 8192
	}
	if w.RingSize < 2 || w.RingSize&(w.RingSize-1) != 0 {
		ck.Bad("workers.ring_size", "%d is not a power of two", w.RingSize)
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
}
