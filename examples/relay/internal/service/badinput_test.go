package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relaykit/relaykit/examples/relay/internal/config"
	"github.com/relaykit/relaykit/examples/relay/internal/dest"
	"github.com/relaykit/relaykit/examples/relay/internal/input"
	"github.com/relaykit/relaykit/examples/relay/internal/ledger"
	"github.com/relaykit/relaykit/examples/relay/internal/relaytest"

	"github.com/relaykit/relaykit"
	"github.com/relaykit/relaykit/engine"
	"github.com/relaykit/relaykit/storage/deadletter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadInput: oversized frames, garbage bytes, invalid UTF-8 and invalid
// JSON lines are counted (and forwarded flagged, or dead-lettered), and the
// relay keeps serving.
func TestBadInput(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	cfg.Inputs.SyslogTCP[0].MaxMessageSize = 1024
	cfg.Inputs.JSONTCP = []config.JSONInputConfig{{Name: "json", Listen: "127.0.0.1:0", MaxLineSize: 4096}}
	tr := startRelay(t, cfg)
	tcp, udp, js := tr.addr("tcp"), tr.addr("udp"), tr.addr("json")

	// An 8 MiB frame without a newline, then a good line on the same
	// connection: cut at 1024 bytes, the rest discarded.
	c, err := net.Dial("tcp", tcp)
	require.NoError(t, err)
	_, err = c.Write([]byte("<13>"))
	require.NoError(t, err)
	_, err = io.Copy(c, io.LimitReader(repeatReader('x'), 8<<20))
	require.NoError(t, err)
	_, err = c.Write([]byte("\n<13>1 - h app - - - still alive\n"))
	require.NoError(t, err)
	// Garbage and invalid UTF-8.
	_, err = c.Write([]byte("\x01\x02\x03\xff binary garbage\n<13>bad \xc3\x28 utf8\n"))
	require.NoError(t, err)
	require.NoError(t, c.Close())
	// An oversized octet-counted frame (a connection keeps the framing its
	// first frame chose, so this one starts octet-counted).
	relaytest.Send(t, "tcp", tcp, fmt.Appendf(nil, "5000 <13>%s", strings.Repeat("y", 4996)))
	relaytest.Send(t, "udp", udp, []byte("<999>bad pri"))

	// JSON lines: two valid, one invalid, one too long.
	var jb bytes.Buffer
	jb.WriteString(`{"msg":"ok one","n":1}` + "\n")
	jb.WriteString(`{"msg": not json}` + "\n")
	jb.WriteString(`{"msg":"` + strings.Repeat("z", 5000) + `"}` + "\n")
	jb.WriteString(`{"msg":"ok two"}` + "\n")
	// What lands in a dead-letter file: NUL, invalid UTF-8, BEL.
	binary := []string{"nul\x00{\"x\":1}", "latin-1 caf\xe9 \xff", "bell\a{"}
	for _, l := range binary {
		jb.WriteString(l + "\n")
	}
	relaytest.Send(t, "tcp", js, jb.Bytes())

	// 5 syslog events (huge cut, still alive, octet cut, garbage, bad
	// UTF-8) + 1 UDP + 2 valid JSON lines; 2 invalid JSON lines.
	relaytest.WaitFor(t, 10*time.Second, func() bool {
		s := tr.Ledger()
		return s.Dest["archive"].Delivered == 8 && s.Invalid == 5
	}, "bad input counted and the good events archived")

	// The relay still serves.
	relaytest.Send(t, "tcp", tcp, []byte("<13>1 - h app - - - after the storm\n"))
	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == 9 }, "event after bad input")

	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Equal(t, int64(14), s.Received, "9 events + 5 invalid JSON lines")
	assert.Equal(t, int64(2), s.Truncated)
	assert.Equal(t, int64(3), s.ParseErrors, "garbage, invalid UTF-8, bad PRI")
	assert.Equal(t, map[string]int64{ledger.DropInvalidJSON: 5}, s.Dropped)

	recs := archivedRecords(t, relaytest.ArchiveOf(cfg).Dir)
	var msgs []string
	for _, r := range recs {
		msgs = append(msgs, r.Message)
	}
	assert.Contains(t, msgs, "still alive")
	assert.Contains(t, msgs, "after the storm")
	assert.Contains(t, msgs, `{"msg":"ok one","n":1}`)
	for _, r := range recs {
		assert.LessOrEqual(t, len(r.Message), 1024)
	}

	// The invalid JSON lines are in the dead-letter file, with the reason.
	// Every line of the file is JSON (jq takes it), and gives back the
	// bytes received exactly.
	dl := archived(t, cfg.DeadLetter.Dir)
	require.Len(t, dl, 5)
	var rec struct{ Input, Reason, Line string }
	for _, l := range dl {
		require.True(t, json.Valid([]byte(l)), "dead letter is JSON: %q", l)
	}
	require.NoError(t, json.Unmarshal([]byte(dl[0]), &rec))
	assert.Equal(t, "json", rec.Input)
	assert.Equal(t, "invalid json", rec.Reason)
	assert.Equal(t, `{"msg": not json}`, rec.Line)
	require.NoError(t, json.Unmarshal([]byte(dl[1]), &rec))
	assert.Contains(t, rec.Reason, "longer than 4096")
	for i, want := range binary {
		r, err := deadletter.Parse([]byte(dl[2+i]))
		require.NoError(t, err)
		assert.Equal(t, want, string(r.Line), "dead letter %d recovers the line", i)
		assert.Equal(t, "json", r.Input)
	}
}

