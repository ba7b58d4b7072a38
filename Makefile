# Each target is a plain go command looped over the modules, so any
# line can be run by hand without make.
MODULES := . bench examples examples/azuresdk examples/kafkatest examples/otlptest
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.7.0

.PHONY: test test-race test-norace check-mod bench lint cover run tidy

# What CI runs: formatting and module hygiene, vet, the whole suite under the
# race detector, then the suite again without it (-short), which is where the
# allocation assertions (testing.AllocsPerRun is meaningless under -race) and
# a one-iteration run of every benchmark take place.
test: check-mod test-race test-norace

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
	@for m in $(MODULES); do (cd $$m && go run $(STATICCHECK) ./...) || exit 1; done

cover:
	@for m in $(MODULES); do (cd $$m && go test -race -coverprofile=cover.out ./... && go tool cover -func=cover.out | tail -1) || exit 1; done

tidy:
	@for m in $(MODULES); do (cd $$m && go mod tidy) || exit 1; done

run:
	go -C examples run ./relay
