# The two commands of the README: `make demo` and `make test`.
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/perfgate/perfgate/internal/version.Version=$(VERSION)

.PHONY: build demo demo-capacity demo-history test test-apiserver bench fmt vet lint-workflows check-release

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

# A month of nightly records on the simulator, 15% slower from night 16:
# the alert fires on night 18 (the third slow night) and on no other, and
# the month becomes a history site (scripts/demo-history.sh).
demo-history: build
	./scripts/demo-history.sh

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
	$(MAKE) --no-print-directory lint-workflows

# The kubernetes stack against a real kube-apiserver and etcd (no nodes:
# the test plays the controllers and the kubelet). scripts/control-plane.sh
# builds them once per machine into a cache directory (minutes the first
# time), so this is not part of `make test`: ci.yml runs it as a job of
# its own, with that directory cached.
test-apiserver:
	PERFGATE_CONTROL_PLANE=$$(./scripts/control-plane.sh) $(GO) test -count=1 -run AgainstAPIServer -v ./internal/kube/ ./internal/stack/ ./cmd/perfgate/

# Benchmarks (not run in CI): the client's ceiling and the pacer.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# actionlint (pinned in tools/actionlint/go.mod, a module of its own) on every
# workflow: this repository's and the examples'. The self-hosted runner labels
# the examples use are declared in .github/actionlint.yaml. shellcheck is off
# by default so that every machine lints alike; ACTIONLINT_SHELLCHECK=shellcheck
# turns it on (ci.yml's release job does).
ACTIONLINT_SHELLCHECK ?=
lint-workflows:
	$(GO) build -C tools/actionlint -o $(CURDIR)/bin/actionlint github.com/rhysd/actionlint/cmd/actionlint
	./bin/actionlint -shellcheck=$(ACTIONLINT_SHELLCHECK) -pyflakes= .github/workflows/*.yml examples/workflows/*.yml

# The release config: GoReleaser's own check of .goreleaser.yaml, then a
# snapshot release without the network (the four binaries, archives and
# checksums into dist/; no image, SBOM or upload: RELEASE_SKIP=publish, as
# ci.yml's release job says, builds the images and SBOMs too, with docker
# buildx and syft). GoReleaser is pinned in tools/goreleaser/go.mod; building
# it from a cold module cache takes minutes, so this is not part of `make
# test`: ci.yml runs it as a job of its own.
RELEASE_SKIP ?= docker,sbom,publish
check-release:
	$(GO) build -C tools/goreleaser -o $(CURDIR)/bin/goreleaser github.com/goreleaser/goreleaser/v2
	./bin/goreleaser check
	./bin/goreleaser release --snapshot --clean --skip=$(RELEASE_SKIP)
	./dist/perfgate_$$($(GO) env GOOS)_$$($(GO) env GOARCH)_*/perfgate version