// TestMaxConnectionsAndIdleTimeout: at max_connections a new connection
// evicts the longest-idle one (or is refused, with refuse_when_full); an
// idle connection is closed by the relay. Each is counted.
func TestMaxConnectionsAndIdleTimeout(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		t.Run(fmt.Sprintf("refuse_when_full=%v", refuse), func(t *testing.T) {
			cfg := relaytest.TestConfig(t)
			cfg.Inputs.SyslogTCP[0].MaxConnections = 1
			cfg.Inputs.SyslogTCP[0].RefuseWhenFull = refuse
			cfg.Inputs.SyslogTCP[0].IdleTimeout = 200 * time.Millisecond
			tr := startRelay(t, cfg)
			ln := inputsOf[*input.StreamInput](tr.Relay)[0].Listener
			c1 := dialFrom(t, "127.0.0.4", tr.addr("tcp"))
			relaytest.WaitFor(t, 5*time.Second, func() bool { return ln.Stats().Open == 1 }, "first connection accepted")
			c2 := dialFrom(t, "127.0.0.5", tr.addr("tcp"))
			// The relay closes one of them at once: its read sees EOF.
			closed, kept := c1, c2
			if refuse {
				closed, kept = c2, c1
			}
			require.NoError(t, closed.SetReadDeadline(time.Now().Add(5*time.Second)))
			_, err := closed.Read(make([]byte, 1))
			assert.ErrorIs(t, err, io.EOF)
			s := ln.Stats()
			if refuse {
				assert.Equal(t, int64(1), s.RefusedFull)
				assert.Zero(t, s.Evicted)
			} else {
				assert.Equal(t, int64(1), s.Evicted)
				assert.Zero(t, s.RefusedFull)
			}
			// The idle connection left is closed after the idle timeout.
			require.NoError(t, kept.SetReadDeadline(time.Now().Add(5*time.Second)))
			_, err = kept.Read(make([]byte, 1))
			assert.ErrorIs(t, err, io.EOF)
			relaytest.WaitFor(t, 5*time.Second, func() bool { return ln.Stats().Open == 0 }, "idle connection closed")
			assert.Equal(t, int64(1), ln.Stats().CutIdle)
			assert.Equal(t, 1.0, metricValue(t, tr, "relay_input_connections_cut_total", "input", "tcp", "reason", "idle"))
		})
	}
}

// TestGracefulShutdownUnderLoad: the relay is stopped while loggen sends;
// every event the relay accepted (counted received) is archived, none is
// lost or dropped.
func TestGracefulShutdownUnderLoad(t *testing.T) {
	relaytest.NeedTool(t, "loggen")
	cfg := relaytest.TestConfig(t)
	tr := startRelay(t, cfg)
	done := make(chan string, 1)
	go func() {
		out, _ := runToolErr("loggen", "--inet", "--stream", "--active-connections", "2", "--rate", "3000", "--interval", "5", "127.0.0.1", tr.port("tcp"))
		done <- out
	}()
	relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Received > 2000 }, "load flowing")
	s := tr.stop(t)
	<-done
	checkBalanced(t, s)
	assert.Zero(t, s.DroppedTotal())
	assert.Equal(t, s.Received, s.Archived)
	lines := archived(t, relaytest.ArchiveOf(cfg).Dir)
	assert.Len(t, lines, int(s.Received), "archive holds every accepted event")
}

// TestGenerator: the synthetic input produces exactly Count events.
func TestGenerator(t *testing.T) {
	for _, shape := range config.GeneratorShapes {
		t.Run(shape, func(t *testing.T) {
			cfg := relaytest.TestConfig(t)
			cfg.Inputs.Generator = config.GeneratorConfig{Rate: 5000, Shape: shape, Count: 500}
			tr := startRelay(t, cfg)
			relaytest.WaitFor(t, 10*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == 500 }, "generated events archived")
			s := tr.stop(t)
			checkBalanced(t, s)
			assert.Equal(t, int64(500), s.Received)
			assert.Zero(t, s.ParseErrors)
			recs := archivedRecords(t, relaytest.ArchiveOf(cfg).Dir)
			require.Len(t, recs, 500)
			seqs := map[string]bool{}
			for _, r := range recs {
				seqs[r.Fields["seq"]] = true
			}
			assert.Len(t, seqs, 500)
		})
	}
}

