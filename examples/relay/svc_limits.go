package main

import (
	"fmt"
	"log/slog"
	"strings"
	"syscall"
)

// checkFileLimit warns when the soft RLIMIT_NOFILE (which the Go runtime
// raises to the hard limit at start) is below what cfg may need: past it,
// accept fails with EMFILE (the stream inputs back off and accept on) and
// files cannot be opened. It says what it
// counted. It returns the limit and the need (0, 0 when the limit cannot
// be read or is unlimited).
func checkFileLimit(cfg Config, log *slog.Logger) (limit uint64, need int) {
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
