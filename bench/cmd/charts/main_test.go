package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCommittedCharts draws the charts from the committed results and checks
// that they are the committed SVGs, so neither the data, the program nor the
// charts can drift apart: after changing any of them, run go run ./cmd/charts
// from the bench module and commit what it writes.
func TestCommittedCharts(t *testing.T) {
	out := t.TempDir()
	var log bytes.Buffer
	require.NoError(t, run("../../results", out, &log))

	written, err := filepath.Glob(filepath.Join(out, "*.svg"))
	require.NoError(t, err)
	committed, err := filepath.Glob("../../charts/*.svg")
	require.NoError(t, err)
	require.NotEmpty(t, written)
	names := func(paths []string) []string {
		var ns []string
		for _, p := range paths {
			ns = append(ns, filepath.Base(p))
		}
		return ns
	}
	assert.Equal(t, names(committed), names(written), "charts written vs committed in bench/charts")
	for _, w := range written {
		got, err := os.ReadFile(w)
		require.NoError(t, err)
		want, err := os.ReadFile(filepath.Join("../../charts", filepath.Base(w)))
		if assert.NoError(t, err) {
			assert.True(t, bytes.Equal(want, got), "bench/charts/%s is stale: run go run ./cmd/charts in bench", filepath.Base(w))
		}
		assert.Contains(t, string(got), "<svg")
	}
	// ring.txt and relay.tsv are committed; every chart drawn was logged.
	assert.Contains(t, log.String(), "wrote "+filepath.Join(out, "ring.svg"))
	assert.Contains(t, log.String(), "wrote "+filepath.Join(out, "relay.svg"))
}

func TestOutageTimeline(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantErr string // "" for success
		want    []string
	}{
		{
			name: "with outage window",
			data: "# outage: 10 40\nt_s\tin\tdelivered\tspool_backlog\n" +
				"0\t0\t0\t0\n10\t50000\t50000\t0\n40\t200000\t50000\t150000\n70\t350000\t350000\t0\n",
			want: []string{"destination down", "spool backlog (events)", "delivered (cumulative)"},
		},
		{
			name: "without outage window, extra column",
			data: "t_s\tin\tdelivered\tspool_backlog\tnote\n0\t0\t0\t0\tstart\n5\t1000\t900\t100\t\n",
			want: []string{"events in (cumulative)"},
		},
		{
			name:    "missing column",
			data:    "t_s\tin\tdelivered\n0\t0\t0\n",
			wantErr: `header lacks column "spool_backlog"`,
		},
		{
			name:    "not a number",
			data:    "t_s\tin\tdelivered\tspool_backlog\n0\tmany\t0\t0\n",
			wantErr: "outage-timeline.tsv:2: column in",
		},
		{
			name:    "short row",
			data:    "t_s\tin\tdelivered\tspool_backlog\n0\t0\t0\n",
			wantErr: "outage-timeline.tsv:2: 3 cells, header has 4",
		},
		{
			name:    "bad outage window",
			data:    "# outage: 40 10\nt_s\tin\tdelivered\tspool_backlog\n0\t0\t0\t0\n",
			wantErr: `want "# outage: FROM TO"`,
		},
		{
			name:    "no rows",
			data:    "t_s\tin\tdelivered\tspool_backlog\n",
			wantErr: "no rows",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			results, out := t.TempDir(), t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(results, "outage-timeline.tsv"), []byte(tt.data), 0o644))
			var log bytes.Buffer
			err := run(results, out, &log)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			svg, err := os.ReadFile(filepath.Join(out, "outage.svg"))
			require.NoError(t, err)
			for _, w := range tt.want {
				assert.Contains(t, string(svg), w)
			}
			// The other inputs are absent here: skipped, not an error.
			assert.Contains(t, log.String(), "skip ring.svg")
			assert.Contains(t, log.String(), "skip relay.svg")
			assert.NoFileExists(t, filepath.Join(out, "ring.svg"))
		})
	}
}

func TestReadGoBench(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "bench.txt")
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
		return p
	}
	t.Run("median per benchmark", func(t *testing.T) {
		p := write(strings.Join([]string{
			"goos: linux",
			"BenchmarkRingSPSC/impl=ring-2  1000  30 ns/op  0 B/op  0 allocs/op  1e-04 cparks/item",
			"BenchmarkRingSPSC/impl=ring-2  1000  10 ns/op  0 B/op  0 allocs/op  1e-04 cparks/item",
			"BenchmarkRingSPSC/impl=ring-2  1000  20 ns/op  0 B/op  0 allocs/op  1e-04 cparks/item",
			"BenchmarkRingMPSC/producers=2/impl=ring-batch-2  500  7 ns/op",
			"BenchmarkRingMPSC/producers=2/impl=ring-batch-2  500  9 ns/op",
			"BenchmarkRingMPSC/producers=2/impl=ring-batch  500  100 ns/op", // -cpu 1: no suffix
			"PASS",
			"ok  \tgithub.com/relaykit/relaykit/bench\t12.3s",
		}, "\n"))
		got, err := readGoBench(p, "ns/op")
		require.NoError(t, err)
		assert.Equal(t, 20.0, got["RingSPSC/impl=ring"])
		// "ring-batch-2" and "ring-batch" (no GOMAXPROCS suffix) are one
		// benchmark: samples 7, 9, 100 have median 9.
		assert.Equal(t, 9.0, got["RingMPSC/producers=2/impl=ring-batch"])
		assert.Len(t, got, 2)
	})
	for name, line := range map[string]string{
		"odd fields":     "BenchmarkX-2 100 5 ns/op 3",
		"bad iterations": "BenchmarkX-2 many 5 ns/op",
		"bad value":      "BenchmarkX-2 100 fast ns/op",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := readGoBench(write("goos: linux\n"+line+"\n"), "ns/op")
			require.Error(t, err)
			assert.Contains(t, err.Error(), "bench.txt:2:")
		})
	}
}

func TestParseRingName(t *testing.T) {
	tests := []struct {
		name      string
		producers int
		impl      string
		ok        bool
	}{
		{"RingSPSC/impl=chan", 0, "chan", true},
		{"RingMPSC/producers=8/impl=ring-batch", 8, "ring-batch", true},
		{"RingMPSC/producers=x/impl=ring", 0, "ring", false},
		{"RingMPSC/impl=ring", 0, "", false},
		{"Batch/adders=1/impl=collector", 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, impl, ok := parseRingName(tt.name)
			assert.Equal(t, tt.ok, ok)
			if tt.ok {
				assert.Equal(t, tt.producers, p)
				assert.Equal(t, tt.impl, impl)
			}
		})
	}
}
