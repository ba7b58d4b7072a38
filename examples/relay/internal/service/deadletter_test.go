package service

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const deadLetterChildEnv = "RELAYKIT_RELAY_DEAD_LETTER_CHILD"

// TestDeadLetterChild is the child process of TestDeadLetterWriteErrors:
// with a file size limit of 8 KiB (RLIMIT_FSIZE: writes past it fail with
// EFBIG), it sends 100 invalid JSON lines to a relay. Each dead-letter file
// takes the lines that fit; the line that fails is counted, and the next
// one goes to a new file (storage.Writer errors are not sticky).
func TestDeadLetterChild(t *testing.T) {
	if os.Getenv(deadLetterChildEnv) == "" {
		t.Skip("child process of TestDeadLetterWriteErrors")
	}
	cfg := relaytest.TestConfig(t)
	cfg.Inputs.JSONTCP = []config.JSONInputConfig{{Name: "json", Listen: "127.0.0.1:0"}}
	tr := startRelay(t, cfg)
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 8 << 10, Max: 8 << 10}))

	const n = 100
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "not json %03d %s\n", i, strings.Repeat("x", 150))
	}
	relaytest.Send(t, "tcp", tr.addr("json"), []byte(b.String()))
	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Invalid == n }, "every line read")

	metrics := "http://" + tr.addr("metrics") + "/metrics"
	lines := scrapeSample(metrics, "relay_dead_letter_lines_total")
	errs := scrapeSample(metrics, "relay_dead_letter_write_errors_total")
	t.Logf("dead-letter lines written %v, failed %v", lines, errs)
	assert.Positive(t, lines, "the first lines fit")
	assert.Positive(t, errs, "the rest failed, counted")
	assert.Equal(t, float64(n), lines+errs, "every line written or counted as failed")
	assert.Less(t, errs, lines, "the writer went on in new files")
	tr.cancel()
	require.NoError(t, <-tr.done, "a clean stop: no error is left behind")
	s := tr.Ledger()
	tr.final = &s
	checkBalanced(t, s)
	assert.Equal(t, int64(n), s.Dropped[ledger.DropInvalidJSON])
	assert.Contains(t, s.String(), fmt.Sprintf("dead_letter_errors=%d", int(errs)), "in the ledger line")
	fmt.Printf("child ledger: %s\n", s)
}

// TestDeadLetterWriteErrors: when the dead-letter file cannot be written
// (here past a file size limit), each line lost is counted in
// relay_dead_letter_write_errors_total and in the final ledger line, the
// failure is logged once, and the relay goes on.
func TestDeadLetterWriteErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestDeadLetterChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), deadLetterChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	m := regexp.MustCompile(`dead_letter_errors=(\d+)`).FindStringSubmatch(string(out))
	require.NotNil(t, m, "%s", out)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	assert.Positive(t, n)
	// Logged once per episode (a line that fits may end one), not per line.
	failed, again := strings.Count(string(out), "writing the dead-letter file failed"), strings.Count(string(out), "the dead-letter file writes again")
	assert.Positive(t, failed)
	assert.Contains(t, []int{again, again + 1}, failed, "each failure episode but the last ended with a recovery")
	assert.LessOrEqual(t, failed, n, "at most one line per failed write")
	assert.Contains(t, string(out), "file too large")
}
