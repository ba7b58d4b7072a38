package main

import (
	"cmp"
)

// fileNeed is one line of the relay's file-descriptor budget.
type FileNeed struct {
	What string
	N    int
}

// fileNeeds estimates the file descriptors the relay may hold open at once
// with cfg: the connections its stream inputs accept (max_connections of
// each syslog_tcp, json_tcp, relp and hec input) and its own needs (listeners, the
// connections and spool files of each destination, archive and
// dead-letter files, Kafka clients, the process itself). The own needs are
// an upper estimate, not a count of what is open now.
func FileNeeds(cfg Config) []FileNeed {
	var needs []FileNeed
	listeners := 0
	for _, in := range cfg.Inputs.Sections() {
		l, conns := in.Files()
		if conns > 0 {
			needs = append(needs, FileNeed{"input " + in.InputName() + " max_connections", conns})
		}
		listeners += l
	}
	if cfg.Metrics.Listen != "" {
		listeners += 1 + 4 // the listener and a few scrapers
	}
	needs = append(needs, FileNeed{"listeners, metrics and kafka inputs", listeners})
	dests := 0
	for _, d := range cfg.Destinations {
		switch d := d.Spec.(type) {
		case *ArchiveDestination:
			dests += 3 // active file, the next one prepared ahead, one being compressed
			continue
		case *HECDestination:
			dests += 2*cmp.Or(d.Concurrency, 4) + 2 // in-flight and idle connections
		case *SentinelDestination:
			dests += 2*cmp.Or(d.Concurrency, 4) + 2 // in-flight and idle connections, a token request
		case *SyslogDestination:
			dests++
		case *KafkaDestination:
			dests += 2 * len(d.Brokers)
		case *OTLPDestination:
			dests += 4 // HTTP connections in flight and idle, or one gRPC connection
		}
		dests += 4 // spool and retry spool: a segment written and one read each
	}
	needs = append(needs, FileNeed{"destinations", dests})
	needs = append(needs, FileNeed{"dead letters, enrichment files, the process", 16})
	return needs
}
