package dest

import "github.com/relaykit/relaykit/examples/relay/internal/config"

// The destination types' sections, registered with the config format in
// the order its messages list them; sinks (sinks.go) builds each one's
// sink.
func init() {
	config.RegisterDestType("archive", func() config.DestSpec { return &ArchiveDestination{} })
	config.RegisterDestType("hec", func() config.DestSpec { return &HECDestination{} })
	config.RegisterDestType("sentinel", func() config.DestSpec { return &SentinelDestination{} })
	config.RegisterDestType("syslog", func() config.DestSpec { return &SyslogDestination{} })
	config.RegisterDestType("kafka", func() config.DestSpec { return &KafkaDestination{} })
	config.RegisterDestType("otlp", func() config.DestSpec { return &OTLPDestination{} })
}
