# fleetform — every entry point. CI runs `make test` through .ci/run.

# Go 1.27.3 builds, tests and lints fleetform: the go command fetches it through the module
# proxy on first use (GOTOOLCHAIN=local machines ignore a toolchain line in go.mod). Go 1.26.8's
# standard library has known vulnerabilities (make vulncheck). `make GOTOOLCHAIN=local ...`
# uses the installed Go instead.
export GOTOOLCHAIN ?= go1.27.3
GO        ?= go
BIN       := bin/fleetform
DEV_BIN   := bin/fleetform-dev
PKGS      := ./...
# VERSION is stamped into the binary (fleetform version, --version): the git description of
# the checkout (a tag, or the commit; "-dirty" with uncommitted changes).
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X github.com/fleetform/fleetform/internal/cli.version=$(VERSION)
FUZZTIME  ?= 10s
FUZZMINIMIZETIME ?= 2s

.PHONY: all build build-dev quickstart demo demo-check screenshots test unit fuzz-smoke fuzz-long lint vulncheck bench bench-e2e bench-sim bench-million bench-million-apply bench-million-hub bench-hub-requests fmt verify clean

all: build

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/fleetform

## build-dev: fleetform-dev, the developers' tools (synthetic fleets, simulated clusters, load tests)
build-dev:
	$(GO) build -o $(DEV_BIN) ./cmd/fleetform-dev

## quickstart: build fleetform and render the example control plane (dev) into ./out/dev
quickstart: build
	$(BIN) render --control-plane examples/platform --config examples/fleetform.yaml --env dev --out out/dev
	@echo
	@echo "Explore: $(BIN) schedule --control-plane examples/platform --config examples/fleetform.yaml --env dev"

## demo: the example end to end: apply into a local GitOps repository, the hub on SQLite, a
## simulated fleet, rollout status, a promotion from dev to prod through the gates, and a
## team member signed in through an OIDC provider who may change only their team's (.demo/)
demo: build build-dev
	DEMO_KEEP_SERVING=1 scripts/demo.sh

## screenshots: the demo, then a screenshot of every page of the web UI into docs/ui/ (Chromium)
screenshots: build build-dev
	scripts/screenshots.sh

## test: the whole test suite (unit, integration, CLI scripts, golden trees, fuzz smoke, the demo)
test: unit fuzz-smoke demo-check

# demo-check runs the demo as a test: it fails when any step does (its log is shown then).
demo-check: build build-dev
	@d=$$(mktemp -d); if DEMO_DIR=$$d/demo scripts/demo.sh > $$d/demo.log 2>&1; then \
		echo "demo: ok"; rm -rf $$d; else cat $$d/demo.log; echo "demo: FAILED"; rm -rf $$d; exit 1; fi

# -timeout: a package's tests may take several times longer on a machine busy with other
# work than on an idle one; the default of 10 minutes per package is not a bound on them.
unit:
	$(GO) test -race -count=1 -shuffle=on -timeout 45m $(PKGS)

# Every fuzz target of the repository (scripts/fuzz.sh finds them; `scripts/fuzz.sh -l` lists
# them) runs for FUZZTIME on top of its seed corpus.
fuzz-smoke:
	GO=$(GO) scripts/fuzz.sh $(FUZZTIME) $(FUZZMINIMIZETIME)

## fuzz-long: every fuzz target for 5 minutes each (make fuzz-long FUZZTIME=30m); not part of make test
fuzz-long: FUZZTIME = 5m
fuzz-long:
	GO=$(GO) scripts/fuzz.sh $(FUZZTIME) $(FUZZMINIMIZETIME)

## lint: govulncheck, then golangci-lint (gosec included)
lint: vulncheck
	$(GO) tool -modfile=tools/go.mod golangci-lint run $(PKGS)

## vulncheck: govulncheck against a database built offline from the pinned golang.org/x/vulndb
vulncheck:
	GO=$(GO) scripts/vulncheck.sh