// TestReloadRoutes swaps the route table while the relay runs (what SIGHUP
// does): events after the swap follow the new routes.
func TestReloadRoutes(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	other := filepath.Join(t.TempDir(), "errors")
	cfg.Destinations["errors"] = config.DestinationConfig{Spec: &dest.ArchiveDestination{Dir: other, Format: "raw"}}
	tr := startRelay(t, cfg)
	relaytest.Send(t, "tcp", tr.addr("tcp"), []byte("<13>1 - h a - - - error before\n"))
	relaytest.WaitFor(t, 5*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == 1 }, "first event")

	// Write a config file and reload from it, as SIGHUP does.
	routes := append([]config.RouteConfig{{Name: "errors", Filter: "(?i)error", Final: true, Destinations: []string{"errors"}}}, cfg.Routes...)
	require.NoError(t, tr.ReloadRoutes(routes))
	relaytest.Send(t, "tcp", tr.addr("tcp"), []byte("<13>1 - h a - - - ERROR after\n<13>1 - h a - - - fine after\n"))
	relaytest.WaitFor(t, 5*time.Second, func() bool {
		s := tr.Ledger()
		return s.Dest["archive"].Delivered == 2 && s.Dest["errors"].Delivered == 1
	}, "events routed by the new table")
	tr.stop(t)
	assert.Equal(t, []string{"ERROR after"}, archived(t, other))

	// A reload naming an unknown destination is refused.
	assert.ErrorContains(t, tr.ReloadRoutes([]config.RouteConfig{{Name: "x", Destinations: []string{"nope"}}}), "nope")
}

// TestPipelineSteps runs the configured steps (parse_json, mask, set,
// drop) through the router.
func TestPipelineSteps(t *testing.T) {
	cfg := relaytest.TestConfig(t)
	cfg.Inputs.JSONTCP = []config.JSONInputConfig{{Name: "json", Listen: "127.0.0.1:0"}}
	cfg.Routes = []config.RouteConfig{{
		Name: "all", Final: true, Destinations: []string{"archive"},
		Pipeline: []config.StepConfig{
			{Type: "drop", Pattern: "debug"},
			{Type: "parse_json", Prefix: "j."},
			{Type: "mask", Pattern: `\d{4}-\d{4}-\d{4}-\d{4}`, Replace: "XXXX"},
			{Type: "set", Field: "env", Value: "test"},
		},
	}}
	tr := startRelay(t, cfg)
	relaytest.Send(t, "tcp", tr.addr("json"), []byte(`{"level":"info","card":"1234-5678-9012-3456"}`+"\n"+`{"level":"debug"}`+"\n"))
	relaytest.WaitFor(t, 5*time.Second, func() bool { return tr.Ledger().Dest["archive"].Delivered == 1 }, "event archived")
	s := tr.stop(t)
	checkBalanced(t, s)
	assert.Equal(t, map[string]int64{ledger.DropFiltered: 1}, s.Dropped)
	recs := archivedRecords(t, relaytest.ArchiveOf(cfg).Dir)
	require.Len(t, recs, 1)
	assert.Equal(t, `{"level":"info","card":"XXXX"}`, recs[0].Message)
	assert.Equal(t, "info", recs[0].Fields["j.level"])
	assert.Equal(t, "test", recs[0].Fields["env"])
}

func runToolErr(name string, args ...string) (string, error) {
	out, err := execCommand(name, args...)
	return string(out), err
}

// TestReceiveTime: inputs stamp events with the receive time.
func TestReceiveTime(t *testing.T) {
	var got []relaykit.Event
	sink := sinkFunc(func(_ context.Context, b []relaykit.Event) error {
		for i := range b {
			got = append(got, b[i].Clone())
		}
		return nil
	})
	eng, err := engine.New(engine.Config{Sink: sink, Workers: 1, Clock: clk})
	require.NoError(t, err)
	l := ledger.New()
	l.Engine = eng
	st := l.Input("t", "test")
	before := time.Now().Add(-time.Second).UnixNano()
	var ev relaykit.Event
	ev.Raw = append(ev.Raw, "x"...)
	require.NoError(t, st.In.Push(t.Context(), 7, &ev))
	st.In.TryPush(3, &ev)
	require.NoError(t, eng.Shutdown(t.Context()))
	require.Len(t, got, 2)
	for _, e := range got {
		assert.GreaterOrEqual(t, e.ReceiveTime, before)
		assert.LessOrEqual(t, e.ReceiveTime, time.Now().Add(time.Second).UnixNano())
		assert.Equal(t, "x", string(e.Raw))
	}
	assert.Equal(t, int64(2), st.In.Stats().Received)
}
