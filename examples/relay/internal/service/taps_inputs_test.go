package service

import (
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/tap"
)

// The generator has its input point, "input:generator": each event as
// parsed, before routing (the route's set step not applied yet), with its
// sequence number. (The Kafka input's point is tested against a kfake
// cluster in examples/kafkatest.)
func TestTapGeneratorInputPoint(t *testing.T) {
	cfg := relaytest.ConfigWithAPI(t, "")
	cfg.Inputs.Generator = config.GeneratorConfig{Rate: 200, Shape: "sshd"}
	cfg.Routes[0].Pipeline = []config.StepConfig{{Type: "set", Field: "env", Value: "prod"}}
	tr := startRelay(t, cfg)
	p := tr.taps.Lookup("input:generator")
	require.NotNil(t, p)

	// The generator runs on: the stream has its event at once (no wait
	// for the subscription, which limit=1 may have closed already).
	rec := recv(t, tailOne(t, tapURL(tr, "at=input:generator&limit=1"), ""))
	assert.Equal(t, "input:generator", rec.Point)
	assert.Empty(t, rec.Outcome)
	assert.Equal(t, "gen-host", rec.Host)
	assert.Equal(t, "sshd", rec.Source)
	assert.Contains(t, rec.Message, "Failed password for invalid user admin")
	require.NotEmpty(t, rec.Fields["seq"])
	assert.NotContains(t, rec.Fields, "env", "an input point shows the event before its route")
	assert.Positive(t, p.Stats().Events)
	checkBalanced(t, tr.stop(t))
}

// With no subscriber the generator's point publishes nothing (its one
// atomic load per event): the events flow all the same.
func TestTapGeneratorIdlePoint(t *testing.T) {
	cfg := relaytest.ConfigWithAPI(t, "")
	cfg.Inputs.Generator = config.GeneratorConfig{Rate: 5000, Shape: "syslog", Count: 100}
	tr := startRelay(t, cfg)
	p := tr.taps.Lookup("input:generator")
	require.NotNil(t, p)
	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == 100 }, "generated events archived")
	checkBalanced(t, tr.stop(t))
	assert.Equal(t, tap.Stats{}, p.Stats())
	assert.False(t, p.Active())
}
