package service

import (
	"cmp"
	"fmt"
	"log/slog"
	"strings"
	"syscall"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/dest"
)

// checkFileLimit warns when the soft RLIMIT_NOFILE (which the Go runtime
// raises to the hard limit at start) is below what cfg may need: past it,
// accept fails with EMFILE (the stream inputs back off and accept on) and
// files cannot be opened. It says what it
// counted. It returns the limit and the need (0, 0 when the limit cannot
// be read or is unlimited).
func checkFileLimit(cfg config.Config, log *slog.Logger) (limit uint64, need int) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == ^uint64(0) {
		return 0, 0
	}
	needs := FileNeeds(cfg)
	parts := make([]string, len(needs))
	for i, n := range needs {
		need += n.N
		parts[i] = fmt.Sprintf("%s %d", n.What, n.N)
	}
	if rl.Cur < uint64(need) {
		log.Warn("open-file limit (RLIMIT_NOFILE) is below what this configuration may need: past it, accept fails with EMFILE (new connections wait while the input backs off, relay_input_accept_errors_total) and files cannot be opened; raise it (LimitNOFILE= in the systemd unit, ulimit -n) or lower max_connections",
			"limit", rl.Cur, "need", need, "counted", strings.Join(parts, ", "))
	}
	return rl.Cur, need
}

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
func FileNeeds(cfg config.Config) []FileNeed {
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
		case *dest.ArchiveDestination:
			dests += 3 // active file, the next one prepared ahead, one being compressed
			continue
		case *dest.HECDestination:
			dests += 2*cmp.Or(d.Concurrency, 4) + 2 // in-flight and idle connections
		case *dest.SentinelDestination:
			dests += 2*cmp.Or(d.Concurrency, 4) + 2 // in-flight and idle connections, a token request
		case *dest.SyslogDestination:
			dests++
		case *dest.KafkaDestination:
			dests += 2 * len(d.Brokers)
		case *dest.OTLPDestination:
			dests += 4 // HTTP connections in flight and idle, or one gRPC connection
		}
		dests += 4 // spool and retry spool: a segment written and one read each
	}
	needs = append(needs, FileNeed{"destinations", dests})
	needs = append(needs, FileNeed{"dead letters, enrichment files, the process", 16})
	return needs
}
