package relaykit_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noRacePass is the -run pattern of CI's pass without the race detector
// (the Makefile's NORACE_RUN): it runs only the tests with a part the race
// detector cannot run (allocation counts, loads and heap sizes it
// distorts), since every test already ran in the race pass.
var noRacePass = regexp.MustCompile(`NoRace|Alloc`)

// TestRaceSplitNames keeps that split honest: every test that consults the
// race detector (raceEnabled) or lives in a file built only without it is
// named so that the pass without the race detector runs it. A test named
// otherwise would have its no-race part run nowhere. The bench module
// runs whole in that pass and is not checked.
func TestRaceSplitNames(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == "bench" || (path != "." && strings.HasPrefix(d.Name(), ".")) || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		noRaceFile := false
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if strings.HasPrefix(c.Text, "//go:build") && strings.Contains(c.Text, "!race") {
					noRaceFile = true
				}
			}
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Body == nil {
				continue
			}
			consults := noRaceFile
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && id.Name == "raceEnabled" {
					consults = true
				}
				return !consults
			})
			if consults {
				checked++
				assert.Regexp(t, noRacePass, fn.Name.Name, "%s: %s has a part that runs only without the race detector: name it ...NoRace or ...Alloc(s) so that CI's pass without -race runs it", path, fn.Name.Name)
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, checked, 20, "the walk found the tests that consult the race detector")
}
