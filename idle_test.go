package relaykit_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	// Every library package: importing them must start nothing that runs
	// while the program is idle.
	_ "github.com/relaykit/relaykit/batch"
	_ "github.com/relaykit/relaykit/clock"
	_ "github.com/relaykit/relaykit/delivery"
	_ "github.com/relaykit/relaykit/engine"
	_ "github.com/relaykit/relaykit/enrich"
	_ "github.com/relaykit/relaykit/forward"
	_ "github.com/relaykit/relaykit/forward/kafka"
	_ "github.com/relaykit/relaykit/otlp"
	_ "github.com/relaykit/relaykit/pipeline"
	_ "github.com/relaykit/relaykit/ringbuffer"
	_ "github.com/relaykit/relaykit/sources"
	_ "github.com/relaykit/relaykit/spool"
	_ "github.com/relaykit/relaykit/storage"
	_ "github.com/relaykit/relaykit/storage/deadletter"
	_ "github.com/relaykit/relaykit/stream"
	_ "github.com/relaykit/relaykit/stream/hec"
	_ "github.com/relaykit/relaykit/stream/relp"
	_ "github.com/relaykit/relaykit/stream/udp"
	_ "github.com/relaykit/relaykit/syslog"
	_ "github.com/relaykit/relaykit/tap"

	"github.com/relaykit/relaykit/internal/testtool"
)

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestIdleImporterCostsNothing: a program that imports every relaykit
// package and reads nothing uses at most 0.1 % of a core while idle (a
// clock ticking every 500 µs from import on, as go-timecache's default
// cache does, costs about 3 %). It runs in a process of its own, whose
// CPU time the kernel counts for it alone.
func TestIdleImporterCostsNothing(t *testing.T) {
	if !testtool.Isolated(t) {
		return
	}
	time.Sleep(200 * time.Millisecond) // the test binary's own start-up settles
	const window = 3 * time.Second
	before := processCPU()
	time.Sleep(window)
	used := processCPU() - before
	t.Logf("CPU while idle for %v: %v (%.3f %% of a core)", window, used, 100*used.Seconds()/window.Seconds())
	assert.LessOrEqual(t, used, window/1000, "idle CPU above 0.1 % of a core")
}
