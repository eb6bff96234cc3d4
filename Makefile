# drconsole — the two commands a newcomer needs: `make run` and `make test`.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
# The Litestream the console's replication is tested with (and the README names).
LITESTREAM := v0.5.18

.PHONY: run build test deps unit checks generate check-generated e2e bench scale fuzz vendor screenshots clean

## run: the console against the embedded sandbox on http://127.0.0.1:8080/
run:
	$(GO) run -ldflags '$(LDFLAGS)' . demo --addr 127.0.0.1:8080

## build: bin/drconsole (cgo: SQLite)
build:
	CGO_ENABLED=1 $(GO) build -ldflags '$(LDFLAGS)' -o bin/drconsole .

## test: everything, on a fresh machine too: installs what is missing (deps), then unit + browser
## tests (unit) with the deploy/ checks (checks), then the end-to-end suite against real Kafka,
## MirrorMaker 2 and Flink (e2e)
test: deps
	$(MAKE) unit checks
	$(MAKE) e2e

## deps: install what the tests need when it is missing (Debian packages: chromium for the browser
## tests, maven and a JDK for testenv, as root or through sudo; Litestream through go install into
## testenv/.cache/bin), and says so loudly when it cannot
deps:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v mvn >/dev/null 2>&1 || missing="$$missing maven"; \
	command -v java >/dev/null 2>&1 || missing="$$missing openjdk-17-jdk-headless"; \
	if [ -n "$$missing" ]; then \
	  echo "== installing$$missing (needed by make test)"; \
	  if [ "$$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; \
	  else echo "make deps: need$$missing; install them as root (apt-get install$$missing)" >&2; exit 1; fi; \
	  command -v apt-get >/dev/null 2>&1 || { echo "make deps: no apt-get here; install$$missing by hand" >&2; exit 1; }; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq$$missing >/dev/null \
	    || { echo "make deps: apt-get install$$missing failed" >&2; exit 1; }; \
	fi
	@testenv/.cache/bin/litestream version 2>/dev/null | grep -qx '$(LITESTREAM)' || { echo "== installing litestream $(LITESTREAM) (the console's own replication, runbook/failover/standby_test.go)"; \
	  GOBIN=$(CURDIR)/testenv/.cache/bin $(GO) install github.com/benbjohnson/litestream/cmd/litestream@$(LITESTREAM) \
	    || { echo "make deps: go install litestream@$(LITESTREAM) failed" >&2; exit 1; }; }
	@chromium --version; java -version 2>&1 | sed -n 1p; mvn -v 2>&1 | sed -n 1p; testenv/.cache/bin/litestream version

# unit's speed: most tests wait (on kfake clusters, polls, pushes, a person typing) rather than
# compute, so more test binaries (-p) and parallel tests (-parallel, else GOMAXPROCS) run at once
# than the machine has cores. The race detector stays on wherever code runs concurrently
# (storage, monitor, failover, web's streams, the sandbox); only mm2 (codecs and offset
# arithmetic, no goroutines) runs without it: it finds nothing there and slows its property
# tests fourfold.
# The slowest packages are named first: go test starts the packages' runs
# in the order given, and the package started last (web, alphabetically)
# otherwise ran alone at the end for minutes after the others finished.
# vet and mm2 run beside the race-detected tests, not before or after them;
# any of the three failing fails unit.
UNIT_P ?= 4
UNIT_PARALLEL ?= 8
UNIT_FIRST := ./web ./cli ./runbook/failover ./scale ./demo ./monitor ./storage ./runbook/internal/effect ./handlers ./runbook/failback
NORACE := github.com/drconsole/drconsole/mm2

## unit: vet, generated views up to date, unit + kfake integration + headless Chromium tests (needs deps)
unit: check-generated
unit: checks
	$(GO) vet ./... & vet=$$!; $(GO) test -count=1 -timeout 5m $(NORACE) & norace=$$!; status=0; \
	$(GO) test -race -count=1 -timeout 15m -p $(UNIT_P) -parallel $(UNIT_PARALLEL) $$($(GO) list $(UNIT_FIRST) ./... | grep -vxF '$(NORACE)') || status=1; \
	wait $$vet || status=1; wait $$norace || status=1; exit $$status

## checks: the Helm chart, Grafana dashboard and alert rules checked against the console
## (deploy/checks: a module of its own, so Helm and the Prometheus server stay out of go.mod)
checks:
	cd deploy/checks && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 10m ./...

## generate: regenerate templ views
generate:
	$(GO) tool templ generate

## check-generated: fail when templ generate would change a committed file
check-generated:
	$(GO) tool templ generate
	@git diff --exit-code -- '*_templ.go' || { echo "generated templ files were stale: run 'make generate' and commit"; exit 1; }
	@test -z "$$(git status --porcelain --untracked-files=all -- '*_templ.go')" || { echo "uncommitted generated templ files"; exit 1; }

## e2e: end-to-end tests against real Apache Kafka, MirrorMaker 2 and Flink (needs JDK 17 + Maven),
## then the Kubernetes restore against the real API machinery (testenv/kubeapi: a module of its own,
## so k8s.io/apiserver and etcd stay out of go.mod), and Cluster Linking against Confluent's published
## OpenAPI document and the console's own /api/v1 against its document (testenv/openapi, likewise, for
## kin-openapi and Confluent's SDK)
e2e:
	$(GO) test -tags e2e -count=1 -timeout 45m -v ./testenv/...
	cd testenv/kubeapi && $(GO) vet -tags e2e ./... && $(GO) test -tags e2e -count=1 -timeout 15m -v ./...
	cd testenv/openapi && $(GO) vet ./... && $(GO) test -count=1 -timeout 5m -v ./...

## bench: benchmarks (6 runs each), summarised with benchstat
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 -timeout 30m ./storage/ ./mm2/ ./monitor/ ./views/ ./runbook/... ./flink/ ./translation/ ./handlers/ ./kafka/ | tee bench.txt
	$(GO) tool benchstat bench.txt

## scale: the scale rig (scale/): the console against two in-process clusters at each N with 90
## days of RPO history, under closed-loop load; prints the markdown table with issue 32's goals.
## SCALE_FLAGS="-n 1000000 -syncs 2 -c 32 -rounds 1 -history 2160h -refresh 10s" for a million partitions, "-pprof prof" for profiles.
SCALE_FLAGS ?= -n 1000,10000,100000 -history 2160h
scale:
	$(GO) run ./scale/cmd/scale $(SCALE_FLAGS)

## fuzz: a short run of every fuzz target (MM2 codecs, the Flink _metadata reader and rewriter)
fuzz:
	for t in FuzzDecodeOffsetSync FuzzDecodeCheckpoint FuzzDecodeHeartbeat FuzzDecodeConnectOffset; do \
		$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime 20s ./mm2/ || exit 1; done
	$(GO) test -run '^$$' -fuzz '^FuzzReadMetadata$$' -fuzztime 20s ./flink/
	$(GO) test -run '^$$' -fuzz '^FuzzRewrite$$' -fuzztime 20s ./flink/

## vendor: refresh the pinned front-end assets from npm (static/package.json) and the browser tests' axe-core (web/testdata/axe/package.json)
vendor:
	cd static && npm ci --no-audit --no-fund
	cp static/node_modules/htmx.org/dist/htmx.min.js static/vendor/htmx-$$(node -p "require('./static/node_modules/htmx.org/package.json').version").min.js
	cp static/node_modules/htmx-ext-sse/dist/sse.min.js static/vendor/htmx-ext-sse-$$(node -p "require('./static/node_modules/htmx-ext-sse/package.json').version").min.js
	cp static/node_modules/htmx-ext-sse/LICENSE static/vendor/htmx-ext-sse.LICENSE
	rm -rf static/node_modules
	cd web/testdata/axe && npm ci --no-audit --no-fund
	rm -f web/testdata/axe/axe-*.min.js
	cp web/testdata/axe/node_modules/axe-core/axe.min.js web/testdata/axe/axe-$$(node -p "require('./web/testdata/axe/node_modules/axe-core/package.json').version").min.js
	cp web/testdata/axe/node_modules/axe-core/LICENSE web/testdata/axe/axe.LICENSE
	rm -rf web/testdata/axe/node_modules

## screenshots: take docs/screenshots/ again (the sandbox in headless Chromium; about a minute)
screenshots:
	DRCONSOLE_SCREENSHOTS=1 $(GO) test -count=1 -run '^TestScreenshots$$' ./web/
	DRCONSOLE_SCREENSHOTS=1 $(GO) test -count=1 -run '^TestSandboxFailoverJourneyInTheBrowser$$' ./cli/

clean:
	rm -rf bin bench.txt
