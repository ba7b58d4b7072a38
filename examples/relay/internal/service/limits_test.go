package service

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fileLimitChildEnv = "RELAYKIT_RELAY_FILE_LIMIT_CHILD"

// fileLimitConfig is the default config with a JSON-lines input beside the
// syslog ones: two stream inputs of max_connections 1024.
func fileLimitConfig(t *testing.T) config.Config {
	cfg := relaytest.TestConfig(t)
	cfg.Inputs.JSONTCP = []config.JSONInputConfig{{Name: "json", Listen: "127.0.0.1:0"}}
	require.NoError(t, cfg.Validate())
	return cfg
}

// TestFileLimitChild is the child process of TestFileLimitWarning: with
// its open-file limit lowered to the value the environment names, it
// builds the relay (binding every listener), writes the log to stdout and
// closes it.
func TestFileLimitChild(t *testing.T) {
	v := os.Getenv(fileLimitChildEnv)
	if v == "" {
		t.Skip("child process of TestFileLimitWarning")
	}
	n, err := strconv.ParseUint(v, 10, 64)
	require.NoError(t, err)
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: n, Max: n}))
	r, err := NewRelay(fileLimitConfig(t), slog.New(slog.NewTextHandler(os.Stdout, nil)))
	require.NoError(t, err)
	require.NoError(t, r.closeAll())
}

// TestFileLimitWarning: a relay whose open-file limit (ulimit -n 200) is
// below the max_connections of its stream inputs plus its own needs says
// so at start, with what it counted; with a limit above that it says
// nothing.
func TestFileLimitWarning(t *testing.T) {
	run := func(limit uint64) string {
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFileLimitChild$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), fileLimitChildEnv+"="+strconv.FormatUint(limit, 10))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	out := run(200)
	assert.Contains(t, out, "open-file limit (RLIMIT_NOFILE) is below what this configuration may need")
	assert.Contains(t, out, "limit=200")
	assert.Contains(t, out, "input tcp max_connections 1024")
	assert.Contains(t, out, "input json max_connections 1024")
	assert.Contains(t, out, "destinations ")

	m := regexp.MustCompile(`need=(\d+)`).FindStringSubmatch(out)
	require.NotNil(t, m, "the warning says what the relay needs")
	need, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	assert.Greater(t, need, 2048, "at least the two inputs' max_connections")

	var rl syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl))
	if rl.Max >= uint64(need) {
		out := run(uint64(need))
		assert.NotContains(t, out, "open-file limit", "a limit that covers the need: no warning")
	}
}

// The HEC input's connections count in the file-descriptor budget like
// every other stream input's.
func TestFileNeedsHEC(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	hecInputConfig(&cfg)
	cfg.Inputs.HEC[0].MaxConnections = 500
	require.NoError(t, cfg.Validate())
	assert.Contains(t, FileNeeds(cfg), FileNeed{What: "input hec max_connections", N: 500})
}
