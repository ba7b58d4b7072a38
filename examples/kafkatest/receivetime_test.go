package kafkatest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaInputReceiveTime runs the built relay with a Kafka input (raw
// records, which carry no time) into a JSON archive: two records, the
// second produced more than a second after the first was archived, are
// archived with their receive times, a second or more apart, and the relay stops on SIGTERM with exit code 0.
func TestKafkaInputReceiveTime(t *testing.T) {
	c := newCluster(t, 1, 1, "syslog")
	addrs := c.ListenAddrs()
	dir := t.TempDir()
	metrics := freePort(t)
	p := startRelay(t, "siem", fmt.Sprintf(`
inputs:
  kafka:
    - {name: kafka, brokers: [%s], topics: [syslog], group: siem, format: raw}
workers: {count: 1, batch_max_wait: 20ms}
destinations:
  archive: {type: archive, dir: %s/archive, format: json}
spool: {dir: %s/spool}
dead_letter: {dir: %s/deadletter}
metrics: {listen: %s}
timezone: UTC
`, addrs[0], dir, dir, dir, metrics), metrics)

	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic("syslog"))
	require.NoError(t, err)
	defer cl.Close()
	type rec struct {
		Time        time.Time `json:"time"`
		ReceiveTime bool      `json:"time_is_receive_time"`
		Message     string    `json:"message"`
	}
	var recs []rec
	archivedN := func(n int) func() bool {
		return func() bool {
			recs = readArchive(dir, recs[:0])
			return len(recs) == n
		}
	}
	// The second record is produced more than a second after the first
	// was archived: whatever the consumer's fetch latency, their receive
	// times are more than a second apart.
	require.NoError(t, cl.ProduceSync(t.Context(), &kgo.Record{Value: []byte("record-0")}).FirstErr())
	require.Eventually(t, archivedN(1), 30*time.Second, 20*time.Millisecond, "the first record archived")
	time.Sleep(1100 * time.Millisecond) // the scenario: the second record comes more than a second later
	require.NoError(t, cl.ProduceSync(t.Context(), &kgo.Record{Value: []byte("record-1")}).FirstErr())
	require.Eventually(t, archivedN(2), 30*time.Second, 20*time.Millisecond, "both records archived")
	p.stop(t)
	assert.Equal(t, 0, p.cmd.ProcessState.ExitCode())
	assert.Contains(t, p.log.String(), "final ledger after ")
	assert.Regexp(t, `final ledger after \S+: received=2 routed=2 delivered=0 archived=2 spooled=0 dropped=0`, p.log.String())
	byMsg := map[string]rec{}
	for _, r := range recs {
		assert.True(t, r.ReceiveTime, "%s carries its receive time", r.Message)
		byMsg[strings.TrimSpace(r.Message)] = r
	}
	assert.GreaterOrEqual(t, byMsg["record-1"].Time.Sub(byMsg["record-0"].Time), time.Second)
}

// readArchive appends the records of every JSON archive file in dir/archive
// to recs.
func readArchive[R any](dir string, recs []R) []R {
	files, _ := filepath.Glob(filepath.Join(dir, "archive", "*"))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var r R
			if json.Unmarshal(sc.Bytes(), &r) == nil {
				recs = append(recs, r)
			}
		}
		fh.Close()
	}
	return recs
}
