# Each target is a plain go command looped over the modules, so any
# line can be run by hand without make.
MODULES := . bench examples examples/azuresdk examples/kafkatest examples/otlptest
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.7.0
GOVULNCHECK := golang.org/x/vuln/cmd/govulncheck@v1.9.0

.PHONY: modules test test-race test-norace check-mod bench lint vuln cover run tidy

# modules prints the list, for .ci/run (one list of modules).
modules:
	@echo $(MODULES)

# What CI runs: formatting and module hygiene, vet, staticcheck, govulncheck,
# the whole suite under the race detector, then the suite again without it
# (-short), which is where the allocation assertions (testing.AllocsPerRun is
# meaningless under -race) and a one-iteration run of every benchmark take
# place.
test: check-mod lint vuln test-race test-norace

check-mod:
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@for m in $(MODULES); do (cd $$m && go mod verify >/dev/null && go mod tidy -diff && go vet ./...) || { echo "== $$m: module check failed"; exit 1; }; done

test-race:
	@for m in $(MODULES); do echo "== $$m (race)"; (cd $$m && go test -race ./...) || exit 1; done

test-norace:
	@for m in $(MODULES); do echo "== $$m (no race, short, benchmarks once)"; (cd $$m && go test -short -count 1 -bench . -benchtime 1x ./...) || exit 1; done

bench:
	@for m in $(MODULES); do (cd $$m && go test -run '^$$' -bench . -benchmem -cpu 2 -count 10 ./...) || exit 1; done

lint:
	@for m in $(MODULES); do (cd $$m && go run $(STATICCHECK) ./...) || { echo "== $$m: staticcheck failed"; exit 1; }; done

# govulncheck needs its vulnerability database, which it fetches over the
# network: where the database cannot be reached, the check says so and is
# not counted as passed or failed; any other failure (a vulnerability
# found) fails.
vuln:
	@for m in $(MODULES); do \
		out=$$(cd $$m && go run $(GOVULNCHECK) ./... 2>&1); rc=$$?; \
		if [ $$rc -ne 0 ] && printf '%s' "$$out" | grep -q 'fetching vulnerabilities'; then \
			echo "== $$m: govulncheck NOT RUN: its vulnerability database is unreachable from this machine"; continue; fi; \
		if [ $$rc -ne 0 ]; then printf '%s\n' "$$out"; echo "== $$m: govulncheck failed"; exit 1; fi; \
		echo "== $$m: govulncheck: no vulnerabilities"; \
	done

cover:
	@for m in $(MODULES); do (cd $$m && go test -race -coverprofile=cover.out ./... && go tool cover -func=cover.out | tail -1) || exit 1; done

tidy:
	@for m in $(MODULES); do (cd $$m && go mod tidy) || exit 1; done

run:
	go -C examples run ./relay
