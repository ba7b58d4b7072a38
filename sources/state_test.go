package sources_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/relaykit/relaykit/clock"
	"github.com/relaykit/relaykit/sources"
)

// TestRestart: a source that stopped before the relay went down is
// reported silent after the restart, SilentAfter after the start, with
// its true last seen; a source that reconnects is not; a source already
// silent before the restart stays silent without a second report, and is
// reported active when it sends.
func TestRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		state := filepath.Join(t.TempDir(), "sources.state")
		cfg := sources.Config{Clock: clock.New(0), StateFile: state, Policy: sources.Policy{SilentAfter: 10 * time.Second}}
		stopped, steady, dead := addr("127.0.0.2"), addr("127.0.0.3"), addr("127.0.0.4")

		// First run: dead stops at once (silent at 11 s), stopped at 30 s.
		var rec1 recorder
		cfg.Hooks.OnTransition = rec1.hook
		tr1 := newTracker(t, cfg)
		start := time.Now()
		stop := startRun(t, tr1)
		tr1.ObserveAddr(dead, 5, 50)
		for s := range 35 {
			sleepUntil(start, time.Duration(s)*time.Second+100*time.Millisecond)
			if s <= 30 {
				tr1.ObserveAddr(stopped, 1, 10)
			}
			tr1.ObserveAddr(steady, 1, 10)
		}
		stop() // at 34.1 s, before stopped is silent; saves the state
		trs := rec1.take()
		require.Len(t, trs, 1)
		assert.Equal(t, sources.AddrKey(dead), trs[0].Key)

		// Down for a minute.
		sleepUntil(start, 95*time.Second)

		var rec2 recorder
		cfg.Hooks.OnTransition = rec2.hook
		tr2 := newTracker(t, cfg)
		n, err := tr2.Load(state)
		require.NoError(t, err)
		assert.Equal(t, 3, n)
		s := source(t, tr2, sources.AddrKey(stopped))
		assert.Equal(t, uint64(31), s.Events, "counts restored")
		assert.Equal(t, start.Add(30*time.Second+100*time.Millisecond).UTC(), s.LastSeen)
		assert.Equal(t, start.UTC(), s.FirstSeen.Add(-100*time.Millisecond))
		assert.Equal(t, sources.StateSilent, source(t, tr2, sources.AddrKey(dead)).State, "restored silent")

		restart := time.Now()
		stop = startRun(t, tr2)
		defer stop()
		for s := range 15 {
			sleepUntil(restart, time.Duration(s)*time.Second+200*time.Millisecond)
			tr2.ObserveAddr(steady, 1, 10) // reconnected
		}
		trs = rec2.take()
		require.Len(t, trs, 1, "only the source that stopped, not the one silent before, nor the one back")
		tr := trs[0]
		assert.Equal(t, sources.AddrKey(stopped), tr.Key)
		assert.Equal(t, sources.StateSilent, tr.State)
		assert.Equal(t, start.Add(30*time.Second+100*time.Millisecond).UTC(), tr.LastSeen)
		assert.Equal(t, restart.Add(11*time.Second).UTC(), tr.At, "SilentAfter after the restart, at the tick after")
		assert.Equal(t, tr.At.Sub(tr.LastSeen), tr.SilentFor, "the whole silence, downtime included")
		assert.Equal(t, uint64(31), tr.EventsBefore)

		tr2.ObserveAddr(dead, 1, 1)
		sleepUntil(restart, 16*time.Second)
		trs = rec2.take()
		require.Len(t, trs, 1)
		assert.Equal(t, sources.AddrKey(dead), trs[0].Key)
		assert.Equal(t, sources.StateActive, trs[0].State)
		assert.Equal(t, start.UTC(), trs[0].LastSeen)
		assert.Equal(t, uint64(5), trs[0].EventsBefore)
	})
}

