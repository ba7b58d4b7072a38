// Command vulndbindex turns a folder of OSV entries, such as data/osv of
// the golang.org/x/vulndb module, into a Go vulnerability database that
// govulncheck reads with -db file:///path (the v1 layout of
// https://go.dev/doc/security/vuln/database: index/db.json,
// index/modules.json, index/vulns.json, ID/<id>.json). It lets CI check
// for vulnerabilities without the network, against a database pinned in
// the Makefile.
//
// The modules index leaves out each vulnerability's optional "fixed"
// version, a shortcut that lets a client skip an entry: govulncheck then
// reads every entry of the modules it checks and decides from their
// ranges, which is exact.
//
//	go run ./internal/tools/vulndbindex -vulns "$(go env GOMODCACHE)/golang.org/x/vulndb@v…/data/osv" -out /tmp/vulndb
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

type entry struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases,omitempty"`
	Affected []struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
	} `json:"affected"`
}

type moduleVuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
}

type module struct {
	Path  string       `json:"path"`
	Vulns []moduleVuln `json:"vulns"`
}

type vuln struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases,omitempty"`
}

func main() {
	vulns := flag.String("vulns", "", "folder of OSV JSON entries (GO-YYYY-NNNN.json)")
	out := flag.String("out", "", "folder to write the database to (created)")
	flag.Parse()
	if *vulns == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: vulndbindex -vulns DIR -out DIR")
		os.Exit(2)
	}
	if err := run(*vulns, *out); err != nil {
		fmt.Fprintln(os.Stderr, "vulndbindex:", err)
		os.Exit(1)
	}
}

func run(src, out string) error {
	files, err := filepath.Glob(filepath.Join(src, "*.json"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no OSV entries in %s", src)
	}
	if err := os.MkdirAll(filepath.Join(out, "ID"), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(out, "index"), 0o755); err != nil {
		return err
	}
	mods := map[string]*module{}
	var all []vuln
	var newest time.Time
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var e entry
		if err := json.Unmarshal(b, &e); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if e.ID == "" || e.ID+".json" != filepath.Base(f) {
			return fmt.Errorf("%s: id %q does not match the file name", f, e.ID)
		}
		if err := os.WriteFile(filepath.Join(out, "ID", e.ID+".json"), b, 0o644); err != nil {
			return err
		}
		all = append(all, vuln{ID: e.ID, Modified: e.Modified, Aliases: e.Aliases})
		if e.Modified.After(newest) {
			newest = e.Modified
		}
		seen := map[string]bool{}
		for _, a := range e.Affected {
			p := a.Package.Name
			if p == "" || seen[p] {
				continue
			}
			seen[p] = true
			m := mods[p]
			if m == nil {
				m = &module{Path: p}
				mods[p] = m
			}
			m.Vulns = append(m.Vulns, moduleVuln{ID: e.ID, Modified: e.Modified})
		}
	}
	list := make([]*module, 0, len(mods))
	for _, m := range mods {
		list = append(list, m)
	}
	slices.SortFunc(list, func(a, b *module) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(all, func(a, b vuln) int { return strings.Compare(a.ID, b.ID) })
	for name, v := range map[string]any{"db.json": map[string]time.Time{"modified": newest}, "modules.json": list, "vulns.json": all} {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, "index", name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
