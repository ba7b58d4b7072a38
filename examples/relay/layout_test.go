package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rooms are the relay's packages by floor: a package imports only
// packages of a lower floor (README, "Layout"). metrics is the floor
// under all (Prometheus tables); config, ledger and api import no other
// relay package but it; input, dest and route import those; configtest
// and service are built from the floor below; cli and main sit on top.
// relaytest is the tests' helpers, imported by tests only.
var rooms = map[string]int{
	"internal/metrics":    0,
	"internal/config":     1,
	"internal/ledger":     1,
	"internal/api":        1,
	"internal/input":      2,
	"internal/dest":       2,
	"internal/route":      2,
	"internal/relaytest":  3,
	"internal/configtest": 3,
	"internal/service":    3,
	"internal/cli":        4,
	"":                    5, // package main
}

const module = "github.com/relaykit/relaykit/examples/relay"

// TestLayout: every relay package is a room of the layout, imports only
// rooms below its own (go list), and stays small: package main a page
// (at most 150 lines), no package over 2,500 lines and no file over 400
// (non-test lines).
func TestLayout(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").CombinedOutput()
	require.NoError(t, err, "%s", out)
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	seen := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(strings.TrimPrefix(f[0], module), "/")
		floor, ok := rooms[pkg]
		require.True(t, ok, "package %s is not a room of the layout (rooms in layout_test.go, README \"Layout\")", f[0])
		seen++
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, module+"/")
			assert.Less(t, rooms[dep], floor, "%s imports %s, a room on its own floor or above", f[0], imp)
			assert.NotEqual(t, "internal/relaytest", dep, "%s imports the tests' helpers", f[0])
		}
	}
	assert.Equal(t, len(rooms), seen, "every room is a package")

	// The serving rooms link no test machinery: relay test's (httptest,
	// pipelinetest) stays in configtest, which only the CLI imports.
	for _, room := range []string{"internal/service", "internal/input", "internal/dest", "internal/route", "internal/ledger", "internal/api", "internal/config"} {
		out, err := exec.Command("go", "list", "-deps", "./"+room).CombinedOutput()
		require.NoError(t, err, "%s", out)
		for _, dep := range strings.Fields(string(out)) {
			assert.NotContains(t, []string{"net/http/httptest", "github.com/relaykit/relaykit/pipeline/pipelinetest", "testing"}, dep,
				"%s links %s", room, dep)
		}
	}

	// Sizes, in lines of non-test Go files.
	perPackage := map[string]int{}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	more, err := filepath.Glob("internal/*/*.go")
	require.NoError(t, err)
	for _, f := range append(files, more...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		n := strings.Count(string(b), "\n")
		assert.LessOrEqual(t, n, 400, "%s: %d lines", f, n)
		perPackage[filepath.Dir(f)] += n
	}
	assert.LessOrEqual(t, perPackage["."], 150, "package main")
	for p, n := range perPackage {
		assert.LessOrEqual(t, n, 2500, "%s: %d lines", p, n)
	}
}