## bench: Go benchmarks of every stage on the synthetic fleet (1,000 targets x 100 cluster types)
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 3x ./internal/...

## bench-e2e: `fleetform render` of the synthetic fleet into an empty folder: wall time and peak RSS
# The previous trees are moved aside and deleted after the timing: deleting 300,000 files
# right before it makes the kernel side of the render several times slower.
bench-e2e: build build-dev
	rm -rf .bench/old && mkdir -p .bench/old
	for d in .bench/fleet .bench/fleet-out; do if [ -e $$d ]; then mv $$d .bench/old/; fi; done
	$(DEV_BIN) gen-fleet --out .bench/fleet
	/usr/bin/time -f 'render: wall %e s, user %U s, sys %S s, max RSS %M KiB' \
		$(BIN) render --control-plane .bench/fleet --env dev --out .bench/fleet-out
	rm -rf .bench/old

## bench-hub-requests: the hub's per-request ingest with wrk (10,000 clusters, one report per request;
## heartbeats, then state changes) on SQLite, then on PostgreSQL (127.0.0.1:5432). Needs wrk.
bench-hub-requests: build build-dev
	scripts/bench-hub-requests.sh
	STORE=postgres scripts/bench-hub-requests.sh

## bench-million: every figure of the million scale, not in make test (an hour or more): apply (cold,
## no-op, one cluster type) and plan of 1,000, 3,000 and 10,000 x 100 fleets (100,000, 300,000 and
## 1,000,000 assignments), render --out of the largest, then the hub with 100,000, 300,000 and 1,000,000 clusters on SQLite and
## on PostgreSQL (127.0.0.1:5432), one request per report (at 1M on PostgreSQL also with token lookups kept 15 min), then in batches of 100 as hub relay sends
## them (heartbeats; then state changes: at 1M on SQLite, at 100k, 300k and 1M on PostgreSQL). bench-million-apply and bench-million-hub run one half.
bench-million: bench-million-apply bench-million-hub

bench-million-apply: build build-dev
	TARGETS=1000 SKIP_RENDER=1 scripts/bench-million.sh
	TARGETS=3000 SKIP_RENDER=1 scripts/bench-million.sh
	scripts/bench-million.sh

bench-million-hub: build build-dev
	scripts/bench-hub-million.sh
	STORE=postgres SIZES="100000 300000" scripts/bench-hub-million.sh
	STORE=postgres SIZES=1000000 scripts/bench-hub-million.sh
	STORE=postgres SIZES=1000000 HUB_FLAGS="--token-cache-ttl 15m" scripts/bench-hub-million.sh
	BATCH=100 CONCURRENCY=8 HUB_FLAGS="--token-cache-ttl 15m" scripts/bench-hub-million.sh
	SIZES=1000000 BATCH=100 CONCURRENCY=4 CHANGE_EVERY=1 HUB_FLAGS="--token-cache-ttl 15m" scripts/bench-hub-million.sh
	STORE=postgres BATCH=100 CONCURRENCY=8 HUB_FLAGS="--token-cache-ttl 15m" scripts/bench-hub-million.sh
	STORE=postgres BATCH=100 CONCURRENCY=4 CHANGE_EVERY=1 HUB_FLAGS="--token-cache-ttl 15m" scripts/bench-hub-million.sh

## bench-sim: fleetform-dev sim with 100,000 clusters against a hub on SQLite (reports/s, CPU)
bench-sim: build build-dev
	scripts/bench-sim.sh

fmt:
	gofmt -w $$(git ls-files '*.go')

## verify: nothing to tidy or format
verify:
	$(GO) mod tidy -e  # -e: a test-only dependency of modernc.org/sqlite is not on the proxy
	gofmt -l $$(git ls-files '*.go') | tee /dev/stderr | (! read -r _)
	git diff --exit-code go.mod go.sum

clean:
	rm -rf bin out
