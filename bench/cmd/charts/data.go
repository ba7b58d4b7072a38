package main

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// readGoBench reads go test benchmark output and returns the median of each
// benchmark's values in unit (e.g. "ns/op"), keyed by the benchmark name
// without its "Benchmark" prefix and "-GOMAXPROCS" suffix. Lines that are not
// benchmark results (goos:, PASS, notes) are ignored, as benchstat does.
func readGoBench(path, unit string) (map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	samples := map[string][]float64{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		if len(fields) < 4 || len(fields)%2 != 0 {
			return nil, fmt.Errorf("%s:%d: want name, iterations and value/unit pairs", path, n)
		}
		if _, err := strconv.ParseInt(fields[1], 10, 64); err != nil {
			return nil, fmt.Errorf("%s:%d: iterations: %w", path, n, err)
		}
		name := strings.TrimPrefix(fields[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		for i := 2; i < len(fields); i += 2 {
			if fields[i+1] != unit {
				continue
			}
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s: %w", path, n, unit, err)
			}
			samples[name] = append(samples[name], v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	med := make(map[string]float64, len(samples))
	for name, vs := range samples {
		med[name] = median(vs)
	}
	return med, nil
}

func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// table is a tab-separated file with a header line; '#' lines are comments.
type table struct {
	path     string
	header   []string
	rows     [][]string
	lines    []int    // line number of each row, for errors
	comments []string // comment lines without the leading '#', trimmed
}

func readTSV(path string, want ...string) (*table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t := &table{path: path}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			continue
		case strings.HasPrefix(line, "#"):
			t.comments = append(t.comments, strings.TrimSpace(line[1:]))
			continue
		}
		cells := strings.Split(line, "\t")
		if t.header == nil {
			t.header = cells
			for _, w := range want {
				if !slices.Contains(cells, w) {
					return nil, fmt.Errorf("%s:%d: header lacks column %q", path, n, w)
				}
			}
			continue
		}
		if len(cells) != len(t.header) {
			return nil, fmt.Errorf("%s:%d: %d cells, header has %d", path, n, len(cells), len(t.header))
		}
		t.rows = append(t.rows, cells)
		t.lines = append(t.lines, n)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if t.header == nil {
		return nil, fmt.Errorf("%s: no header line", path)
	}
	return t, nil
}

// str returns row i's cell in column col.
func (t *table) str(i int, col string) string {
	return t.rows[i][slices.Index(t.header, col)]
}

// num returns row i's cell in column col as a number.
func (t *table) num(i int, col string) (float64, error) {
	v, err := strconv.ParseFloat(t.str(i, col), 64)
	if err != nil {
		return 0, fmt.Errorf("%s:%d: column %s: %w", t.path, t.lines[i], col, err)
	}
	return v, nil
}
