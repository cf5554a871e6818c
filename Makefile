# The two commands of the README: `make demo` and `make test`.
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/perfgate/perfgate/internal/version.Version=$(VERSION)

.PHONY: build demo demo-capacity test bench fmt vet

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/perfgate ./cmd/perfgate

# perfgate in about a minute, no GPU: a baseline from the simulator, an A/A
# gate that passes, and a 30% slower engine that fails its gate (scripts/demo.sh).
demo: build
	./scripts/demo.sh

# Load sweeps and a capacity gate on the simulator, in under three minutes:
# a sweep of four rates and a capacity search as the baseline, then a 30%
# slower engine whose capacity fails its gate (scripts/demo-capacity.sh).
demo-capacity: build
	./scripts/demo-capacity.sh

# Everything CI runs: formatting, vet, every test with the race detector,
# then the timing-precision and memory tests without it (the race detector's
# instrumentation slows timing several fold and adds its own memory, so they
# skip under -race), then every fuzz target for a few seconds.
test:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...
	$(GO) test -count=1 -run 'TestRunMatchesSimulatorTruth|TestStackColdStartAndWarmUp|TestGateAgainstSimulator|TestHostileServersBoundedMemory' -v ./cmd/perfgate
	./scripts/fuzz-smoke.sh

# Benchmarks (not run in CI): the client's ceiling and the pacer.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
