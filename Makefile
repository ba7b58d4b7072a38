# Each target is a plain go command looped over the three modules, so any
# line can be run by hand without make.
MODULES := . bench examples
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.7.0

.PHONY: test bench lint cover run tidy

test:
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	cd bench && go test -run '^$$' -bench . -benchtime 1x ./... >/dev/null
	@for m in $(MODULES); do echo "== $$m"; (cd $$m && go vet ./... && go test -race ./...) || exit 1; done

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
