package parse_test

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// readLines returns the lines of a file in testdata, one sample each.
func readLines(t testing.TB, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	require.NoError(t, sc.Err())
	return lines
}

// line returns line n (from 1) of a file in testdata.
func line(t testing.TB, name string, n int) string {
	t.Helper()
	lines := readLines(t, name)
	require.LessOrEqual(t, n, len(lines), name)
	return lines[n-1]
}
