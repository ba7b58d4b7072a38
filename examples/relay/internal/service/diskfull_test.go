package service

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward/forwardtest"
	"github.com/relaykit/relaykit/internal/testtool"
)

// TestSpoolDiskFullNoRace: the spool directory is on a 32 KiB file system (the
// spool holds the gzipped requests HEC receives, in which loggen's
// repetitive 300-byte messages take a few bytes each), HEC is healthy, and
// loggen sends 20,000 events/s of 300 bytes over TCP for 5 s (the shipped
// defaults: spool mode always, full: block). The spool's disk fills within
// a second, again and again; the relay holds batches in memory until HEC
// has them and pushes back on the sender, and nothing is dropped.
func TestSpoolDiskFullNoRace(t *testing.T) {
	if raceEnabled {
		// 20,000 events/s is beyond the race detector's build on two
		// cores; the test's point is that load.
		t.Skip("a load test: runs in the pass without -race")
	}
	relaytest.NeedTool(t, "loggen")
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	cfg := userConfig(t, hec)
	spool := testtool.Tmpfs(t, "32k")
	cfg.Spool.Dir = filepath.Join(spool, "spool")
	tr := startRelay(t, cfg)
	out := runTool(t, "loggen", "--inet", "--stream", "--rate", "20000", "--interval", "5", "--size", "300", "127.0.0.1", tr.port("tcp"))
	total := int64(loggenCount(t, out))
	relaytest.WaitFor(t, 60*time.Second, func() bool {
		s := tr.Ledger()
		return s.Received == total && s.Dest["hec"].Delivered == total && s.Dest["archive"].Delivered == total
	}, "every event delivered")
	during := tr.Ledger()
	// The next batch finds room again: the disk failure is over.
	runTool(t, "logger", "-n", "127.0.0.1", "-P", tr.port("tcp"), "-T", "after the flood")
	total++
	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["hec"].Delivered == total }, "one more event")
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Zero(t, s.DroppedTotal(), "nothing dropped: %s", s)
	assert.Len(t, hec.Events(), int(total), "HEC got every event once")
	assert.Equal(t, total, s.Archived)
	st := tr.dests["hec"].Queue.Stats()
	require.Positive(t, st.DiskErrors, "the spool's disk filled up")
	assert.False(t, st.DiskFailing, "and wrote again once the backlog was delivered")
	t.Logf("%d events; spool disk errors %d; ledger while sending: %s", total, st.DiskErrors, during)
}
