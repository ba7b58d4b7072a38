package kafkatest

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward/forwardtest"
	"github.com/relaykit/relaykit/forward/kafka"
	"github.com/relaykit/relaykit/tap"
)

// TestKafkaInputTap: a Kafka input has its tap point, "input:NAME": a
// tail of it (with the API token, as `relay tap` sends it) sees each
// record as decoded, before routing, while the records go on to HEC.
func TestKafkaInputTap(t *testing.T) {
	const token = "kafka-tap-token"
	c := newCluster(t, 1, 2, "syslog")
	broker := c.ListenAddrs()[0]
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	m := freePort(t)
	yaml := siemYAML("kafka", m, broker, hec.URL, hec.Token(), t.TempDir(), "json") +
		"api:\n  enabled: true\n  token: " + token + "\n"
	r := startRelay(t, "siem", yaml, m)

	const n = 10
	client := &http.Client{}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var (
		mu   sync.Mutex
		recs []*tap.Record
	)
	tailed := make(chan error, 1)
	go func() {
		tailed <- tap.Tail(ctx, client, "http://"+m+"/api/tap?at=input:kafka&filter=tapped&limit=10", token, func(rec *tap.Record) error {
			mu.Lock()
			defer mu.Unlock()
			recs = append(recs, rec)
			return nil
		})
	}()
	require.Eventually(t, func() bool { return r.metric(t, "relay_tap_subscribers", `point="input:kafka"`) == 1 },
		15*time.Second, 20*time.Millisecond, "the tail subscribed")

	produce(t, c.ListenAddrs(), "syslog", kafka.EncodingJSON, testEvents("tapped", n))
	select {
	case err := <-tailed: // limit=10: the relay ends the stream after the tenth
		require.NoError(t, err)
	case <-ctx.Done():
		t.Fatal("the tail did not see every record")
	}
	require.Eventually(t, func() bool {
		d, _ := tagged(hec.Counts(), "tapped")
		return d == n
	}, 20*time.Second, 50*time.Millisecond, "every record reaches HEC")

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, recs, n)
	var msgs []string
	for _, rec := range recs {
		assert.Equal(t, "input:kafka", rec.Point)
		assert.Empty(t, rec.Outcome, "an input point has no outcome")
		assert.Contains(t, []string{"host-0", "host-1"}, rec.Host)
		assert.Equal(t, "sshd", rec.Source)
		assert.Contains(t, []string{"red", "blue"}, rec.Fields["tenant"])
		msgs = append(msgs, rec.Message)
	}
	sort.Strings(msgs) // two partitions: their records interleave
	want := make([]string, n)
	for i := range want {
		want[i] = seqMsg("tapped", i)
	}
	assert.Equal(t, want, msgs)

	// Without the token the point is closed to the tail.
	err := tap.Tail(t.Context(), client, "http://"+m+"/api/tap?at=input:kafka&limit=1", "", func(*tap.Record) error { return nil })
	require.True(t, errors.Is(err, tap.ErrUnauthorized), "%v", err)
}