func TestSaveLoadRoundTrip(t *testing.T) {
	clk := newManualClock()
	tr := newTracker(t, sources.Config{Clock: clk.c})
	hosts := []string{"plain", "with space", "quote\"and\\backslash", "new\nline", "", "\xff\xfe bytes", "ünïcode"}
	for i, h := range hosts {
		clk.Advance(time.Second)
		tr.ObserveHost([]byte(h), i+1, 10*(i+1))
	}
	tr.ObserveAddr(addr("2001:db8::1"), 7, 70)
	tr.ObserveAddr(addr("fe80::1%eth0"), 8, 80)
	tr.Addr(addr("192.0.2.99")) // a Handle, no event: not saved
	path := filepath.Join(t.TempDir(), "state")
	require.NoError(t, tr.Save(path))

	tr2 := newTracker(t, sources.Config{Clock: clk.c})
	n, err := tr2.Load(path)
	require.NoError(t, err)
	assert.Equal(t, len(hosts)+2, n)
	want := tr.Sources(nil, sources.Query{State: sources.StateActive})
	got := tr2.Sources(nil, sources.Query{})
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i].Key, got[i].Key)
		assert.Equal(t, want[i].Events, got[i].Events)
		assert.Equal(t, want[i].Bytes, got[i].Bytes)
		assert.Equal(t, want[i].FirstSeen, got[i].FirstSeen)
		assert.Equal(t, want[i].LastSeen, got[i].LastSeen)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left")

	// Load keeps the most recent keys when the table is too small.
	small := newTracker(t, sources.Config{Clock: clk.c, MaxSources: 2})
	n, err = small.Load(path)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.Zero(t, small.Stats().Evictions)
}

// TestLoadErrors: a missing or damaged file is an error that loads
// nothing.
func TestLoadErrors(t *testing.T) {
	clk := newManualClock()
	tr := newTracker(t, sources.Config{Clock: clk.c})
	for i := range 5 {
		tr.ObserveAddr(addrN(i), 1, 1)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	require.NoError(t, tr.Save(good))
	data, err := os.ReadFile(good)
	require.NoError(t, err)

	fresh := func() *sources.Tracker { return newTracker(t, sources.Config{Clock: clk.c}) }
	_, err = fresh().Load(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, fs.ErrNotExist)

	flipped := append([]byte(nil), data...)
	flipped[len(stateHeader)+3] ^= 1
	damaged := map[string][]byte{
		"truncated":   data[:len(data)-10],
		"cut at line": data[:len(data)/2],
		"bit flip":    flipped,
		"empty":       nil,
		"foreign":     []byte("{\"json\": true}\n"),
		"no trailer":  data[:len(stateHeader)],
	}
	for name, b := range damaged {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			require.NoError(t, os.WriteFile(p, b, 0o600))
			f := fresh()
			n, err := f.Load(p)
			assert.ErrorIs(t, err, sources.ErrCorrupt)
			assert.Zero(t, n)
			assert.Zero(t, f.Stats().Keys, "nothing loaded")
		})
	}

	started := fresh()
	started.Tick()
	_, err = started.Load(good)
	assert.ErrorIs(t, err, sources.ErrRunning)
}

const stateHeader = "relaykit-sources 1\n"

// TestRunSaves: Run saves the state file periodically and when it
// returns, and reports a failed save to the hook.
func TestRunSaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "state")
		tr := newTracker(t, sources.Config{Clock: clock.New(0), StateFile: path, SaveInterval: 10 * time.Second})
		start := time.Now()
		stop := startRun(t, tr)
		tr.ObserveAddr(addrN(1), 1, 1)
		sleepUntil(start, 9*time.Second)
		_, err := os.Stat(path)
		assert.ErrorIs(t, err, fs.ErrNotExist)
		sleepUntil(start, 10*time.Second)
		_, err = os.Stat(path)
		require.NoError(t, err)
		tr.ObserveAddr(addrN(2), 1, 1)
		stop()
		n, err := newTracker(t, sources.Config{Clock: clock.New(0)}).Load(path)
		require.NoError(t, err)
		assert.Equal(t, 2, n, "saved at Run's end")

		var saveErrs []error
		bad := newTracker(t, sources.Config{Clock: clock.New(0), StateFile: filepath.Join(dir, "no", "such", "dir", "state"),
			SaveInterval: time.Second, Hooks: sources.Hooks{OnSaveError: func(err error) { saveErrs = append(saveErrs, err) }}})
		ctx, cancel := newRunCtx(t)
		done := make(chan error, 1)
		go func() { done <- bad.Run(ctx) }()
		sleepUntil(time.Now(), 1500*time.Millisecond)
		cancel()
		assert.Error(t, <-done, "the final save failed")
		assert.Len(t, saveErrs, 2)
	})
}
