package kafkatest

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/forward/forwardtest"
	"github.com/relaykit/relaykit/forward/kafka"
)

// apiSource is one source of the relay's GET /api/sources.
type apiSource struct {
	Source string `json:"source"`
	Input  string `json:"input"`
	Events uint64 `json:"events"`
	State  string `json:"state"`
}

func (p *relayProc) sources(t *testing.T) map[string]apiSource {
	t.Helper()
	resp, err := http.Get("http://" + p.metrics + "/api/sources")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var list []apiSource
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	out := map[string]apiSource{}
	for _, s := range list {
		out[s.Source] = s
	}
	return out
}

// TestKafkaInputSources: a SIEM relay's Kafka input tracks sources by the
// host each record's event names (records have no sender address): the
// API counts each host's events under the input's name; a host that stops
// is reported silent by the metric and a health event delivered to HEC
// with the rest, and active again when its records come back.
func TestKafkaInputSources(t *testing.T) {
	c := newCluster(t, 1, 2, "syslog")
	broker := c.ListenAddrs()[0]
	hec := forwardtest.NewHECServer(t, forwardtest.HECServerConfig{})
	m := freePort(t)
	yaml := siemYAML("kafka", m, broker, hec.URL, hec.Token(), t.TempDir(), "json") +
		"sources:\n  enabled: true\n  silent_after: 2s\n"
	r := startRelay(t, "siem", yaml, m)

	const n = 100
	produce(t, c.ListenAddrs(), "syslog", kafka.EncodingJSON, testEvents("src", n)) // host-0 and host-1, half each
	require.Eventually(t, func() bool {
		d, _ := tagged(hec.Counts(), "src")
		return d == n
	}, 20*time.Second, 50*time.Millisecond, "every record reaches HEC")
	srcs := r.sources(t)
	require.Len(t, srcs, 2, "%v", srcs)
	for _, h := range []string{"host-0", "host-1"} {
		assert.EqualValues(t, n/2, srcs[h].Events, h)
		assert.Equal(t, "kafka", srcs[h].Input, h)
	}

	// Both hosts stop: both silent, each with a health event at HEC.
	require.Eventually(t, func() bool { return r.metric(t, "relay_sources_silent") == 2 }, 15*time.Second, 50*time.Millisecond, "two silent hosts")
	health := func(state string) map[string]int {
		out := map[string]int{}
		for _, e := range hec.Events() {
			if e.SourceType == "relay:source_health" && e.Fields["source_state"] == state {
				out[e.Host]++
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(health("silent")) == 2 }, 15*time.Second, 50*time.Millisecond, "health events at HEC")
	assert.Equal(t, map[string]int{"host-0": 1, "host-1": 1}, health("silent"))

	// host-0 and host-1 send again.
	produce(t, c.ListenAddrs(), "syslog", kafka.EncodingJSON, testEvents("again", 10))
	require.Eventually(t, func() bool { return r.metric(t, "relay_sources_silent") == 0 }, 15*time.Second, 50*time.Millisecond, "active again")
	require.Eventually(t, func() bool { return len(health("active")) == 2 }, 15*time.Second, 50*time.Millisecond, "active health events at HEC")
	srcs = r.sources(t)
	assert.EqualValues(t, n/2+5, srcs["host-0"].Events)
	assert.Equal(t, "active", srcs["host-0"].State)
	assert.Zero(t, r.metric(t, "relay_dropped_events_total"))
}
