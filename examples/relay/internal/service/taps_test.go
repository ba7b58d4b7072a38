package service

import (
	"fmt"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"
	"github.com/relaykit/relaykit/examples/relay/internal/route"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/tap"
)

// A line sent by the real `logger` (TCP and UDP) is seen at the input
// point (after parsing), at the route point (after the route's pipeline:
// its set step applied) and at the destination point (delivered), each
// time with the fields the archive gets.
func TestTapLoggerLineAtEveryPoint(t *testing.T) {
	relaytest.NeedTool(t, "logger")
	cfg := relaytest.ConfigWithAPI(t, "")
	cfg.Routes[0].Pipeline = []config.StepConfig{{Type: "set", Field: "env", Value: "prod"}}
	tr := startRelay(t, cfg)
	route := route.TapRoute + cfg.Routes[0].Name
	points := []string{"input:tcp", "input:udp", route, "destination:archive"}
	tails := map[string]<-chan *tap.Record{}
	for _, p := range points {
		tails[p] = tailOne(t, tapURL(tr, "at="+p+"&filter=tapped"), "")
	}
	for _, p := range points {
		waitSubscribed(t, tr, p, 1)
	}
	base := []string{"-n", "127.0.0.1", "--rfc5424", "--msgid", "TAP", "-t", "myapp"}
	runTool(t, "logger", append(append([]string{"-T", "-P", tr.port("tcp")}, base...), "tapped over tcp")...)
	in := recv(t, tails["input:tcp"])
	rt := recv(t, tails[route])
	out := recv(t, tails["destination:archive"])
	runTool(t, "logger", append(append([]string{"-d", "-P", tr.port("udp")}, base...), "tapped over udp")...)
	udp := recv(t, tails["input:udp"])
	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == 2 }, "both lines archived")
	checkBalanced(t, tr.stop(t))

	arch := archivedRecords(t, relaytest.ArchiveOf(cfg).Dir)
	require.Len(t, arch, 2)
	byMsg := map[string]archiveRecord{}
	for _, a := range arch {
		byMsg[a.Message] = a
	}
	a := byMsg["tapped over tcp"]
	assert.Equal(t, "input:tcp", in.Point)
	assert.Equal(t, route, rt.Point)
	assert.Equal(t, "destination:archive", out.Point)
	assert.Empty(t, in.Outcome)
	assert.Empty(t, rt.Outcome)
	assert.Equal(t, "delivered", out.Outcome)
	for _, rec := range []*tap.Record{in, rt, out} {
		assert.Equal(t, a.Message, rec.Message, rec.Point)
		assert.Equal(t, a.Host, rec.Host, rec.Point)
		assert.Equal(t, "myapp", rec.Source, rec.Point)
		assert.Equal(t, a.Source, rec.Source, rec.Point)
		assert.Equal(t, a.SourceType, rec.SourceType, rec.Point)
		assert.Equal(t, "TAP", rec.Fields["msgid"], rec.Point)
		at, err := time.Parse(time.RFC3339Nano, a.Time)
		require.NoError(t, err)
		assert.True(t, at.Equal(rec.Time), "%s: time %s, archive %s", rec.Point, rec.Time, at)
		assert.False(t, rec.ReceiveTime.IsZero(), rec.Point)
	}
	// After the route's pipeline the event has the archive's fields,
	// the one the set step adds included; at the input it has not.
	for _, rec := range []*tap.Record{rt, out} {
		assert.Equal(t, a.Fields, rec.Fields, rec.Point)
	}
	assert.Equal(t, "prod", a.Fields["env"])
	assert.NotContains(t, in.Fields, "env")
	delete(a.Fields, "env")
	assert.Equal(t, a.Fields, in.Fields)

	assert.Equal(t, "input:udp", udp.Point)
	assert.Equal(t, byMsg["tapped over udp"].Message, udp.Message)
	assert.Equal(t, "TAP", udp.Fields["msgid"])
}

// A reload keeps the points of the routes that stay (their streams go on)
// and removes those of the routes that are gone.
func TestTapRoutePointsFollowReload(t *testing.T) {
	cfg := relaytest.ConfigWithAPI(t, "")
	tr := startRelay(t, cfg)
	old := route.TapRoute + cfg.Routes[0].Name
	require.NotNil(t, tr.taps.Lookup(old))
	require.NoError(t, tr.ReloadRoutes([]config.RouteConfig{{Name: "new", Final: true, Destinations: []string{"archive"}}}))
	assert.Nil(t, tr.taps.Lookup(old))
	assert.NotNil(t, tr.taps.Lookup(route.TapRoute+"new"))
}

// With no subscriber the route table the relay builds, its route points
// included, routes without allocating, as it does without points.
func TestTapRoutePointsDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	routes := []config.RouteConfig{
		{Name: "tagged", Filter: "sshd", Pipeline: []config.StepConfig{{Type: "set", Field: "env", Value: "prod"}}},
		{Name: "rest", Final: true},
	}
	var taps tap.Registry
	batch := make([]relaykit.Event, 64)
	for i := range batch {
		batch[i].Raw = fmt.Appendf(nil, "sshd[%d]: Accepted publickey for deploy", i)
	}
	for _, reg := range []*tap.Registry{nil, &taps} {
		rt, err := route.NewRouter(routes, nil, config.BuiltinStep, ledger.New(), reg)
		require.NoError(t, err)
		require.NoError(t, rt.Route(t.Context(), batch))
		assert.Zero(t, testing.AllocsPerRun(100, func() { _ = rt.Route(t.Context(), batch) }), "points: %v", reg != nil)
	}
	require.Equal(t, []string{"route:rest", "route:tagged"}, taps.Names())
	assert.Equal(t, tap.Stats{}, taps.Lookup("route:tagged").Stats())
}
