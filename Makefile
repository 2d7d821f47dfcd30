# phptune: `make demo` runs the main job on the bundled demo app; `make test` runs every test; `make deb` builds
# the Debian package. Each installs what it needs first (Debian packages as root, no service left running or
# enabled; Go modules through the Go toolchain): demo only what tune needs, test the rest.
# The Go that scripts/find-go.sh finds (recursively expanded: after `deps` installed one, the next use finds it).
GO ?= $(or $(shell sh scripts/find-go.sh 2>/dev/null),/usr/lib/go-1.23/bin/go)
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
BIN := bin/phptune

.PHONY: all build deps deps-demo k6 demo deb test-deb test test-faults test-workloads test-build vet fmt-check clean

all: build

# Everything the tests and every command need (scripts/install-deps.sh lists them).
deps:
	GO=$(GO) sh scripts/install-deps.sh test

# What tune needs: nginx, php-fpm (and Go to build).
deps-demo:
	GO=$(GO) sh scripts/install-deps.sh demo

# Grafana k6 for --engine k6, built from its Go module (tools/k6 pins the version) into bin/k6.
k6:
	GO=$(GO) sh scripts/install-deps.sh k6

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/phptune

demo: deps-demo build
	sh scripts/demo.sh $(BIN)

# The Debian package, phptune_VERSION_ARCH.deb (scripts/deb.sh): apt install ./phptune_*.deb on a server.
deb:
	GO=$(GO) sh scripts/deb.sh

# The package installed into a fresh Debian bookworm root (debootstrap; as root, several minutes, not part of
# `make test`): make demo's install and apt install of the .deb, then tune --budget 1m from it, nothing left running.
test-deb: deb
	sh scripts/test-install.sh phptune_*.deb

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l cmd internal workloads php); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Tests that measure must not run beside each other on 2 cores: -p 1.
test: deps k6 fmt-check vet
	# The CLI tests build the binary with the go on PATH: make it the one this Makefile uses.
	PATH="$(dir $(GO)):$$PATH" $(GO) test -p 1 -count=1 -timeout 25m ./...

# The slow part of the fault suite: workers killed during a run, and a soak of ten runs (about 8 minutes).
test-faults: deps
	GO=$(GO) sh bench/faults.sh

# One real lean baseline + PGO build of Debian's php8.2 source, end to end (10-30 minutes on 2 cores), then tune
# --build pgo racing it: not part of `make test`. Builds land in the build cache, so a second run is quick;
# PHPTUNE_BUILD_CACHE=DIR builds afresh in DIR (the tune uses the default cache).
test-build: deps
	$(GO) test -tags realbuild -count=1 -timeout 90m -v -run TestRealBuild ./internal/phpbuild
	PATH="$(dir $(GO)):$$PATH" $(GO) test -tags realbuild -count=1 -timeout 60m -v -run TestTuneBuildPGO ./cmd/phptune

clean:
	rm -rf bin

# Every workload preset end to end (prepare installs their Debian packages; about 10 minutes). Not part of
# `make test`, which covers demo and dokuwiki.
test-workloads: deps build
	PATH="$(dir $(GO)):$$PATH" $(GO) test -p 1 -count=1 -tags workloads -timeout 60m -v -run 'Workload|Writable|Prepare|Lookup|Open' ./internal/workload ./internal/stack ./cmd/phptune
