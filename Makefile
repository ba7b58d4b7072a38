# Each target is a plain go command looped over the modules, so any
# line can be run by hand without make.
MODULES := . bench examples examples/azuresdk examples/kafkatest examples/otlptest
# The race pass skips bench: its tests check the harness of benchmarks
# against peer libraries, not concurrent code of ours, and building the
# peers with -race took longer than the rest of the library's race pass.
RACE_MODULES := $(filter-out bench,$(MODULES))
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.7.0
GOVULNCHECK := golang.org/x/vuln/cmd/govulncheck@v1.9.0
# The Go vulnerability database, pinned: the golang.org/x/vulndb module's
# OSV entries (from the module proxy, like any module), indexed for
# govulncheck -db file:// by internal/tools/vulndbindex. Move the version
# forward to check against newer advisories.
VULNDB := golang.org/x/vulndb@v0.0.0-20261105234957-e22db6528018

# The Go toolchain CI builds and tests with: the newest patch release of
# the 1.26 line, fetched by the go command from the module proxy
# (GOTOOLCHAIN), so the standard library carries the security fixes that
# govulncheck checks for. go.mod's go line (1.26.0) is the minimum.
export GOTOOLCHAIN ?= go1.26.11

.PHONY: modules toolchain test test-race test-norace check-mod bench lint vuln cover run tidy

# modules prints the list, for .ci/run (one list of modules).
modules:
	@echo $(MODULES)

# toolchain prints the Go toolchain CI uses, for .ci/run.
toolchain:
	@echo $(GOTOOLCHAIN)

# What CI runs: formatting and module hygiene, vet, staticcheck, govulncheck,
# the whole suite under the race detector, then a pass without it. Every
# test runs in the race pass; the second pass runs what the race detector
# cannot (NORACE_RUN: tests named ...NoRace or ...Alloc(s), whose
# allocation counts, loads or heap sizes it distorts; TestRaceSplitNames in
# the root package fails a test that consults the race detector under any
# other name), the bench module whole, and a one-iteration run of every
# benchmark. -parallel 4: the tests marked parallel mostly wait out
# deadlines and kills (the relay's), so four of them share two cores.
# Each stage prints how long it took.
test:
	@for t in check-mod lint vuln test-race test-norace; do s=$$(date +%s); \
		$(MAKE) --no-print-directory $$t || exit 1; echo "== make $$t: $$(( $$(date +%s) - s )) s"; done

NORACE_RUN := NoRace|Alloc

check-mod:
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@for m in $(MODULES); do (cd $$m && go mod verify >/dev/null && go mod tidy -diff && go vet ./...) || { echo "== $$m: module check failed"; exit 1; }; done

test-race:
	@for m in $(RACE_MODULES); do echo "== $$m (race)"; (cd $$m && go test -race -parallel 4 ./...) || exit 1; done

test-norace:
	@for m in $(RACE_MODULES); do echo "== $$m (no race: $(NORACE_RUN); benchmarks once)"; \
		(cd $$m && go test -count 1 -run '$(NORACE_RUN)' ./... && go test -short -count 1 -run '^$$' -bench . -benchtime 1x ./...) || exit 1; done
	@echo "== bench (no race, short, benchmarks once)"; cd bench && go test -short -count 1 -bench . -benchtime 1x ./...

bench:
	@for m in $(MODULES); do (cd $$m && go test -run '^$$' -bench . -benchmem -cpu 2 -count 10 ./...) || exit 1; done

lint:
	@for m in $(MODULES); do (cd $$m && go run $(STATICCHECK) ./...) || { echo "== $$m: staticcheck failed"; exit 1; }; done

# govulncheck against the pinned database, built once per version in the
# module cache's directory (no network but the module proxy): a
# vulnerability that the code reaches fails the run.
vuln:
	@set -e; db="$$(go env GOMODCACHE)/cache/relaykit-vulndb/$(subst /,_,$(VULNDB))"; \
	if [ ! -f "$$db/index/modules.json" ]; then \
		src=$$(go mod download -json $(VULNDB) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
		rm -rf "$$db.tmp"; go run ./internal/tools/vulndbindex -vulns "$$src/data/osv" -out "$$db.tmp"; \
		rm -rf "$$db"; mkdir -p "$$(dirname "$$db")"; mv "$$db.tmp" "$$db"; fi; \
	for m in $(MODULES); do \
		(cd $$m && go run $(GOVULNCHECK) -db "file://$$db" ./...) || { echo "== $$m: govulncheck found vulnerabilities (database $(VULNDB))"; exit 1; }; \
		echo "== $$m: govulncheck: no vulnerabilities (database $(VULNDB))"; \
	done

cover:
	@for m in $(MODULES); do (cd $$m && go test -race -coverprofile=cover.out ./... && go tool cover -func=cover.out | tail -1) || exit 1; done

tidy:
	@for m in $(MODULES); do (cd $$m && go mod tidy) || exit 1; done

run:
	go -C examples run ./relay
